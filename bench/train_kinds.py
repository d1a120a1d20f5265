"""Train the type of a kept statement (``parser._kinds``): ``python -m bench train_kinds``.

Data (hashes recorded in ``engrammar/extract/parser/data/kinds.json``): the messages of
``bench/data`` that a person labelled worth keeping with the type of what they state, in
files no measure reads: ``type_labels.jsonl`` (written and labelled for this model by a
session that read no code, in four batches of different topics), ``question_train.jsonl``,
``answer_labels.jsonl`` and ``parser_labels.jsonl``. Each message is read by the offline
extractor as it reads chat (after the assistant's question, ``asked``, when there is one);
a message whose statement becomes a turn candidate is a row, its features those the model
reads at extraction time and its label the labelled type.

Cross-validation: one fold per batch of ``type_labels.jsonl`` and one per other file, so
no fold is tested on the topics or the writer it was trained on. Reported: out-of-fold
accuracy per fold and overall, beside the share of the most common type, and the confusion
of labelled against predicted types. Then it fits on everything and writes ``kinds.npz``
and its sha256 into ``_kinds.py``. The extractor takes the model's type where the readings
gave none, and its plan wherever it is sure of one (``parser._decisions.PLAN_CHANCE``), so
the plans' precision and recall out of fold are reported at a few bars, over all folds and
per fold at the shipped bar.

The measure is elsewhere: ``python -m bench labels`` reports how often the extractor's
stored type is the labelled one on the chat, question and short-fact files, which no model
is trained on.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from bench.train_parser import sha

HERE = Path(__file__).parent
DATA = HERE / "data"
FILES = [DATA / "type_labels.jsonl", DATA / "question_train.jsonl",
         DATA / "answer_labels.jsonl", DATA / "parser_labels.jsonl"]
PACKAGE = HERE.parent / "engrammar" / "extract" / "parser"
OUT = PACKAGE / "data"
AT = datetime(2026, 1, 7, 12, tzinfo=UTC)


def rows(paths: list[Path]) -> tuple[list[list[str]], list[int], list[str]]:
    """Per kept, typed message that the extractor reads into a turn candidate: the type
    model's features, the labelled type's column and the message's fold."""
    from bench.labels import as_chat
    from engrammar.extract.parser._extractor import ParserExtractor
    from engrammar.extract.parser._kinds import KINDS, features

    names = [k.value for k in KINDS]
    extractor = ParserExtractor()
    xs: list[list[str]] = []
    ys: list[int] = []
    groups: list[str] = []
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line) if line.strip() else {}
            if not row.get("keep", 1) or row.get("type") not in names:
                continue
            turn = extractor.read(as_chat(row, AT)).turns[-1]
            if turn is None:
                continue  # the readings said all of it, each in the type its reading gives
            xs.append(features(turn, AT))
            ys.append(names.index(row["type"]))
            groups.append(f"{path.stem}:{row['batch']}" if row.get("batch") else path.stem)
    return xs, ys, groups


def matrix(xs: list[list[str]]) -> Any:
    from scipy.sparse import csr_matrix

    from engrammar.extract.parser._kinds import DIM
    from engrammar.extract.parser._weights import columns

    data: list[float] = []
    cols: list[int] = []
    ptr = [0]
    for names in xs:
        c, w = columns(names, DIM)
        cols.extend(c.tolist())
        data.extend(w.tolist())
        ptr.append(len(cols))
    return csr_matrix((data, cols, ptr), shape=(len(xs), DIM), dtype=np.float64)


def main(argv: list[str] | None = None) -> None:
    from sklearn.linear_model import LogisticRegression

    from engrammar.extract.parser._decisions import PLAN_CHANCE
    from engrammar.extract.parser._kinds import DIM, KINDS
    from engrammar.models import MemoryType

    parser = argparse.ArgumentParser(prog="python -m bench train_kinds")
    # (16: the best out-of-fold accuracy of 0.5, 1, 2, 4, 8, 16 and 32)
    parser.add_argument("--c", type=float, default=16.0, help="inverse regularisation")
    args = parser.parse_args(argv or [])
    paths = [p for p in FILES if p.exists()]
    xs, ys, groups = rows(paths)
    x, y, g = matrix(xs), np.array(ys), np.array(groups)
    names = [k.value for k in KINDS]
    chances = np.zeros((len(y), len(KINDS)))
    folds: dict[str, Any] = {}
    column = KINDS.index(MemoryType.open_loop)  # the plans' chances
    plan = y == column
    for fold in sorted(set(groups)):
        test = g == fold
        fit = LogisticRegression(C=args.c, max_iter=5000).fit(x[~test], y[~test])
        chances[np.ix_(test, fit.classes_)] = fit.predict_proba(x[test])
        common = Counter(y[test].tolist()).most_common(1)[0][1] / int(test.sum())
        said = chances[test, column] >= PLAN_CHANCE
        folds[fold] = {"rows": int(test.sum()),
                       "accuracy": round(float((chances[test].argmax(1) == y[test]).mean()), 3),
                       "most_common_type": round(common, 3),
                       "plans_said": int(said.sum()),
                       "plans_right": int((said & plan[test]).sum()),
                       "plans": int(plan[test].sum())}
        print(f"  {fold}: {folds[fold]}")
    oof = chances.argmax(1)
    accuracy = float((oof == y).mean())
    confusion = {a: {b: int(((y == i) & (oof == j)).sum()) for j, b in enumerate(names)}
                 for i, a in enumerate(names)}
    print(f"{len(y)} rows; out of fold accuracy {accuracy:.3f}; labelled -> predicted:")
    for a, row in confusion.items():
        print(f"  {a:10} " + " ".join(f"{b}:{n}" for b, n in row.items()))
    plans = {}
    for bar in (0.5, 0.6, 0.7, 0.8, 0.9):
        said = chances[:, column] >= bar
        plans[str(bar)] = {"precision": round(float(plan[said].mean()), 3) if said.any() else None,
                           "recall": round(float((said & plan).sum() / plan.sum()), 3)}
        print(f"  a plan from {bar}: {plans[str(bar)]}")
    model = LogisticRegression(C=args.c, max_iter=5000).fit(x, y)
    w = np.zeros((DIM, len(KINDS)), dtype=np.float32)
    b = np.full(len(KINDS), -30.0, dtype=np.float32)  # a type never seen is never said
    for n, cls in enumerate(model.classes_):
        w[:, cls] = model.coef_[n]
        b[cls] = model.intercept_[n]
    weights = OUT / "kinds.npz"
    np.savez_compressed(weights, w=w, b=b)
    digest = sha(weights)
    module = PACKAGE / "_kinds.py"
    module.write_text(re.sub(r'WEIGHTS_SHA256 = "[^"]*"', f'WEIGHTS_SHA256 = "{digest}"',
                             module.read_text()))
    record = {"command": f"python -m bench train_kinds --c {args.c}",
              "data": {str(p.relative_to(HERE.parent)): sha(p) for p in paths},
              "weights_sha256": digest, "rows": len(y),
              "rows_per_type": {n: int((y == i).sum()) for i, n in enumerate(names)},
              "cross_validation": {"accuracy": round(accuracy, 3), "folds": folds,
                                   "confusion": confusion, "plans": plans,
                                   "plan_chance": PLAN_CHANCE}}
    (OUT / "kinds.json").write_text(json.dumps(record, indent=2) + "\n")
    print(f"wrote {weights} (sha256 {digest})")
