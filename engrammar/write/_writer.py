"""Applying ops: embed, pass each through the gate, write what it accepts, record everything.

The caller owns the transaction: the extraction job runs one per chat, so a chat is either
fully applied (watermark included) or untouched.

A chat's writes take few round trips: the lock and the pool in one, the ids of the new
memories reserved in one, and then every insert, update, event and link in one pipelined
batch (``_Writes``). The writer does not wait for a row to come back: it builds each
memory's copy (for the pool, the events and the result) as PostgreSQL would return it
(``_stored``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from typing import Any

import numpy as np

from engrammar import _inputs as inputs
from engrammar import store
from engrammar.errors import InvalidInput
from engrammar.models import Decision, Memory, MemoryType, Op, OpKind, Scope, Status, inherited
from engrammar.runtime._embedder import Embedder
from engrammar.store import Conn, decode_vectors
from engrammar.write._gate import Gate
from engrammar.write._pool import Pool
from engrammar.write._target import Candidate

# Memories the gate compares against and ops may target: stale ones come back when restated.
LIVE = (Status.active.value, Status.stale.value)

# Ops that may insert a memory (and so need an id).
_INSERTING = (OpKind.add, OpKind.update, OpKind.contradict)


@dataclass
class ApplyResult:
    decisions: list[Decision] = field(default_factory=list)
    written: list[int] = field(default_factory=list)

    @property
    def applied(self) -> int:
        return sum(d.accepted for d in self.decisions)

    @property
    def rejected(self) -> Counter[str]:
        return Counter(d.code for d in self.decisions if not d.accepted)

    def to_json(self) -> dict[str, Any]:
        return {
            "applied": self.applied,
            "rejected": dict(self.rejected),
            "written": self.written,
            "decisions": [d.model_dump(mode="json") for d in self.decisions],
        }


def _snapshot(m: Memory) -> dict[str, Any]:
    return m.model_dump(mode="json", exclude={"embedding"})


def _stored(fields: Mapping[str, Any], tz: tzinfo | None) -> dict[str, Any]:
    """Memory fields as a row of them reads back: ``real`` columns through float32 (and
    its shortest decimal, as PostgreSQL prints it), times in the session's time zone."""
    out: dict[str, Any] = {}
    for key, value in fields.items():
        if key in ("confidence", "salience"):
            value = float(str(np.float32(value)))
        elif isinstance(value, datetime) and tz is not None:
            value = value.astimezone(tz)
        out[key] = value
    return out


def scope_of(m: Memory) -> Scope:
    """The scope a memory lives in: its chat's, or its user's (store.user_scope)."""
    return Scope.model_construct(user_id=m.user_id, chat_id=m.chat_id)


@dataclass
class _Writes:
    """One ``apply``'s writes, sent together at its end: nothing reads their results. The
    inserts go first, each kind of row in one ``executemany``; the updates follow in order
    (a memory inserted and then reinforced in one call is updated after its insert); then
    the links, and the events in the order they happened. Each names its scope: the chat's,
    or the user's for a user-wide memory (and its links and events)."""

    inserts: list[tuple[Scope, int, dict[str, Any]]] = field(default_factory=list)
    updates: list[tuple[Scope, int, dict[str, Any]]] = field(default_factory=list)
    links: list[tuple[Scope, int, int, str]] = field(default_factory=list)
    events: list[tuple[Scope, store.NewEvent]] = field(default_factory=list)

    def send(self, conn: Conn, now: datetime) -> None:
        if not (self.inserts or self.updates or self.links or self.events):
            return
        scopes: list[Scope] = list(dict.fromkeys(
            [w[0] for w in self.inserts] + [w[0] for w in self.links]
            + [w[0] for w in self.events]))
        with conn.pipeline():  # one round trip, in the caller's transaction
            for scope in scopes:
                store.put_memories(conn, scope, [(i, f) for s, i, f in self.inserts
                                                 if s == scope])
            for scope, memory_id, fields in self.updates:
                store.set_memory(conn, scope, memory_id, fields)
            for scope in scopes:
                store.insert_links(conn, scope, [(a, b, k) for s, a, b, k in self.links
                                                 if s == scope], now)
                store.insert_events(conn, scope, [e for s, e in self.events if s == scope])


class _Ids:
    """The ids of the memories one ``apply`` inserts: reserved the first time one is needed,
    in one round trip, for every op left that may insert."""

    def __init__(self, conn: Conn, ops: Sequence[Op]) -> None:
        self.conn = conn
        self.ops = ops
        self.at = 0  # the op being written
        self.free: list[int] = []

    def take(self) -> int:
        if not self.free:
            left = sum(op.op in _INSERTING and bool(op.content) for op in self.ops[self.at:])
            self.free = store.reserve_memory_ids(self.conn, max(left, 1))
        return self.free.pop(0)


class Writer:
    def __init__(self, gate: Gate, embedder: Embedder, max_memory_chars: int = 2_000,
                 user_wide: frozenset[MemoryType] = frozenset()) -> None:
        self.gate = gate
        self.embedder = embedder
        self.max_memory_chars = max_memory_chars
        # The types whose memories belong to the user, not the chat (settings.scopes).
        self.user_wide = user_wide

    def load_pool(self, conn: Conn, scope: Scope) -> Pool:
        """The chat's live memories, read under the chat's write lock (held until the
        caller's transaction ends): no other writer decides on this pool meanwhile. When
        some types are user-wide and the chat is not private, the user scope's live
        memories too, under its lock (taken after the chat's, as every writer does)."""
        with conn.pipeline():  # one round trip: the lock, then the rows
            store.lock_chat(conn, scope)
            memories, blobs = store.pool_rows(conn, scope, LIVE)
            resolved = store.resolved_loops(conn, scope)
        home = None
        if self.user_wide and not store.is_user_scope(scope) \
                and not store.chat_private(conn, scope):
            home = store.user_scope(scope.user_id)
            with conn.pipeline():
                store.lock_user_scope(conn, scope.user_id)
                shared, shared_blobs = store.pool_rows(conn, home, LIVE)
            memories, blobs = [*shared, *memories], [*shared_blobs, *blobs]
        decoded = decode_vectors(blobs)
        if decoded is None:  # vectors of mixed widths (an embedder change half done)
            vectors = [None if b is None else np.frombuffer(b, dtype=">f4")[1:]
                       .astype(np.float32) for b in blobs]
        else:
            matrix, present = decoded
            rows = np.ascontiguousarray(matrix.T)
            vectors = [rows[i] if present[i] else None for i in range(len(blobs))]
        pool = Pool((Candidate(m, v) for m, v in zip(memories, vectors, strict=True)),
                    self.gate.s, resolved=resolved)
        if home is not None:
            pool.home, pool.shared = home, self.user_wide
        return pool

    def apply(self, conn: Conn, scope: Scope, ops: Sequence[Op], *, now: datetime,
              source: str, handles: Mapping[str, int] | None = None,
              pool: Pool | None = None,
              vectors: Sequence[np.ndarray | None] | None = None) -> ApplyResult:
        """Decide and write ``ops`` in order, each seeing the effect of the ones before.
        Ops that are not clean (see _inputs) fail the call with InvalidInput before
        anything is written, whoever proposed them."""
        ops = inputs.ops(ops, scope, self.max_memory_chars)
        if pool is None:
            pool = self.load_pool(conn, scope)
        _check_provenance(conn, scope, ops)
        if vectors is None:
            vectors = self.embed_ops(ops)
        pool.expect(vectors)
        # The app metadata of the messages the ops rest on: a new memory inherits it.
        evidence = sorted({i for op in ops for i in op.evidence})
        said = store.message_metadata(conn, scope, evidence) if evidence else {}
        result = ApplyResult()
        writes = _Writes()
        ids = _Ids(conn, ops)
        superseded = self.gate.superseded(ops, pool.memories())
        for i, (op, vector) in enumerate(zip(ops, vectors, strict=True)):
            ids.at = i
            decision = superseded.get(i) or self.gate.decide(
                op, vector, pool.shortlist(op, vector, handles), handles, pool.resolved)
            result.decisions.append(decision)
            if not decision.accepted:
                writes.events.append((scope, store.NewEvent(
                    None, "reject", None, op.model_dump(mode="json"),
                    f"{decision.code}: {decision.reason}", source, op.evidence, now)))
                continue
            written = self._write(conn, scope, decision, vector, pool, writes, ids, now=now,
                                  source=source, said=said)
            result.written.extend(written)
        writes.send(conn, now)
        return result

    def embed_ops(self, ops: Sequence[Op]) -> list[np.ndarray | None]:
        texts = [op.content for op in ops if op.content]
        matrix = self.embedder.embed(texts) if texts else np.zeros((0, self.embedder.dim))
        it = iter(matrix)
        return [next(it) if op.content else None for op in ops]

    # -- writing --------------------------------------------------------------------------

    def _update(self, conn: Conn, target: Memory, fields: dict[str, Any],
                writes: _Writes) -> Memory:
        """Queue an update of ``target``; its copy after the update, as the row reads."""
        writes.updates.append((scope_of(target), target.id, fields))
        row = {**target.model_dump(exclude={"embedding"}), **fields}
        return Memory.model_validate(_stored(row, conn.info.timezone))

    def _write(self, conn: Conn, scope: Scope, d: Decision, vector: np.ndarray | None,
               pool: Pool, writes: _Writes, ids: _Ids, *, now: datetime,
               source: str, said: Mapping[int, dict[str, Any]]) -> list[int]:
        op = d.op
        assert op is not None
        found = pool.get(d.target_id)
        target = None if found is None else found.memory
        if op.op is OpKind.add:
            new = self._insert(conn, _home(scope, pool, op), op, vector, now, source, writes, ids,
                               reason=d.reason, app=_inherited(op, said))
            pool.add(Candidate(new, vector))
            return [new.id]
        assert target is not None, "the gate accepts targeted ops only with a live target"
        if op.op is OpKind.reinforce:
            changed = self._update(conn, target, {
                "reinforce_count": target.reinforce_count + 1,
                "last_reinforced_at": now,
                "updated_at": now,
                "status": Status.active.value,
                "status_changed_at": now if target.status is not Status.active
                else target.status_changed_at,
                # Each restatement makes the fact a little more certain and more salient.
                "confidence": min(1.0, max(target.confidence, op.confidence) + 0.05),
                "salience": max(target.salience, op.salience),
                "source_message_ids": sorted({*target.source_message_ids, *op.evidence}),
            }, writes)
            self._event(writes, changed.id, "reinforce", target, changed, d, source, now)
            pool.replace(changed)
            return [changed.id]
        if op.op in (OpKind.update, OpKind.contradict) and op.content:
            # A new version keeps what the op does not restate: its slot (so the next value
            # of the slot is recognised), pin, type, and an open loop's due date.
            inherit = op.model_copy(update={"pinned": op.pinned or target.pinned,
                                            "type": op.type or target.type,
                                            "slot": op.slot or target.slot,
                                            "due": op.due or target.due_at})
            new = self._insert(conn, _home(scope, pool, inherit), inherit, vector, now,
                               source, writes, ids, reason=d.reason, event=None,
                               app={**target.app_metadata, **_inherited(op, said)})
            status = Status.archived if op.op is OpKind.update else Status.contradicted
            old = self._update(conn, target, {
                "status": status.value, "status_changed_at": now, "updated_at": now,
                "superseded_by": new.id,
            }, writes)
            kind = "supersedes" if op.op is OpKind.update else "contradicts"
            writes.links.append((scope_of(new), new.id, target.id, kind))
            self._event(writes, new.id, op.op.value, target, new, d, source, now)
            self._event(writes, old.id, "superseded" if op.op is OpKind.update
                        else "contradicted", target, old, d, source, now)
            pool.drop(old.id)
            pool.add(Candidate(new, vector))
            return [new.id, old.id]
        # contradict with no replacement, close_loop and forget all retire the target.
        status = Status.contradicted if op.op is OpKind.contradict else Status.archived
        meta = {**target.metadata, "closed_reason": op.reason or op.op.value}
        if op.content:
            meta["resolution"] = op.content
        old = self._update(conn, target, {
            "status": status.value, "status_changed_at": now, "updated_at": now,
            "metadata": meta,
        }, writes)
        self._event(writes, old.id, op.op.value, target, old, d, source, now)
        pool.drop(old.id)
        if op.op is OpKind.close_loop and op.content:
            pool.resolved.append(old)
        return [old.id]

    def _insert(self, conn: Conn, scope: Scope, op: Op, vector: np.ndarray | None,
                now: datetime, source: str, writes: _Writes, ids: _Ids, *, reason: str,
                event: str | None = "add", app: dict[str, Any] | None = None) -> Memory:
        assert op.type is not None and op.surface is not None
        metadata: dict[str, Any] = {"source": source}
        if op.sources:
            metadata["source_memory_ids"] = op.sources
        fields: dict[str, Any] = {
            "type": op.type.value,
            "content": op.content,
            "confidence": op.confidence,
            "salience": op.salience,
            "pinned": op.pinned,
            "surface": op.surface.value,
            "slot": op.slot,
            "embedding": vector,
            "created_at": now,
            "updated_at": now,
            "status_changed_at": now,
            "due_at": op.due if op.type is MemoryType.open_loop else None,
            "source_message_ids": sorted(set(op.evidence)),
            "metadata": metadata,
            "app_metadata": app or {},
        }
        memory_id = ids.take()
        writes.inserts.append((scope, memory_id, fields))
        new = Memory.model_validate({
            "id": memory_id, "user_id": scope.user_id, "chat_id": scope.chat_id,
            **_stored({k: v for k, v in fields.items() if k != "embedding"},
                      conn.info.timezone)})
        writes.links.extend((scope, new.id, src, "derived_from") for src in op.sources)
        if event is not None:
            writes.events.append((scope, store.NewEvent(new.id, event, None, _snapshot(new),
                                                        reason, source, op.evidence, now)))
        return new

    def _event(self, writes: _Writes, memory_id: int, op: str, before: Memory, after: Memory,
               d: Decision, source: str, now: datetime) -> None:
        evidence = d.op.evidence if d.op else []
        writes.events.append((scope_of(after), store.NewEvent(
            memory_id, op, _snapshot(before), _snapshot(after), d.reason, source, evidence,
            now)))


def _inherited(op: Op, said: Mapping[int, dict[str, Any]]) -> dict[str, Any]:
    """The app metadata of the messages ``op`` rests on, merged in id order."""
    return inherited([said[i] for i in sorted(set(op.evidence)) if i in said])


def _home(scope: Scope, pool: Pool, op: Op) -> Scope:
    """Where a new memory goes: the user's scope for a user-wide type in a chat that
    shares it, else the chat's."""
    if pool.home is not None and op.type in pool.shared:
        return pool.home
    return scope


def _check_provenance(conn: Conn, scope: Scope, ops: Sequence[Op]) -> None:
    """Sources stay inside their scope: an op's evidence names messages of this chat and
    its sources memories of this chat, or the whole call is refused."""
    for name, ids, unknown in (
            ("evidence", [i for op in ops for i in op.evidence], store.unknown_messages),
            ("sources", [i for op in ops for i in op.sources], store.unknown_memories)):
        foreign = unknown(conn, scope, ids)
        if foreign:
            what = "message" if name == "evidence" else "memory"
            raise InvalidInput(f"ops for chat {scope}: {name} {foreign[:5]} name no "
                               f"{what} of this chat")
