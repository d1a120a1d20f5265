"""Can a model learned from labelled pairs tell that a statement ends a memory?
``python -m bench change_model``. It reports cross-validated figures and ships nothing.

Data: ``change_pairs.jsonl`` and ``change_pairs2.jsonl`` in ``bench/data``, each written and
labelled by a session that read no code. Each pairs a stored memory with a later message
of the same user, and says whether the message ends what the memory says.
``change_pairs3.jsonl`` is held out and never read here. Each pair is read as
``bench changes`` reads it:

- night 1: the memory, said in the first person, is extracted;
- night 2: the message is extracted against that chat's memories.

A row is one op with content that the extractor proposes on night 2, beside one lasting
memory of night 1 that is at least ``FLOOR`` close to it. The memory is either its own
pair's (labelled as the pair is) or another pair's about another memory (never an end).
Every op of a changing message carries the pair's label, whether it is the op that says
the change or the question beside it. So the measure is per pair: does any op end the
memory?

The model is a logistic regression over the pair's features:

- what the gate knows of both: the cosine of their vectors, in steps; the share of the
  memory's words that the statement says; shared stems and names; both types; the op's
  tense and kind; a difference in polarity;
- the statement's own words and word pairs, hashed into columns.

Variants add the statement's vector, alone or scaled by the cosine.

Cross-validation is run two ways. By writer: fit on one file and test on the other, both
ways round. By memory: five folds of ``group``. Each fold reports the recall at the bar
where at most 2% of the unchanged pairs are wrongly ended.

What it found (BENCHMARKS.md, "eleventh stop"): by writer, the area under the curve was
0.61 to 0.67, and at 2% wrong it found 3% to 7% of the changes (5% to 22% by memory).
Word features learnt one writer's phrasing and did not carry to the other's. The gate's
own rules end 20% of the changes at 1.2% wrong (``bench changes``), so the gate does not
use the model.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import re
import zlib
from datetime import timedelta
from typing import Any

import numpy as np

from bench.changes import DATA, NIGHT1, first_person

FILES = [DATA / "change_pairs.jsonl", DATA / "change_pairs2.jsonl"]
DATABASE = "memory_change_model"
USER = "change-model"
FLOOR = 0.3
DIM = 1 << 14
# Memories of other pairs that each op is set beside, at most (a chat holds many).
_OTHERS = 8
_STEPS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
_TOKEN = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?")


def features(op: Any, memory: Any, cos: float) -> dict[str, float]:
    """The pair's features by name, each with its value."""
    from engrammar.write._statement import (
        content_words,
        negative,
        shares_beyond_subject,
        shares_name,
        shares_stem,
    )

    said, held = op.content, memory.content
    out: dict[str, float] = {"bias": 1.0, "cos": cos}
    out.update({f"cos>={step}": 1.0 for step in _STEPS if cos >= step})
    mine, theirs = content_words(said), content_words(held)
    if theirs:
        out["held words said"] = len(mine & theirs) / len(theirs)
    out["shares beyond subject"] = float(shares_beyond_subject(said, held))
    out["shares stem"] = float(shares_stem(said, held))
    out["shares name"] = float(shares_name(said, held))
    out[f"op {op.op.value}"] = 1.0
    out[f"type {op.type.value if op.type else 'none'}"] = 1.0
    out[f"held {memory.type.value}"] = 1.0
    out[f"tense {op.tense.value if op.tense else 'none'}"] = 1.0
    if negative(said) != negative(held):
        out["polarity differs"] = 1.0
    words = _TOKEN.findall(said.lower())
    share = 1.0 / np.sqrt(max(len(words), 1))
    for gram in [*words, *(f"{a} {b}" for a, b in itertools.pairwise(words))]:
        out[f"w {gram}"] = out.get(f"w {gram}", 0.0) + share
    return out


def collect() -> list[dict[str, Any]]:
    """Per op and close lasting memory: its features, vectors, label, pair and file."""
    from bench.locomo import reset
    from engrammar import Client, Settings
    from engrammar.extract.parser._extractor import ParserExtractor
    from engrammar.models import Role, Scope, Status
    from engrammar.scheduler import _extract as extract
    from engrammar.write._gate import LASTING

    pairs = [(path.stem, json.loads(line)) for path in FILES
             for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    extractor = ParserExtractor()
    night2 = NIGHT1 + timedelta(days=1)
    held: dict[int, list[Any]] = {}
    proposed: dict[int, list[Any]] = {}
    with Client.open(Settings(), database=DATABASE) as client:
        reset(client)
        for n, (_, pair) in enumerate(pairs):
            client.record(USER, f"pair-{n}", "user", first_person(pair["old"]), at=NIGHT1)
        extract.run(client, now=NIGHT1 + timedelta(hours=12))
        for n, (_, pair) in enumerate(pairs):
            memories = [m for m in client.memories(USER, f"pair-{n}")
                        if m.status is Status.active]
            if not (lasting := [m for m in memories if m.type in LASTING]):
                continue
            held[n] = lasting
            client.record(USER, f"pair-{n}", "user", pair["new"], at=night2)
            said = [m for m in client.log(USER, f"pair-{n}")
                    if m.at >= night2 and m.role is Role.user]
            ops = extractor.extract(Scope(user_id=USER, chat_id=f"pair-{n}"), said,
                                    memories, night2 + timedelta(hours=12)).ops
            proposed[n] = [op for op in ops if op.content]
        texts = sorted({m.content for ms in held.values() for m in ms}
                       | {op.content for ops in proposed.values() for op in ops})
        vec = dict(zip(texts, client.embedder.embed(texts), strict=True))
    rng = random.Random(7)
    every = [(n, m) for n, ms in held.items() for m in ms]
    rows: list[dict[str, Any]] = []
    for n, ops in proposed.items():
        stem, pair = pairs[n]
        others = [(k, m) for k, m in every if pairs[k][1]["group"] != pair["group"]]
        for op in ops:
            v = vec[op.content]
            close = [(k, m) for k, m in others if float(v @ vec[m.content]) >= FLOOR]
            for k, m in [(n, m) for m in held[n]] + rng.sample(close, min(_OTHERS, len(close))):
                cos = float(v @ vec[m.content])
                rows.append({"x": features(op, m, cos), "v": v, "cos": cos,
                             "y": int(k == n and pair["change"]), "own": k == n,
                             "pair": k, "file": stem, "group": pair["group"],
                             "change": int(pairs[k][1]["change"])})
    return rows


def matrix(rows: list[dict[str, Any]], vectors: str) -> Any:
    from scipy.sparse import csr_matrix, hstack

    data: list[float] = []
    cols: list[int] = []
    ptr = [0]
    for r in rows:
        for name, value in r["x"].items():
            cols.append(zlib.crc32(name.encode()) % DIM)
            data.append(value)
        ptr.append(len(cols))
    x = csr_matrix((data, cols, ptr), shape=(len(rows), DIM), dtype=np.float64)
    if vectors == "none":
        return x
    v = np.array([r["v"] for r in rows], dtype=np.float64)
    if vectors == "scaled":
        v = v * np.array([[r["cos"]] for r in rows])
    return hstack([x, csr_matrix(v)]).tocsr()


def per_pair(rows: list[dict[str, Any]], chance: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each pair's label and its highest chance over the ops beside its own memory."""
    best: dict[int, float] = {}
    label: dict[int, int] = {}
    for r, p in zip(rows, chance, strict=True):
        if r["own"]:
            best[r["pair"]] = max(best.get(r["pair"], 0.0), float(p))
            label[r["pair"]] = r["change"]
    keys = sorted(best)
    return np.array([label[k] for k in keys]), np.array([best[k] for k in keys])


def main(argv: list[str] | None = None) -> None:
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score

    parser = argparse.ArgumentParser(prog="python -m bench change_model")
    parser.add_argument("--c", type=float, default=1.0, help="inverse regularisation")
    parser.add_argument("--wrong", type=float, default=0.02,
                        help="the share of unchanged pairs a bar may end")
    args = parser.parse_args(argv or [])
    rows = collect()
    y = np.array([r["y"] for r in rows])
    files = np.array([r["file"] for r in rows])
    groups = sorted({r["group"] for r in rows})
    random.Random(11).shuffle(groups)
    fold_of = {g: i % 5 for i, g in enumerate(groups)}
    by_group = np.array([fold_of[r["group"]] for r in rows])
    print(f"  {len(rows)} rows, {int(y.sum())} of them an end")
    for vectors in ("none", "plain", "scaled"):
        x = matrix(rows, vectors)
        for name, folds in (("by writer", [files == f.stem for f in FILES]),
                            ("by memory", [by_group == i for i in range(5)])):
            found = []
            for test in folds:
                fit = LogisticRegression(C=args.c, max_iter=5000).fit(x[~test], y[~test])
                part = [r for r, t in zip(rows, test, strict=True) if t]
                label, score = per_pair(part, fit.predict_proba(x[test])[:, 1])
                stays = np.sort(score[label == 0])[::-1]
                bar = stays[int(args.wrong * len(stays))]
                found.append(f"AUC {roc_auc_score(label, score):.2f}, "
                             f"{(score[label == 1] > bar).mean():.0%} of changes at "
                             f"{args.wrong:.0%} wrong")
            print(f"  vectors {vectors}, {name}: " + "; ".join(found))


if __name__ == "__main__":
    main()
