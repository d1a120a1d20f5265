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
from engrammar.models import Memory, Message, Op, Role, Scope
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
    message a run did not read, whatever order the stamps came in. When the first of them
    is the user's, the assistant's message just before the watermark leads them, as the
    question it may answer (``new_count`` counts the night's own)."""
    out: list[Message] = []
    for m in store.read_new_messages(conn, scope, watermark):
        if m.at > read_at or (through is not None and m.id > through):
            break
        out.append(m)
    if out and out[0].role is Role.user:
        # The assistant's question the first new message answers was read the night before
        # ("What are you into?" at 23:50, "rugby. canes" the next morning): it comes first
        # again, as what the answer means, never as a message of the night (the extractors
        # take nothing the assistant says as a fact).
        before = store.messages_before(conn, scope, out[0].id, 1)
        if before and before[0].role is Role.assistant and before[0].id <= watermark:
            out.insert(0, before[0])
    return out


def new_count(messages: list[Message], watermark: int) -> int:
    """How many of ``messages`` (``read_new``'s) are the night's own: past the watermark."""
    return sum(m.id > watermark for m in messages)


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
    return ChatExtraction(scope, new_count(messages, watermark), len(proposal.ops), result, last,
                          source.removeprefix("extract:"), proposal.ops)


