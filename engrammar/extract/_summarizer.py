"""Temporal summaries: a chat's days, weeks and months, each from the layer below.

Two summarizers share one interface: the LLM one (any OpenAI-compatible model, chunked to
its context), and an extractive one that runs offline and picks the most informative
sentences, in their original order, within a token budget.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal, Protocol

from engrammar import store
from engrammar.errors import Error, chat_contained
from engrammar.extract._prompts import SummaryResponse, summary_prompt
from engrammar.extract.parser._requests import asks_not_to_mention
from engrammar.models import Scope
from engrammar.runtime._database import Database
from engrammar.runtime._llm import LLM
from engrammar.runtime._tokens import TokenCounter, truncate_to

Period = Literal["day", "week", "month", "block"]
# Words per summary, by period: longer periods get a little more room.
WORDS: dict[str, int] = {"day": 80, "week": 120, "month": 160, "block": 60}
ROLLUPS: tuple[tuple[Period, Period], ...] = (("day", "week"), ("week", "month"))
_CODE_CHARS = frozenset("=*$%{}<>;()[]_/\\|`#")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_SMALL_TALK = re.compile(r"^(hi|hey|hello|thanks|thank you|ok|okay|cool|great|bye|good night|"
                         r"lol|haha|yes|no|sure)\b[\s!.,]*$", re.IGNORECASE)


class Summarizer(Protocol):
    name: str

    def summarize(self, period: Period, texts: Sequence[str], now: datetime,
                  scope: Scope | None = None) -> str: ...


class ExtractiveSummarizer:
    """Offline and deterministic: informative sentences first, shown in original order."""

    name = "extractive"

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter

    def summarize(self, period: Period, texts: Sequence[str], now: datetime,
                  scope: Scope | None = None) -> str:
        budget = int(WORDS[period] * 1.6)  # tokens, from words
        split = [s.strip() for text in texts for s in _SENTENCE.split(text) if s.strip()]
        bare = [_strip_speaker(s) for s in split]
        # "Please don't bring up my divorce" is a protocol, stored as a memory the block
        # never renders: a summary must not repeat it. Only a sentence the summary would
        # take is asked about (the parse behind the answer, and the request model's
        # embedding of a sentence addressed to the assistant, are most of a summary's
        # time); leaving out one that asks changes nothing for the others.
        asks: dict[int, bool] = {}

        def kept(i: int) -> bool:
            if i not in asks:
                asks[i] = asks_not_to_mention([bare[i]])[0]
            return not asks[i]

        ranked = sorted(range(len(split)), key=lambda i: (-_information(split[i]), i))
        chosen: list[int] = []
        used = 0
        for i in ranked:
            if _SMALL_TALK.match(bare[i]):
                continue
            cost = self.counter.count(split[i]) + 1
            if used + cost > budget or not kept(i):
                continue
            chosen.append(i)
            used += cost
        if not chosen:
            first = next((i for i in range(len(split)) if kept(i)), None)
            return "" if first is None else truncate_to(self.counter, split[first], budget)
        return " ".join(split[i] for i in sorted(chosen))


_SPEAKER = re.compile(r"^(user|assistant|system):\s*")
_PERSONAL = re.compile(r"\b(i|my|i'm|we|our)\b", re.IGNORECASE)
_DECIDED = re.compile(r"\b(decid|plan|will|promis|agree|must|need|moved|start)", re.IGNORECASE)


def _strip_speaker(sentence: str) -> str:
    return _SPEAKER.sub("", sentence)


def _information(sentence: str) -> float:
    """Names, numbers, first-person facts and decisions score; very short lines do not."""
    text = _strip_speaker(sentence)
    words = text.split()
    if len(words) < 3:
        return 0.0
    # Capitalised words are names; ALL-CAPS ones are mostly keywords and log levels.
    names = min(4, sum(1 for w in words[1:] if w[:1].isupper() and not w.isupper()))
    numbers = min(3, sum(1 for w in words if any(map(str.isdigit, w))))
    personal = 1.5 if _PERSONAL.search(text) else 0.0
    decided = 1.5 if _DECIDED.search(text) else 0.0
    user = 1.0 if sentence.lower().startswith("user:") else 0.0
    score = names + numbers + personal + decided + user + min(len(words), 25) / 25
    # Pasted logs, code and tables are full of names and numbers but say little about the
    # conversation: prose (mostly letters and spaces) is what a summary keeps. Counted by
    # the string's own methods, not a loop per character: a block's summary reads every
    # sentence of it.
    prose = (sum(map(str.isalpha, text)) + sum(map(str.isspace, text))) / len(text)
    code = sum(map(text.count, _CODE_CHARS))
    return score if prose >= 0.8 and code < 3 else score * 0.2


class LLMSummarizer:
    """Summaries from the model; input over its context is summarised chunk by chunk."""

    def __init__(self, llm: LLM, counter: TokenCounter, context_tokens: int = 6000) -> None:
        self.llm = llm
        self.counter = counter
        self.context_tokens = context_tokens
        self.name = f"llm:{llm.model}"

    def summarize(self, period: Period, texts: Sequence[str], now: datetime,
                  scope: Scope | None = None) -> str:
        chunks: list[list[str]] = [[]]
        used = 0
        budget = max(500, self.context_tokens - 400)
        for text in texts:
            cost = self.counter.count(text) + 1
            if chunks[-1] and used + cost > budget:
                chunks.append([])
                used = 0
            chunks[-1].append(truncate_to(self.counter, text, budget))
            used += cost
        parts = [self._one(period, chunk, now, scope) for chunk in chunks]
        return parts[0] if len(parts) == 1 else self._one(period, parts, now, scope)

    def _one(self, period: Period, texts: Sequence[str], now: datetime,
             scope: Scope | None) -> str:
        answer = self.llm.structured(f"summary:{period}",
                                     summary_prompt(period, texts, now, WORDS[period]),
                                     SummaryResponse, scope)
        return answer.summary.strip()


@dataclass
class SummaryReport:
    now: datetime
    summarizer: str
    written: dict[str, int] = field(default_factory=lambda: {"day": 0, "week": 0, "month": 0})
    errors: list[dict[str, str]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"job": "summaries", "now": self.now.isoformat(), "summarizer": self.summarizer,
                "written": self.written, "errors": self.errors}


def _period_end(period: str, start: datetime) -> datetime:
    if period == "day":
        return start + timedelta(days=1)
    if period == "week":
        return start + timedelta(days=7)
    month = start.month % 12 + 1
    return start.replace(year=start.year + (start.month == 12), month=month)


def roll_up(db: Database, summarizer: Summarizer, counter: TokenCounter,
            now: datetime) -> SummaryReport:
    """Write every summary that is missing or out of date: days from messages, weeks from
    days, months from weeks. A period whose input did not change is left alone. Chat by
    chat: one whose rows cannot be summarised is reported with its id, and the others run."""
    report = SummaryReport(now=now, summarizer=summarizer.name)
    with db.connection() as conn:
        chats = store.list_chats(conn)
    for scope in chats:
        with chat_contained(report.errors, scope.report_entry()):
            _roll_up_chat(db, summarizer, counter, now, scope, report)
    return report


def _roll_up_chat(db: Database, summarizer: Summarizer, counter: TokenCounter,
                  now: datetime, chat: Scope, report: SummaryReport) -> None:
    with db.connection() as conn:
        days = store.days_to_summarize(conn, now, chat)
    for scope, start, source_hash in days:
        end = _period_end("day", start)
        try:
            with db.connection() as conn:
                lines = [f"{m.role.value}: {m.content}"
                         for m in store.messages_between(conn, scope, start, end)]
            text = summarizer.summarize("day", lines, now, scope)
        except Error as exc:
            report.errors.append({**scope.report_entry(), "period": f"day {start.date()}",
                                  "error": str(exc)})
            continue
        with db.connection() as conn:
            store.upsert_summary(conn, scope, period="day", start=start, end=end,
                                 content=text, tokens=counter.count(text),
                                 source_hash=source_hash, now=now)
        report.written["day"] += 1
    for child, parent in ROLLUPS:
        with db.connection() as conn:
            parents = store.periods_to_roll_up(conn, child, parent, now, chat)
        for scope, start, source_hash in parents:
            end = _period_end(parent, start)
            try:
                with db.connection() as conn:
                    rows = store.summaries_between(conn, scope, child, start, end)
                lines = [f"{r['start_at'].date().isoformat()}: {r['content']}" for r in rows]
                text = summarizer.summarize(parent, lines, now, scope)
            except Error as exc:
                report.errors.append({**scope.report_entry(), "period": f"{parent} {start.date()}",
                                      "error": str(exc)})
                continue
            with db.connection() as conn:
                store.upsert_summary(conn, scope, period=parent, start=start, end=end,
                                     content=text, tokens=counter.count(text),
                                     source_hash=source_hash, now=now)
            report.written[parent] += 1
