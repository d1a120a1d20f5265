from __future__ import annotations

from datetime import timedelta

from engrammar import Client, Scope, store
from engrammar.scheduler import _summaries as summaries
from tests.conftest import T0  # a Monday

U, C = "u1", "c1"


def talk(client: Client, days: range) -> None:
    for d in days:
        at = T0 + timedelta(days=d)
        client.record(U, C, "user", f"On day {d} I decided to repaint room {d} in Lisbon.", at)
        client.record(U, C, "assistant", "Sounds good!", at + timedelta(minutes=1))


def rows(client: Client) -> list[dict[str, object]]:
    with client.db.connection() as conn:
        return [r for p in ("day", "week", "month")
                for r in store.summaries_between(conn, Scope(user_id=U, chat_id=C), p,
                                                 T0 - timedelta(days=60),
                                                 T0 + timedelta(days=400))]


def test_days_roll_up_into_weeks_and_months(client: Client) -> None:
    talk(client, range(0, 35))
    # Mid-November: days before today are summarised, the week of Nov 2 is complete.
    report = summaries.run(client, T0 + timedelta(days=8))
    assert report.written == {"day": 8, "week": 1, "month": 0}
    report = summaries.run(client, T0 + timedelta(days=40))
    assert report.written["day"] == 27 and report.written["month"] == 1
    got = rows(client)
    weeks = [r for r in got if r["period"] == "week"]
    months = [r for r in got if r["period"] == "month"]
    assert len(weeks) == 5  # the five full weeks from Nov 2 to Dec 6
    assert months[0]["start_at"].month == 11
    assert "repaint" in str(months[0]["content"])
    first_week = weeks[0]["content"]
    assert "day 0" in str(first_week) or "room 0" in str(first_week)


def test_second_run_changes_nothing_until_new_messages(client: Client) -> None:
    talk(client, range(0, 3))
    now = T0 + timedelta(days=10)
    summaries.run(client, now)
    before = rows(client)
    again = summaries.run(client, now + timedelta(hours=1))
    assert again.written == {"day": 0, "week": 0, "month": 0}
    assert rows(client) == before
    # A late message for day 1 re-summarises that day and its week, nothing else.
    client.record(U, C, "user", "Also on day 1 I adopted a cat named Miso.",
                  T0 + timedelta(days=1, hours=5))
    third = summaries.run(client, now + timedelta(hours=2))
    assert third.written == {"day": 1, "week": 1, "month": 0}
    day1 = next(r for r in rows(client) if r["period"] == "day"
                and r["start_at"] == T0.replace(hour=0) + timedelta(days=1))
    assert "Miso" in str(day1["content"])


def test_summaries_are_per_chat(client: Client) -> None:
    client.record(U, "other", "user", "I decided to sell my car to Marta.", T0)
    talk(client, range(0, 1))
    summaries.run(client, T0 + timedelta(days=2))
    assert all("Marta" not in str(r["content"]) for r in rows(client))


def test_recall_shows_latest_summaries(client: Client) -> None:
    talk(client, range(0, 8))
    summaries.run(client, T0 + timedelta(days=9))
    block = client.recall(U, C, "what did I decide?", now=T0 + timedelta(days=9),
                          record=False)
    assert "Recent conversation summaries:" in block.text
    assert "day of 2026-11-09" in block.text or "week of 2026-11-02" in block.text
