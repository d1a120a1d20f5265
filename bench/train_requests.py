"""Train the learned request decision (``parser._intent``): ``python -m bench train_requests``.

Data (hashes recorded in ``engrammar/extract/parser/data/requests.json``):

- ``bench/data/request_labels.jsonl``: user messages to a chat assistant labelled ``style``,
  ``forget``, ``avoid``, ``remember`` or ``none`` (hard negatives among them) by a session
  that read no code or fixture; every sentence of a message that passes the gate
  (``_intent.addressed``) takes the message's label;
- every turn of the LoCoMo dev split (``/work/shared/data/locomo_dev.json``, CC BY-NC 4.0):
  two people talking to each other, so none of their sentences is a request to an
  assistant, though many say "you" or give an order. They set the base rate.

Cross-validation (4 folds): LoCoMo's conversations one a fold; the labelled messages
stratified by label in groups of near-duplicates (messages whose vectors are within a cosine
of ``--near`` or which share most of their words are one group), so no fold is tested on an
item whose twin it saw. Figures are per message, as the extractor uses the decision; a
message with no sentence past the gate counts as none. Per class: precision and recall
over the labelled messages and LoCoMo's turns, and LoCoMo turns flagged per 100; with the
embedder's vectors and without them.
A message is one row (its gated sentences' features, its vector): the labels are per
message, and a fragment ("wait", "ok speed round") says little alone.
Then it fits on everything and writes ``requests.npz`` and its sha256 into ``_intent.py``.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bench.locomo import DATA, load
from bench.train_parser import Cached, sha

HERE = Path(__file__).parent
LABELS = HERE / "data" / "request_labels.jsonl"
# A few dozen more, written by the session that built the model, in phrasings of its own,
# where the set above is thin: topics said "off limits", permissions, "scratch the bit".
ADDED = HERE / "data" / "request_labels_added.jsonl"
# 460 more by sessions that read no code, test or fixture (2026-11-27): requests inside
# longer messages (with their reason, after small talk, in a subordinate clause), terse and
# non-native forms, and hard negatives (tastes and limits said like requests, one-off
# constraints, prompt injection).
MIXED = HERE / "data" / "request_labels_mixed.jsonl"
NEGATIVES = HERE / "data" / "request_labels_negatives2.jsonl"
# 239 more by a session that read no code (2026-12-07): the user's own statements with the
# "I" dropped, shaped like orders ("dont drink anymore", "quit the union last year"),
# beside orders to the assistant in the same shapes ("dont mention drinking anymore").
SUBJECTLESS = HERE / "data" / "request_labels_subjectless.jsonl"
PACKAGE = HERE.parent / "engrammar" / "extract" / "parser"
OUT = PACKAGE / "data"
FOLDS = 4
SEED = 20261126


@dataclass
class Row:
    message: int       # index of its message
    text: str          # the message as parsed (normalised)
    names: list[str]   # its gated sentences' hashed features
    label: int         # index in INTENTS


@dataclass
class Message:
    text: str
    label: int
    group: str         # "locomo:conv-26", or "labels:<near-duplicate group>"
    fold: int = -1


def gated_rows(messages: Sequence[Message]) -> list[Row]:
    """A row per message with a sentence that passes the gate, as ``_intent.decide`` sees
    it: the gated sentences' features, the whole message's text (for its vector)."""
    from engrammar.extract.parser._intent import addressed, features
    from engrammar.extract.parser._nlp import parse

    rows = []
    for n, (msg, doc) in enumerate(zip(messages, parse([m.text for m in messages]),
                                       strict=True)):
        gated = [s for s in doc.sents if addressed(s)]
        if gated:
            rows.append(Row(n, doc.text, [f for s in gated for f in features(s)], msg.label))
    return rows


def labelled(path: Path) -> list[Message]:
    from engrammar.extract.parser._intent import INTENTS

    names = [i.value for i in INTENTS]
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    return [Message(x["text"], names.index(x["label"]), "") for x in lines]


def locomo(path: Path) -> list[Message]:
    return [Message(t.text, 0, f"locomo:{conv.sample_id}")
            for conv in load(path, None) for s in conv.sessions for t in s.turns
            if t.text.strip()]


_WORD = re.compile(r"[a-z']+")


def near_duplicates(texts: Sequence[str], vectors: np.ndarray, near: float) -> list[int]:
    """A group id per text: texts within cosine ``near`` of each other, or sharing 70% of
    their words, are one group (transitively)."""
    parent = list(range(len(texts)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    sims = vectors @ vectors.T
    words = [set(_WORD.findall(t.lower())) for t in texts]
    for i in range(len(texts)):
        for j in range(i + 1, len(texts)):
            shared = len(words[i] & words[j]) / max(len(words[i] | words[j]), 1)
            if sims[i, j] >= near or shared >= 0.7:
                parent[root(i)] = root(j)
    return [root(i) for i in range(len(texts))]


def assign_folds(messages: list[Message]) -> None:
    from sklearn.model_selection import StratifiedGroupKFold

    convs = sorted({m.group for m in messages if m.group.startswith("locomo:")})
    for m in messages:
        if m.group.startswith("locomo:"):
            m.fold = convs.index(m.group) % FOLDS
    own = [i for i, m in enumerate(messages) if not m.group.startswith("locomo:")]
    split = StratifiedGroupKFold(n_splits=FOLDS, shuffle=True, random_state=SEED)
    for fold, (_, test) in enumerate(split.split(
            own, [messages[i].label for i in own], [messages[i].group for i in own])):
        for k in test:
            messages[own[k]].fold = fold


def matrix(rows: Sequence[Row], vectors: np.ndarray | None, scale: float) -> Any:
    from scipy.sparse import csr_matrix, hstack

    from engrammar.extract.parser._intent import DIM
    from engrammar.extract.parser._weights import columns

    data: list[float] = []
    cols: list[int] = []
    ptr = [0]
    for r in rows:
        c, w = columns(r.names, DIM)
        cols.extend(c.tolist())
        data.extend(w.tolist())
        ptr.append(len(cols))
    x = csr_matrix((data, cols, ptr), shape=(len(rows), DIM), dtype=np.float64)
    if vectors is None or scale <= 0:
        return x
    return hstack([x, csr_matrix(scale * vectors.astype(np.float64))]).tocsr()


def fit(x: Any, y: np.ndarray, c: float) -> Any:
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(C=c, max_iter=4000, class_weight="balanced").fit(x, y)


def full_proba(model: Any, x: Any, classes: int) -> np.ndarray:
    """Probabilities over every class, a class absent from training at zero."""
    p = np.zeros((x.shape[0], classes))
    p[:, model.classes_] = model.predict_proba(x)
    return p


def per_message(rows: Sequence[Row], p: np.ndarray, count: int,
                threshold: float | Sequence[float]) -> np.ndarray:
    """Each message's predicted class, when its probability reaches ``threshold`` (one
    for all, or one per class); else none (0), as for a message that passes no gate."""
    limits = np.broadcast_to(np.asarray(threshold, dtype=float), (p.shape[1],))
    best = np.zeros(count)
    out = np.zeros(count, dtype=int)
    for r, probs in zip(rows, p, strict=True):
        k = int(np.argmax(probs))
        if k != 0 and probs[k] >= limits[k] and probs[k] > best[r.message]:
            best[r.message], out[r.message] = probs[k], k
    return out


def figures(messages: Sequence[Message], predicted: np.ndarray) -> dict[str, Any]:
    from engrammar.extract.parser._intent import INTENTS

    truth = np.array([m.label for m in messages])
    turns = np.array([m.group.startswith("locomo:") for m in messages])
    out: dict[str, Any] = {}
    for k, intent in enumerate(INTENTS):
        if k == 0:
            continue
        chosen = predicted == k
        tp = int((chosen & (truth == k)).sum())
        out[intent.value] = {
            "labelled": int((truth == k).sum()),
            "precision": round(tp / max(int(chosen.sum()), 1), 3),
            "recall": round(tp / max(int((truth == k).sum()), 1), 3),
            "locomo_turns_flagged": int((chosen & turns).sum())}
    hard = np.array([m.label == 0 and not m.group.startswith("locomo:") for m in messages])
    out["none (labelled) called a request"] = int((hard & (predicted != 0)).sum())
    out["locomo turns called a request, per 100"] = round(
        100 * int((turns & (predicted != 0)).sum()) / max(int(turns.sum()), 1), 2)
    return out


def out_of_fold(messages: Sequence[Message], rows: Sequence[Row], vectors: np.ndarray,
                scale: float, c: float) -> np.ndarray:
    """Each gated sentence's probabilities from the model of the folds it is not in."""
    from engrammar.extract.parser._intent import INTENTS

    x = matrix(rows, vectors, scale)
    y = np.array([r.label for r in rows])
    fold = np.array([messages[r.message].fold for r in rows])
    oof = np.zeros((len(rows), len(INTENTS)))
    for k in range(FOLDS):
        model = fit(x[fold != k], y[fold != k], c)
        oof[fold == k] = full_proba(model, x[fold == k], len(INTENTS))
    return oof


def class_thresholds(messages: Sequence[Message], rows: Sequence[Row], oof: np.ndarray,
                     precision: float) -> list[float]:
    """Per class, the lowest threshold at which its out-of-fold precision (per message,
    against the labelled messages and LoCoMo's turns) reaches ``precision``."""
    truth = np.array([m.label for m in messages])
    out = [1.0]
    for k in range(1, oof.shape[1]):
        chosen = 0.95
        for t in np.arange(0.30, 0.951, 0.05):
            limits = [1.01] * oof.shape[1]
            limits[k] = float(t)
            said = per_message(rows, oof, len(messages), limits) == k
            if said.sum() and (said & (truth == k)).sum() / said.sum() >= precision:
                chosen = round(float(t), 2)
                break
        out.append(chosen)
    return out


def cross_validate(messages: Sequence[Message], rows: Sequence[Row], vectors: np.ndarray,
                   scale: float, c: float, thresholds: Sequence[float]) -> dict[str, Any]:
    oof = out_of_fold(messages, rows, vectors, scale, c)
    return {f"{t:.2f}": figures(messages, per_message(rows, oof, len(messages), t))
            for t in thresholds}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench train_requests")
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--labels", type=Path, nargs="+",
                    default=[LABELS, ADDED, MIXED, NEGATIVES, SUBJECTLESS])
    ap.add_argument("--c", type=float, default=4.0, help="inverse regularisation")
    ap.add_argument("--embed-scale", type=float, default=1.0,
                    help="the embedding's weight beside the hashed features (0: none)")
    ap.add_argument("--precision", type=float, default=0.9,
                    help="each class's threshold is the lowest whose out-of-fold precision "
                         "reaches this")
    ap.add_argument("--near", type=float, default=0.9,
                    help="cosine at which two labelled messages are one group")
    ap.add_argument("--errors", action="store_true",
                    help="print the labelled messages the shipped setting gets wrong out of "
                         "fold (to find thin spots in the data, not to fit them)")
    args = ap.parse_args(argv or [])
    from engrammar.extract.parser._intent import DIM, EMBED_DIM, INTENTS
    from engrammar.runtime._embedder import LocalEmbedder

    own = [m for path in args.labels for m in labelled(path)]
    turns = locomo(args.data)
    embedder = Cached(LocalEmbedder(), HERE / "out" / "train_requests_vectors.npz")
    whole = embedder.embed([m.text for m in own])
    for m, g in zip(own, near_duplicates([m.text for m in own], whole, args.near),
                    strict=True):
        m.group = f"labels:{g}"
    messages = own + turns
    assign_folds(messages)
    rows = gated_rows(messages)
    vectors = embedder.embed([r.text for r in rows])
    embedder.save()
    gated = {r.message for r in rows}
    print(f"{len(own)} labelled messages ({len({m.group for m in own})} near-duplicate "
          f"groups, {sum(1 for i in range(len(own)) if i in gated)} past the gate), "
          f"{len(turns)} LoCoMo turns ({len(gated) - sum(1 for i in range(len(own)) if i in gated)}"
          " past the gate)", flush=True)
    thresholds = [0.4, 0.5, 0.6, 0.7, 0.8]
    cv = {"hashed words and parse": cross_validate(messages, rows, vectors, 0.0, args.c,
                                                   thresholds)}
    if args.embed_scale > 0:
        cv[f"with the embedding (scale {args.embed_scale})"] = cross_validate(
            messages, rows, vectors, args.embed_scale, args.c, thresholds)
    oof = out_of_fold(messages, rows, vectors, args.embed_scale, args.c)
    thresholds = class_thresholds(messages, rows, oof, args.precision)
    predicted = per_message(rows, oof, len(messages), thresholds)
    cv["shipped"] = {"thresholds": dict(zip([i.value for i in INTENTS], thresholds,
                                            strict=True)),
                     **figures(messages, predicted)}
    print(json.dumps(cv, indent=2), flush=True)
    if args.errors:
        for m, k in zip(messages, predicted, strict=True):
            if k != m.label:
                print(f"{INTENTS[m.label].value:>8} -> {INTENTS[k].value:<8} {m.text[:110]}")
    x = matrix(rows, vectors, args.embed_scale)
    model = fit(x, np.array([r.label for r in rows]), args.c)
    w = np.zeros((DIM + EMBED_DIM, len(INTENTS)), dtype=np.float32)
    b = np.full(len(INTENTS), -30.0, dtype=np.float32)
    for n, k in enumerate(model.classes_):
        w[: x.shape[1], k] = model.coef_[n]
        b[k] = model.intercept_[n]
    OUT.mkdir(parents=True, exist_ok=True)
    weights = OUT / "requests.npz"
    np.savez_compressed(weights, w=w, b=b, thresholds=np.array(thresholds, np.float32),
                        embed_scale=np.float32(max(args.embed_scale, 0.0)))
    digest = sha(weights)
    module = PACKAGE / "_intent.py"
    module.write_text(re.sub(r'WEIGHTS_SHA256 = "[^"]*"', f'WEIGHTS_SHA256 = "{digest}"',
                             module.read_text()))
    record = {"command": "python -m bench train_requests " + " ".join(argv or []),
              "data": {str(args.data): sha(args.data), **{
                  str(path.resolve().relative_to(HERE.parent.resolve())): sha(path)
                  for path in args.labels}},
              "weights_sha256": digest, "c": args.c, "embed_scale": args.embed_scale,
              "precision": args.precision, "thresholds": thresholds, "near": args.near,
              "labelled_messages": len(own), "locomo_turns": len(turns),
              "gated_messages": len(rows), "cross_validation": cv}
    (OUT / "requests.json").write_text(json.dumps(record, indent=2) + "\n")
    print(f"wrote {weights} (sha256 {digest}) and {OUT / 'requests.json'}")
