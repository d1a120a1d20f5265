"""What extraction keeps of LoCoMo's annotated facts: ``python -m bench locomo --mode
extraction`` (this module is that mode; ``bench.locomo`` parses the command).

Every turn of a conversation is recorded as a ``user`` message (its text alone, no speaker
name: both speakers are "the user", as in the end-to-end mode) at its session's time plus its
position in seconds, and all the nightly jobs run 6 hours after each session starts. Then
each annotated ``observation`` (a fact about a speaker, with the turns it came from) is looked
for among the chat's memories, whatever their status:

- **sourced**: some memory rests on one of the fact's turns (its ``source_message_ids``);
- **kept**: such a memory also says what the fact says: cosine >= 0.55 between the two
  contents with the client's embedder, or at least half of the fact's content words in the
  memory's (words as in ``bench.locomo.tokens``, the speakers' names left out).

Beside it, a memory "matches" when it keeps at least one fact, and the figures are given per
memory type and per 100 turns. The reference is every turn's own text taken as a memory
resting on its turn, through the same matcher. ``--direct`` skips the database: the client's
extractor is called on each session's messages with no memories (no gate, no jobs), a quick
reading for tuning, not the measure.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import numpy as np

from bench.locomo import (
    NIGHTLY_AFTER,
    USER,
    Conversation,
    embed,
    fresh,
)
from bench.locomo import (
    tokens as content_words,
)
from engrammar import Client
from engrammar.models import Message, Role, Scope

COSINE = 0.55
WORDS = 0.5


@dataclass
class Kept:
    """A memory as the measure sees it: its text, type and the turns it rests on."""

    content: str
    type: str
    dia_ids: frozenset[str]
    status: str = "active"


def record_and_run(client: Client, conv: Conversation) -> tuple[list[Kept], dict[str, Any]]:
    """The conversation recorded turn by turn, the nightly jobs after each session."""
    from engrammar.scheduler import _scheduler as scheduler

    dia_of: dict[int, str] = {}
    failures: list[str] = []
    extract_s = 0.0
    for session in conv.sessions:
        for position, turn in enumerate(session.turns):
            message_id = client.record(USER, conv.sample_id, "user", turn.text,
                                       at=session.at + timedelta(seconds=position))
            dia_of[message_id] = turn.dia_id
        for report in scheduler.run_nightly(client, now=session.at + NIGHTLY_AFTER):
            if report.get("failed") or report.get("errors"):
                failures.append(f"session {session.number} {report.get('job')}: "
                                f"{report.get('error') or report.get('errors')}")
            if report.get("job") == "extract":
                extract_s += float(report.get("seconds", 0.0))
    memories = client.memories(USER, conv.sample_id)
    kept = [Kept(m.content, m.type.value,
                 frozenset(dia_of[i] for i in m.source_message_ids if i in dia_of),
                 m.status.value) for m in memories]
    return kept, {"job_failures": failures, "extract_s": round(extract_s, 2)}


def extract_direct(client: Client, conv: Conversation) -> list[Kept]:
    """The extractor alone on each session's messages: no store, no gate, no memories."""
    out: list[Kept] = []
    scope = Scope(user_id=USER, chat_id=conv.sample_id)
    next_id = 1
    for session in conv.sessions:
        messages = []
        dia_of: dict[int, str] = {}
        for position, turn in enumerate(session.turns):
            messages.append(Message(id=next_id, user_id=USER, chat_id=conv.sample_id,
                                     role=Role.user, content=turn.text,
                                     at=session.at + timedelta(seconds=position)))
            dia_of[next_id] = turn.dia_id
            next_id += 1
        result = client.extractor.extract(scope, messages, [], session.at + NIGHTLY_AFTER)
        for op in result.ops:
            if op.content:
                out.append(Kept(op.content, (op.type.value if op.type else op.op.value),
                                frozenset(dia_of[i] for i in op.evidence if i in dia_of)))
    return out


def each_turn(conv: Conversation) -> list[Kept]:
    return [Kept(t.text, "turn", frozenset({t.dia_id})) for t in conv.turns]


def names_of(conv: Conversation) -> frozenset[str]:
    return frozenset(w for t in conv.turns for w in content_words(t.speaker))


def says(fact: np.ndarray, fact_words: set[str], memory: np.ndarray,
         memory_words: set[str]) -> bool:
    """Whether a memory says a fact: cosine >= COSINE between their vectors, or at least
    WORDS of the fact's content words (speaker names aside) in the memory."""
    return float(fact @ memory) >= COSINE or bool(
        fact_words and len(fact_words & memory_words) >= WORDS * len(fact_words))


def score(client: Client, conv: Conversation, memories: Sequence[Kept]) -> dict[str, Any]:
    """Facts kept and sourced, memories matching, per type, for one conversation."""
    facts = [o for s in conv.sessions for o in s.observations if o.dia_ids]
    names = names_of(conv)
    fact_words = [set(content_words(o.text)) - names for o in facts]
    memory_words = [set(content_words(m.content)) for m in memories]
    fv = embed(client, [o.text for o in facts]) if facts else np.zeros((0, 1))
    mv = embed(client, [m.content for m in memories]) if memories else np.zeros((0, 1))
    by_turn: dict[str, list[int]] = {}
    for j, m in enumerate(memories):
        for d in m.dia_ids:
            by_turn.setdefault(d, []).append(j)
    kept = sourced = 0
    matching: set[int] = set()
    kept_by_type: Counter[str] = Counter()
    for i, fact in enumerate(facts):
        near = sorted({j for d in fact.dia_ids for j in by_turn.get(d, [])})
        if not near:
            continue
        sourced += 1
        good = [j for j in near if says(fv[i], fact_words[i], mv[j], memory_words[j])]
        if good:
            kept += 1
            matching.update(good)
            kept_by_type[memories[good[0]].type] += 1
    types = Counter(m.type for m in memories)
    matched_types = Counter(memories[j].type for j in matching)
    return {"facts": len(facts), "kept": kept, "sourced": sourced,
            "turns": len(conv.turns), "memories": len(memories),
            "matching": len(matching), "types": dict(types),
            "matching_types": dict(matched_types), "kept_by_type": dict(kept_by_type),
            "statuses": dict(Counter(m.status for m in memories))}


def total(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Sums over conversations and the shares, in %."""
    out: dict[str, Any] = {}
    for key in ("facts", "kept", "sourced", "turns", "memories", "matching"):
        out[key] = sum(r[key] for r in rows)
    for key in ("types", "matching_types", "kept_by_type", "statuses"):
        c: Counter[str] = Counter()
        for r in rows:
            c.update(r[key])
        out[key] = dict(sorted(c.items()))
    facts, memories = max(out["facts"], 1), max(out["memories"], 1)
    out["kept_pct"] = round(100 * out["kept"] / facts, 1)
    out["sourced_pct"] = round(100 * out["sourced"] / facts, 1)
    out["per_100_turns"] = round(100 * out["memories"] / max(out["turns"], 1), 1)
    out["matching_pct"] = round(100 * out["matching"] / memories, 1)
    return out


def run(base: Client, convs: Sequence[Conversation], direct: bool = False) -> dict[str, Any]:
    started = time.perf_counter()
    ours: list[dict[str, Any]] = []
    reference: list[dict[str, Any]] = []
    extra: dict[str, Any] = {}
    client = base
    for conv in convs:
        conv_started = time.perf_counter()
        if direct:
            memories = extract_direct(base, conv)
        else:
            client = fresh(base)  # each conversation on its own clock
            memories, info = record_and_run(client, conv)
            extra[conv.sample_id] = info
        ours.append(score(client, conv, memories))
        reference.append(score(client, conv, each_turn(conv)))
        print(f"  extraction {conv.sample_id}: {ours[-1]['kept']}/{ours[-1]['facts']} facts "
              f"kept, {ours[-1]['memories']} memories, "
              f"{time.perf_counter() - conv_started:.1f} s", flush=True)
    return {"mode": "extraction", "direct": direct,
            "conversations": [c.sample_id for c in convs],
            "extractor": base.extractor.name, "matcher": {"cosine": COSINE, "words": WORDS},
            "ours": total(ours), "each turn": total(reference),
            "per_conversation": {c.sample_id: r for c, r in zip(convs, ours, strict=True)},
            "jobs": extra, "seconds": round(time.perf_counter() - started, 1)}


def markdown(result: dict[str, Any]) -> str:
    lines = [f"### LoCoMo, extraction{' (direct: extractor alone)' if result['direct'] else ''}",
             "", f"{result['data']} ({', '.join(result['conversations'])}); extractor "
             f"{result['extractor']}; run {result['run_at']}, {result['seconds']} s.", "",
             "| memories | facts kept | sourced | memories / 100 turns | memories matching |",
             "|---|---:|---:|---:|---:|"]
    for name in ("ours", "each turn"):
        r = result[name]
        label = "extracted" if name == "ours" else "each turn as a memory"
        lines.append(f"| {label} | {r['kept_pct']}% ({r['kept']}/{r['facts']}) | "
                     f"{r['sourced_pct']}% | {r['per_100_turns']} | {r['matching_pct']}% |")
    r = result["ours"]
    lines += ["", "Per type (extracted): memories, matching a fact, facts kept by it first:", ""]
    for t, n in r["types"].items():
        lines.append(f"- {t}: {n} memories, {r['matching_types'].get(t, 0)} matching, "
                     f"{r['kept_by_type'].get(t, 0)} facts")
    if r["statuses"]:
        lines.append(f"- statuses: {', '.join(f'{k} {v}' for k, v in r['statuses'].items())}")
    return "\n".join(lines)
