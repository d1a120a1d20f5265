"""Relative and calendar date expressions in chat text, resolved to days against ``now``.

``find`` returns every date expression in a message with its span and resolved day;
``resolve`` reads one expression (e.g. a spaCy DATE entity's text). Both are pure,
deterministic and stdlib only: month arithmetic is the one thing python-dateutil would add,
and it is four lines here. ``now`` is taken in the user's local time; only its date is used.

Conventions (each has a test in tests/test_dates.py):

- Weeks start on Monday. "next week" is next week's Monday; "this/next/last weekend" the
  Saturday of this/next/last week ("the coming weekend": this week's until its Sunday);
  "end of the week" that week's Friday (the working week), "end of the month/year/March"
  its last day. These carry precision "week"/"month"/"year"; "end/start of" name one day.
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
- "over the weekend" is the nearer weekend, or the one the tense points to. Holidays
  (Christmas, New Year's, Halloween, Valentine's, US Thanksgiving) are dated like "March 3";
  "next/last Christmas" is the one after/before today.
- "3/14" is US month/day; a two-digit year is at most 20 years ahead ("3/14/98" is 1998).
  Without a year it must follow a preposition ("on 3/14", "by 3/14"), so fractions such
  as "1/2 cup" stay out.
- Counts: digits or one..twelve, a/an, couple = 2, few = 3. "in N units" is always ahead,
  "after N days/weeks" too (not "after 40 years of teaching"); "N units ago" always
  back. Precision follows the unit (a fortnight is 14 days).
- Weekday and month abbreviations that are also words ("sat", "sun", "wed", "mar") count
  only beside a preposition or modifier ("on sat", "next wed") or a day number ("mar 3").
  "may" as a month needs a day number, a year or a preposition, and never before words
  that make it a verb ("in may be").
"""

from __future__ import annotations

import calendar
import functools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Literal

Tense = Literal["past", "future", "unknown"]
Precision = Literal["day", "week", "month", "year"]
Kind = Literal["absolute", "relative", "inferred"]


@dataclass(frozen=True)
class When:
    """One date expression: its span in the text, and the day it names.

    ``kind`` says how sure the day is: "absolute" (the text names the full date), "relative"
    (an offset from ``now`` with one reading: "tomorrow", "in two weeks"), "inferred" (tense
    or nearness chose the year, month or week: "March 3", "on Thursday", "the 14th").
    """

    start: int
    end: int
    text: str
    day: date
    precision: Precision
    kind: Kind


def _numbered(*groups: str, first: int = 0) -> dict[str, int]:
    return {name: i for i, group in enumerate(groups, first) for name in group.split()}


_WEEKDAYS = _numbered("monday mondy", "tuesday tuseday tuesdy", "wednesday wednsday wensday "
                      "wendsday wednesay", "thursday thurday thursay thrusday",
                      "friday firday fridy", "saturday saterday saturdy", "sunday sundy")
_WEEKDAY_ABBR = _numbered("mon", "tue tues", "wed weds", "thu thur thurs", "fri", "sat", "sun")
_MONTHS = _numbered("january jan januray", "february feb febuary feburary", "march mar",
                    "april apr", "may", "june jun", "july jul", "august aug", "september sep sept",
                    "october oct", "november nov", "december dec", first=1)
_COUNTS = _numbered("a an one", "two couple", "three few", "four", "five", "six", "seven",
                    "eight", "nine", "ten", "eleven", "twelve", first=1)
_UNITS = {name: names.split()[0] for names in (
    "day days", "week weeks wk wks", "weekend weekends", "fortnight fortnights",
    "month months mo mos", "year years yr yrs") for name in names.split()}


def calendar_word(word: str) -> bool:
    """Whether ``word`` names a day or a month ("Saturday", "weds", "Sept"): when something
    is, no name of a thing of its own."""
    return word.lower() in _WEEKDAYS or word.lower() in _WEEKDAY_ABBR \
        or word.lower() in _MONTHS


def _alt(words: Iterable[str]) -> str:
    # Longest first, so "thursday" wins over "thu" inside one alternation.
    return "|".join(sorted(map(re.escape, words), key=len, reverse=True))


_WD_ANY = _alt([*_WEEKDAYS, *_WEEKDAY_ABBR])
_MONTH = rf"(?:{_alt(_MONTHS)})\.?"
_DAYNUM = r"(?:[12]\d|3[01]|0?[1-9])"
_ORD = r"(?:st|nd|rd|th)"
_YEAR = r"(?:19|20)\d\d"
_COUNT = rf"(?:\d{{1,3}}|(?:a\s+)?(?:couple|few)(?:\s+of)?|{_alt(_COUNTS)})"
_UNIT = _alt(_UNITS)
# Words after which "may" is the verb ("in may be", "this may help"), not the month; only
# after "may" ("in September and my French ..." names September).
_NOT_MAY = (r"(?:(?<!may)|(?!\s+(?:be|have|not|i|we|you|he|she|they|it|as|well|also|just|"
            r"need|want|help|take|get|go|come|work|or|and|seem|sound|look|feel)\b))")


def _months_later(day: date, months: int) -> date:
    year, month = divmod(day.year * 12 + day.month - 1 + months, 12)
    return date(year, month + 1, min(day.day, calendar.monthrange(year, month + 1)[1]))


def _monday(day: date) -> date:
    return day - timedelta(days=day.weekday())


def _pick(candidates: list[date], today: date, tense: Tense, strict: bool = False) -> date:
    """The candidate the tense points to: the first ahead for "future", the last behind
    for "past" (``strict`` leaves today out of both), the nearest otherwise (ahead on a tie)."""
    if tense != "unknown":
        side = [d for d in candidates if (d > today if tense == "future" else d < today)
                or (d == today and not strict)]
        if side:
            return min(side) if tense == "future" else max(side)
    return min(candidates, key=lambda d: (abs((d - today).days), d < today))


def _safe_date(year: int, month: int, day: int) -> date | None:
    return date(year, month, day) if day <= calendar.monthrange(year, month)[1] else None


Resolved = tuple[date, Precision, Kind] | None
Handler = Callable[["re.Match[str]", date, Tense], Resolved]


def _absolute(year: int, month: int, day: int) -> Resolved:
    found = _safe_date(year, month, day)
    return None if found is None else (found, "day", "absolute")


def _g(m: re.Match[str], name: str) -> str:
    """A group's text, lowercased and single-spaced; "" when the rule has no such group."""
    value = m.groupdict().get(name)
    return " ".join(value.lower().split()) if value else ""


def _fixed(offset: int) -> Handler:
    return lambda m, today, tense: (today + timedelta(days=offset), "day", "relative")


def _weekday(m: re.Match[str], today: date, tense: Tense) -> Resolved:
    name, mod, pre = _g(m, "wd"), _g(m, "mod").replace("nxt", "next"), _g(m, "pre")
    post = (_g(m, "post") or (f"{pre.replace('nxt', 'next')} week" if pre else "")
            or ("next week" if mod in ("next", "the following") else ""))
    if name in _WEEKDAY_ABBR and not (mod or post):
        return None
    this_week = _monday(today) + timedelta(days=_WEEKDAYS.get(name, _WEEKDAY_ABBR.get(name, 0)))
    if post:
        weeks = {"next week": 1, "after next": 2, "last week": -1, "this week": 0}[post]
        return this_week + timedelta(weeks=weeks), "day", "relative"
    candidates = [this_week + timedelta(weeks=k) for k in (-1, 0, 1)]
    if mod in ("last", "this past", "past"):
        return _pick(candidates, today, "past", strict=True), "day", "relative"
    if mod in ("this", "this coming", "coming"):
        return _pick(candidates, today, "future"), "day", "relative"
    return _pick(candidates, today, tense, strict=tense != "unknown"), "day", "inferred"


def _count(word: str) -> int:
    """The number in "3", "two", "a couple of", "a few"."""
    return int(word) if word.isdigit() else _COUNTS[word.removeprefix("a ").split()[0]]


def _offset(m: re.Match[str], today: date, tense: Tense) -> Resolved:
    n = _count(_g(m, "n")) * (-1 if _g(m, "ago") else 1)
    unit = _UNITS[_g(m, "unit")]
    if unit == "weekend":  # "two weekends ago": the Saturday two weeks before this week's
        return _monday(today) + timedelta(weeks=n, days=5), "week", "relative"
    if unit in ("month", "year"):
        months = n * (12 if unit == "year" else 1)
        return _months_later(today, months), ("year" if unit == "year" else "month"), "relative"
    days = {"day": 1, "week": 7, "fortnight": 14}[unit] * n
    return today + timedelta(days=days), "week" if unit == "week" else "day", "relative"


_PERIOD_SHIFT = {"next": 1, "nxt": 1, "the following": 1, "following": 1, "coming": 1,
                 "this coming": 1, "upcoming": 1, "last": -1, "past": -1, "this past": -1,
                 "previous": -1, "this": 0, "the": 0, "": 0}


def _period(m: re.Match[str], today: date, tense: Tense) -> Resolved:
    shift = 2 if _g(m, "after") else _PERIOD_SHIFT[_g(m, "mod")]
    unit, edge = _g(m, "unit"), _g(m, "edge")
    if unit == "weekend":
        if "coming" in _g(m, "mod"):  # the next to begin: this week's, unless it is Sunday
            shift = int(today.weekday() == 6)
        return _monday(today) + timedelta(weeks=shift, days=5), "week", "relative"
    precision: Precision
    if unit == "week":
        first, precision = _monday(today) + timedelta(weeks=shift), "week"
        last = first + timedelta(days=4)  # the working week's Friday
    elif unit == "month":
        first, precision = _months_later(today.replace(day=1), shift), "month"
        last = _months_later(first, 1) - timedelta(days=1)
    else:
        first, precision = date(today.year + shift, 1, 1), "year"
        last = date(first.year, 12, 31)
    if edge:
        return (last if edge == "end" else first), "day", "relative"
    return first, precision, "relative"


def _yearly(make: Callable[[int], date | None], today: date, tense: Tense, mod: str = "",
            precision: Precision = "day") -> Resolved:
    """A date that comes once a year ("March 3", "Christmas", "March"), in the year its
    modifier names ("next", "last", "this") or else the one the tense picks."""
    found = [d for k in (-1, 0, 1) if (d := make(today.year + k)) is not None]
    if not found:
        return None
    if mod in ("next", "last"):
        return (_pick(found, today, "future" if mod == "next" else "past", strict=True),
                precision, "relative")
    if mod == "this" and (this_year := make(today.year)) is not None:
        return this_year, precision, "relative"
    return _pick(found, today, tense), precision, "inferred"


def _month_day(m: re.Match[str], today: date, tense: Tense) -> Resolved:
    month, day = _MONTHS[_g(m, "mon").rstrip(".")], int(m["d"])
    if _g(m, "y"):
        return _absolute(int(m["y"]), month, day)
    return _yearly(lambda y: _safe_date(y, month, day), today, tense)


def _month_alone(m: re.Match[str], today: date, tense: Tense) -> Resolved:
    month = _MONTHS[_g(m, "mon").rstrip(".")]
    if _g(m, "y"):
        return date(int(m["y"]), month, 1), "month", "absolute"
    # Months compare by their first days, so "in March" said on March 20 is this March.
    found = _yearly(lambda y: date(y, month, 1), today.replace(day=1), tense, _g(m, "mod"), "month")
    if found is None or not (edge := _g(m, "edge")):
        return found
    last = _months_later(found[0], 1) - timedelta(days=1)
    return (last if edge == "end" else found[0]), "day", found[2]


def _ordinal(m: re.Match[str], today: date, tense: Tense) -> Resolved:
    day, mod = int(m["d"]), _g(m, "mod")
    if mod:
        first = _months_later(today.replace(day=1), _PERIOD_SHIFT[mod])
        found = _safe_date(first.year, first.month, day)
        return None if found is None else (found, "day", "relative")
    months = [_months_later(today.replace(day=1), k) for k in (-2, -1, 0, 1, 2)]
    candidates = [d for f in months if (d := _safe_date(f.year, f.month, day)) is not None]
    return _pick(candidates, today, tense), "day", "inferred"


def _numeric(m: re.Match[str], today: date, tense: Tense) -> Resolved:
    month, day, year = int(m["mo"]), int(m["d"]), _g(m, "y")
    if not year:
        return _yearly(lambda y: _safe_date(y, month, day), today, tense)
    yy = int(year)  # two digits are at most 20 years ahead: "3/14/98" is 1998
    return _absolute(yy if yy > 99 else 2000 + yy - 100 * (yy > today.year - 1980), month, day)


_HOLIDAYS: dict[str, Callable[[int], date]] = {
    "christmas": lambda y: date(y, 12, 25), "christmas eve": lambda y: date(y, 12, 24),
    "new years eve": lambda y: date(y, 12, 31), "new years": lambda y: date(y, 1, 1),
    "halloween": lambda y: date(y, 10, 31), "valentines": lambda y: date(y, 2, 14),
    # US Thanksgiving: the fourth Thursday of November.
    "thanksgiving": lambda y: date(y, 11, 22 + (3 - date(y, 11, 1).weekday()) % 7)}


def _holiday(m: re.Match[str], today: date, tense: Tense) -> Resolved:
    name = _g(m, "h").replace("'", "").replace("xmas", "christmas").removesuffix(" day")
    return _yearly(_HOLIDAYS["new years eve" if name == "nye" else name], today, tense,
                   _g(m, "mod"))


def _weekend(m: re.Match[str], today: date, tense: Tense) -> Resolved:
    saturdays = [_monday(today) + timedelta(days=5 + 7 * k) for k in (-1, 0, 1)]
    return _pick(saturdays, today, tense), "week", "inferred"


_MOD_WEEKDAY = (r"this\s+coming|this\s+past|the\s+following|next|nxt|last|this|coming|past|"
                r"on|by|until|till|til|before|after|since|from")
_MOD_PERIOD = (r"this\s+past|this\s+coming|the\s+following|following|next|nxt|last|this|"
               r"upcoming|coming|past|previous")
_MOD_MONTH = r"next|last|this|in|by|until|till|since|during|early|mid|late|before|after|of|from"
_NOT_ORDINAL_NOUN = (r"(?!\s+(?:century|centuries|times?|floor|grade|place|anniversary|birthday|"
                     r"edition|amendment|round|one|person|attempt|try|row|street|st|avenue|ave|"
                     r"percentile|gen|generation|season|episode|chapter|day|week|month|year|"
                     r"of\s+(?:them|us|those|these))\b)")
_TODAY = ["today", "2day", "tonight", "tonite", "2night", "2nite"]
_TOMORROW = ["tomorrow", "tomorow", "tommorow", "tommorrow", "tomorrw", "tomorro", "tmorrow",
             "tomrrow", "tmrw", "tmr", "tmrow", "2moro", "2morrow"]
_YESTERDAY = ["yesterday", "yesterdy", "yestarday", "yesturday", "yestrday", "yesteday", "yday"]


def _words(*groups: Iterable[str]) -> frozenset[str]:
    """The letters-only words a rule needs (what ``_WORD`` makes of "2moro" is "moro")."""
    return frozenset(re.sub(r"\d", "", w) for group in groups for w in group)


_DIGITS: frozenset[str] = frozenset()  # a rule with no words needs a digit
# (pattern, handler, whether a leading preposition ("on", "by": they name no date) stays out
# of the span, the words of which a message needs one before the pattern is worth running).
_RULES: list[tuple[re.Pattern[str], Handler, bool, frozenset[str]]] = [
    (re.compile(p, re.I), h, s, n) for p, h, s, n in [
        (rf"\b(?:{_alt(_TODAY)}|this\s+(?:morning|afternoon|evening))\b", _fixed(0), False,
         _words(_TODAY, ["morning", "afternoon", "evening"])),
        (rf"\b(?:{_alt(_TOMORROW)})\b", _fixed(1), False, _words(_TOMORROW)),
        (r"\b(?:the\s+)?day\s+after\s+(?:tomorrow|tmrw|tmr)\b|\bovermorrow\b", _fixed(2),
         False, _words(["day", "overmorrow"])),
        (rf"\b(?:{_alt(_YESTERDAY)}|last\s+night)\b", _fixed(-1), False,
         _words(_YESTERDAY, ["night"])),
        (r"\b(?:the\s+)?(?:day\s+before\s+yesterday|night\s+before\s+last)\b", _fixed(-2),
         False, _words(["day", "night"])),
        (rf"(?<!every\s)\b(?:(?P<pre>next|nxt|last|this)\s+week(?:\s+on|,)?\s+)?"
         rf"(?:(?P<mod>{_MOD_WEEKDAY})\s+)?(?P<wd>{_WD_ANY})\b"
         r"(?:\s+(?P<post>next\s+week|last\s+week|this\s+week|after\s+next))?", _weekday,
         True, _words(_WEEKDAYS, _WEEKDAY_ABBR)),
        (rf"(?<!built\s)\b(?:in|within)\s+(?:the\s+)?(?:next\s+)?(?P<n>{_COUNT})\s+"
         rf"(?P<unit>{_UNIT})\b(?:'s?\s+time\b)?", _offset, False, _words(_UNITS)),
        # ("after 10 days": a count said, not "after a day of volunteering")
        (rf"\bafter\s+(?P<n>\d{{1,3}}|{_alt(w for w in _COUNTS if w not in ('a', 'an'))})\s+"
         r"(?P<unit>days?|weeks?|wks?)\b(?!\s+(?:of|in|together|with)\b)", _offset, False,
         _words(["day", "days", "week", "weeks", "wk", "wks"])),
        (rf"\b(?P<n>{_COUNT})\s+(?P<unit>{_UNIT})\s+(?:(?P<ago>ago|back|earlier)|from\s+"
         r"(?:now|today))\b", _offset, False, _words(_UNITS)),
        (rf"\b(?P<mod>{_MOD_PERIOD})\s+(?P<unit>weekend|week|month|year)\b", _period, False,
         _words(["week", "weekend", "month", "year"])),
        (rf"\b(?:the\s+)?(?P<edge>end|beginning|start)\s+of\s+(?:(?P<mod>{_MOD_PERIOD}|the)"
         r"\s+)?(?P<unit>week|month|year)\b", _period, False, _words(["week", "month", "year"])),
        (r"\b(?:the\s+)?(?P<unit>weekend|week)\s+(?P<after>after\s+next)\b", _period, False,
         _words(["week", "weekend"])),
        (r"(?:\b(?:over|on|at|during|for)\s+|^)the\s+weekend\b", _weekend, True,
         _words(["weekend"])),
        (rf"\b(?P<mon>{_MONTH})\s+(?:the\s+)?(?P<d>{_DAYNUM}){_ORD}?\b(?![:/.]\d|\s*%)"
         rf"(?:,?\s+(?P<y>{_YEAR})\b)?", _month_day, False, _words(_MONTHS)),
        (rf"\b(?:the\s+)?(?P<d>{_DAYNUM}){_ORD}?\s+(?:of\s+)?(?P<mon>{_MONTH})(?=\W|$)"
         rf"{_NOT_MAY}(?:,?\s+(?P<y>{_YEAR})\b)?", _month_day, False, _words(_MONTHS)),
        (rf"\b(?:(?:the\s+)?(?P<edge>end|beginning|start)\s+(?=of\s))?(?P<mod>{_MOD_MONTH})"
         rf"(?:\s+|-)(?P<mon>{_MONTH})(?=\W|$){_NOT_MAY}", _month_alone, True, _words(_MONTHS)),
        (rf"\b(?P<mon>{_MONTH}),?\s+(?P<y>{_YEAR})\b", _month_alone, False, _words(_MONTHS)),
        (r"(?<!every\s)\b(?:(?P<mod>this|next|last)\s+)?(?P<h>christmas(?:\s+eve)?|"
         r"xmas(?:\s+eve)?|new\s+year'?s(?:\s+(?:eve|day))?|nye|halloween|"
         r"valentine'?s(?:\s+day)?|thanksgiving)(?!\w)", _holiday, False,
         _words(["christmas", "xmas", "years", "year", "nye", "halloween", "valentine",
                 "valentines", "thanksgiving"])),
        (rf"\bthe\s+(?P<d>{_DAYNUM}){_ORD}\b{_NOT_ORDINAL_NOUN}"
         r"(?:\s+of\s+(?P<mod>this|next|last)\s+month\b)?", _ordinal, False, _DIGITS),
        (rf"\b(?P<y>{_YEAR})(?P<sep>[-/])(?P<mo>0?[1-9]|1[0-2])(?P=sep)(?P<d>{_DAYNUM})(?!\d)",
         _numeric, False, _DIGITS),
        (rf"\b(?:on|by|from|until|till|since|before|after|due)\s+(?P<mo>0?[1-9]|1[0-2])/"
         rf"(?P<d>{_DAYNUM})\b(?![/\d])", _numeric, True, _DIGITS),
        (rf"\b(?P<mo>0?[1-9]|1[0-2])/(?P<d>{_DAYNUM})/(?P<y>\d{{4}}|\d\d)\b", _numeric, False,
         _DIGITS),
        (rf"(?:\b(?:in|by|since|until|till|before|after|from|during|of)\s+|^(?={_YEAR}\W*$))"
         rf"(?P<y>{_YEAR})\b"
         r"(?![-/]\d)", lambda m, _, __: (date(int(m["y"]), 1, 1), "year", "absolute"), True,
         _DIGITS),
    ]]
_PREPOSITION = re.compile(r"(?:on|by|until|till|til|since|from|before|after|due|during|in|"
                          r"of|over|at|for)\s+", re.I)
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
    taken: list[tuple[int, int, When]] = []  # the whole match's span, then what it names
    for start, end, day, precision, kind, strip in hits:
        if any(start < e and s < end for s, e, _ in taken):
            continue
        lead = _PREPOSITION.match(text, start) if strip else None
        at = lead.end() if lead is not None and lead.end() < end else start
        taken.append((start, end, When(at, end, text[at:end], day, precision, kind)))
    return sorted((w for _, _, w in taken), key=lambda w: w.start)


# Any day will do to tell where a text names a day: what it names does not move the words.
_ANY_DAY = datetime(2000, 1, 1, tzinfo=UTC)


@functools.cache
def named_days(text: str) -> tuple[When, ...]:
    """Where ``text`` names a day, whichever day that is ("friday" is a day, "Dominic" and
    "the gym" name none)."""
    return tuple(find(text, _ANY_DAY))


def resolve(expression: str, now: datetime, tense: Tense = "unknown") -> When | None:
    """The longest date expression in ``expression`` (e.g. a spaCy DATE entity), or None.

    Give it the preposition that carries the meaning: spaCy's "two weeks" is a duration,
    "in two weeks" a date.
    """
    found = find(expression, now, tense)
    return max(found, key=lambda w: w.end - w.start) if found else None
