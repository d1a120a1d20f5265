"""Dates said in a clause, resolved against the message's time (a stand-in for memory.dates)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_COUNT = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "few": 3,
          "couple": 2}
_PAST = re.compile(r"\b(yesterday|last (?:night|week|weekend|month|year|"
                   + "|".join(_WEEKDAYS) + r")|this (?:morning|afternoon)|earlier today|"
                   r"today|tonight|(\d+|a|an|one|two|three|four|five|few|couple)"
                   r"(?: of)? (day|week)s? ago|on (" + "|".join(_WEEKDAYS) + r"))\b",
                   re.IGNORECASE)


def resolve_due(text: str, at: datetime) -> datetime | None:
    """A due date from relative words, resolved from the message's own timestamp."""
    t = text.lower()
    day = at.replace(hour=12, minute=0, second=0, microsecond=0)
    if "tonight" in t or "today" in t or "this evening" in t:
        return day
    if "day after tomorrow" in t:
        return day + timedelta(days=2)
    if "tomorrow" in t:
        return day + timedelta(days=1)
    m = re.search(r"\bin (\d+|a|one|two|three) (day|week)s?\b", t)
    if m:
        n = {"a": 1, "one": 1, "two": 2, "three": 3}.get(m.group(1)) or int(m.group(1))
        return day + timedelta(days=n * (7 if m.group(2) == "week" else 1))
    if "next week" in t:
        return day + timedelta(days=7)
    if "this weekend" in t or "at the weekend" in t:
        return day + timedelta(days=(5 - day.weekday()) % 7 or 7)
    m = re.search(r"\b(?:on |this |next )?(" + "|".join(_WEEKDAYS) + r")\b", t)
    if m:
        ahead = (_WEEKDAYS.index(m.group(1)) - day.weekday()) % 7 or 7
        return day + timedelta(days=ahead)
    m = re.search(r"\b(\d{4}-\d{2}-\d{2})\b", t)
    if m:
        return datetime.fromisoformat(m.group(1)).replace(hour=12, tzinfo=at.tzinfo)
    return None


@dataclass(frozen=True)
class Found:
    text: str
    when: datetime


def plan_due(text: str, at: datetime) -> Found | None:
    day = resolve_due(text, at)
    return None if day is None else Found(text, day)


def past_day(text: str, at: datetime) -> Found | None:
    m = _PAST.search(text)
    if m is None:
        return None
    word = m.group(1).lower()
    day = at.replace(hour=12, minute=0, second=0, microsecond=0)
    if word.startswith(("yesterday", "last night")):
        day -= timedelta(days=1)
    elif m.group(2):
        n = _COUNT.get(m.group(2).lower()) or int(m.group(2))
        day -= timedelta(days=n * (7 if m.group(3).lower() == "week" else 1))
    elif word.startswith(("last week", "last weekend")):
        day -= timedelta(days=7)
    elif word.startswith(("last month",)):
        day -= timedelta(days=30)
    elif word.startswith("last year"):
        day -= timedelta(days=365)
    elif m.group(4) or word.split()[-1] in _WEEKDAYS:
        back = (day.weekday() - _WEEKDAYS.index(word.split()[-1])) % 7 or 7
        day -= timedelta(days=back)
    return Found(word, day)
