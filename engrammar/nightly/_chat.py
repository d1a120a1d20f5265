"""Extracting one chat, the one way both the synchronous job and the Batch API do it:
read the messages past the watermark, propose ops against the chat's memories, apply them
through the writer and advance the watermark, all in the caller's transaction."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from engrammar import store
from engrammar.extract._extractor import Extraction
from engrammar.extract._language import Unread
from engrammar.models import Memory, Message, Op, Scope
from engrammar.write._writer import ApplyResult, Writer


@dataclass
class ChatExtraction:
    """One chat's night: what was read and proposed, and what the gate made of it."""

    scope: Scope
    messages: int
    proposed: int
    result: ApplyResult
    watermark: int
    extractor: str
    ops: list[Op] = field(default_factory=list)
    # Messages left out as in a language the extractor cannot read (offline path only).
    unread: Unread = field(default_factory=Unread)


Propose = Callable[[list[Message], list[Memory]], "Extraction | str"]


def read_new(conn: store.Conn, scope: Scope, watermark: int, read_at: datetime,
             through: int | None = None) -> list[Message]:
    """The chat's messages past ``watermark`` in id order, up to the first stamped after
    ``read_at`` (and past ``through``, when given): the watermark then never passes a
    message a run did not read, whatever order the stamps came in."""
    out: list[Message] = []
    for m in store.read_new_messages(conn, scope, watermark):
        if m.at > read_at or (through is not None and m.id > through):
            break
        out.append(m)
    return out


def extract_chat(conn: store.Conn, scope: Scope, watermark: int, writer: Writer,
                 propose: Propose, *, now: datetime, source: str,
                 read_at: datetime | None = None, through: int | None = None
                 ) -> ChatExtraction | str:
    """One chat's extraction inside the caller's transaction, for the synchronous job and
    the Batch API alike: read the messages past the watermark, let ``propose`` turn them
    (against the chat's memories) into ops, apply those through the writer, advance the
    watermark. ``propose`` may decline with a reason (the Batch API's answer no longer fits
    the chat); then nothing is written and the reason is returned."""
    messages = read_new(conn, scope, watermark, read_at or now, through)
    pool = writer.load_pool(conn, scope)
    proposal = propose(messages, [c.memory for c in pool])
    if isinstance(proposal, str):
        return proposal
    result = writer.apply(conn, scope, proposal.ops, now=now, source=source,
                          handles=proposal.handles, pool=pool)
    last = messages[-1].id if messages else watermark
    store.set_watermark(conn, scope, last, now)
    return ChatExtraction(scope, len(messages), len(proposal.ops), result, last,
                          source.removeprefix("extract:"), proposal.ops)


