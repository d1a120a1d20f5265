"""Relative and calendar date expressions in chat text, resolved to days against ``now``.

``find`` returns every date expression in a message with its span and resolved day;
``resolve`` reads one expression (e.g. a spaCy DATE entity's text). Both are pure,
deterministic and stdlib only: month arithmetic is the one thing python-dateutil would add,
and it is four lines here. ``now`` is taken in the user's local time; only its date is used.

Conventions (each has a test in tests/test_dates.py):

- Weeks start on Monday. "next week" is next week's Monday; "this/next/last weekend" is the
  Saturday of this/next/last week; "end of the week" is that week's Friday (the working
  week), "end of the month/year" its last day. These carry precision "week"/"month"/"year"
  except the "end of" forms, which name one day.
- "next Friday" is the Friday of next week: said on a Wednesday it is 9 days ahead, said on
  a Saturday it is the coming one (6 days). "<weekday> next week" means the same.
  "this Friday" is the coming Friday, today included ("this past Friday" is "last Friday").
  "last Friday" is the most recent Friday before today.
- A bare weekday ("on Thursday") is the coming one (1-7 days ahead) for tense "future",
  the previous one (1-7 days back) for "past", and the nearer of the two otherwise (today
  if it is today's name).
- "the 14th" alone, a month with a day and no year ("March 3"), and a month alone
  ("in March") are the next such date on or after today for "future", the last one on or
  before today for "past", the nearest one otherwise.
- "3/14" is US month/day. Without a year it must follow a preposition ("on 3/14", "by
  3/14"), so fractions such as "1/2 cup" stay out.
- Counts: digits or one..twelve, a/an, couple = 2, few = 3. "in N units" is always ahead,
  "N units ago" always back. Precision follows the unit (a fortnight is 14 days).
- Weekday and month abbreviations that are also words ("sat", "sun", "wed", "mar") count
  only beside a preposition or modifier ("on sat", "next wed") or a day number ("mar 3").
  "may" as a month needs a day number, a year or a preposition, and never before words
  that make it a verb ("in may be").
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Literal

Tense = Literal["past", "future", "unknown"]
Precision = Literal["day", "week", "month", "year"]
Kind = Literal["absolute", "relative", "inferred"]


@dataclass(frozen=True)
class When:
    """One date expression: its span in the text, and the day it names.

    ``kind`` says how sure the day is: "absolute" (the text names the full date),
    "relative" (an offset from ``now`` with one reading: "tomorrow", "in two weeks"),
    "inferred" (the year, month or week was chosen by tense or nearness: "March 3",
    "on Thursday", "the 14th").
    """

    start: int
    end: int
    text: str
    day: date
    precision: Precision
    kind: Kind


_WEEKDAYS: dict[str, int] = {}
for _i, _names in enumerate((
        "monday mondy", "tuesday tuseday tuesdy", "wednesday wednsday wensday wendsday "
        "wednesay", "thursday thurday thursay thrusday", "friday firday fridy",
        "saturday saterday saturdy", "sunday sundy")):
    for _name in _names.split():
        _WEEKDAYS[_name] = _i
_WEEKDAY_ABBR = {"mon": 0, "tue": 1, "tues": 1, "wed": 2, "weds": 2, "thu": 3, "thur": 3,
                 "thurs": 3, "fri": 4, "sat": 5, "sun": 6}
_MONTHS: dict[str, int] = {}
for _i, _names in enumerate((
        "january jan januray", "february feb febuary feburary", "march mar", "april apr",
        "may", "june jun", "july jul", "august aug", "september sep sept",
        "october oct", "november nov", "december dec"), start=1):
    for _name in _names.split():
        _MONTHS[_name] = _i
_COUNTS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
           "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
           "couple": 2, "few": 3}
_UNITS = {"day": "day", "days": "day", "week": "week", "weeks": "week", "wk": "week",
          "wks": "week", "fortnight": "fortnight", "fortnights": "fortnight",
          "month": "month", "months": "month", "mo": "month", "mos": "month",
          "year": "year", "years": "year", "yr": "year", "yrs": "year"}


def _alt(words: Iterable[str]) -> str:
    # Longest first, so "thursday" wins over "thu" inside one alternation.
    return "|".join(sorted(map(re.escape, words), key=len, reverse=True))


_WD_FULL = _alt(_WEEKDAYS)
_WD_ANY = _alt([*_WEEKDAYS, *_WEEKDAY_ABBR])
_MONTH = rf"(?:{_alt(_MONTHS)})\.?"
_DAYNUM = r"(?:[12]\d|3[01]|0?[1-9])"
_ORD = r"(?:st|nd|rd|th)"
_YEAR = r"(?:19|20)\d\d"
_COUNT = rf"(?:\d{{1,3}}|(?:a\s+)?(?:couple|few)(?:\s+of)?|{_alt(_COUNTS)})"
_UNIT = _alt(_UNITS)
_PREP = r"(?:on|by|until|till|til|before|after|from|since|for|due|in|during|around)"
# Words after which "may" is the verb ("in may be", "this may help"), not the month.
_NOT_MAY = (r"(?!\s+(?:be|have|not|i|we|you|he|she|they|it|as|well|also|just|need|want|"
            r"help|take|get|go|come|work|or|and|seem|sound|look|feel)\b)")
_F = re.IGNORECASE


def _months_later(day: date, months: int) -> date:
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    return date(year, month + 1, min(day.day, calendar.monthrange(year, month + 1)[1]))


def _monday(day: date) -> date:
    return day - timedelta(days=day.weekday())


def _pick(candidates: list[date], today: date, tense: Tense, strict: bool = False) -> date:
    """The candidate the tense points to: the first ahead for "future", the last behind
    for "past" (``strict`` leaves today out of both), the nearest otherwise (ahead on a tie)."""
    ahead = sorted(d for d in candidates if d > today or (d == today and not strict))
    behind = sorted(d for d in candidates if d < today or (d == today and not strict))
    if tense == "future" and ahead:
        return ahead[0]
    if tense == "past" and behind:
        return behind[-1]
    return min(candidates, key=lambda d: (abs((d - today).days), d < today))


def _safe_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


Resolved = tuple[date, Precision, Kind] | None
Handler = Callable[["re.Match[str]", date, Tense], Resolved]


def _g(m: re.Match[str], name: str) -> str:
    """A group's text, lowercased and single-spaced; "" when the rule has no such group."""
    value = m.groupdict().get(name)
    return " ".join(value.lower().split()) if value else ""


def _fixed(offset: int) -> Handler:
    return lambda m, today, tense: (today + timedelta(days=offset), "day", "relative")


def _weekday(m: re.Match[str], today: date, tense: Tense) -> Resolved:
    name, mod, post = _g(m, "wd"), _g(m, "mod"), _g(m, "post")
    if name in _WEEKDAY_ABBR and not (mod or post):
        return None
    target = _WEEKDAYS.get(name, _WEEKDAY_ABBR.get(name, 0))
    this_week = _monday(today) + timedelta(days=target)
    if post in ("next week", "after next") or mod in ("next", "the following"):
        weeks = 2 if post == "after next" else 1
        return this_week + timedelta(weeks=weeks), "day", "relative"
    if post == "last week":
        return this_week - timedelta(weeks=1), "day", "relative"
    if post == "this week":
        return this_week, "day", "relative"
    candidates = [this_week + timedelta(weeks=k) for k in (-1, 0, 1)]
    if mod in ("last", "this past", "past"):
        return _pick(candidates, today, "past", strict=True), "day", "relative"
    if mod in ("this", "this coming", "coming"):
        return _pick(candidates, today, "future"), "day", "relative"
    if tense == "unknown":
        return _pick(candidates, today, "unknown"), "day", "inferred"
    return _pick(candidates, today, tense, strict=True), "day", "inferred"


def _count(word: str) -> int:
    if word.isdigit():
        return int(word)
    for key in ("couple", "few"):
        if key in word:
            return _COUNTS[key]
    return _COUNTS[word]


def _offset(m: re.Match[str], today: date, tense: Tense) -> Resolved:
    n = _count(_g(m, "n")) * (-1 if _g(m, "ago") else 1)
    unit = _UNITS[_g(m, "unit")]
    if unit == "month":
        return _months_later(today, n), "month", "relative"
    if unit == "year":
        return _months_later(today, 12 * n), "year", "relative"
    days = {"day": 1, "week": 7, "fortnight": 14}[unit] * n
    return today + timedelta(days=days), "week" if unit == "week" else "day", "relative"


_PERIOD_SHIFT = {"next": 1, "the following": 1, "following": 1, "coming": 1, "last": -1,
                 "past": -1, "this past": -1, "previous": -1, "this": 0, "the": 0, "": 0}


def _period(m: re.Match[str], today: date, tense: Tense) -> Resolved:
    shift = 2 if _g(m, "after") else _PERIOD_SHIFT[_g(m, "mod")]
    unit, edge = _g(m, "unit"), _g(m, "edge")
    if unit in ("week", "weekend"):
        monday = _monday(today) + timedelta(weeks=shift)
        if unit == "weekend":
            return monday + timedelta(days=5), "week", "relative"
        if edge.startswith("end"):
            return monday + timedelta(days=4), "day", "relative"
        return monday, ("day" if edge else "week"), "relative"
    if unit == "month":
        first = _months_later(today.replace(day=1), shift)
        if edge.startswith("end"):
            return _months_later(first, 1) - timedelta(days=1), "day", "relative"
        return first, ("day" if edge else "month"), "relative"
    year = today.year + shift
    if edge.startswith("end"):
        return date(year, 12, 31), "day", "relative"
    return date(year, 1, 1), ("day" if edge else "year"), "relative"


def _month_day(m: re.Match[str], today: date, tense: Tense) -> Resolved:
    month = _MONTHS[_g(m, "mon").rstrip(".")]
    day = int(m["d"])
    if _g(m, "y"):
        found = _safe_date(int(m["y"]), month, day)
        return None if found is None else (found, "day", "absolute")
    years = (today.year - 1, today.year, today.year + 1)
    candidates = [d for y in years if (d := _safe_date(y, month, day)) is not None]
    return (_pick(candidates, today, tense), "day", "inferred") if candidates else None


def _month_alone(m: re.Match[str], today: date, tense: Tense) -> Resolved:
    month = _MONTHS[_g(m, "mon").rstrip(".")]
    if _g(m, "y"):
        return date(int(m["y"]), month, 1), "month", "absolute"
    mod = _g(m, "mod")
    this_year = date(today.year, month, 1)
    this_month = today.replace(day=1)
    if mod == "next":
        return (this_year if this_year > this_month else date(today.year + 1, month, 1),
                "month", "relative")
    if mod == "last":
        return (this_year if this_year < this_month else date(today.year - 1, month, 1),
                "month", "relative")
    if mod == "this":
        return this_year, "month", "relative"
    candidates = [date(today.year + k, month, 1) for k in (-1, 0, 1)]
    return _pick(candidates, this_month, tense), "month", "inferred"


def _ordinal(m: re.Match[str], today: date, tense: Tense) -> Resolved:
    day = int(m["d"])
    months = [_months_later(today.replace(day=1), k) for k in (-2, -1, 0, 1, 2)]
    candidates = [d for f in months if (d := _safe_date(f.year, f.month, day)) is not None]
    return _pick(candidates, today, tense), "day", "inferred"


def _numeric(m: re.Match[str], today: date, tense: Tense) -> Resolved:
    month, day, year = int(m["mo"]), int(m["d"]), _g(m, "y")
    if not year:
        years = (today.year - 1, today.year, today.year + 1)
        candidates = [d for y in years if (d := _safe_date(y, month, day)) is not None]
        return (_pick(candidates, today, tense), "day", "inferred") if candidates else None
    found = _safe_date(int(year) + (2000 if len(year) == 2 else 0), month, day)
    return None if found is None else (found, "day", "absolute")


def _year(m: re.Match[str], today: date, tense: Tense) -> Resolved:
    return date(int(m["y"]), 1, 1), "year", "absolute"


_MOD_WEEKDAY = (r"this\s+coming|this\s+past|the\s+following|next|last|this|coming|past|on|by|"
                r"until|till|til|before|after|since|from")
_MOD_PERIOD = r"this\s+past|the\s+following|following|next|last|this|coming|past|previous"
_MOD_MONTH = r"next|last|this|in|by|until|till|since|during|early|mid|late|before|after|of|from"
_NOT_ORDINAL_NOUN = (r"(?!\s+(?:century|centuries|time|times|floor|grade|place|anniversary|"
                     r"birthday|edition|amendment|round|one|person|attempt|try|row|street|st|"
                     r"avenue|ave|percentile|generation|gen|season|episode|chapter|day|week|"
                     r"month|year|of\s+(?:them|us|those|these))\b)")

# What each rule needs among a message's words before its regex is worth running; the
# empty set stands for a digit.
_NOW_WORDS = frozenset({"today", "tonight", "tonite", "night", "morning", "afternoon",
                        "evening"})
_TOMORROW = frozenset({"tomorrow", "tomorow", "tommorow", "tommorrow", "tomorrw", "tmrw", "tmr",
                       "tmrow", "moro", "morrow", "overmorrow"})
_YESTERDAY = frozenset({"yesterday", "yesterdy", "yestarday", "yday", "night"})
_DAY = frozenset({"day", "overmorrow"})
_WEEKDAY_WORDS = frozenset({*_WEEKDAYS, *_WEEKDAY_ABBR})
_UNIT_WORDS = frozenset(_UNITS)
_PERIOD_WORDS = frozenset({"week", "weekend", "month", "year"})
_MONTH_WORDS = frozenset(_MONTHS)
_DIGITS: frozenset[str] = frozenset()

# (pattern, handler, whether a leading preposition stays out of the span, words it needs).
# The prepositions ("on", "by", "until") tell a date from a word but name no date.
_RULES: list[tuple[re.Pattern[str], Handler, bool, frozenset[str]]] = [
    (re.compile(p, _F), h, s, n) for p, h, s, n in [
        (r"\b(?:today|tonight|tonite|2night|this\s+(?:morning|afternoon|evening))\b",
         _fixed(0), False, _NOW_WORDS),
        (r"\b(?:tomorrow|tomorow|tommorow|tommorrow|tomorrw|tmrw|tmr|tmrow|2moro|2morrow)\b",
         _fixed(1), False, _TOMORROW),
        (r"\b(?:the\s+)?day\s+after\s+(?:tomorrow|tmrw|tmr)\b|\bovermorrow\b", _fixed(2),
         False, _DAY),
        (r"\b(?:yesterday|yesterdy|yestarday|yday|last\s+night)\b", _fixed(-1), False,
         _YESTERDAY),
        (r"\b(?:the\s+)?day\s+before\s+yesterday\b", _fixed(-2), False, _DAY),
        (rf"(?<!every\s)\b(?:(?P<mod>{_MOD_WEEKDAY})\s+)?(?P<wd>{_WD_ANY})\b"
         r"(?:\s+(?P<post>next\s+week|last\s+week|this\s+week|after\s+next))?", _weekday,
         True, _WEEKDAY_WORDS),
        (rf"\b(?:in|within)\s+(?P<n>{_COUNT})\s+(?P<unit>{_UNIT})\b(?:'s?\s+time\b)?",
         _offset, False, _UNIT_WORDS),
        (rf"\b(?P<n>{_COUNT})\s+(?P<unit>{_UNIT})\s+(?P<ago>ago|back|earlier)\b", _offset,
         False, _UNIT_WORDS),
        (rf"\b(?P<n>{_COUNT})\s+(?P<unit>{_UNIT})\s+from\s+(?:now|today)\b", _offset, False,
         _UNIT_WORDS),
        (rf"\b(?P<mod>{_MOD_PERIOD})\s+(?P<unit>weekend|week|month|year)\b", _period, False,
         _PERIOD_WORDS),
        (rf"\b(?:the\s+)?(?P<edge>end|beginning|start)\s+of\s+(?:(?P<mod>{_MOD_PERIOD}|the)"
         r"\s+)?(?P<unit>week|month|year)\b", _period, False, _PERIOD_WORDS),
        (r"\b(?:the\s+)?(?P<unit>weekend|week)\s+(?P<after>after\s+next)\b", _period, False,
         _PERIOD_WORDS),
        (rf"\b(?P<mon>{_MONTH})\s+(?P<d>{_DAYNUM}){_ORD}?\b(?![:/.]\d|\s*%)"
         rf"(?:,?\s+(?P<y>{_YEAR})\b)?", _month_day, False, _MONTH_WORDS),
        (rf"\b(?:the\s+)?(?P<d>{_DAYNUM}){_ORD}?\s+(?:of\s+)?(?P<mon>{_MONTH})(?=\W|$)"
         rf"{_NOT_MAY}(?:,?\s+(?P<y>{_YEAR})\b)?", _month_day, False, _MONTH_WORDS),
        (rf"\b(?P<mod>{_MOD_MONTH})(?:\s+|-)(?P<mon>{_MONTH})(?=\W|$){_NOT_MAY}", _month_alone,
         True, _MONTH_WORDS),
        (rf"\b(?P<mon>{_MONTH}),?\s+(?P<y>{_YEAR})\b", _month_alone, False, _MONTH_WORDS),
        (rf"\bthe\s+(?P<d>{_DAYNUM}){_ORD}\b{_NOT_ORDINAL_NOUN}", _ordinal, False, _DIGITS),
        (rf"\b(?P<y>{_YEAR})(?P<sep>[-/])(?P<mo>0?[1-9]|1[0-2])(?P=sep)(?P<d>{_DAYNUM})\b",
         _numeric, False, _DIGITS),
        (rf"\b(?:on|by|from|until|till|since|before|after|due)\s+(?P<mo>0?[1-9]|1[0-2])/"
         rf"(?P<d>{_DAYNUM})\b(?![/\d])", _numeric, True, _DIGITS),
        (rf"\b(?P<mo>0?[1-9]|1[0-2])/(?P<d>{_DAYNUM})/(?P<y>\d{{4}}|\d\d)\b", _numeric, False,
         _DIGITS),
        (rf"\b(?:in|by|since|until|till|before|after|from|during|of)\s+(?P<y>{_YEAR})\b"
         r"(?![-/]\d)", _year, True, _DIGITS),
    ]]
_PREPOSITION = re.compile(r"(?:on|by|until|till|til|since|from|before|after|due|during|in|"
                          r"of)\s+", _F)
_WORD = re.compile(r"[a-z]+")
_DIGIT = re.compile(r"\d")


def find(text: str, now: datetime, tense: Tense = "unknown") -> list[When]:
    """Every date expression in ``text``, in order, resolved against ``now``'s date.

    ``tense`` is the tense of the clause (plans are "future", reports "past"); it decides
    only the expressions that need it (see the module's conventions). Where expressions
    overlap, the longest wins ("the day after tomorrow" over "tomorrow").
    """
    words = set(_WORD.findall(text.lower()))
    digit = _DIGIT.search(text) is not None
    today = now.date()
    hits: list[tuple[int, int, date, Precision, Kind, bool]] = []
    for pattern, handler, strip, needs in _RULES:
        # A set lookup per rule spares the regexes on the many lines that name no date.
        if not (digit if not needs else not needs.isdisjoint(words)):
            continue
        for m in pattern.finditer(text):
            resolved = handler(m, today, tense)
            if resolved is not None:
                hits.append((m.start(), m.end(), *resolved, strip))
    hits.sort(key=lambda h: (h[0] - h[1], h[0]))
    spans: list[tuple[int, int]] = []
    taken: list[When] = []
    for start, end, day, precision, kind, strip in hits:
        if any(start < e and s < end for s, e in spans):
            continue
        spans.append((start, end))
        lead = _PREPOSITION.match(text, start) if strip else None
        if lead is not None and lead.end() < end:
            start = lead.end()
        taken.append(When(start, end, text[start:end], day, precision, kind))
    return sorted(taken, key=lambda w: w.start)


def resolve(expression: str, now: datetime, tense: Tense = "unknown") -> When | None:
    """The longest date expression in ``expression`` (e.g. a spaCy DATE entity), or None.

    Give it the preposition that carries the meaning: spaCy's "two weeks" is a duration,
    "in two weeks" a date.
    """
    found = find(expression, now, tense)
    return max(found, key=lambda w: w.end - w.start) if found else None
