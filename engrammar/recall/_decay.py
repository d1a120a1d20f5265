"""Decay: how a memory fades, one model for ranking and lifecycle alike.

Each memory type has a half-life in days (``DecaySettings``: ``MEMORY_DECAY__EPISODIC=30``
and so on). A memory's weight t days after it was last referenced is

    R = 0.5 ** (t / half_life)

1 when it is referenced, 0.5 one half-life later, 0.25 two half-lives later.

- Ranking: R is the recency component of every candidate's score (recall._ranking), with
  t measured from the newest of the memory's creation, update and reinforcement
  (recall._candidates.Columns.last_at). Ranking reads active memories only, and an active
  memory is updated only when it is reinforced, so that is the newest of its creation and
  its last reinforcement (``last_reference``). A retired memory's status change writes
  its update time too, but is no reference.
- Lifecycle (nightly._lifecycle, daily): a memory of a type in ``DECAYING`` goes stale at
  one half-life without reference, when R reaches 0.5: an ephemeral or episodic memory
  becomes ``stale``, an open loop is closed (archived, closed_reason "silence"). Episodic
  memories and open loops count the same references as ranking (creation and
  reinforcement: recall surfacing an open loop every turn does not keep it open); an
  ephemeral memory also counts being surfaced by a recall.
- Profile, preference, shared_lore, protocol and reflection memories never go stale by
  decay: their half-lives only rank. Pinned memories are exempt from lifecycle (they still
  rank by R).

So one setting moves both: ``MEMORY_DECAY__EPISODIC=10`` halves an episodic memory's
recency every 10 days and makes it stale after 10 days without reinforcement.

The rules that are not decay stay in ``LifecycleSettings``: an open loop closes
``open_loop_grace_days`` after its due date, and a stale memory is archived
``archive_after_stale_days`` after it went stale.

R is derived, never stored: it follows from the last reference and the clock, and
rewriting it nightly cost ~29 s per million rows (bench/lifecycle.py) for a number any
reader can compute.
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

import numpy as np

from engrammar.models import MemoryType
from engrammar.recall._candidates import TYPES
from engrammar.settings import DecaySettings

DAY = 86400.0

# The types lifecycle moves at one half-life without reference; the rest only rank.
DECAYING: tuple[MemoryType, ...] = (MemoryType.ephemeral, MemoryType.episodic,
                                    MemoryType.open_loop)


class Referenced(Protocol):
    """What R is computed from: a Memory, or ranking's Recalled."""

    @property
    def type(self) -> MemoryType: ...
    @property
    def created_at(self) -> datetime: ...
    @property
    def last_reinforced_at(self) -> datetime | None: ...


def half_life(settings: DecaySettings, type_: MemoryType) -> float:
    """Days for a memory of ``type_`` to lose half its weight."""
    days: float = getattr(settings, type_.value)
    return days


def weight(days: float, half_life_days: float) -> float:
    """R = 0.5 ** (t / half_life): 1 at the reference, halving every half-life."""
    result: float = 0.5 ** (max(0.0, days) / half_life_days)
    return result


def last_reference(memory: Referenced) -> datetime:
    """The newest of creation and reinforcement: t's origin. For an active memory it is
    ranking's (recall._candidates.Columns.last_at, in epoch seconds)."""
    reinforced = memory.last_reinforced_at
    return (reinforced if reinforced is not None and reinforced > memory.created_at
            else memory.created_at)


def weight_of(memory: Referenced, now: datetime, settings: DecaySettings) -> float:
    """A memory's R at ``now``: as ranking computes it for an active memory; for a
    retired one, what it would be had it stayed active."""
    days = (now - last_reference(memory)).total_seconds() / DAY
    return weight(days, half_life(settings, memory.type))


def half_lives(settings: DecaySettings) -> np.ndarray:
    """Half-lives in seconds, indexed by ranking's type codes (recall._candidates.TYPES)."""
    result: np.ndarray = np.array([half_life(settings, t) for t in TYPES]) * DAY
    return result


def weights(last_at: np.ndarray, type_: np.ndarray, now: float,
            settings: DecaySettings) -> np.ndarray:
    """R of many memories at once: ``last_at`` in epoch seconds, ``type_`` type codes,
    ``now`` in epoch seconds."""
    age = np.maximum(0.0, now - last_at)
    result: np.ndarray = 0.5 ** (age / half_lives(settings)[type_])
    return result


def stale_after(settings: DecaySettings) -> dict[MemoryType, float]:
    """Days without reference after which lifecycle moves each decaying type: one
    half-life."""
    return {t: half_life(settings, t) for t in DECAYING}
