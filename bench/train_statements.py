"""Train the statement decision (``parser._statements``): ``python -m bench
train_statements``.

Data (hashes recorded in ``engrammar/extract/parser/data/statements.json``): chat messages
typed to an assistant, each labelled ``keep`` 1 when a memory system should keep something
lasting from it about the user or their people, by sessions that read no code, test or
fixture of this project:

- ``statement_labels_a.jsonl`` and ``statement_labels_b.jsonl``, written for this model:
  plain statements and requests with a fact in passing, beside hard negatives of the same
  shapes ("I think so", "I wonder if it's worth it", "I need a recipe for tonight");
- ``chat_labels.jsonl``, ``short_fact_labels.jsonl``, ``clause_labels_chat.jsonl``,
  ``parser_labels.jsonl`` and ``answer_labels.jsonl``, each written for an earlier measure.

Only messages said alone are read (not those answering a question, whose meaning is the
question's too), as the extractor asks the model only of a statement that stands alone.
Each row is the local embedder's vector of the message as typed.

Cross-validation: one fold per file and batch, so no fold is tested on a writer's batch it
was trained on. Reported: out-of-fold AUC, precision and recall, per fold and in all, at
the bar chosen: the lowest out-of-fold probability at which precision reaches
``--precision`` (the model only adds memories the turn model would not keep, and each
false one costs a reader's trust). Then it fits on everything and writes
``statements.npz`` and its sha256 into ``_statements.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from bench.locomo import DATA as LOCOMO
from bench.train_attributes import figures, labelled, options, out_of_fold, precision_bar, ship

HERE = Path(__file__).parent
DATA = HERE / "data"
FILES = [DATA / name for name in (
    "statement_labels_a.jsonl", "statement_labels_b.jsonl", "chat_labels.jsonl",
    "short_fact_labels.jsonl", "clause_labels_chat.jsonl", "parser_labels.jsonl",
    "answer_labels.jsonl")]


def rows_of(paths: list[Path]) -> list[dict[str, Any]]:
    """The labelled messages said alone, each with the fold it is tested in."""
    out = []
    for path in paths:
        for row in labelled(path):
            if "keep" in row and not row.get("asked"):
                out.append({**row, "fold": f"{path.stem}:{row.get('batch', '')}"})
    return out


def locomo_rows(path: Path) -> list[dict[str, Any]]:
    """The LoCoMo dev split's plain statements (``_statements.said``) of the turn candidates
    the extractor reads: worth keeping when one says a fact annotated on its turn (the
    matcher of ``bench locomo --mode extraction``); each conversation a fold. What two
    friends say to each other in passing ("Thanks! I really appreciate your help") is what
    the chat labels have least of."""
    from datetime import timedelta

    from bench.locomo import load
    from bench.train_parser import facts_said, turn_candidates
    from engrammar.extract.parser._intent import embedder
    from engrammar.extract.parser._statements import said

    out = []
    for conv in load(path, None):
        turns = [(s, t) for s in conv.sessions for t in s.turns]
        found = turn_candidates([t.text for _, t in turns],
                                [s.at + timedelta(minutes=n) for n, (s, _) in enumerate(turns)],
                                None)
        plain = [(t.dia_id, text) for (_, t), tc in zip(turns, found, strict=True)
                 if tc is not None and (text := said(tc)) is not None]
        good = facts_said(conv, plain, embedder())
        out += [{"text": text, "keep": int(bool(g)), "fold": f"locomo:{conv.sample_id}"}
                for (_, text), g in zip(plain, good, strict=True)]
    return out


def main(argv: list[str] | None = None) -> None:
    from sklearn.model_selection import LeaveOneGroupOut

    from engrammar.extract.parser._intent import embedder

    args = options("train_statements", argv)
    paths = [p for p in FILES if p.exists()]
    rows = rows_of(paths) + locomo_rows(LOCOMO)
    paths.append(LOCOMO)
    y = np.array([int(r["keep"]) for r in rows])
    groups = [r["fold"] for r in rows]
    x = np.array(embedder().embed([r["text"] for r in rows]))
    oof = out_of_fold(x, y, LeaveOneGroupOut().split(x, y, groups), args.c)
    bar = precision_bar(oof, y, args.precision)
    folds = {}
    for name in sorted(set(groups)):
        at = np.array([g == name for g in groups])
        folds[name] = figures(y[at], oof[at], bar)
        print(f"{name}: {folds[name]}")
    overall = figures(y, oof, bar)
    print(f"all: {overall}")
    print(f"{len(rows)} rows, {int(y.sum())} worth keeping; bar {bar:.2f}")
    ship(x, y, bar, "statements", "_statements.py", paths, args, {
        "rows": len(rows), "folds": len(folds),
        "cross_validation": {"by_fold": folds, "overall": overall, "threshold": bar}})


if __name__ == "__main__":
    main()
