"""Train the occupation decision (``parser._jobs``): ``python -m bench train_jobs``.

Data: ``bench/data/job_nouns.jsonl`` (hash recorded in
``engrammar/extract/parser/data/jobs.json``): 932 noun phrases as a person puts them after
"I'm a" or "I work as a", written and labelled by a session that read no code, in four
batches with no word in two of them: 413 occupations in everyday, informal and regional
forms ("postie", "logistics coordinator"), 519 other things people say they are (family
roles, traits, fandoms, hobbies). Each row is the local embedder's vector of "a <phrase>",
as the extractor embeds the noun it reads.

A fifth batch (``b5``, 399 phrases by a second such session) holds workplaces, employers,
contracts and sectors ("call centre", "zero hours contract", "retail") beside occupations
said with the same words ("call centre agent"): what a retried answer or a place may put
where a trade could be.

Cross-validation: one fold per batch, so no fold is tested on a word it was trained on.
Reported: out-of-fold AUC, precision and recall on the four batches of what people say they
are, on the workplaces batch and on all, at the bar chosen: the lowest out-of-fold
probability at which precision on the four batches reaches ``--precision`` (the extractor
asks the model only about the noun of "I'm a ..."; the model only adds to the trades
``parser._lexicon.JOBS`` names, and a false occupation would take the job slot from the
real one). Then it fits on everything and writes ``jobs.npz`` and its sha256 into
``_jobs.py``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from bench.train_attributes import figures, labelled, options, out_of_fold, precision_bar, ship

HERE = Path(__file__).parent
LABELS = HERE / "data" / "job_nouns.jsonl"
PACKAGE = HERE.parent / "engrammar" / "extract" / "parser"
OUT = PACKAGE / "data"
# The batch of workplaces, employers and arrangements ("call centre", "zero hours
# contract"), beside the occupations said with their words ("call centre agent").
WORKPLACES = "b5"


def main(argv: list[str] | None = None) -> None:
    from sklearn.model_selection import GroupKFold, LeaveOneGroupOut

    from engrammar.extract.parser._intent import embedder
    from engrammar.extract.parser._jobs import said_as

    args = options("train_jobs", argv)
    rows = labelled(LABELS)
    y = np.array([int(r["job"]) for r in rows])
    groups = [r["batch"] for r in rows]
    x = embedder().embed([said_as(r["phrase"]) for r in rows])
    oof = out_of_fold(x, y, LeaveOneGroupOut().split(x, y, groups), args.c)
    # The bar is chosen on what people say they are (the extractor asks the model nothing
    # else); the workplaces and arrangements batch only teaches where a trade ends.
    said = np.array([b != WORKPLACES for b in groups])
    bar = precision_bar(oof[said], y[said], args.precision)
    folds = {}
    for name, rows_ in [("what people say they are", said), (WORKPLACES, ~said),
                        ("all", np.ones(len(rows), dtype=bool))]:
        folds[name] = figures(y[rows_], oof[rows_], bar)
        print(f"{name}: {folds[name]}")
    # As shipped, the model has seen workplaces: the batch read again in five folds of its
    # own (a head word in one fold), each trained on the other batches and four fifths of it.
    own = np.flatnonzero(~said)
    heads = [rows[i]["phrase"].lower().split()[-1] for i in own]
    inner = out_of_fold(x, y, ((np.concatenate([np.flatnonzero(said), own[train]]), own[test])
                               for train, test in GroupKFold(n_splits=5).split(own, y[own],
                                                                               heads)), args.c)
    name = f"{WORKPLACES}, trained with some of it"
    folds[name] = figures(y[own], inner[own], bar)
    print(f"{name}: {folds[name]}")
    print(f"{len(rows)} rows, {int(y.sum())} occupations; bar {bar:.2f}")
    ship(x, y, bar, "jobs", "_jobs.py", LABELS, args, {
        "rows": len(rows), "folds": "one per batch",
        "cross_validation": {"threshold": round(bar, 3), **folds}})
