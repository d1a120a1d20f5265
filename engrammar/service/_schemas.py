"""The request and response bodies of the HTTP API, where the library's own models do not
serve as they are (those it does: Block, Compiled, ChatSettings, Posted, Memory, Op)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import Path
from pydantic import BaseModel, ConfigDict, Field

from engrammar.models import Decision, Message, Op
from engrammar.service._keys import MAX_USER_ID
from engrammar.write._writer import ApplyResult

MAX_ID = 2**63 - 1
MAX_CHAT_ID = 200
# What the path names: ids as the caller knows them (the tenant's prefix is the service's).
UserId = Annotated[str, Path(min_length=1, max_length=MAX_USER_ID,
                             description="The user's id in your product")]
ChatId = Annotated[str, Path(min_length=1, max_length=MAX_CHAT_ID,
                             description="The chat's id")]
MemoryId = Annotated[int, Path(ge=1, le=MAX_ID, description="The memory's id")]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Chat(BaseModel):
    user_id: str
    chat_id: str
    created: bool = Field(description="Whether this call made the chat")
    created_at: datetime


class SettingsPatch(Strict):
    """Overrides of the chat's window settings; null drops one (back to the default)."""

    raw_pairs: int | None = Field(default=None, ge=0, le=1000)
    block_pairs: int | None = Field(default=None, ge=1, le=1000)
    summaries: int | None = Field(default=None, ge=0, le=100)
    trigger_offset: int | None = Field(default=None, ge=0, le=1000)


class WindowBlock(BaseModel):
    block_no: int
    first_pair: int
    last_pair: int
    state: str
    summary: str | None = None
    tokens: int | None = None
    attempts: int = 0
    error: str | None = None


class Unit(BaseModel):
    kind: Literal["raw", "summary"]
    first_pair: int
    last_pair: int
    block_no: int | None = None
    summary: str | None = None


class Diagnostics(BaseModel):
    """The chat's window: pairs, blocks by state, and the coverage check (every pair raw
    or in exactly one active block; ``problems`` empty when it holds)."""

    pairs: int
    blocks: list[WindowBlock]
    coverage: list[Unit]
    problems: list[str]
    ok: bool


class NewMessage(Strict):
    role: Literal["user", "assistant", "system"]
    content: str = Field(min_length=1)
    at: datetime | None = None


class NewPair(Strict):
    """A user message and the assistant's reply, stored together."""

    user: str = Field(min_length=1)
    assistant: str = Field(min_length=1)
    at: datetime | None = None


class OutMessage(BaseModel):
    id: int
    chat_id: str
    role: str
    content: str
    at: datetime

    @classmethod
    def of(cls, m: Message) -> OutMessage:
        return cls(id=m.id, chat_id=m.chat_id, role=m.role.value, content=m.content, at=m.at)


class MessagePage(BaseModel):
    messages: list[OutMessage] = Field(description="Oldest first")
    next_before: int | None = Field(description="Pass as `before` for the page before this "
                                                "one; null at the start of the log")


class RecallIn(Strict):
    query: str = Field(min_length=1)
    budget_tokens: int | None = Field(default=None, ge=0, le=1_000_000)
    record: bool = True
    summaries: bool = True
    now: datetime | None = None


class ContextIn(Strict):
    message: str = Field(min_length=1)
    system: str | None = None
    budget_tokens: int | None = Field(default=None, ge=0, le=1_000_000)
    record: bool = True
    now: datetime | None = None


class ObserveIn(Strict):
    content: str = Field(min_length=1, description="The assistant's reply")
    now: datetime | None = None


class Deleted(BaseModel):
    """What deleting a memory removed: rows, by table."""

    deleted: dict[str, int] = Field(description="Rows deleted or scrubbed, by table")


class Applied(BaseModel):
    """What the gate made of the ops: how many applied, rejections by reason, the memories
    written and each op's decision."""

    applied: int
    rejected: dict[str, int]
    written: list[int]
    decisions: list[Decision]

    @classmethod
    def of(cls, result: ApplyResult) -> Applied:
        return cls(applied=result.applied, rejected=dict(result.rejected),
                   written=result.written, decisions=result.decisions)


class OpsIn(Strict):
    ops: list[Op] = Field(max_length=1000)
    dry_run: bool = False
    now: datetime | None = None


class ForgetIn(Strict):
    reason: str | None = Field(default=None, max_length=1000)


class PinIn(Strict):
    pinned: bool = True


class Imported(BaseModel):
    rows: int | None = Field(default=None, description="Rows restored (an export)")
    chats: dict[str, Applied] | None = Field(default=None,
                                             description="Each chat's result (a file of ops)")
    dry_run: bool


class Erased(BaseModel):
    deleted: int = Field(description="Rows deleted")


class JobRun(BaseModel):
    id: int
    started_at: datetime
    finished_at: datetime | None
    status: str


class Job(BaseModel):
    name: str
    schedule: str
    help: str
    nightly: bool
    last: JobRun | None


class Ran(BaseModel):
    job: str
    seconds: float


class Health(BaseModel):
    status: str


class Ready(BaseModel):
    status: str
    migrations: int


def external_row(row: dict[str, Any], user_id: str) -> dict[str, Any]:
    """A row (a snapshot in a memory's history, a row of an export) with its user id as the
    caller knows it."""
    return {**row, "user_id": user_id} if "user_id" in row else row
