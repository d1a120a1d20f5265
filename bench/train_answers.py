"""Train the answer decision (``parser._answers``): ``python -m bench train_answers``.

Data (hashes recorded in ``engrammar/extract/parser/data/answers.json``): messages typed to
an assistant just after it asked something, each labelled ``keep`` 1 when a memory system
should keep something lasting from the answer, read with its question; written and
labelled by sessions that read no code, test or fixture of this project:

- ``chat_labels.jsonl``, ``short_fact_labels.jsonl`` and ``answer_labels.jsonl``: answers
  worth keeping ("peanuts, properly anaphylactic") beside hard negatives of the same shape
  (an offer accepted, "whenever", a mood, the assistant's suggestion echoed back);
- ``type_labels.jsonl``: answers each written to state a fact of a given type, all worth
  keeping, so the model also learns the many ways a fact is answered.

Each row is the local embedder's vector of the question's last sentence beside the vector
of the answer (two vectors, one after the other: the question says what the answer's few
words are about, "Whitby." after "where are you based?").

Cross-validation: one fold per file and batch, so no fold is tested on a writer's batch it
was trained on. The figures reported are those of the labelled files with negatives (the
typed answers are all positive). The bar is the lowest out-of-fold probability at which
precision reaches ``--precision``: the model only adds answers the turn model would not
keep. Then it fits on everything and writes ``answers.npz`` and its sha256 into
``_answers.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from bench.train_attributes import figures, labelled, options, out_of_fold, precision_bar, ship

HERE = Path(__file__).parent
DATA = HERE / "data"
LABELLED = ("chat_labels.jsonl", "short_fact_labels.jsonl", "answer_labels.jsonl")
TYPED = ("type_labels.jsonl",)


def rows_of(paths: list[Path]) -> list[dict[str, Any]]:
    """The labelled answers, each with the fold it is tested in; a typed answer (a row
    with the fact it states) is one worth keeping."""
    out = []
    for path in paths:
        for row in labelled(path):
            keep = row.get("keep", 1 if row.get("fact") else None)
            if row.get("asked") and keep is not None:
                out.append({"asked": row["asked"], "text": row["text"], "keep": int(keep),
                            "fold": f"{path.stem}:{row.get('batch', '')}"})
    return out


def main(argv: list[str] | None = None) -> None:
    from sklearn.model_selection import LeaveOneGroupOut

    from engrammar.extract.parser._answers import vectors

    args = options("train_answers", argv)
    paths = [DATA / name for name in LABELLED + TYPED if (DATA / name).exists()]
    rows = rows_of(paths)
    y = np.array([r["keep"] for r in rows])
    groups = [r["fold"] for r in rows]
    x = vectors([(r["asked"], r["text"]) for r in rows])
    oof = out_of_fold(x, y, LeaveOneGroupOut().split(x, y, groups), args.c)
    typed = tuple(Path(name).stem for name in TYPED)  # (all positive: no figures of their own)
    measured = np.array([not g.startswith(typed) for g in groups])
    bar = precision_bar(oof[measured], y[measured], args.precision)
    folds = {}
    for name in sorted(set(groups)):
        at = np.array([g == name for g in groups])
        if at[measured].any() and len(set(y[at])) > 1:
            folds[name] = figures(y[at], oof[at], bar)
            print(f"{name}: {folds[name]}")
    overall = figures(y[measured], oof[measured], bar)
    print(f"labelled answers: {overall}")
    print(f"{len(rows)} rows ({int(measured.sum())} labelled), {int(y.sum())} worth keeping; "
          f"bar {bar:.2f}")
    ship(x, y, bar, "answers", "_answers.py", paths, args, {
        "rows": len(rows), "labelled_rows": int(measured.sum()), "folds": len(set(groups)),
        "cross_validation": {"by_fold": folds, "overall": overall, "threshold": bar}})


if __name__ == "__main__":
    main()
