"""The run's report three ways: a table on the terminal, ``report.json``, ``report.md``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from engrammar._table import table
from engrammar.evals._metrics import THRESHOLDS, FixtureResult
from engrammar.evals._runner import RunReport

OUT_DIR = Path("eval-report")
HEADERS = ["fixture", "result", "extracted", "precision", "recall", "hit@3", "dup", "iso",
           "first failure"]


def rows(results: Sequence[FixtureResult]) -> list[list[str]]:
    out = []
    for r in results:
        c = r.counts
        out.append([r.name, "pass" if r.passed else "FAIL", str(c.extracted),
                    f"{c.precision:.2f}", f"{c.recall:.2f}",
                    f"{c.hits}/{c.queries}" if c.queries else "-",
                    str(c.duplicate_leaks), str(c.isolation_leaks),
                    r.failures[0] if r.failures else ""])
    return out


def summary_lines(report: RunReport) -> list[str]:
    data = report.to_json()
    lines = [
        f"extractor {data['extractor']}, embedder {data['embedder']}, "
        f"{data['seconds']:.1f}s",
        f"fixtures {data['fixtures']}, passed {data['passed']}",
        f"precision {data['precision']:.3f}  recall {data['recall']:.3f}  "
        f"hit@3 {data['hit_at_3']:.3f}  duplicate leaks {data['duplicate_leaks']}  "
        f"isolation leaks {data['isolation_leaks']}",
    ]
    below = report.below()
    lines.append("thresholds met" if not below else "BELOW THRESHOLDS: " + "; ".join(below))
    return lines


def terminal(report: RunReport) -> str:
    widths = dict.fromkeys(range(len(HEADERS)), 70)
    return (table(rows(report.results), HEADERS, widths) + "\n\n"
            + "\n".join(summary_lines(report)))


def markdown(report: RunReport) -> str:
    data = report.to_json()
    verdict = "passes" if report.ok else "fails"
    out = [f"# Eval report: {verdict}", "",
           f"Extractor `{data['extractor']}`, embedder `{data['embedder']}`, started "
           f"{data['started']}, {data['seconds']:.1f}s.", "",
           "| metric | value | threshold |", "| --- | --- | --- |"]
    values = report.values()
    for name in ("precision", "recall", "hit_at_3", "duplicate_leaks", "isolation_leaks",
                 "failed_fixtures"):
        bar = THRESHOLDS.get(name)
        shown = f"{values[name]:.3f}" if isinstance(values[name], float) and name in (
            "precision", "recall", "hit_at_3") else f"{values[name]:g}"
        out.append(f"| {name} | {shown} | {'-' if bar is None else _bar(name, bar)} |")
    out += ["", f"{data['passed']} of {data['fixtures']} fixtures pass.", "",
            "| " + " | ".join(HEADERS[:-1]) + " |",
            "|" + " --- |" * (len(HEADERS) - 1)]
    out += ["| " + " | ".join(r[:-1]) + " |" for r in rows(report.results)]
    failing = [r for r in report.results if r.failures]
    if failing:
        out += ["", "## Failures", ""]
        for r in failing:
            out.append(f"### {r.name}")
            out += [f"- {_md(f)}" for f in r.failures]
            out.append("")
    out += ["", "## Fixtures", ""]
    out += [f"- **{r.name}** ({', '.join(r.covers) or '-'}): {_md(r.description)}"
            for r in report.results]
    return "\n".join(out) + "\n"


def _bar(name: str, bar: float) -> str:
    return f">= {bar:g}" if name in ("precision", "hit_at_3") else f"<= {bar:g}"


def _md(text: str) -> str:
    return " ".join(text.replace("|", "\\|").split())


def write(report: RunReport, out_dir: Path = OUT_DIR) -> dict[str, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {"json": out_dir / "report.json", "markdown": out_dir / "report.md"}
    data: dict[str, Any] = report.to_json()
    paths["json"].write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n",
                             encoding="utf-8")
    paths["markdown"].write_text(markdown(report), encoding="utf-8")
    return paths
