"""The vocabulary of the library: memory types, statuses, surface policies, ops and rows."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    ValidationError,
    field_validator,
    model_validator,
)

from engrammar.errors import InvalidInput


class MemoryType(StrEnum):
    profile = "profile"
    preference = "preference"
    episodic = "episodic"
    open_loop = "open_loop"
    shared_lore = "shared_lore"
    protocol = "protocol"
    reflection = "reflection"
    ephemeral = "ephemeral"


class Status(StrEnum):
    active = "active"
    stale = "stale"
    archived = "archived"
    contradicted = "contradicted"


class Surface(StrEnum):
    speak = "speak"
    adapt = "adapt"
    avoid = "avoid"
    continue_ = "continue"
    factcheck = "factcheck"
    never = "never"


class OpKind(StrEnum):
    add = "add"
    update = "update"
    reinforce = "reinforce"
    contradict = "contradict"
    close_loop = "close_loop"
    forget = "forget"


class Role(StrEnum):
    user = "user"
    assistant = "assistant"
    system = "system"


DEFAULT_SURFACE: dict[MemoryType, Surface] = {
    MemoryType.profile: Surface.speak,
    MemoryType.preference: Surface.adapt,
    MemoryType.episodic: Surface.speak,
    MemoryType.open_loop: Surface.continue_,
    MemoryType.shared_lore: Surface.speak,
    MemoryType.protocol: Surface.adapt,
    MemoryType.reflection: Surface.adapt,
    MemoryType.ephemeral: Surface.adapt,
}


def check_text(text: str, what: str) -> None:
    """Refuse text no prompt or PostgreSQL text can hold (a NUL, or a lone surrogate, which
    no UTF-8 encoder takes), naming ``what`` it was."""
    if "\x00" in text:
        raise InvalidInput(f"{what} contains a NUL character, which PostgreSQL text cannot "
                           "hold")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInput(f"{what} is not valid Unicode: {exc.reason} at character "
                           f"{exc.start}") from None


class Scope(BaseModel):
    """One user's one chat: the unit of isolation for every read and write."""

    model_config = ConfigDict(frozen=True)

    # What an id may be is checked where it comes in (_inputs.ident), not here: a scope is
    # also built from the store's rows, and one chat's odd id (written before the checks,
    # or by hand) must not stop a job that lists every chat.
    user_id: str
    chat_id: str

    def __str__(self) -> str:
        return f"{self.user_id}/{self.chat_id}"


class Message(BaseModel):
    id: int
    user_id: str
    chat_id: str
    role: Role
    content: str
    at: datetime


class Memory(BaseModel):
    id: int
    user_id: str
    chat_id: str
    type: MemoryType
    content: str
    status: Status = Status.active
    confidence: float
    salience: float
    pinned: bool = False
    surface: Surface
    slot: str | None = None
    embedding: list[float] | None = Field(default=None, repr=False)
    created_at: datetime
    updated_at: datetime
    last_reinforced_at: datetime | None = None
    last_surfaced_at: datetime | None = None
    due_at: datetime | None = None
    status_changed_at: datetime | None = None
    reinforce_count: int = 0
    surface_count: int = 0
    source_message_ids: list[int] = Field(default_factory=list)
    superseded_by: int | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    def last_referenced_at(self) -> datetime:
        times = [self.created_at, self.last_reinforced_at, self.last_surfaced_at]
        return max(t for t in times if t is not None)


class Op(BaseModel):
    """One proposed change to a chat's memories, from an extractor, an import or an admin."""

    model_config = ConfigDict(extra="forbid")

    op: OpKind
    type: MemoryType | None = None
    content: str = ""
    confidence: float = Field(default=0.8, ge=0.0, le=1.0)
    salience: float = Field(default=0.5, ge=0.0, le=1.0)
    surface: Surface | None = None
    pinned: bool = False
    due: datetime | None = None
    # A short handle from the prompt (m3) or a memory id ("42").
    target: str | None = None
    # What the memory is about ("home", "job"): two memories of one slot hold one value.
    slot: str | None = None
    evidence: list[int] = Field(default_factory=list)
    reason: str | None = None
    sources: list[int] = Field(default_factory=list)

    @model_validator(mode="wrap")
    @classmethod
    def _refused(cls, data: Any, handler: ModelWrapValidatorHandler[Op]) -> Op:
        """An op built from bad values (``Op(confidence=2)``, an unknown field) is the
        library's InvalidInput, however it was built (a constructor, model_validate)."""
        try:
            return handler(data)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'op'}: {e['msg']}"
                                 for e in exc.errors()[:3])
            raise InvalidInput(f"bad op: {problems}") from None

    @field_validator("content")
    @classmethod
    def _strip(cls, v: str) -> str:
        # A NUL is refused here as record refuses it, not dropped: what was sent is stored.
        check_text(v, "op content")
        # Every whitespace run, line separators (U+2028, U+0085...) included, is one space.
        return " ".join(v.split())


class Verdict(StrEnum):
    accepted = "accepted"
    rejected = "rejected"


class Decision(BaseModel):
    """What the gate made of one proposed op: the op to apply (possibly rewritten) or why not."""

    proposed: Op
    verdict: Verdict
    op: Op | None = None
    target_id: int | None = None
    # A short machine-readable reason ("duplicate", "low_confidence"), and its detail.
    code: str
    reason: str

    @property
    def accepted(self) -> bool:
        return self.verdict is Verdict.accepted


class MemoryEvent(BaseModel):
    id: int
    memory_id: int | None
    op: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    reason: str | None
    source: str
    source_message_ids: list[int]
    at: datetime

