"""Routes of a chat: get-or-create, settings, diagnostics, the log, and the turn (recall,
context, observe). Each turns the caller's user id into the library's through the
principal, calls the library, and answers."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, Query, Response

from engrammar.aio import AsyncClient
from engrammar.models import ChatSettings, Posted
from engrammar.recall._block import Block
from engrammar.recall._layers import Compiled
from engrammar.service import _schemas as s
from engrammar.service._auth import Memory, Reader, Writer
from engrammar.service._problems import responses

CHAT = "/v1/users/{user_id}/chats/{chat_id}"
router = APIRouter(tags=["chats"], responses=responses(400, 401, 403, 404, 413, 422, 503))


def _json(model: Block | Compiled) -> Response:
    """The turn's hot paths answer the library's model serialised once, by pydantic, rather
    than validated again and re-encoded by FastAPI (the document still names the model)."""
    return Response(model.model_dump_json(), media_type="application/json")


async def existing(memory: Memory, user: str, chat_id: str) -> None:
    """404 unless the chat exists (for another tenant's user it never does)."""
    await memory.chat_created_at(user, chat_id)


@router.put(CHAT, response_model=s.Chat, summary="Get or create a chat")
async def open_chat(user_id: s.UserId, chat_id: s.ChatId, who: Writer,
                    memory: Memory) -> s.Chat:
    created, at = await memory.open_chat(who.user(user_id), chat_id)
    return s.Chat(user_id=user_id, chat_id=chat_id, created=created, created_at=at)


@router.get(CHAT, response_model=s.Chat, summary="A chat")
async def get_chat(user_id: s.UserId, chat_id: s.ChatId, who: Reader,
                   memory: Memory) -> s.Chat:
    at = await memory.chat_created_at(who.user(user_id), chat_id)
    return s.Chat(user_id=user_id, chat_id=chat_id, created=False, created_at=at)


@router.get(CHAT + "/settings", response_model=ChatSettings,
            summary="The chat's window settings")
async def get_settings(user_id: s.UserId, chat_id: s.ChatId, who: Reader,
                       memory: Memory) -> ChatSettings:
    await existing(memory, who.user(user_id), chat_id)
    return await memory.chat_settings(who.user(user_id), chat_id)


@router.patch(CHAT + "/settings", response_model=ChatSettings,
              summary="Override the chat's window settings")
async def patch_settings(user_id: s.UserId, chat_id: s.ChatId, body: s.SettingsPatch,
                         who: Writer, memory: Memory) -> ChatSettings:
    changes = body.model_dump(exclude_unset=True)
    return await memory.set_chat_settings(who.user(user_id), chat_id, changes)


@router.get(CHAT + "/diagnostics", response_model=s.Diagnostics,
            summary="The window's blocks, their states and the coverage check")
async def diagnostics(user_id: s.UserId, chat_id: s.ChatId, who: Reader,
                      memory: Memory) -> s.Diagnostics:
    await existing(memory, who.user(user_id), chat_id)
    found = await memory.diagnostics(who.user(user_id), chat_id)
    return s.Diagnostics(**found, ok=not found["problems"])


@router.post(CHAT + "/messages", response_model=Posted, status_code=201,
             summary="Post a message, or a user/assistant pair")
async def post_messages(user_id: s.UserId, chat_id: s.ChatId,
                        body: s.NewMessage | s.NewPair, who: Writer, memory: Memory,
                        response: Response,
                        idempotency_key: Annotated[str | None, Header(
                            max_length=200, description="A retry with the same key "
                            "stores nothing twice")] = None) -> Posted:
    if isinstance(body, s.NewPair):
        pairs = [("user", body.user), ("assistant", body.assistant)]
    else:
        pairs = [(body.role, body.content)]
    posted = await memory.post(who.user(user_id), chat_id, pairs, at=body.at,
                               key=idempotency_key)
    if posted.replayed:
        response.headers["Idempotent-Replayed"] = "true"
    return posted


@router.get(CHAT + "/messages", response_model=s.MessagePage,
            summary="A page of the log, going backwards")
async def get_messages(user_id: s.UserId, chat_id: s.ChatId, who: Reader, memory: Memory,
                       before: Annotated[int | None, Query(ge=1, le=s.MAX_ID)] = None,
                       limit: Annotated[int, Query(ge=1, le=1000)] = 50) -> s.MessagePage:
    user = who.user(user_id)
    await existing(memory, user, chat_id)
    page = await memory.log(user, chat_id, before=before, limit=limit)
    more = len(page) == limit and page[0].id > 1
    return s.MessagePage(messages=[s.OutMessage.of(m) for m in page],
                         next_before=page[0].id if page and more else None)


@router.post(CHAT + "/recall", response_model=Block, tags=["turn"],
             summary="The memory block for the next turn")
async def recall(user_id: s.UserId, chat_id: s.ChatId, body: s.RecallIn, who: Reader,
                 memory: Memory) -> Response:
    return await recall_answer(memory, who.user(user_id), chat_id, body)


async def recall_answer(memory: AsyncClient, user: str, chat_id: str, body: s.RecallIn
                        ) -> Response:
    """The recall route's answer for the tenant's ``user`` (also service._fast's)."""
    return _json(await memory.recall(user, chat_id, body.query, now=body.now,
                                     budget_tokens=body.budget_tokens, record=body.record,
                                     summaries=body.summaries))


@router.post(CHAT + "/context", response_model=Compiled, tags=["turn"],
             summary="The whole prompt for the next turn, as OpenAI-style messages")
async def context(user_id: s.UserId, chat_id: s.ChatId, body: s.ContextIn, who: Reader,
                  memory: Memory) -> Response:
    return await context_answer(memory, who.user(user_id), chat_id, body)


async def context_answer(memory: AsyncClient, user: str, chat_id: str, body: s.ContextIn
                         ) -> Response:
    """The context route's answer for the tenant's ``user`` (also service._fast's)."""
    return _json(await memory.compile(user, chat_id, body.message, now=body.now,
                                      budget_tokens=body.budget_tokens, system=body.system,
                                      record=body.record))


@router.post(CHAT + "/observe", response_model=s.Applied, tags=["turn"],
             summary="Lift the assistant's Decision/Constraint/Open lines into memories")
async def observe(user_id: s.UserId, chat_id: s.ChatId, body: s.ObserveIn, who: Writer,
                  memory: Memory) -> s.Applied:
    return s.Applied.of(await memory.observe(who.user(user_id), chat_id, body.content,
                                             now=body.now))
