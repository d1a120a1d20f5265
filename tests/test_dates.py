"""extract.parser._dates: relative and calendar date expressions resolved against `now`. Pure: no
database. The tables say, for a sentence and a tense, which words name a date and which day."""

from __future__ import annotations

from datetime import date, datetime
from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engrammar.extract.parser._dates import Tense, When, find, resolve

WED = datetime(2026, 11, 18, 10, 0)  # a Wednesday
SAT = datetime(2026, 11, 21, 10, 0)
SUN = datetime(2026, 11, 22, 10, 0)


def one(text: str, now: datetime = WED, tense: Tense = "unknown") -> tuple[str, str, str]:
    found = find(text, now, tense)
    assert len(found) == 1, found
    return found[0].text, found[0].day.isoformat(), found[0].precision


@pytest.mark.parametrize(("text", "tense", "span", "day", "precision"), [
    # Days named relative to today, with the usual typos and abbreviations.
    ("I went to a support group yesterday", "past", "yesterday", "2026-11-17", "day"),
    ("Yesterday was rough", "unknown", "Yesterday", "2026-11-17", "day"),
    ("yday I slept all day", "past", "yday", "2026-11-17", "day"),
    ("last night was fun", "past", "last night", "2026-11-17", "day"),
    ("the day before yesterday", "past", "the day before yesterday", "2026-11-16", "day"),
    ("the night before last", "past", "the night before last", "2026-11-16", "day"),
    ("I have a meeting TODAY", "unknown", "TODAY", "2026-11-18", "day"),
    ("dinner tonight?", "future", "tonight", "2026-11-18", "day"),
    ("this morning I ran", "past", "this morning", "2026-11-18", "day"),
    ("this evening we cook", "future", "this evening", "2026-11-18", "day"),
    ("see you tomorrow", "future", "tomorrow", "2026-11-19", "day"),
    ("see u tmrw", "future", "tmrw", "2026-11-19", "day"),
    ("gym tmr morning", "future", "tmr", "2026-11-19", "day"),
    ("tommorow works", "future", "tommorow", "2026-11-19", "day"),
    ("see u 2moro", "future", "2moro", "2026-11-19", "day"),
    ("the day after tomorrow", "future", "the day after tomorrow", "2026-11-20", "day"),
    ("2day is rough", "unknown", "2day", "2026-11-18", "day"),
    ("yesturday", "past", "yesturday", "2026-11-17", "day"),
    # Weekdays: "next" is next week's; "this" the coming one; "last" the one before today;
    # bare ones follow the tense, or the nearer one.
    ("see you next Thursday", "future", "next Thursday", "2026-11-26", "day"),
    ("next Friday works", "unknown", "next Friday", "2026-11-27", "day"),
    ("Friday next week", "unknown", "Friday next week", "2026-11-27", "day"),
    ("mon next week", "future", "mon next week", "2026-11-23", "day"),
    ("this Friday", "unknown", "this Friday", "2026-11-20", "day"),
    ("this wednesday", "future", "this wednesday", "2026-11-18", "day"),
    ("this coming Monday", "unknown", "this coming Monday", "2026-11-23", "day"),
    ("last Friday", "unknown", "last Friday", "2026-11-13", "day"),
    ("last wednesday", "unknown", "last wednesday", "2026-11-11", "day"),
    ("this past Monday", "unknown", "this past Monday", "2026-11-16", "day"),
    ("Thursday last week", "past", "Thursday last week", "2026-11-12", "day"),
    ("dentist on Thursday", "future", "Thursday", "2026-11-19", "day"),
    ("I saw her on Thursday", "past", "Thursday", "2026-11-12", "day"),
    ("Thursday?", "unknown", "Thursday", "2026-11-19", "day"),
    ("sunday", "unknown", "sunday", "2026-11-15", "day"),
    ("on Wednesday", "future", "Wednesday", "2026-11-25", "day"),
    ("on Wednesday", "past", "Wednesday", "2026-11-11", "day"),
    ("on Wednesday", "unknown", "Wednesday", "2026-11-18", "day"),
    ("I'll do it by Friday", "future", "Friday", "2026-11-20", "day"),
    ("on sat we go", "future", "sat", "2026-11-21", "day"),
    ("by next wed", "future", "next wed", "2026-11-25", "day"),
    ("party on thurs", "future", "thurs", "2026-11-19", "day"),
    ("wensday is fine", "future", "wensday", "2026-11-25", "day"),
    ("5pm on Friday", "future", "Friday", "2026-11-20", "day"),
    ("nxt friday", "future", "nxt friday", "2026-11-27", "day"),
    ("next week on Thursday", "future", "next week on Thursday", "2026-11-26", "day"),
    ("next week Tuesday", "unknown", "next week Tuesday", "2026-11-24", "day"),
    ("Thursday after next", "future", "Thursday after next", "2026-12-03", "day"),
    ("the following Monday", "future", "the following Monday", "2026-11-23", "day"),
    # Counts of units from now, as digits or words.
    ("in two weeks I start", "future", "in two weeks", "2026-12-02", "week"),
    ("in 10 days", "future", "in 10 days", "2026-11-28", "day"),
    ("in a couple days", "future", "in a couple days", "2026-11-20", "day"),
    ("in a couple of weeks", "future", "in a couple of weeks", "2026-12-02", "week"),
    ("in a few days", "future", "in a few days", "2026-11-21", "day"),
    ("in a fortnight", "future", "in a fortnight", "2026-12-02", "day"),
    ("in two weeks' time", "future", "in two weeks' time", "2026-12-02", "week"),
    ("within a week", "future", "within a week", "2026-11-25", "week"),
    ("my exam is after 10 days", "future", "after 10 days", "2026-11-28", "day"),
    ("in the next few days", "future", "in the next few days", "2026-11-21", "day"),
    ("within the next 2 weeks", "future", "within the next 2 weeks", "2026-12-02", "week"),
    ("in 3 months", "future", "in 3 months", "2027-02-18", "month"),
    ("in a year", "future", "in a year", "2027-11-18", "year"),
    ("a week from now", "future", "a week from now", "2026-11-25", "week"),
    ("two days from today", "future", "two days from today", "2026-11-20", "day"),
    ("a week ago", "past", "a week ago", "2026-11-11", "week"),
    ("a couple of weeks ago", "past", "a couple of weeks ago", "2026-11-04", "week"),
    ("a few days ago", "past", "a few days ago", "2026-11-15", "day"),
    ("3 days ago", "past", "3 days ago", "2026-11-15", "day"),
    ("2 years ago", "past", "2 years ago", "2024-11-18", "year"),
    ("six months ago", "past", "six months ago", "2026-05-18", "month"),
    ("camping two weekends ago", "past", "two weekends ago", "2026-11-07", "week"),
    ("in a couple of weekends", "future", "in a couple of weekends", "2026-12-05", "week"),
    # Weeks, weekends, months and years; their starts and ends.
    ("next week", "future", "next week", "2026-11-23", "week"),
    ("last week", "past", "last week", "2026-11-09", "week"),
    ("this week", "unknown", "this week", "2026-11-16", "week"),
    ("the week after next", "future", "the week after next", "2026-11-30", "week"),
    ("this weekend", "future", "this weekend", "2026-11-21", "week"),
    ("next weekend", "future", "next weekend", "2026-11-28", "week"),
    ("last weekend", "past", "last weekend", "2026-11-14", "week"),
    ("nxt week", "future", "nxt week", "2026-11-23", "week"),
    ("this coming weekend", "future", "this coming weekend", "2026-11-21", "week"),
    ("the upcoming week", "future", "upcoming week", "2026-11-23", "week"),
    ("went hiking over the weekend", "past", "the weekend", "2026-11-14", "week"),
    ("free over the weekend?", "future", "the weekend", "2026-11-21", "week"),
    ("on the weekend", "unknown", "the weekend", "2026-11-21", "week"),
    ("The weekend was great", "past", "The weekend", "2026-11-14", "week"),
    ("this past weekend", "past", "this past weekend", "2026-11-14", "week"),
    ("next month", "future", "next month", "2026-12-01", "month"),
    ("this month", "unknown", "this month", "2026-11-01", "month"),
    ("last month", "past", "last month", "2026-10-01", "month"),
    ("next year", "future", "next year", "2027-01-01", "year"),
    ("last year", "past", "last year", "2025-01-01", "year"),
    ("by the end of the month", "future", "the end of the month", "2026-11-30", "day"),
    ("end of next month", "future", "end of next month", "2026-12-31", "day"),
    ("end of the week", "future", "end of the week", "2026-11-20", "day"),
    ("end of next week", "future", "end of next week", "2026-11-27", "day"),
    ("the end of the year", "future", "the end of the year", "2026-12-31", "day"),
    ("start of next month", "future", "start of next month", "2026-12-01", "day"),
    # Calendar dates: the year follows the tense when it is not said.
    ("March 3", "unknown", "March 3", "2027-03-03", "day"),
    ("March 3", "past", "March 3", "2026-03-03", "day"),
    ("3rd of March", "future", "3rd of March", "2027-03-03", "day"),
    ("the 3rd of march", "future", "the 3rd of march", "2027-03-03", "day"),
    ("Mar 3rd, 2027", "unknown", "Mar 3rd, 2027", "2027-03-03", "day"),
    ("3 March 2025", "unknown", "3 March 2025", "2025-03-03", "day"),
    ("Nov 30", "unknown", "Nov 30", "2026-11-30", "day"),
    ("Nov 10", "unknown", "Nov 10", "2026-11-10", "day"),
    ("Nov 10", "future", "Nov 10", "2027-11-10", "day"),
    ("30 Nov", "unknown", "30 Nov", "2026-11-30", "day"),
    ("dec. 5", "future", "dec. 5", "2026-12-05", "day"),
    ("may 3rd", "future", "may 3rd", "2027-05-03", "day"),
    ("on the 14th", "future", "the 14th", "2026-12-14", "day"),
    ("on the 14th", "past", "the 14th", "2026-11-14", "day"),
    ("the 20th", "unknown", "the 20th", "2026-11-20", "day"),
    ("due the 31st", "future", "the 31st", "2026-12-31", "day"),
    ("the 31st", "past", "the 31st", "2026-10-31", "day"),
    ("the 14th of next month", "unknown", "the 14th of next month", "2026-12-14", "day"),
    ("the 2nd of this month", "unknown", "the 2nd of this month", "2026-11-02", "day"),
    ("March the 3rd", "future", "March the 3rd", "2027-03-03", "day"),
    ("in March", "future", "March", "2027-03-01", "month"),
    ("in March", "past", "March", "2026-03-01", "month"),
    ("next March", "unknown", "next March", "2027-03-01", "month"),
    ("last march", "unknown", "last march", "2026-03-01", "month"),
    ("early March", "future", "early March", "2027-03-01", "month"),
    ("mid-March", "future", "mid-March", "2027-03-01", "month"),
    ("until the end of March", "future", "the end of March", "2027-03-31", "day"),
    ("the end of may", "past", "the end of may", "2026-05-31", "day"),
    ("by the start of June", "future", "the start of June", "2027-06-01", "day"),
    ("it will end in March", "future", "March", "2027-03-01", "month"),
    ("in may", "future", "may", "2027-05-01", "month"),
    ("December 2027", "unknown", "December 2027", "2027-12-01", "month"),
    ("2027-03-14", "unknown", "2027-03-14", "2027-03-14", "day"),
    ("on 2026-11-30, ok", "unknown", "2026-11-30", "2026-11-30", "day"),
    ("3/14/2027", "unknown", "3/14/2027", "2027-03-14", "day"),
    ("on 12/25/26", "unknown", "12/25/26", "2026-12-25", "day"),
    ("born 3/14/98", "past", "3/14/98", "1998-03-14", "day"),
    ("at 2027-03-14T10:00", "unknown", "2027-03-14", "2027-03-14", "day"),
    ("on 3/14 we meet", "future", "3/14", "2027-03-14", "day"),
    ("it's due by 12/1", "future", "12/1", "2026-12-01", "day"),
    ("in 2027", "future", "2027", "2027-01-01", "year"),
    ("since 2019", "past", "2019", "2019-01-01", "year"),
    ("2019", "past", "2019", "2019-01-01", "year"),  # e.g. a spaCy DATE entity
    # Holidays, dated like a month and day.
    ("see you at christmas", "future", "christmas", "2026-12-25", "day"),
    ("last Christmas was sad", "past", "last Christmas", "2025-12-25", "day"),
    ("xmas eve dinner", "future", "xmas eve", "2026-12-24", "day"),
    ("new year's eve party", "future", "new year's eve", "2026-12-31", "day"),
    ("NYE", "future", "NYE", "2026-12-31", "day"),
    ("New Years Day", "future", "New Years Day", "2027-01-01", "day"),
    ("halloween", "past", "halloween", "2026-10-31", "day"),
    ("valentine's day", "future", "valentine's day", "2027-02-14", "day"),
    ("Thanksgiving", "future", "Thanksgiving", "2026-11-26", "day"),
    ("last thanksgiving", "unknown", "last thanksgiving", "2025-11-27", "day"),
])
def test_expressions_resolve(text: str, tense: Tense, span: str, day: str,
                             precision: str) -> None:
    assert one(text, WED, tense) == (span, day, precision)


@pytest.mark.parametrize("text", [
    "I'm next to her", "second thoughts", "may I ask something", "March on, soldiers",
    "a few of them came", "it may be fine", "this may help", "I sat down in the sun",
    "they got wed at the church", "1/2 cup of flour", "every Monday I swim", "Mondays are hard",
    "the 5th time this happened", "I'm 25 years old", "for two weeks", "in a minute",
    "in 2 hrs", "around 2000 people", "the 2nd one is better", "a week of rest",
    "the week was long", "I'll call you later", "she's the one", "the 3rd floor",
    "that was a great day", "c'mon mon", "20th century art", "my 30th birthday",
    "3/4 of them", "we may 3x the budget", "I love Sundays", "every Christmas we bake",
    "happy new year", "I love the weekend", "a day off", "one day maybe",
    "2000 people came", "we need 2025 more signatures",
    "Rome wasn't built in a day",
])
def test_words_that_name_no_date_resolve_to_nothing(text: str) -> None:
    assert [w.text for w in find(text, WED, "unknown")] == []


def test_next_weekday_is_next_weeks_even_when_this_weeks_is_over() -> None:
    # Said on a Saturday, this week's Monday is gone, so "next Monday" is the coming one.
    assert one("next Monday", SAT) == ("next Monday", "2026-11-23", "day")
    assert one("next Friday", SAT) == ("next Friday", "2026-11-27", "day")
    assert one("this Friday", SAT) == ("this Friday", "2026-11-27", "day")
    assert one("last Saturday", SAT) == ("last Saturday", "2026-11-14", "day")
    # On a Sunday, this weekend began yesterday; next weekend is six days ahead.
    assert one("this weekend", SUN) == ("this weekend", "2026-11-21", "week")
    assert one("next weekend", SUN) == ("next weekend", "2026-11-28", "week")
    assert one("next week", SUN) == ("next week", "2026-11-23", "week")
    assert one("the coming weekend", SUN) == ("coming weekend", "2026-11-28", "week")


def test_calendar_edges_roll_over_months_and_years() -> None:
    jan31 = datetime(2027, 1, 31, 12, 0)
    assert one("in a month", jan31) == ("in a month", "2027-02-28", "month")
    assert one("end of the month", datetime(2028, 2, 10)) == (
        "end of the month", "2028-02-29", "day")
    dec30 = datetime(2026, 12, 30, 9, 0)
    assert one("next week", dec30) == ("next week", "2027-01-04", "week")
    assert one("next month", dec30) == ("next month", "2027-01-01", "month")
    assert one("tomorrow", datetime(2026, 12, 31)) == ("tomorrow", "2027-01-01", "day")
    assert one("Jan 5", dec30) == ("Jan 5", "2027-01-05", "day")
    assert one("Jan 5", dec30, "past") == ("Jan 5", "2026-01-05", "day")
    assert one("in January", dec30, "past") == ("January", "2026-01-01", "month")
    assert one("the 31st", datetime(2027, 2, 10), "future") == ("the 31st", "2027-03-31", "day")
    assert find("Feb 30", WED) == [] and find("on 2026-02-30", WED) == []


def test_several_expressions_in_one_message_come_back_in_order_with_their_spans() -> None:
    text = "Back from Lisbon yesterday; dentist next Thursday and rent due on the 1st."
    found = find(text, WED, "future")
    assert [(w.text, w.day, w.kind) for w in found] == [
        ("yesterday", date(2026, 11, 17), "relative"),
        ("next Thursday", date(2026, 11, 26), "relative"),
        ("the 1st", date(2026, 12, 1), "inferred")]
    assert all(text[w.start:w.end] == w.text for w in found)


def test_the_longest_expression_wins_where_they_overlap() -> None:
    assert [w.text for w in find("the day after tomorrow at noon", WED)] == [
        "the day after tomorrow"]
    assert [w.text for w in find("Thursday next week", WED)] == ["Thursday next week"]
    assert [w.text for w in find("March 3rd, 2027 it is", WED)] == ["March 3rd, 2027"]


def test_kind_says_whether_the_date_was_given_computed_or_guessed() -> None:
    assert find("2027-03-14", WED)[0].kind == "absolute"
    assert find("in 3 days", WED)[0].kind == "relative"
    assert find("on Thursday", WED, "future")[0].kind == "inferred"


def test_resolve_reads_one_entity_and_keeps_its_longest_date() -> None:
    assert resolve("next Thursday", WED, "future") == When(
        0, 13, "next Thursday", date(2026, 11, 26), "day", "relative")
    assert resolve("in two weeks", WED, "future") is not None
    assert resolve("two weeks", WED, "future") is None  # a duration, not a date
    found = resolve("Monday, March 3rd 2027", WED)
    assert found is not None and found.text == "March 3rd 2027"
    assert resolve("nothing here", WED) is None


TOKENS = ["next", "last", "this", "on", "in", "the", "of", "a", "few", "couple", "ago", "week",
          "weekend", "month", "year", "days", "Thursday", "sat", "may", "March", "mar",
          "14th", "31st", "3", "12", "2027", "3/14", "2027-02-30", "tomorrow", "yesterday",
          "end", "after", "before", "christmas", "new", "year's", "every", "from", "now", ",",
          "I", "be", "-", "'s", "day", "night", "29", "Feb"]


@given(st.lists(st.sampled_from(TOKENS), max_size=12),
       st.dates(min_value=date(1950, 1, 1), max_value=date(2150, 12, 31)),
       st.sampled_from(["past", "future", "unknown"]))
def test_any_mix_of_date_words_resolves_without_error_to_disjoint_spans(
        words: list[str], today: date, tense: Tense) -> None:
    text = " ".join(words)
    found = find(text, datetime(today.year, today.month, today.day), tense)
    for w in found:
        assert text[w.start:w.end] == w.text and w.text.strip() == w.text
    assert all(a.end <= b.start for a, b in pairwise(found))


def test_a_month_before_and_is_a_month_unless_it_is_may() -> None:
    # "may" before "and" may be the verb's; no other month is
    assert one("I'm moving to Lyon in September and my French is rusty", WED, "future") == (
        "September", "2027-09-01", "month")
    assert find("we may and we will", WED, "future") == []
