"""Train the lasting-attribute decision (``parser._attributes``):
``python -m bench train_attributes``.

Data: ``bench/data/attribute_labels.jsonl`` (hash recorded in
``engrammar/extract/parser/data/attributes.json``): chat messages in which the speaker says
what they or someone of theirs is or has, the words said of them (``x``), and whether a
memory should keep it (a condition, a diet, a job, a status) or not (a judgement, a mood,
a figure of speech). Each row is the local embedder's vector of ``x`` alone, as the
extractor embeds it.

Cross-validation: five folds, the lines of one complement (its words, lower case) in one
fold, so no fold is tested on words it was trained on. Reported: out-of-fold AUC, and the
precision and recall at the bar chosen, the lowest out-of-fold probability at which
precision reaches ``--precision`` (a false "lasting" stores a judgement as a fact; a missed
one leaves the statement to the other readings). Then it fits on everything and writes
``attributes.npz`` and its sha256 into ``_attributes.py``.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from bench.train_parser import sha

HERE = Path(__file__).parent
LABELS = HERE / "data" / "attribute_labels.jsonl"
PACKAGE = HERE.parent / "engrammar" / "extract" / "parser"
OUT = PACKAGE / "data"
FOLDS = 5


def main(argv: list[str] | None = None) -> None:
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import GroupKFold

    from engrammar.extract.parser._attributes import MAX_WORDS
    from engrammar.extract.parser._intent import embedder

    args = options("train_attributes", argv)
    rows = labelled(LABELS)
    said = [" ".join(r["x"].lower().split()) for r in rows]
    assert all(len(s.split()) <= MAX_WORDS for s in said), "a complement longer than MAX_WORDS"
    y = np.array([int(r["keep"]) for r in rows])
    groups = [re.sub(r"\W+", " ", s).strip() for s in said]
    x = embedder().embed(said)
    oof = out_of_fold(x, y, GroupKFold(n_splits=FOLDS).split(x, y, groups), args.c)
    bar = precision_bar(oof, y, args.precision)
    kept = oof >= bar
    precision = float((y[kept] == 1).mean()) if kept.any() else 0.0
    recall = float(kept[y == 1].mean())
    by_who = {who: {"rows": int(sum(r["who"] == who for r in rows)),
                    "precision": round(float((y[kept & m] == 1).mean()), 3) if (kept & m).any()
                    else 0.0, "recall": round(float(kept[(y == 1) & m].mean()), 3)}
              for who in ("self", "other")
              for m in [np.array([r["who"] == who for r in rows])]}
    print(f"{len(rows)} rows, {int(y.sum())} lasting; out of fold AUC "
          f"{roc_auc_score(y, oof):.3f}; at {bar:.2f}: precision {precision:.3f}, "
          f"recall {recall:.3f}; by who: {by_who}")
    ship(x, y, bar, "attributes", "_attributes.py", LABELS, args, {
        "rows": len(rows), "folds": FOLDS,
        "cross_validation": {"auc": round(float(roc_auc_score(y, oof)), 3),
                             "threshold": round(bar, 3), "precision": round(precision, 3),
                             "recall": round(recall, 3), "by_who": by_who}})


def options(name: str, argv: list[str] | None, precision: float = 0.9) -> argparse.Namespace:
    """The options every trainer of a model over the embedder's vectors takes."""
    parser = argparse.ArgumentParser(prog=f"python -m bench {name}")
    parser.add_argument("--c", type=float, default=1.0, help="inverse regularisation")
    parser.add_argument("--precision", type=float, default=precision,
                        help="out-of-fold precision the bar must reach")
    return parser.parse_args(argv or [])


def labelled(path: Path) -> list[dict[str, Any]]:
    """The rows of a JSON-lines labels file."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def ship(x: np.ndarray, y: np.ndarray, bar: float, name: str, module: str,
         data: Path | list[Path], args: argparse.Namespace, figures: dict[str, Any]) -> None:
    """Fit on every row and write the weights as ``data/<name>.npz``, their sha256 into
    ``module`` and what was trained on and measured into ``data/<name>.json``."""
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=args.c, max_iter=5000).fit(x, y)
    weights = OUT / f"{name}.npz"
    np.savez(weights, w=model.coef_[0].astype(np.float32),
             b=np.float32(model.intercept_[0]), threshold=np.float32(bar))
    digest = sha(weights)
    source = PACKAGE / module
    source.write_text(re.sub(r'WEIGHTS_SHA256 = "[^"]*"', f'WEIGHTS_SHA256 = "{digest}"',
                             source.read_text()))
    record = {"command": f"python -m bench train_{name} --c {args.c} "
                         f"--precision {args.precision}",
              "data": {(str(path.relative_to(HERE.parent)) if path.is_relative_to(HERE.parent)
                        else str(path)): sha(path)
                       for path in (data if isinstance(data, list) else [data])},
              "weights_sha256": digest, **figures}
    (OUT / f"{name}.json").write_text(json.dumps(record, indent=2) + "\n")
    print(f"wrote {weights} (sha256 {digest})")


def out_of_fold(x: np.ndarray, y: np.ndarray, splits: Iterable[tuple[Any, Any]], c: float
                ) -> np.ndarray:
    """Each row's probability by a logistic regression fitted on the ``train`` rows of the
    (train, test) index pair of ``splits`` that tests it (0 for a row none tests)."""
    from sklearn.linear_model import LogisticRegression

    oof = np.zeros(len(y))
    for train, test in splits:
        fit = LogisticRegression(C=c, max_iter=5000).fit(x[train], y[train])
        oof[test] = fit.predict_proba(x[test])[:, 1]
    return oof


def precision_bar(chance: np.ndarray, y: np.ndarray, precision: float) -> float:
    """The lowest probability at which the rows at or above it reach ``precision``."""
    for bar in np.arange(0.3, 0.96, 0.01):
        kept = chance >= bar
        if kept.any() and (y[kept] == 1).mean() >= precision:
            return round(float(bar), 2)
    return 0.95


def figures(y: np.ndarray, chance: np.ndarray, bar: float) -> dict[str, Any]:
    """AUC, and precision and recall at ``bar``, of ``chance`` against the labels ``y``."""
    from sklearn.metrics import roc_auc_score

    kept = chance >= bar
    return {"rows": len(y), "auc": round(float(roc_auc_score(y, chance)), 3),
            "precision": round(float((y[kept] == 1).mean()), 3) if kept.any() else 0.0,
            "recall": round(float(kept[y == 1].mean()), 3)}
