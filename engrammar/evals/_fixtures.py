"""Conversation fixtures: the schema every fixture file is validated against, and the loader.

A fixture is a short scripted conversation on a clock of day offsets, optional seeded
memories, and the behaviour expected of the pipeline: memories extracted (matched by
keywords or by cosine similarity), proposals the gate must reject, recall queries whose
memory must rank in the top 3, memories that must never reach the block, and statuses
after the clock moves on and the jobs run. Fixtures live in ``fixtures/*.yaml``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from engrammar.models import MemoryType, OpKind, Role, Status, Surface

FIXTURES_DIR = Path(__file__).resolve().parent / "fixtures"
DEFAULT_CHAT = "main"
# A matcher's chat for a memory of the user's scope (a user-wide type: see Scopes).
USER_SCOPE = "*"
NAME_PATTERN = r"^[a-z0-9][a-z0-9_]*$"


class FixtureError(Exception):
    """A fixture file that does not parse or does not fit the schema."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Match(_Strict):
    """Which memory is meant: by type and content. Each keyword must occur in the content
    at the start of a word, so a stem matches its forms (case-insensitive, ``a|b`` for
    alternatives); ``similar_to`` asks for a cosine of at
    least ``threshold`` between the content and that text."""

    type: MemoryType | None = None
    keywords: list[str] = Field(default_factory=list)
    similar_to: str | None = None
    threshold: float = Field(default=0.75, gt=0.0, le=1.0)
    chat: str = DEFAULT_CHAT

    @model_validator(mode="after")
    def _something_to_match(self) -> Match:
        if not self.keywords and not self.similar_to:
            raise ValueError("a memory matcher needs keywords or similar_to")
        if any(not k.strip() or any(not alt.strip() for alt in k.split("|"))
               for k in self.keywords):
            raise ValueError("empty keyword")
        return self

    def describe(self) -> str:
        what = " & ".join(self.keywords) if self.keywords else \
            f"~{self.similar_to!r}>={self.threshold:g}"
        return f"{self.type.value if self.type else 'any'}[{what}]@{self.chat}"


class Expected(Match):
    """A memory that must exist, with the attributes given (unset: not checked)."""

    status: Status | list[Status] | None = None
    surface: Surface | None = None
    pinned: bool | None = None
    # The op that created it: an add, or an update / contradict of an older memory.
    op: OpKind | None = None
    # At least this many reinforcements.
    reinforced: int | None = Field(default=None, ge=0)
    # Exactly this many memories match (a duplicate would make two).
    count: int | None = Field(default=None, ge=1)
    # Its due date falls on this day offset.
    due_day: int | None = None

    @field_validator("op")
    @classmethod
    def _creating_op(cls, v: OpKind | None) -> OpKind | None:
        if v not in (None, OpKind.add, OpKind.update, OpKind.contradict):
            raise ValueError("op must be add, update or contradict: the op that creates")
        return v

    def statuses(self) -> list[Status]:
        if self.status is None:
            return []
        return self.status if isinstance(self.status, list) else [self.status]


class InBlock(Match):
    """A memory that must be in the block, in a given section if one is named."""

    section: str | None = None


class Never(Match):
    """A memory that must never be an item of a block built from ``since_day`` on."""

    since_day: float = Field(default=0, ge=0)


class Turn(_Strict):
    # Whole days: a day's turns come in the morning, its night runs at 23:00.
    day: int = Field(default=0, ge=0)
    role: Role = Role.user
    text: str = Field(min_length=1)
    chat: str = DEFAULT_CHAT


class Seed(_Strict):
    """A memory present before the conversation, written through the gate like an import."""

    day: int = Field(default=0, ge=0)
    chat: str = DEFAULT_CHAT
    type: MemoryType
    content: str = Field(min_length=1)
    surface: Surface | None = None
    pinned: bool = False
    salience: float = Field(default=0.6, ge=0, le=1)
    confidence: float = Field(default=0.9, ge=0, le=1)
    slot: str | None = None
    due_day: int | None = None


class Rejection(_Strict):
    """A proposal the gate must reject: matched on the proposed content."""

    keywords: list[str] = Field(min_length=1)
    code: str | None = None
    op: OpKind | None = None
    chat: str = DEFAULT_CHAT


class RecallCheck(_Strict):
    """A recall at ``day`` (a float: 4.5 is 21:00 on day 4, before its night at 23:00);
    by default the morning after the conversation's last day."""

    query: str = Field(min_length=1)
    day: float | None = Field(default=None, ge=0)
    chat: str = DEFAULT_CHAT
    budget: int | None = Field(default=None, ge=1)
    # Each must rank in the top 3 memory items by score: these make hit@3.
    top: list[Match] = Field(default_factory=list)
    present: list[InBlock] = Field(default_factory=list)
    # Each must not be an item of the block.
    absent: list[Match] = Field(default_factory=list)
    # Words that must not occur anywhere in the block's text, summaries included.
    not_said: list[str] = Field(default_factory=list)
    # The block frame holds: one opening tag, one closing tag, every memory quoted.
    harmless: bool = False


class RepeatCheck(_Strict):
    """Consecutive turns that all invite the same memory: it must be spoken in at least
    one and in no more than ``max_in_a_row`` in a row (over-reference prevention)."""

    queries: list[str] = Field(min_length=3)
    day: float | None = Field(default=None, ge=0)
    chat: str = DEFAULT_CHAT
    memory: Match
    max_in_a_row: int = Field(default=2, ge=1)


class StatusCheck(Match):
    status: Status | list[Status]

    def statuses(self) -> list[Status]:
        return self.status if isinstance(self.status, list) else [self.status]


class Later(_Strict):
    """The clock moves ``days`` past the previous point, the jobs run, then the checks."""

    days: float = Field(gt=0)
    statuses: list[StatusCheck] = Field(default_factory=list)
    recall: list[RecallCheck] = Field(default_factory=list)

    @model_validator(mode="after")
    def _recall_now(self) -> Later:
        if any(r.day is not None for r in self.recall):
            raise ValueError("a recall after the clock moves runs then: give it no day")
        return self


class Expect(_Strict):
    # Memories the extractor must produce; every extracted memory should match one.
    extracted: list[Expected] = Field(default_factory=list)
    # Memories that must not exist in any status (a mood stored as a trait, say).
    absent: list[Match] = Field(default_factory=list)
    # Statuses after the conversation, seeded memories included.
    statuses: list[StatusCheck] = Field(default_factory=list)
    rejected: list[Rejection] = Field(default_factory=list)
    recall: list[RecallCheck] = Field(default_factory=list)
    repeat: list[RepeatCheck] = Field(default_factory=list)
    # Never an item of any block the fixture builds, nor of a recall of its own words, and
    # its text never rendered.
    never_in_block: list[Never] = Field(default_factory=list)
    later: list[Later] = Field(default_factory=list)


class Scopes(_Strict):
    """The fixture's scope settings: the types its user shares across chats
    (MEMORY_SCOPES__USER_WIDE; a memory of one is matched with ``chat: "*"``) and the
    chats that opt out (``client.set_private``). Unset: every chat its own, as by default."""

    user_wide: list[MemoryType] = Field(default_factory=list)
    private: list[str] = Field(default_factory=list)


class Fixture(_Strict):
    name: str = Field(pattern=NAME_PATTERN)
    description: str = Field(min_length=1)
    covers: list[str] = Field(default_factory=list)
    scopes: Scopes = Scopes()
    # The idle-extract job runs, on its default settings, at the time of every recall
    # check before it is made (as the scheduler runs it every few minutes).
    idle_job: bool = False
    seed: list[Seed] = Field(default_factory=list)
    conversation: list[Turn] = Field(min_length=1)
    expect: Expect

    @model_validator(mode="after")
    def _consistent(self) -> Fixture:
        days = [t.day for t in self.conversation]
        if days != sorted(days):
            raise ValueError("conversation turns must be in time order")
        if not any(t.role is Role.user for t in self.conversation):
            raise ValueError("the conversation needs at least one user turn")
        chats = self.chats()
        for where, chat in self._referenced_chats():
            if chat == USER_SCOPE and not self.scopes.user_wide:
                raise ValueError(f"{where} names the user's scope, but no type is user-wide")
            if chat not in chats and chat != USER_SCOPE:
                raise ValueError(f"{where} names chat {chat!r}, which has no turn or seed")
        return self

    def chats(self) -> list[str]:
        seen = dict.fromkeys([t.chat for t in self.conversation] + [s.chat for s in self.seed])
        return list(seen)

    def _referenced_chats(self) -> list[tuple[str, str]]:
        e = self.expect
        out: list[tuple[str, str]] = []
        groups: list[tuple[str, list[Any]]] = [
            ("extracted", list(e.extracted)), ("absent", list(e.absent)),
            ("statuses", list(e.statuses)), ("rejected", list(e.rejected)),
            ("recall", list(e.recall)), ("repeat", list(e.repeat)),
            ("never_in_block", list(e.never_in_block))]
        for later in e.later:
            groups += [("later.statuses", list(later.statuses)),
                       ("later.recall", list(later.recall))]
        for where, items in groups:
            out += [(where, item.chat) for item in items]
        out += [("scopes.private", chat) for chat in self.scopes.private]
        return out

    def shares(self, chat: str) -> bool:
        """Whether ``chat`` reads the user's scope."""
        return bool(self.scopes.user_wide) and chat not in self.scopes.private

    def last_day(self) -> int:
        return int(max(t.day for t in self.conversation))


def load_file(path: Path) -> Fixture:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise FixtureError(f"{path}: {exc}") from exc
    if not isinstance(data, dict):
        raise FixtureError(f"{path}: a fixture is a mapping, got {type(data).__name__}")
    data.setdefault("name", path.stem)
    try:
        fixture = Fixture.model_validate(data)
    except ValidationError as exc:
        raise FixtureError(f"{path}: {exc}") from exc
    if fixture.name != path.stem:
        raise FixtureError(f"{path}: name {fixture.name!r} differs from the file name")
    return fixture


def load_all(directory: Path = FIXTURES_DIR, names: list[str] | None = None) -> list[Fixture]:
    """Every fixture in ``directory`` in name order, or only ``names`` (all must exist)."""
    files = sorted(directory.glob("*.yaml")) + sorted(directory.glob("*.yml"))
    if not files:
        raise FixtureError(f"no fixtures in {directory}")
    by_name = {f.stem: f for f in files}
    if names:
        missing = [n for n in names if n not in by_name]
        if missing:
            raise FixtureError(f"unknown fixture {', '.join(missing)}; known: "
                               f"{', '.join(sorted(by_name))}")
        files = [by_name[n] for n in names]
    return [load_file(f) for f in files]
