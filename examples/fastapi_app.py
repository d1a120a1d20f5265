"""A FastAPI chat endpoint with memory: ``AsyncClient`` and the async ``openai`` SDK.

    pip install 'memory[fastapi]' uvicorn
    MEMORY_LLM_BASE_URL=http://localhost:11434/v1 MEMORY_LLM_MODEL=llama3.2 \\
        uvicorn --app-dir examples fastapi_app:app

    curl -s localhost:8000/chat/u1/c1 -H 'content-type: application/json' \\
        -d '{"message": "I moved to Munich last week"}'

Each request is one turn: compile the prompt from memory, call the model, record the whole
turn once the reply is in (a failed call records nothing) and observe the reply. Memory
calls run in AsyncClient's thread pool, so the event loop keeps serving while the database
works; a request cancelled mid-write (the client hung up) still leaves its chat whole.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import openai
from fastapi import FastAPI, HTTPException
from pydantic import BaseModel

from engrammar import AsyncClient, InvalidInput, Settings

SYSTEM = "You are a warm, concise companion. Use what you remember; never invent memories."


class ChatIn(BaseModel):
    message: str


class ChatOut(BaseModel):
    reply: str
    prompt_tokens: int
    memories: list[str]


def create_app(memory: AsyncClient | None = None, model: openai.AsyncOpenAI | None = None,
               model_name: str | None = None) -> FastAPI:
    """The app; the memory client and the model are built from settings unless given."""
    settings = Settings()
    state: dict[str, Any] = {}

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else "unused"
        state["memory"] = memory or await AsyncClient.open(settings)
        state["model"] = model or openai.AsyncOpenAI(base_url=settings.llm_base_url,
                                                     api_key=key)
        yield
        if model is None:  # close what was opened here; the caller closes the rest
            await state["model"].close()
        if memory is None:
            await state["memory"].aclose()

    app = FastAPI(title="chat with memory", lifespan=lifespan)

    @app.post("/chat/{user_id}/{chat_id}")
    async def chat(user_id: str, chat_id: str, body: ChatIn) -> ChatOut:
        mem: AsyncClient = state["memory"]
        llm: openai.AsyncOpenAI = state["model"]
        try:
            compiled = await mem.compile(user_id, chat_id, body.message, system=SYSTEM)
        except InvalidInput as exc:
            raise HTTPException(status_code=422, detail=str(exc)) from exc
        completion = await llm.chat.completions.create(
            model=model_name or settings.llm_model,
            messages=compiled.messages)  # type: ignore[arg-type]
        reply = completion.choices[0].message.content or "(no reply)"
        await mem.record_turn(user_id, chat_id, body.message, reply)
        await mem.observe(user_id, chat_id, reply)
        return ChatOut(reply=reply, prompt_tokens=compiled.tokens,
                       memories=[i.content for i in compiled.items if i.memory_id])

    @app.get("/memories/{user_id}/{chat_id}")
    async def memories(user_id: str, chat_id: str) -> list[dict[str, Any]]:
        mem: AsyncClient = state["memory"]
        return [{"id": m.id, "type": m.type.value, "content": m.content}
                for m in await mem.memories(user_id, chat_id)]

    return app


app = create_app()
