"""Routes of a chat's memories: list with filters, get, history, ops through the gate,
forget, pin and delete."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from engrammar.models import Memory as MemoryRow
from engrammar.models import MemoryEvent, MemoryType, Op, OpKind, Status, Surface
from engrammar.service import _schemas as s
from engrammar.service._auth import Memory, Reader, Writer
from engrammar.service._chats import CHAT, existing
from engrammar.service._keys import Principal
from engrammar.service._problems import responses

router = APIRouter(tags=["memories"], responses=responses(400, 401, 403, 404, 413, 422, 503))
# The stored vector is the library's business, not the caller's.
HIDDEN: set[str] = {"embedding"}


def shown(who: Principal, m: MemoryRow) -> MemoryRow:
    return m.model_copy(update={"user_id": who.external(m.user_id), "embedding": None})


@router.get(CHAT + "/memories", response_model=list[MemoryRow],
            response_model_exclude={"__all__": HIDDEN}, summary="The chat's memories, filtered")
async def list_memories(
        user_id: s.UserId, chat_id: s.ChatId, who: Reader, memory: Memory,
        type: Annotated[list[MemoryType] | None, Query()] = None,
        status: Annotated[list[Status] | None, Query()] = None,
        surface: Annotated[list[Surface] | None, Query()] = None,
        text: Annotated[str | None, Query(max_length=1000,
                                          description="Words the content contains")] = None,
        limit: Annotated[int, Query(ge=1, le=10_000)] = 1000) -> list[MemoryRow]:
    user = who.user(user_id)
    await existing(memory, user, chat_id)
    found = await memory.memories(user, chat_id, [x.value for x in status] if status else None)
    words = text.casefold().split() if text else []
    kept = [m for m in found
            if (not type or m.type in type) and (not surface or m.surface in surface)
            and all(w in m.content.casefold() for w in words)]
    return [shown(who, m) for m in kept[:limit]]


@router.get(CHAT + "/memories/{memory_id}", response_model=MemoryRow,
            response_model_exclude=HIDDEN, summary="A memory")
async def get_memory(user_id: s.UserId, chat_id: s.ChatId, memory_id: s.MemoryId,
                     who: Reader, memory: Memory) -> MemoryRow:
    return shown(who, await memory.get(who.user(user_id), chat_id, memory_id))


@router.get(CHAT + "/memories/{memory_id}/history", response_model=list[MemoryEvent],
            summary="Every change to a memory, oldest first")
async def history(user_id: s.UserId, chat_id: s.ChatId, memory_id: s.MemoryId, who: Reader,
                  memory: Memory) -> list[MemoryEvent]:
    user = who.user(user_id)
    await memory.get(user, chat_id, memory_id)  # 404 for a memory not of this chat
    events = await memory.history(user, chat_id, memory_id)
    return [e.model_copy(update={
        "before": e.before and s.external_row(e.before, user_id),
        "after": e.after and s.external_row(e.after, user_id)}) for e in events]


@router.post(CHAT + "/memories/ops", response_model=s.Applied,
             summary="Apply ops through the write gate, atomically")
async def apply_ops(user_id: s.UserId, chat_id: s.ChatId, body: s.OpsIn, who: Writer,
                    memory: Memory) -> s.Applied:
    return s.Applied.of(await memory.apply(who.user(user_id), chat_id, body.ops,
                                           source="api", now=body.now,
                                           dry_run=body.dry_run))


@router.post(CHAT + "/memories/{memory_id}/forget", response_model=s.Applied,
             summary="Forget a memory (archived with the reason, kept in its history)")
async def forget(user_id: s.UserId, chat_id: s.ChatId, memory_id: s.MemoryId,
                 body: s.ForgetIn, who: Writer, memory: Memory) -> s.Applied:
    user = who.user(user_id)
    await memory.get(user, chat_id, memory_id)
    op = Op(op=OpKind.forget, target=str(memory_id), reason=body.reason or "forgotten")
    return s.Applied.of(await memory.apply(user, chat_id, [op], source="api"))


@router.delete(CHAT + "/memories/{memory_id}", response_model=s.Deleted,
               summary="Delete a memory for good (forget archives it and keeps the text)")
async def delete_memory(
        user_id: s.UserId, chat_id: s.ChatId, memory_id: s.MemoryId, who: Writer,
        memory: Memory,
        sources: Annotated[bool, Query(description="Also the messages it rests on, and the "
                                       "summaries drawn from them")] = False) -> s.Deleted:
    return s.Deleted(deleted=await memory.delete(who.user(user_id), chat_id, memory_id,
                                                 sources=sources))


@router.post(CHAT + "/memories/{memory_id}/pin", response_model=MemoryRow,
             response_model_exclude=HIDDEN, summary="Pin or unpin a memory")
async def pin(user_id: s.UserId, chat_id: s.ChatId, memory_id: s.MemoryId, body: s.PinIn,
              who: Writer, memory: Memory) -> MemoryRow:
    return shown(who, await memory.pin(who.user(user_id), chat_id, memory_id, body.pinned))
