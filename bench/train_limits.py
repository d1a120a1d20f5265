"""Train the lasting-limit decision (``parser._abilities``): ``python -m bench train_limits``.

Data: ``bench/data/ability_labels.jsonl`` (hash recorded in
``engrammar/extract/parser/data/limits.json``): 420 chat messages in which the speaker says
what they, one of theirs or someone else cannot or will not do, written and labelled by a
session that read no code, test or fixture: the limit as said (``x``, "can't have dairy"),
whose it is, and whether a memory should keep it (a diet, a disability, a phobia, a skill
lacked, a standing rule) or not (a passing state, a one-off clash, an idiom, a thing that
will not work), in four batches of topic areas (food and health; mobility and travel; work,
money and school; family, home and rules). Each row is the local embedder's vector of the
limit's words, its modal in one spelling (``_abilities.limit_words``), as the extractor
embeds them.

Cross-validation: one batch held out a fold, so each is tested on topics it was not trained
on. Reported: out-of-fold AUC, and precision and recall at the bar chosen (the lowest
out-of-fold probability at which the limits of the user's people reach ``--precision``:
the extractor asks about no one else's), by whose the limit is and by batch, and how many
of someone else's limits the bar would keep. Then it fits on
everything and writes ``limits.npz`` and its sha256 into ``_abilities.py``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from bench.train_attributes import figures, labelled, options, out_of_fold, precision_bar, ship

HERE = Path(__file__).parent
LABELS = HERE / "data" / "ability_labels.jsonl"
PACKAGE = HERE.parent / "engrammar" / "extract" / "parser"
OUT = PACKAGE / "data"


def main(argv: list[str] | None = None) -> None:
    from sklearn.model_selection import LeaveOneGroupOut

    from engrammar.extract.parser._abilities import limit_words
    from engrammar.extract.parser._intent import embedder

    args = options("train_limits", argv)
    rows = labelled(LABELS)
    y = np.array([int(r["keep"]) for r in rows])
    batches = [r["batch"] for r in rows]
    x = embedder().embed([limit_words(r["x"]) for r in rows])
    oof = out_of_fold(x, y, LeaveOneGroupOut().split(x, y, batches), args.c)
    # The bar is chosen on the limits of the user's people, the only ones the extractor
    # asks about; the user's own and someone else's ("the church can't host the wedding",
    # all kept 0) only teach.
    asked = np.array([r["who"] == "relative" for r in rows])
    bar = precision_bar(oof[asked], y[asked], args.precision)
    theirs = np.array([r["who"] in ("self", "relative") for r in rows])
    folds = {"self and relatives": figures(y[theirs], oof[theirs], bar)}
    for key, values in (("who", [r["who"] for r in rows]), ("batch", batches)):
        for value in sorted(set(values)):
            these = np.array([v == value for v in values]) & theirs
            if these.any():
                folds[f"{key} {value}"] = figures(y[these], oof[these], bar)
    folds["someone else's, kept wrongly"] = {
        "rows": int((~theirs).sum()), "kept": int((oof[~theirs] >= bar).sum())}
    for name, measured in folds.items():
        print(f"{name}: {measured}")
    print(f"{len(rows)} rows, {int(y.sum())} lasting; bar {bar:.2f}")
    ship(x, y, bar, "limits", "_abilities.py", LABELS, args, {
        "rows": len(rows), "folds": "one per batch",
        "cross_validation": {"threshold": round(bar, 3), **folds}})
