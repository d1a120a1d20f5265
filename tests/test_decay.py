"""The one decay model (recall._decay): a half-life per type, R = 0.5 ** (t / half_life),
read by ranking as recency and by lifecycle as the stale point."""

from __future__ import annotations

import math
from datetime import timedelta

import numpy as np
import pytest
from pydantic import ValidationError

from engrammar import Client, Database, LocalEmbedder, MemoryType, Op, Settings
from engrammar.recall import _decay as decay
from engrammar.recall._candidates import TYPES
from engrammar.scheduler import _lifecycle as lifecycle
from engrammar.settings import DecaySettings
from tests.conftest import T0
from tests.test_lifecycle import add, status

U, C = "u1", "c1"
DAY = timedelta(days=1)


def with_half_lives(clean: Database, settings: Settings, embedder: LocalEmbedder,
                    **half_lives: float) -> Client:
    changed = settings.model_copy(update={"decay": DecaySettings(**half_lives)})
    return Client(clean, settings=changed, embedder=embedder)


def recency(client: Client, memory_id: int, query: str, days: float) -> float:
    block = client.recall(U, C, query, now=T0 + days * DAY, record=False)
    [item] = [i for i in block.items if i.memory_id == memory_id]
    return item.components["recency"]


def test_weight_halves_at_one_half_life() -> None:
    for h in (1.0, 3.0, 30.0, 365.0):
        assert decay.weight(0, h) == 1.0
        assert decay.weight(h, h) == 0.5
        assert decay.weight(2 * h, h) == 0.25
        assert decay.weight(h / 2, h) == pytest.approx(math.sqrt(0.5))
    # A reference stamped after now counts as now.
    assert decay.weight(-2, 3) == 1.0


def test_ranking_computes_the_same_weight_for_many() -> None:
    settings = DecaySettings()
    now = T0.timestamp()
    codes = np.arange(len(TYPES), dtype=np.int8)
    halves = np.array([decay.half_life(settings, t) for t in TYPES]) * decay.DAY
    assert decay.weights(now - halves, codes, now, settings).tolist() == [0.5] * len(TYPES)
    assert decay.weights(np.full(len(TYPES), now), codes, now, settings).tolist() == (
        [1.0] * len(TYPES))


def test_every_type_has_a_half_life_and_three_decay_in_lifecycle() -> None:
    assert set(DecaySettings.model_fields) == {t.value for t in MemoryType}
    # The defaults keep lifecycle's windows as they were: 3, 30 and 60 days.
    assert decay.stale_after(DecaySettings()) == {
        MemoryType.ephemeral: 3.0, MemoryType.episodic: 30.0, MemoryType.open_loop: 60.0}
    with pytest.raises(ValidationError):
        DecaySettings(episodic=0)


def test_half_lives_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_DECAY__EPISODIC", "10")
    monkeypatch.setenv("MEMORY_DECAY__OPEN_LOOP", "7.5")
    half_lives = Settings().decay
    assert (half_lives.episodic, half_lives.open_loop, half_lives.profile) == (10, 7.5, 365)


def test_one_half_life_moves_ranking_and_lifecycle(clean: Database, settings: Settings,
                                                   embedder: LocalEmbedder) -> None:
    short = with_half_lives(clean, settings, embedder, episodic=10)
    default = Client(clean, settings=settings, embedder=embedder)
    mid = add(short, "Tried a new ramen place downtown", "episodic")
    query = "that ramen place downtown"
    # Ranking: recency is R, 0.5 ** (5 / half-life) five days on.
    assert recency(short, mid, query, 5) == round(0.5 ** (5 / 10), 4)
    assert recency(default, mid, query, 5) == round(0.5 ** (5 / 30), 4)
    assert recency(short, mid, query, 10) == 0.5
    # Lifecycle: stale at one half-life without reference, by the same setting.
    lifecycle.run(short, T0 + 10 * DAY - timedelta(hours=1))
    lifecycle.run(default, T0 + 10 * DAY)
    assert status(short, mid) == "active"
    lifecycle.run(short, T0 + 10 * DAY)
    assert status(short, mid) == "stale"
    [event] = [e for e in short.history(U, C, mid) if e.op == "lifecycle"]
    assert event.reason and "half-life (10 days)" in event.reason
    # Going stale is no reference: the weight goes on from the last one.
    assert decay.weight_of(short.get(U, C, mid), T0 + 10 * DAY, short.settings.decay) == 0.5


def test_a_reinforcement_restarts_the_clock(client: Client) -> None:
    mid = add(client, "Tried a new ramen place downtown", "episodic")
    client.apply(U, C, [Op(op="reinforce", target=str(mid))], now=T0 + 5 * DAY)
    memory = client.get(U, C, mid)
    assert decay.weight_of(memory, T0 + 35 * DAY, client.settings.decay) == 0.5
    assert recency(client, mid, "that ramen place downtown", 35) == 0.5


@pytest.mark.parametrize(("type_", "moved_to", "extra"), [
    ("ephemeral", "stale", {"salience": 0.8}),
    ("episodic", "stale", {}),
    ("open_loop", "archived", {}),
])
def test_each_decaying_type_moves_at_its_configured_half_life(
        clean: Database, settings: Settings, embedder: LocalEmbedder, type_: str,
        moved_to: str, extra: dict[str, object]) -> None:
    client = with_half_lives(clean, settings, embedder, **{type_: 5})
    mid = add(client, f"A {type_} memory worth keeping for a while", type_, **extra)
    lifecycle.run(client, T0 + 5 * DAY - timedelta(minutes=1))
    assert status(client, mid) == "active"
    lifecycle.run(client, T0 + 5 * DAY)
    assert status(client, mid) == moved_to


def test_other_types_only_rank(clean: Database, settings: Settings,
                               embedder: LocalEmbedder) -> None:
    client = with_half_lives(clean, settings, embedder, profile=1, preference=1)
    ids = [add(client, "Lives in Lisbon near the river", "profile"),
           add(client, "Likes green tea in the morning", "preference")]
    lifecycle.run(client, T0 + 400 * DAY)
    assert [status(client, i) for i in ids] == ["active", "active"]
    assert recency(client, ids[0], "where does the user live", 2) == 0.25


def test_pinned_stays_exempt_and_still_ranks_by_weight(clean: Database, settings: Settings,
                                                       embedder: LocalEmbedder) -> None:
    client = with_half_lives(clean, settings, embedder, episodic=1)
    mid = add(client, "Ran the Lisbon marathon last spring", "episodic", pinned=True)
    lifecycle.run(client, T0 + 400 * DAY)
    assert status(client, mid) == "active"
    assert [e for e in client.history(U, C, mid) if e.op == "lifecycle"] == []
    assert recency(client, mid, "marathon", 3) == 0.125
