"""How far the heuristic token count is from OpenAI's own, on the fixtures' text.

Every text in ``fixtures/*.yaml`` (each message, seeded memory and recall query) is counted
by the heuristic (``runtime._tokens.HeuristicCounter``) and by tiktoken's ``o200k_base``
(GPT-4o and later) and ``cl100k_base`` (GPT-4), from the encoding files bundled offline.
Per text, the error is heuristic / exact - 1 (positive: the heuristic counts more, so a
budget kept with it is kept with the model's count too).
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

from bench.timing import percentile
from engrammar.evals._fixtures import load_all
from engrammar.runtime._tokens import HeuristicCounter, TiktokenCounter, TokenCounter

OUT = Path(__file__).parent / "out"
ENCODINGS = ("o200k_base", "cl100k_base")


def fixture_texts() -> list[str]:
    """The fixtures' texts, in file order: messages, seeds, recall queries."""
    texts: list[str] = []
    for fixture in load_all():
        texts += [turn.text for turn in fixture.conversation]
        texts += [seed.content for seed in fixture.seed]
        texts += [check.query for check in fixture.expect.recall]
        texts += [check.query for later in fixture.expect.later for check in later.recall]
    return texts


def compare(texts: list[str], estimate: TokenCounter, exact: TokenCounter) -> dict[str, Any]:
    pairs = [(estimate.count(t), exact.count(t)) for t in texts if t.strip()]
    errors = [h / e - 1 for h, e in pairs]
    total_h, total_e = sum(h for h, _ in pairs), sum(e for _, e in pairs)
    return {
        "texts": len(pairs),
        "tokens_exact": total_e,
        "tokens_heuristic": total_h,
        "total_error": round(total_h / total_e - 1, 4),
        "mean_abs_error": round(statistics.fmean(abs(x) for x in errors), 4),
        "median_error": round(statistics.median(errors), 4),
        "p5_error": round(percentile(errors, 0.05), 4),
        "p95_error": round(percentile(errors, 0.95), 4),
        "undercounted_share": round(sum(x < 0 for x in errors) / len(errors), 4),
        "worst_undercount": round(min(errors), 4),
        "worst_undercount_tokens": max(0, max(e - h for h, e in pairs)),
    }


def measure() -> dict[str, Any]:
    texts = fixture_texts()
    heuristic = HeuristicCounter()
    return {name: compare(texts, heuristic, TiktokenCounter(name)) for name in ENCODINGS}


def main() -> None:
    result = measure()
    OUT.mkdir(exist_ok=True)
    (OUT / "tokens.json").write_text(json.dumps(result, indent=2))
    for name, r in result.items():
        print(f"heuristic vs {name}: {r['texts']} texts, {r['tokens_heuristic']} vs "
              f"{r['tokens_exact']} tokens ({r['total_error']:+.1%} in total); per text "
              f"median {r['median_error']:+.1%}, mean |error| {r['mean_abs_error']:.1%}, "
              f"p5 {r['p5_error']:+.1%}, p95 {r['p95_error']:+.1%}; "
              f"{r['undercounted_share']:.1%} undercounted (worst {r['worst_undercount']:+.1%})")
