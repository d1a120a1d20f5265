"""Recall quality on LoCoMo: evidence recall@k and hit@k of ``Client.recall``, beside BM25
and cosine over the very same items.

``python -m bench locomo [--data PATH] [--mode observations|end-to-end|both]
[--limit-conversations N] [--out DIR] [--budget TOKENS] [--check-batch]``. The data is a
list of LoCoMo samples (``/work/shared/data/locomo_dev.json`` by default; see its README).
Each run works in a database of its own (``memory_bench_locomo``), emptied before each mode.

Two ways of filling the store, one chat per conversation (user ``locomo``, chat = sample id):

- ``observations``: every LoCoMo observation (a fact about a speaker, with the turns it came
  from) is proposed as an ``add`` of an ``episodic`` memory, all of a session's in one
  ``Client.apply`` at the session's time. What the gate makes of each is kept: an add turned
  into a reinforce makes the existing memory cover both observations' turns.
  ``--check-batch`` applies them again one op per call and compares the mappings.
- ``end-to-end``: every turn's text (no speaker name) is recorded as a ``user`` message at the
  session's time plus its position in seconds, and all the nightly jobs run 6 hours after each
  session starts (offline: the rule extractor, unless an LLM is configured). A memory covers
  the turns of its ``source_message_ids``. Conversations run one at a time, the tables
  emptied between them, so one conversation's nightly jobs never see another's clock.

Then each question of categories 1-4 is asked with ``Client.recall`` (``record=False``, a
budget of 100,000 tokens so nothing is dropped for room, or ``--budget``: the product's 600
shows what a default block holds) one day after the conversation's
last session. The block's items that name a memory are ranked by score (ties by memory id);
summaries are skipped. Each question is embedded once, and that vector serves recall and the
cosine baselines: the latencies of the recall call and of the embedding are timed apart.

Baselines rank, per question and against the same chat: the mode's memories as stored (all of
them in ``observations``, the active ones in ``end-to-end``) and, for reference, the raw
turns ("speaker: text", every turn an item, the image captions left out):

- BM25: Okapi, k1 = 1.5, b = 0.75, idf = ln(1 + (N - df + 0.5) / (df + 0.5)) (never
  negative); text lowercased, split on non-alphanumerics, English stop words (the list below)
  removed (words with an apostrophe split at it), no stemming. Items scoring 0 (no query word)
  are not ranked.
- cosine: the client's own embedder on item and question, every item ranked.

One diagnostic row besides: recall's own items reordered by their ``relevance`` score
component alone, to show what the priors (salience, confidence, recency) do to the order.

Evidence ids are normalised (``D:11:26`` -> ``D11:26``, ``D30:05`` -> ``D30:5``, ``D8:6;
D9:17`` split in two); ids naming no turn of the conversation are dropped, and a question
left with no evidence is left out. recall@k: the share of a question's evidence turns covered
by the top k items; hit@k: at least one covered. Items differ in the turns they show (an
excerpt that asks shows its reply; a memory may rest on several messages), so beside them:
recall over the first 5 turns the ranking shows, and how many turns its top 5 items show.
Averaged over questions, overall and per category (1 multi-hop, 2 temporal, 3 open-domain,
4 single-hop).

Writes ``locomo.json`` (every figure; the modes of earlier runs are kept beside the ones run
now), ``locomo.md`` (the tables it prints) and ``locomo_<mode>.jsonl`` (per question: gold
turns, each ranking's items with their turns, and our items' score components).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import math
import os
import re
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from bench.timing import timing
from engrammar import ApplyResult, Client, MemoryType, Op, OpKind, Settings, store
from engrammar.recall._block import EXCERPT, BlockItem

OUT = Path(__file__).parent / "out"
DATA = Path("/work/shared/data/locomo_dev.json")
DATABASE = "memory_bench_locomo"
USER = "locomo"
MODES = ("observations", "end-to-end")
KS = (1, 3, 5, 10)
BUDGET = 100_000  # recall's budget by default: nothing dropped for room
TURNS = 5  # recall over the first this many turns shown, whatever the items holding them
NIGHTLY_AFTER = timedelta(hours=6)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
RANKERS = ("ours", "ours memories", "ours excerpts", "ours memories first", "ours relevance",
           "bm25", "cosine", "bm25 turns", "cosine turns")
JSONL_TOP = 10  # items of each baseline ranking kept in the per-question file
EMBED_BATCH = 64

STOP_WORDS = frozenset((
    "a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are",
    "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but",
    "by", "can", "cannot", "could", "did", "do", "does", "doing", "down", "during", "each",
    "few", "for", "from", "further", "had", "has", "have", "having", "he", "her", "here",
    "hers", "herself", "him", "himself", "his", "how", "i", "if", "in", "into", "is", "it",
    "its", "itself", "just", "let", "me", "more", "most", "my", "myself", "no", "nor", "not",
    "of", "off", "on", "once", "only", "or", "other", "ought", "our", "ours", "ourselves",
    "out", "over", "own", "same", "she", "should", "so", "some", "such", "than", "that", "the",
    "their", "theirs", "them", "themselves", "then", "there", "these", "they", "this", "those",
    "through", "to", "too", "under", "until", "up", "very", "was", "we", "were", "what", "when",
    "where", "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your",
    "yours", "yourself", "yourselves", "s", "t", "d", "ll", "m", "re", "ve",
))
_TOKEN = re.compile(r"[a-z0-9]+")
_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")


# -- the data -------------------------------------------------------------------------------

@dataclass
class Turn:
    dia_id: str
    speaker: str
    text: str


@dataclass
class Observation:
    text: str
    dia_ids: frozenset[str]


@dataclass
class Session:
    number: int
    at: datetime
    turns: list[Turn]
    observations: list[Observation]


@dataclass
class Question:
    question: str
    answer: Any
    category: int
    evidence: list[str]
    dropped: list[str]


@dataclass
class Conversation:
    sample_id: str
    sessions: list[Session]
    questions: list[Question]
    # Questions of categories 1-4 left out for want of any evidence naming a turn.
    no_evidence: int = 0

    @property
    def turns(self) -> list[Turn]:
        return [t for s in self.sessions for t in s.turns]


def session_time(text: str) -> datetime:
    """"1:56 pm on 8 May, 2023" as UTC."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def normalise(raw: str | Sequence[str], turns: set[str]) -> tuple[list[str], list[str]]:
    """Evidence ids as turn ids (in order, once each), and the parts that name no turn."""
    parts = [raw] if isinstance(raw, str) else list(raw)
    kept: list[str] = []
    dropped: list[str] = []
    for part in parts:
        for piece in re.split(r"[;,\s]+", part.strip()):
            if not piece:
                continue
            m = _EVIDENCE.fullmatch(piece)
            dia_id = f"D{int(m[1])}:{int(m[2])}" if m else None
            if dia_id is not None and dia_id in turns:
                if dia_id not in kept:
                    kept.append(dia_id)
            else:
                dropped.append(piece)
    return kept, dropped


def load(path: Path, limit: int | None) -> list[Conversation]:
    samples = json.loads(path.read_text())
    out = []
    for sample in samples[:limit]:
        conv = sample["conversation"]
        numbers = sorted(int(k.split("_")[1]) for k in conv
                         if re.fullmatch(r"session_\d+", k) and conv[k])
        known = {t["dia_id"] for n in numbers for t in conv[f"session_{n}"]}
        sessions = []
        for n in numbers:
            observations = []
            for facts in sample["observation"].get(f"session_{n}_observation", {}).values():
                for text, ids in facts:
                    kept, _ = normalise(ids, known)
                    observations.append(Observation(text, frozenset(kept)))
            sessions.append(Session(
                n, session_time(conv[f"session_{n}_date_time"]),
                [Turn(t["dia_id"], t["speaker"], t["text"]) for t in conv[f"session_{n}"]],
                observations))
        questions = []
        no_evidence = 0
        for qa in sample["qa"]:
            if qa["category"] not in CATEGORIES:
                continue
            kept, dropped = normalise(qa["evidence"], known)
            if not kept:
                no_evidence += 1
                continue
            questions.append(Question(qa["question"], qa.get("answer"), qa["category"], kept,
                                      dropped))
        out.append(Conversation(sample["sample_id"], sessions, questions, no_evidence))
    return out


# -- rankers --------------------------------------------------------------------------------

def tokens(text: str) -> list[str]:
    return [w for w in _TOKEN.findall(text.lower()) if w not in STOP_WORDS]


class BM25:
    """Okapi BM25 over a fixed list of documents."""

    def __init__(self, docs: Sequence[str], k1: float = 1.5, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.docs = [Counter(tokens(d)) for d in docs]
        self.lengths = np.array([sum(c.values()) for c in self.docs], dtype=np.float64)
        self.avgdl = float(self.lengths.mean()) if len(self.docs) else 0.0
        df: Counter[str] = Counter()
        for c in self.docs:
            df.update(c.keys())
        n = len(self.docs)
        self.idf = {w: math.log(1 + (n - f + 0.5) / (f + 0.5)) for w, f in df.items()}

    def scores(self, query: str) -> np.ndarray:
        out = np.zeros(len(self.docs), dtype=np.float64)
        norm = self.k1 * (1 - self.b + self.b * self.lengths / max(self.avgdl, 1e-9))
        for w in set(tokens(query)):
            idf = self.idf.get(w)
            if idf is None:
                continue
            tf = np.array([c.get(w, 0) for c in self.docs], dtype=np.float64)
            out += idf * tf * (self.k1 + 1) / (tf + norm)
        return out


def ranked(scores: np.ndarray, positive_only: bool) -> list[int]:
    """Indices by score, highest first, ties by index."""
    order = sorted(range(len(scores)), key=lambda i: (-float(scores[i]), i))
    return [i for i in order if not positive_only or scores[i] > 0]


def embed(client: Client, texts: Sequence[str]) -> np.ndarray:
    """Unit vectors of ``texts``, in batches of texts of similar length (less padding)."""
    out = np.zeros((len(texts), client.embedder.dim), dtype=np.float32)
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    for start in range(0, len(order), EMBED_BATCH):
        batch = order[start:start + EMBED_BATCH]
        out[batch] = client.embedder.embed([texts[i] for i in batch])
    return out


@dataclass
class Items:
    """What a baseline ranks: each item's key (memory id or turn id), text and turns."""

    keys: list[str | int]
    texts: list[str]
    dia_ids: list[frozenset[str]]
    bm25: BM25 = field(init=False)
    vectors: np.ndarray = field(init=False)

    def index(self, client: Client) -> Items:
        self.bm25 = BM25(self.texts)
        self.vectors = embed(client, self.texts)
        return self

    def rank(self, query: str, vector: np.ndarray) -> dict[str, tuple[list[int], np.ndarray]]:
        """Per baseline: the items' indices best first, and every item's score."""
        bm25 = self.bm25.scores(query)
        cosine = self.vectors @ vector
        return {"bm25": (ranked(bm25, positive_only=True), bm25),
                "cosine": (ranked(cosine, positive_only=False), cosine)}


def turn_items(client: Client, conv: Conversation) -> Items:
    turns = conv.turns
    return Items([t.dia_id for t in turns], [f"{t.speaker}: {t.text}" for t in turns],
                 [frozenset({t.dia_id}) for t in turns]).index(client)


# -- measures -------------------------------------------------------------------------------

def _turn_order(turn: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", turn))


def measure(gold: Sequence[str], ranking: Sequence[frozenset[str]]) -> dict[str, float]:
    """recall@k and hit@k over the top k items; and, as items differ in the turns they
    show (an excerpt with its reply, a memory of two messages), recall over the first
    ``TURNS`` turns the ranking shows and how many turns its top ``TURNS`` items show."""
    wanted = set(gold)
    out: dict[str, float] = {}
    for k in KS:
        covered = wanted & set().union(*ranking[:k])
        out[f"recall@{k}"] = len(covered) / len(wanted)
        out[f"hit@{k}"] = 1.0 if covered else 0.0
    shown = list(dict.fromkeys(t for item in ranking for t in sorted(item, key=_turn_order)))
    out[f"recall@{TURNS} turns"] = len(wanted & set(shown[:TURNS])) / len(wanted)
    out[f"turns@{TURNS}"] = float(len(set().union(*ranking[:TURNS])))
    return out


def average(rows: Sequence[dict[str, float]]) -> dict[str, float]:
    """Means over questions: in % but for the turns counts."""
    if not rows:
        return {}
    means = {key: sum(r[key] for r in rows) / len(rows) for key in rows[0]}
    return {key: round(mean, 2) if key.startswith("turns@") else round(100 * mean, 1)
            for key, mean in means.items()}


def summarise(per_question: Sequence[tuple[int, dict[str, dict[str, float]]]]
              ) -> dict[str, dict[str, Any]]:
    """Per ranker: the averages (in %) overall and per category, with question counts."""
    out: dict[str, dict[str, Any]] = {}
    for ranker in RANKERS:
        rows = [(c, m[ranker]) for c, m in per_question if ranker in m]
        if not rows:
            continue
        by_category = {str(c): {"questions": sum(1 for cat, _ in rows if cat == c),
                                **average([m for cat, m in rows if cat == c])}
                       for c in CATEGORIES}
        out[ranker] = {"overall": {"questions": len(rows), **average([m for _, m in rows])},
                       "by_category": by_category}
    return out


# -- the store ------------------------------------------------------------------------------

def reset(client: Client) -> None:
    """The bench database is ours alone: empty every table but the bookkeeping."""
    with client.db.connection() as conn:
        store.erase_everything(conn)


def fresh(base: Client) -> Client:
    """A client on the same database and embedder with no recall copies of earlier chats
    (the tables were emptied under them: ids start again)."""
    reset(base)
    return Client(base.db, settings=base.settings, embedder=base.embedder, llm=base.llm,
                  counter=base.counter)


def memory_per_op(result: ApplyResult) -> Iterator[int | None]:
    """The memory each proposed op created or reinforced (None: rejected), from the
    decisions and the ids written in order: one per op, two for a new version (the new
    memory first, then the one it supersedes)."""
    written = iter(result.written)
    for d in result.decisions:
        if not d.accepted or d.op is None:
            yield None
            continue
        first = next(written)
        if d.op.op in (OpKind.update, OpKind.contradict) and d.op.content:
            next(written)
        elif d.op.op is OpKind.reinforce:
            assert first == d.target_id, (first, d.target_id)
        yield first


@dataclass
class Filled:
    """One conversation's chat after ingestion: what each memory covers, and the items."""

    covers: dict[int, frozenset[str]]
    items: Items
    stats: dict[str, Any]
    # end-to-end: the turn each recorded message is
    dia_of: dict[int, str] = field(default_factory=dict)

    def covered(self, item: BlockItem) -> frozenset[str]:
        """The turns a block item rests on: its own message ids when the block gives them,
        else its memory's."""
        message_ids = getattr(item, "message_ids", None)
        if self.dia_of and message_ids is not None:
            return frozenset(self.dia_of[i] for i in message_ids if i in self.dia_of)
        assert item.memory_id is not None
        return self.covers.get(item.memory_id, frozenset())


@dataclass
class ModeRun:
    mode: str
    budget: int = BUDGET
    ingest_items: int = 0
    ingest_s: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)
    embed_ms: list[float] = field(default_factory=list)
    per_question: list[tuple[int, dict[str, dict[str, float]]]] = field(default_factory=list)
    coverage: list[float] = field(default_factory=list)  # share of gold turns any item covers
    gate: Counter[str] = field(default_factory=Counter)
    merges: list[dict[str, Any]] = field(default_factory=list)
    conversations: dict[str, dict[str, Any]] = field(default_factory=dict)


def apply_observations(client: Client, conv: Conversation, run: ModeRun, one_by_one: bool
                       ) -> dict[int, set[str]]:
    covers: dict[int, set[str]] = {}
    texts: dict[int, str] = {}
    for session in conv.sessions:
        ops = [Op(op=OpKind.add, type=MemoryType.episodic, content=o.text)
               for o in session.observations]
        if not ops:
            continue
        started = time.perf_counter()
        if one_by_one:
            results = [client.apply(USER, conv.sample_id, [op], now=session.at,
                                    source="bench:locomo") for op in ops]
        else:
            results = [client.apply(USER, conv.sample_id, ops, now=session.at,
                                    source="bench:locomo")]
        run.ingest_s += time.perf_counter() - started
        run.ingest_items += len(ops)
        decisions = [d for r in results for d in r.decisions]
        ids = [m for r in results for m in memory_per_op(r)]
        for obs, d, memory_id in zip(session.observations, decisions, ids, strict=True):
            run.gate[d.code if d.accepted else f"rejected: {d.code}"] += 1
            if memory_id is None:
                continue
            if memory_id in covers:
                run.merges.append({"conversation": conv.sample_id, "session": session.number,
                                   "observation": obs.text, "dia_ids": sorted(obs.dia_ids),
                                   "into": memory_id, "memory": texts[memory_id],
                                   "code": d.code})
            else:
                texts[memory_id] = obs.text
            covers.setdefault(memory_id, set()).update(obs.dia_ids)
    return covers


def fill_observations(client: Client, conv: Conversation, run: ModeRun) -> Filled:
    merged_before = len(run.merges)
    covers = apply_observations(client, conv, run, one_by_one=False)
    memories = client.memories(USER, conv.sample_id)
    frozen = {m: frozenset(c) for m, c in covers.items()}
    items = Items([m.id for m in memories], [m.content for m in memories],
                  [frozen.get(m.id, frozenset()) for m in memories]).index(client)
    # How close each merged observation was to the memory it went into.
    merges = run.merges[merged_before:]
    vectors = embed(client, [m["observation"] for m in merges])
    row = {m.id: i for i, m in enumerate(memories)}
    for merge, vector in zip(merges, vectors, strict=True):
        merge["cosine"] = round(float(items.vectors[row[merge["into"]]] @ vector), 3)
    return Filled(frozen, items, stats={
        "observations": sum(len(s.observations) for s in conv.sessions),
        "memories": len(memories),
        "statuses": dict(Counter(m.status.value for m in memories))})


def fill_end_to_end(client: Client, conv: Conversation, run: ModeRun) -> Filled:
    from engrammar.scheduler import _scheduler as scheduler

    dia_of: dict[int, str] = {}
    record_s = nightly_s = index_s = 0.0
    applied = proposed = indexed = 0
    rejected: Counter[str] = Counter()
    failures: list[str] = []
    for session in conv.sessions:
        started = time.perf_counter()
        for position, turn in enumerate(session.turns):
            message_id = client.record(USER, conv.sample_id, "user", turn.text,
                                       at=session.at + timedelta(seconds=position))
            dia_of[message_id] = turn.dia_id
        record_s += time.perf_counter() - started
        started = time.perf_counter()
        reports = scheduler.run_nightly(client, now=session.at + NIGHTLY_AFTER)
        nightly_s += time.perf_counter() - started
        for report in reports:
            if report.get("failed") or report.get("errors"):
                failures.append(f"session {session.number} {report.get('job')}: "
                                f"{report.get('error') or report.get('errors')}")
            if report.get("job") == "index":
                indexed += report.get("embedded", 0)
                index_s += report.get("seconds", 0.0)
            if report.get("job") == "extract":
                applied += report.get("applied", 0)
                proposed += report.get("proposed", 0)
                rejected.update(report.get("rejected", {}))
    turns = len(dia_of)
    run.ingest_items += turns
    run.ingest_s += record_s + nightly_s
    run.extra["record_s"] = run.extra.get("record_s", 0.0) + record_s
    run.extra["nightly_s"] = run.extra.get("nightly_s", 0.0) + nightly_s
    run.extra["sessions"] = run.extra.get("sessions", 0) + len(conv.sessions)
    run.extra["indexed"] = run.extra.get("indexed", 0) + indexed
    run.extra["index_s"] = run.extra.get("index_s", 0.0) + index_s
    run.gate.update({"applied": applied, **{f"rejected: {k}": v for k, v in rejected.items()}})
    memories = client.memories(USER, conv.sample_id)
    covers = {m.id: frozenset(dia_of[i] for i in m.source_message_ids if i in dia_of)
              for m in memories}
    active = [m for m in memories if m.status.value == "active"]
    items = Items([m.id for m in active], [m.content for m in active],
                  [covers[m.id] for m in active]).index(client)
    return Filled(covers, items, dia_of=dia_of, stats={
        "turns": turns, "proposed": proposed, "applied": applied, "rejected": dict(rejected),
        "memories": len(memories), "statuses": dict(Counter(m.status.value for m in memories)),
        "types_active": dict(Counter(m.type.value for m in active)),
        "record_s": round(record_s, 2), "nightly_s": round(nightly_s, 2),
        "job_failures": failures})


def ask(client: Client, conv: Conversation, filled: Filled, turns: Items, run: ModeRun,
        out: Any) -> None:
    """Every question of the conversation, ranked by recall and by the baselines."""
    now = conv.sessions[-1].at + timedelta(days=1)
    reachable = frozenset[str]().union(*filled.items.dia_ids)
    for q in conv.questions:
        # The query is embedded once, timed on its own, and the same vector serves recall
        # and the cosine baselines.
        started = time.perf_counter()
        vector = client.embedder.embed([q.question])[0]
        run.embed_ms.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        block = client.recall(USER, conv.sample_id, q.question, now=now,
                              budget_tokens=run.budget,
                              record=False, vector=vector)
        run.latencies.append((time.perf_counter() - started) * 1000)
        # The block's order is recall's ranking: memories and excerpts merged by relevance.
        ours = [i for i in block.items if i.memory_id is not None or i.section == EXCERPT]
        ours_dia = [filled.covered(i) for i in ours]
        memories = sorted((n for n, i in enumerate(ours) if i.memory_id is not None),
                          key=lambda n: (-ours[n].score, ours[n].memory_id or 0))
        said = [n for n, i in enumerate(ours) if i.section == EXCERPT]
        rankings: dict[str, tuple[Items, list[int], np.ndarray]] = {}
        for name, (order, scores) in filled.items.rank(q.question, vector).items():
            rankings[name] = (filled.items, order, scores)
        for name, (order, scores) in turns.rank(q.question, vector).items():
            rankings[f"{name} turns"] = (turns, order, scores)
        # The same block items by their relevance component alone: what the priors
        # (salience, confidence, recency...) do to the order.
        by_relevance = sorted(range(len(ours)), key=lambda i: (
            -ours[i].components.get("relevance", 0.0), ours[i].memory_id or 0,
            ours[i].message_id or 0))
        metrics = {"ours": measure(q.evidence, ours_dia),
                   "ours memories": measure(q.evidence, [ours_dia[n] for n in memories]),
                   "ours excerpts": measure(q.evidence, [ours_dia[n] for n in said]),
                   "ours memories first": measure(q.evidence, [ours_dia[n] for n in
                                                               memories + said]),
                   "ours relevance": measure(q.evidence, [ours_dia[i] for i in by_relevance])}
        if not filled.dia_of:  # observations: no log, so no excerpts
            for name in ("ours memories", "ours excerpts", "ours memories first"):
                del metrics[name]
        for name, (items, order, _) in rankings.items():
            metrics[name] = measure(q.evidence, [items.dia_ids[i] for i in order])
        run.per_question.append((q.category, metrics))
        run.coverage.append(len(set(q.evidence) & reachable) / len(q.evidence))
        row: dict[str, Any] = {
            "conversation": conv.sample_id, "question": q.question, "answer": q.answer,
            "category": q.category, "gold": q.evidence, "dropped_evidence": q.dropped,
            "metrics": metrics,
            "ours": [{"memory_id": i.memory_id, "message_id": i.message_id,
                      "content": i.content, "section": i.section,
                      "dia_ids": sorted(d), "score": i.score, "components": i.components}
                     for i, d in zip(ours, ours_dia, strict=True)],
        }
        for name, (items, order, scores) in rankings.items():
            row[name] = [{"key": items.keys[i], "content": items.texts[i],
                          "dia_ids": sorted(items.dia_ids[i]),
                          "score": round(float(scores[i]), 4)} for i in order[:JSONL_TOP]]
        out.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")

# -- a mode ---------------------------------------------------------------------------------

def check_batch(base: Client, convs: Sequence[Conversation],
                batch: dict[str, dict[int, frozenset[str]]], batch_run: ModeRun
                ) -> dict[str, Any]:
    """Apply the observations again one op per call, on emptied tables: the same gate
    decisions and the same memory -> turns mapping as one call per session? (Memory ids
    start again with the tables, and the ops come in the same order.)"""
    client = fresh(base)
    run = ModeRun("check")
    differ = []
    for conv in convs:
        covers = apply_observations(client, conv, run, one_by_one=True)
        if {m: frozenset(c) for m, c in covers.items()} != batch[conv.sample_id]:
            differ.append(conv.sample_id)
    return {"same_mapping": not differ, "differing_conversations": differ,
            "same_decisions": run.gate == batch_run.gate,
            "one_op_per_call_items_per_s": round(run.ingest_items / run.ingest_s, 1),
            "one_call_per_session_items_per_s": round(
                batch_run.ingest_items / batch_run.ingest_s, 1)}


def run_mode(base: Client, mode: str, convs: Sequence[Conversation], out_dir: Path,
             with_check: bool, turn_cache: dict[str, Items], budget: int = BUDGET
             ) -> dict[str, Any]:
    """Fill the store the mode's way, ask every question (recall with ``budget`` tokens),
    and sum it up. ``turn_cache`` keeps each conversation's raw-turn items (the same in
    both modes) across modes."""
    run = ModeRun(mode, budget)
    started = time.perf_counter()
    load_before = os.getloadavg()[0]
    client = fresh(base)
    batch: dict[str, dict[int, frozenset[str]]] = {}
    with (out_dir / f"locomo_{mode}.jsonl").open("w") as out:
        for conv in convs:
            conv_started = time.perf_counter()
            if mode == "observations":
                filled = fill_observations(client, conv, run)
                batch[conv.sample_id] = filled.covers
            else:
                if run.conversations:
                    client = fresh(base)  # one conversation at a time, each on its own clock
                filled = fill_end_to_end(client, conv, run)
            if conv.sample_id not in turn_cache:
                turn_cache[conv.sample_id] = turn_items(client, conv)
            ask(client, conv, filled, turn_cache[conv.sample_id], run, out)
            seconds = time.perf_counter() - conv_started
            run.conversations[conv.sample_id] = {
                **filled.stats, "questions": len(conv.questions),
                "items": len(filled.items.keys), "seconds": round(seconds, 1)}
            print(f"  {mode} {conv.sample_id}: {len(conv.sessions)} sessions, "
                  f"{len(filled.items.keys)} items, {len(conv.questions)} questions, "
                  f"{seconds:.1f} s", flush=True)
    latency = timing(run.latencies)
    embedding = timing(run.embed_ms)
    result: dict[str, Any] = {
        "mode": mode,
        "budget": budget,
        "conversations": [c.sample_id for c in convs],
        "questions": len(run.per_question),
        "questions_without_evidence": sum(c.no_evidence for c in convs),
        "extractor": client.extractor.name if mode == "end-to-end" else None,
        "ingest": {"items": run.ingest_items, "seconds": round(run.ingest_s, 2),
                   "items_per_s": round(run.ingest_items / run.ingest_s, 1),
                   **{k: round(v, 2) if isinstance(v, float) else v
                      for k, v in run.extra.items()}},
        "recall_ms": {"p50": latency.p50, "p95": latency.p95, "calls": len(run.latencies)},
        "query_embed_ms": {"p50": embedding.p50, "p95": embedding.p95},
        "load_average": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "cores": os.cpu_count(),
        "coverage": round(100 * sum(run.coverage) / len(run.coverage), 1),
        "gate": dict(sorted(run.gate.items())),
        "per_conversation": run.conversations,
        "rankers": summarise(run.per_question),
    }
    if mode == "observations":
        result["merges"] = run.merges
        if with_check:
            result["batch_check"] = check_batch(base, convs, batch, run)
    result["seconds"] = round(time.perf_counter() - started, 1)
    return result


# -- the report -----------------------------------------------------------------------------

def ranker_label(ranker: str, mode: str) -> str:
    if ranker == "ours":
        return "recall (ours)"
    if ranker == "ours relevance":
        return "recall's items by relevance only"
    if ranker == "ours memories":
        return "recall's memories only (by score)"
    if ranker == "ours excerpts":
        return "recall's excerpts only"
    if ranker == "ours memories first":
        return "recall's memories, then its excerpts"
    name, _, over = ranker.partition(" ")
    items = over or ("the memories stored" if mode == "observations" else "active memories")
    return f"{'BM25' if name == 'bm25' else 'cosine'} over {items}"


def markdown(result: dict[str, Any]) -> str:
    mode = result["mode"]
    ingest = result["ingest"]
    lines = [f"### LoCoMo, {mode}",
             "",
             f"{result['data']} ({', '.join(result['conversations'])}): "
             f"{result['questions']} questions of categories 1-4 "
             f"({result['questions_without_evidence']} left out: no evidence naming a turn); "
             f"run {result['run_at']}, {result['seconds']} s; recall's budget "
             f"{result.get('budget', BUDGET):,} tokens."]
    if mode == "observations":
        lines.append(f"Ingestion: {ingest['items']} observations applied in "
                     f"{ingest['seconds']} s, {ingest['items_per_s']} items/s (one apply "
                     "per session, embedding included).")
    else:
        lines.append(f"Ingestion: {ingest['items']} turns in {ingest['seconds']} s, "
                     f"{ingest['items_per_s']} turns/s (record {ingest.get('record_s')} s, "
                     f"nightly jobs {ingest.get('nightly_s')} s over "
                     f"{ingest.get('sessions')} sessions); extractor "
                     f"{result['extractor']}. The index job embedded "
                     f"{ingest.get('indexed')} messages in {ingest.get('index_s')} s.")
    items = sum(c["items"] for c in result["per_conversation"].values())
    gate = ", ".join(f"{k} {v}" for k, v in result["gate"].items())
    lines.append(f"Items ranked by the baselines: {items}; gate: {gate}. Evidence turns "
                 f"covered by any item (the ceiling): {result['coverage']}%.")
    ms = result["recall_ms"]
    em = result["query_embed_ms"]
    lines.append(f"Recall latency, {ms['calls']} calls, query embedding excluded: "
                 f"p50 {ms['p50']:.1f} ms, p95 {ms['p95']:.1f} ms; the query's embedding: "
                 f"p50 {em['p50']:.1f} ms, p95 {em['p95']:.1f} ms (load average "
                 f"{result['load_average'][0]} before, {result['load_average'][1]} after, "
                 f"{result['cores']} cores).")
    merges = result.get("merges")
    if merges:
        cosines = sorted(m["cosine"] for m in merges)
        lines.append(f"The gate merged {len(merges)} of {ingest['items']} observations into "
                     f"an earlier memory (a reinforce: the memory keeps its own text and "
                     f"covers both's turns); cosine to it min {cosines[0]:.2f}, median "
                     f"{cosines[len(cosines) // 2]:.2f}, max {cosines[-1]:.2f}.")
    if "batch_check" in result:
        c = result["batch_check"]
        lines.append(f"One apply per session against one per op: same mapping "
                     f"{c['same_mapping']}, same decisions {c['same_decisions']}; "
                     f"{c['one_call_per_session_items_per_s']} against "
                     f"{c['one_op_per_call_items_per_s']} items/s.")
    head = ("| ranker | questions | " + " | ".join(f"R@{k}" for k in KS) + " | "
            + " | ".join(f"H@{k}" for k in KS) + f" | R@{TURNS} turns | turns@{TURNS} |")
    lines += ["", f"recall@k and hit@k, %; recall over the first {TURNS} turns shown, %, and "
              f"the turns the top {TURNS} items show:", ""]
    groups = [("all", None)] + [(f"{c} {n}", str(c)) for c, n in CATEGORIES.items()]
    for title, cat in groups:
        lines += [f"**{title}**", "", head, "|---|" + "---:|" * (3 + 2 * len(KS))]
        for ranker, figures in result["rankers"].items():
            row = figures["overall"] if cat is None else figures["by_category"][cat]
            if not row.get("questions"):
                continue
            cells = ([f"{row[f'recall@{k}']:.1f}" for k in KS]
                     + [f"{row[f'hit@{k}']:.1f}" for k in KS]
                     + [f"{row.get(f'recall@{TURNS} turns', float('nan')):.1f}",
                        f"{row.get(f'turns@{TURNS}', float('nan')):.2f}"])
            lines.append(f"| {ranker_label(ranker, mode)} | {row['questions']} | "
                         + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


# -- the command ----------------------------------------------------------------------------

def parse(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench locomo",
        description="Evidence recall@k of Client.recall on LoCoMo, beside BM25 and cosine.")
    parser.add_argument("--data", type=Path, default=DATA,
                        help=f"LoCoMo samples in the locomo10.json format (default {DATA})")
    parser.add_argument("--mode", choices=(*MODES, "both", "extraction"), default="both",
                        help="extraction: the share of annotated facts the memories keep "
                             "(bench.locomo_facts), no questions asked")
    parser.add_argument("--direct", action="store_true",
                        help="extraction: the extractor alone, no store (a quick reading)")
    parser.add_argument("--limit-conversations", type=int, default=None, metavar="N",
                        help="only the first N conversations")
    parser.add_argument("--out", type=Path, default=OUT, help=f"default {OUT}")
    parser.add_argument("--budget", type=int, default=BUDGET, metavar="TOKENS",
                        help="recall's token budget (default 100,000: nothing is dropped "
                             "for room; the product's default is 600)")
    parser.add_argument("--check-batch", action="store_true",
                        help="observations: apply again one op per call and compare")
    return parser.parse_args(list(argv))


def main(argv: list[str] | None = None) -> None:
    args = parse(argv or [])
    if not args.data.exists():
        raise SystemExit(f"error: no LoCoMo data at {args.data} (--data PATH)")
    convs = load(args.data, args.limit_conversations)
    digest = hashlib.sha256(args.data.read_bytes()).hexdigest()
    modes = MODES if args.mode == "both" else (args.mode,)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "locomo.json"
    try:
        kept: dict[str, Any] = json.loads(path.read_text())["modes"] if path.exists() else {}
    except (ValueError, KeyError):
        kept = {}
    if args.mode == "extraction":
        extraction(args, convs, digest)
        return
    turn_cache: dict[str, Items] = {}
    with Client.open(Settings(), database=DATABASE) as base:
        for mode in modes:
            print(f"locomo {mode}: {len(convs)} conversations from {args.data}", flush=True)
            result = run_mode(base, mode, convs, args.out, args.check_batch, turn_cache,
                              args.budget)
            result = {"data": str(args.data), "sha256": digest,
                      "limit_conversations": args.limit_conversations,
                      "embedder": base.embedder.name,
                      "run_at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), **result}
            kept[mode] = result
            print(markdown(result), flush=True)
    ordered = {m: kept[m] for m in MODES if m in kept}
    path.write_text(json.dumps({"k": list(KS), "categories": CATEGORIES, "modes": ordered},
                               indent=2, default=str))
    (args.out / "locomo.md").write_text("\n\n".join(markdown(r) for r in ordered.values()))
    print(f"wrote {path}, {args.out / 'locomo.md'} and "
          + ", ".join(str(args.out / f"locomo_{m}.jsonl") for m in modes))


def extraction(args: argparse.Namespace, convs: Sequence[Conversation], digest: str) -> None:
    """``--mode extraction``: bench.locomo_facts, which builds on this module (so it is
    found by name, as bench/__main__ finds every bench), written to its own files."""
    facts = importlib.import_module("bench.locomo_facts")
    with Client.open(Settings(), database=DATABASE) as base:
        print(f"locomo extraction: {len(convs)} conversations from {args.data}", flush=True)
        result = facts.run(base, convs, direct=args.direct)
    result = {"data": str(args.data), "sha256": digest,
              "limit_conversations": args.limit_conversations,
              "run_at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), **result}
    text = facts.markdown(result)
    print(text, flush=True)
    name = "locomo_extraction_direct" if args.direct else "locomo_extraction"
    (args.out / f"{name}.json").write_text(json.dumps(result, indent=2, default=str))
    (args.out / f"{name}.md").write_text(text + "\n")
    print(f"wrote {args.out / (name + '.json')} and {args.out / (name + '.md')}")
