"""The vocabulary of the library: memory types, statuses, surface policies, ops and rows."""

from __future__ import annotations

import json
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


class Tense(StrEnum):
    """When what a statement says happens, as the extractor read it: a report of something
    done ("I called my mum") is ``past``; a plan ``future``; a state or habit ``present``."""

    past = "past"
    present = "present"
    future = "future"


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

    def report_entry(self) -> dict[str, str]:
        """How a job report names the chat: ``chat`` for people ("user/chat"), beside
        ``user_id`` and ``chat_id``, which erasure matches on: the joined text is ambiguous
        when an id holds "/" (user "sl/a", chat "b" and user "sl", chat "a/b")."""
        return {"chat": str(self), "user_id": self.user_id, "chat_id": self.chat_id}


class Message(BaseModel):
    id: int
    user_id: str
    chat_id: str
    role: Role
    content: str
    at: datetime
    # The app's own JSON object (topic, source, locale...), given at ``record``.
    metadata: dict[str, Any] = Field(default_factory=dict)


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
    # The app's metadata, inherited from the messages the memory rests on.
    app_metadata: dict[str, Any] = Field(default_factory=dict)

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
    # A feature of what was said, for the gate to decide with (None: not known). A ``past``
    # add is a report: it closes the open loop it matches, else it is kept as it is.
    tense: Tense | None = None

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


# -- app metadata -------------------------------------------------------------------------------

# The most a message's metadata may weigh, as JSON: it is copied into every memory drawn
# from the message and read by every filtered recall.
MAX_METADATA_CHARS = 4_000
Scalar = str | int | float | bool | None
# A metadata filter: each key's accepted values (one: equality; several: membership).
Where = dict[str, tuple[Scalar, ...]]


def check_metadata(value: Any, what: str) -> dict[str, Any]:
    """An app's metadata: a JSON object of string keys, at most MAX_METADATA_CHARS."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidInput(f"{what} must be a JSON object (a dict), not "
                           f"{type(value).__name__}")
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"{what} is not JSON: {exc}") from None
    if any(not isinstance(k, str) for k in value):
        raise InvalidInput(f"{what}: keys must be strings")
    check_text(text, what)
    if len(text) > MAX_METADATA_CHARS:
        raise InvalidInput(f"{what} is {len(text)} characters as JSON; the limit is "
                           f"{MAX_METADATA_CHARS}")
    parsed: dict[str, Any] = json.loads(text)
    return parsed


def where_filter(value: Any) -> Where | None:
    """A filter on app metadata, ``{"topic": "cooking", "locale": ["en", "fr"]}``: every
    key must hold the value given, or one of the values listed."""
    if value is None:
        return None
    if not isinstance(value, dict) or not value:
        raise InvalidInput("where must be a non-empty dict of metadata key to value(s)")
    out: Where = {}
    for key, wanted in value.items():
        if not isinstance(key, str):
            raise InvalidInput(f"where: key {key!r} is not a string")
        check_text(key, "where key")
        values = tuple(wanted) if isinstance(wanted, (list, tuple, set, frozenset)) \
            else (wanted,)
        if not values:
            raise InvalidInput(f"where: no value for {key!r}")
        for v in values:
            if not isinstance(v, (str, int, float, bool)) and v is not None:
                raise InvalidInput(f"where: {key!r} may match strings, numbers, booleans "
                                   f"or null, not {type(v).__name__}")
            if isinstance(v, str):
                check_text(v, "where value")
        out[key] = values
    return out


def metadata_matches(metadata: dict[str, Any], where: Where) -> bool:
    """Every key of ``where`` present in ``metadata`` with one of its values (JSON
    equality: 1 and 1.0 are one number, true is not 1)."""
    for key, values in where.items():
        if key not in metadata:
            return False
        have = metadata[key]
        if not any(_same(have, v) for v in values):
            return False
    return True


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    return bool(a == b)


def inherited(sources: list[dict[str, Any]]) -> dict[str, Any]:
    """The app metadata of a memory drawn from messages with ``sources`` (in id order):
    their keys merged, a later message's value winning."""
    out: dict[str, Any] = {}
    for meta in sources:
        out.update(meta)
    return out


class ChatSettings(BaseModel):
    """A chat's window, as it runs: the pairs kept verbatim (``raw_pairs``), the pairs a
    block summary covers (``block_pairs``), the temporal summaries recall carries
    (``summaries``) and the pairs past a full block that wait before it is made
    (``trigger_offset``). The process's settings give the defaults; a chat may override any
    of them (``Client.set_chat_settings``)."""

    model_config = ConfigDict(extra="forbid")

    raw_pairs: int = Field(ge=0, le=1000)
    block_pairs: int = Field(ge=1, le=1000)
    summaries: int = Field(ge=0, le=100)
    trigger_offset: int = Field(ge=0, le=1000)
    # The fields the chat overrides, by name.
    overrides: dict[str, int] = Field(default_factory=dict)


class Posted(BaseModel):
    """Messages posted to a chat: their ids, and whether this was a retry of a post already
    stored under the same idempotency key (then nothing was stored again)."""

    ids: list[int]
    replayed: bool = False
