"""Phases 2 and 3: what should have been stopped and was not.

Duplicates: each night of the conversation is replayed in a fresh scope that already holds
the memories the first run had after that night. Extracting the same messages again must
change nothing: every op is rejected or becomes a reinforce; anything else is a leak.

Isolation: memories that match every query of the fixture (the query itself, and a copy of
each of the fixture's memories) are planted in another chat of the same user and in the same
chat of another user. Any memory in a block that is neither the chat's own nor, in a chat
that shares the user's scope, a user-wide one of the same user is a leak.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from engrammar.evals._conversation import SEED_SOURCE, Night, at
from engrammar.evals._fixtures import Fixture
from engrammar.evals._matching import describe_decision
from engrammar.evals._metrics import FixtureResult
from engrammar.evals._session import Session
from engrammar.models import Memory, MemoryType, Op, OpKind, Scope
from engrammar.write._writer import LIVE

PLANT_SOURCE = "eval:plant"


def duplicates(session: Session, fixture: Fixture, user: str, nights: Sequence[Night],
               result: FixtureResult) -> None:
    client = session.client
    for n, night in enumerate(nights):
        replay = session.scope_user(f"{user}-dup{n}")
        session.log(f"-- duplicates: night {night.day} replayed over its own memories")
        seeded_at = at(night.day) - timedelta(hours=1)
        seeded: set[int] = set()  # a user-wide memory is listed by every chat sharing it
        for chat, listed in night.after.items():
            memories = [m for m in listed if m.id not in seeded]
            seeded.update(m.id for m in memories)
            applied = client.apply(replay, chat, session.seed_ops(memories),
                                   source=SEED_SOURCE, now=seeded_at)
            for d in applied.decisions:
                if not (d.accepted and d.op is not None and d.op.op is OpKind.add):
                    # Two live memories of the first run that the gate calls one fact.
                    leak(session, result, f"night {night.day} {chat}: the first run's "
                         f"memories hold a duplicate: {describe_decision(d)}")
            resolve(session, replay, chat, night.resolved.get(chat, []), seeded_at)
        for turn, when in night.turns:
            client.record(replay, turn.chat, turn.role.value, turn.text, at=when)
        for chat, decisions in session.night(replay, fixture.chats(), night.now).items():
            for d in decisions:
                if d.accepted and d.op is not None and d.op.op is not OpKind.reinforce:
                    leak(session, result, f"night {night.day} {chat} replayed: "
                         f"{describe_decision(d)}")


def resolve(session: Session, user: str, chat: str, loops: Sequence[Memory],
            seeded_at: datetime) -> None:
    """The first run's resolved loops, in the replay: each written and closed by the words
    that closed it, as the first run left them."""
    client = session.client
    for loop in loops:
        seeded = client.apply(user, chat, session.seed_ops([loop]), source=SEED_SOURCE,
                              now=seeded_at)
        [d] = seeded.decisions
        if d.accepted and d.op is not None and d.op.op is OpKind.add:
            [written] = seeded.written
            client.apply(user, chat, [Op(op=OpKind.close_loop, target=str(written),
                                         content=str(loop.metadata["resolution"]))],
                         source=SEED_SOURCE, now=seeded_at)


def leak(session: Session, result: FixtureResult, reason: str) -> None:
    result.counts.duplicate_leaks += 1
    result.failures.append(f"duplicate leak: {reason}")
    session.log(f"  LEAK {reason}")


def isolation(session: Session, fixture: Fixture, user: str, now: datetime,
              result: FixtureResult) -> None:
    """Plant in another chat of the user and in the same chat of another user; a block may
    hold only the chat's own memories and, where the chat shares the user's scope, the
    user-wide ones (those planted in the other chat included: that is the sharing)."""
    client = session.client
    other = session.scope_user(f"{user}-other")
    e = fixture.expect
    queries = [r.query for r in e.recall] + [r.query for later in e.later for r in later.recall]
    queries += [q for rep in e.repeat for q in rep.queries]
    wide = set(fixture.scopes.user_wide)
    session.log("-- isolation: matching memories planted in other chats")
    for chat in fixture.chats():
        own = client.memories(user, chat)
        asked = list(dict.fromkeys(queries + [m.content for m in own if m.status.value in LIVE]))
        ops = session.seed_ops([m for m in own if m.status.value in LIVE])
        ops += [Op(op=OpKind.add, type=MemoryType.profile, content=q, salience=0.9,
                   confidence=0.9, pinned=True) for q in queries]
        planted: set[int] = set()
        for scope in (Scope(user_id=user, chat_id=f"{chat}-elsewhere"),
                      Scope(user_id=other, chat_id=chat)):
            applied = client.apply(scope.user_id, scope.chat_id, ops, source=PLANT_SOURCE,
                                   now=now)
            planted.update(applied.written)
        # What the chat may show, by where each memory lives (not by what the client lists).
        allowed = {m.id for m in client.memories(user, chat)
                   if m.user_id == user and (m.chat_id == chat or (
                       m.chat_id == "" and fixture.shares(chat) and m.type in wide))}
        for query in asked:
            block = client.recall(user, chat, query, now=now + timedelta(minutes=5),
                                  record=False)
            for item in block.items:
                if item.memory_id is not None and item.memory_id not in allowed:
                    result.counts.isolation_leaks += 1
                    how = "planted" if item.memory_id in planted else "not the chat's"
                    reason = (f"isolation leak: memory {item.memory_id} {item.content!r} "
                              f"({how}) in the block of {chat} for {query!r}")
                    result.failures.append(reason)
                    session.log(f"  LEAK {reason}")
        session.log(f"  {chat}: {len(asked)} queries against {len(planted)} planted memories")
