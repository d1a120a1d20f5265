"""Set-based lifecycle transitions, each with its event row, and the reflection watermark."""

from __future__ import annotations

import functools
from datetime import datetime
from typing import Any

from engrammar.models import Scope
from engrammar.store._memories import Conn

# -- lifecycle --------------------------------------------------------------------------------

# Last reference: creation, reinforcement or being surfaced in a recall.
_LAST_REF = "greatest(created_at, last_reinforced_at, last_surfaced_at)"
_LAST_REINFORCED = "greatest(created_at, last_reinforced_at)"


def _transition_of(conn: Conn, *, where: str, new_status: str, reason: str, now: datetime,
                params: dict[str, Any], extra_set: str = "", scope: Scope | None = None
                ) -> int:
    """One set-based transition: update matching rows and write one event per row (of one
    chat, when ``scope`` is given)."""
    if scope is not None:
        where = f"user_id = %(u)s AND chat_id = %(c)s AND ({where})"
        params = {**params, "u": scope.user_id, "c": scope.chat_id}
    cur = conn.execute(
        f"""
        WITH changed AS (
            UPDATE memories SET status = %(new)s, status_changed_at = %(now)s,
                   updated_at = %(now)s{extra_set}
            WHERE NOT pinned AND ({where})
            RETURNING user_id, chat_id, id, status, source_message_ids
        )
        INSERT INTO memory_events (user_id, chat_id, memory_id, op, before, after, reason,
                                   source, source_message_ids, at)
        SELECT user_id, chat_id, id, 'lifecycle', jsonb_build_object('status', %(old)s::text),
               jsonb_build_object('status', status), %(reason)s::text, 'job:lifecycle', '{{}}',
               %(now)s
        FROM changed
        """,
        {"new": new_status, "now": now, "reason": reason, **params},
    )
    return cur.rowcount


def lifecycle_transitions(conn: Conn, now: datetime, rules: dict[str, float],
                          scope: Scope | None = None) -> dict[str, int]:
    """Apply every lifecycle rule once, set-based; return how many rows each moved.
    ``rules`` holds the windows in days: the decaying types' half-lives (recall._decay),
    the open-loop grace and the archive delay. With ``scope``, the rules of one chat only
    (the job's path around a chat whose rows fail the set-based run), and no pruning."""
    days = {k: f"{v} days" for k, v in rules.items()}
    moved: dict[str, int] = {}
    _transition = functools.partial(_transition_of, scope=scope)
    moved["ephemeral_stale"] = _transition(
        conn, new_status="stale", now=now,
        reason=f"ephemeral: one half-life ({rules['ephemeral_half_life_days']:g} days)"
               " without reference",
        where=f"status = 'active' AND type = 'ephemeral'"
              f" AND {_LAST_REF} <= %(now)s - %(eph)s::interval",
        params={"old": "active", "eph": days["ephemeral_half_life_days"]})
    moved["episodic_stale"] = _transition(
        conn, new_status="stale", now=now,
        reason=f"episodic: one half-life ({rules['episodic_half_life_days']:g} days)"
               " without reinforcement",
        where=f"status = 'active' AND type = 'episodic'"
              f" AND {_LAST_REINFORCED} <= %(now)s - %(epi)s::interval",
        params={"old": "active", "epi": days["episodic_half_life_days"]})
    moved["open_loop_due"] = _transition(
        conn, new_status="archived", now=now,
        reason=f"open loop: due date passed (+{rules['open_loop_grace_days']:g} days grace)",
        where="status = 'active' AND type = 'open_loop' AND due_at IS NOT NULL"
              " AND due_at <= %(now)s - %(grace)s::interval",
        params={"old": "active", "grace": days["open_loop_grace_days"]},
        extra_set=", metadata = metadata || '{\"closed_reason\": \"due date passed\"}'")
    moved["open_loop_silent"] = _transition(
        conn, new_status="archived", now=now,
        reason=f"open loop: one half-life ({rules['open_loop_half_life_days']:g} days)"
               " of silence",
        # Silence is the user's: recall surfacing the loop every turn does not keep it open.
        where=f"status = 'active' AND type = 'open_loop'"
              f" AND {_LAST_REINFORCED} <= %(now)s - %(silence)s::interval",
        params={"old": "active", "silence": days["open_loop_half_life_days"]},
        extra_set=", metadata = metadata || '{\"closed_reason\": \"silence\"}'")
    moved["stale_archived"] = _transition(
        conn, new_status="archived", now=now,
        reason=f"stale for {rules['archive_after_stale_days']:g} days",
        where="status = 'stale' AND status_changed_at <= %(now)s - %(arch)s::interval",
        params={"old": "stale", "arch": days["archive_after_stale_days"]})
    if scope is not None:
        return moved
    # A chat's change log is cut once it holds over 32 rows, to its newest and the last
    # hour's. A recall copy cannot tell a pruned row it never saw (one committed late, say)
    # from one it never needed, so each chat cut gets a row naming no memory: every copy
    # of it reads it whole, once. (Quiet chats are left alone: cutting them would only
    # trade their rows for that marker, and their copies for a reload, night after night.)
    conn.execute(
        """
        WITH busy AS (
            SELECT user_id, chat_id FROM memory_changes
            GROUP BY user_id, chat_id HAVING count(*) > 32
        ), pruned AS (
            DELETE FROM memory_changes c USING busy b
            WHERE c.user_id = b.user_id AND c.chat_id = b.chat_id
              AND c.at < now() - interval '1 hour'
              AND EXISTS (SELECT 1 FROM memory_changes n
                          WHERE n.user_id = c.user_id AND n.chat_id = c.chat_id
                            AND n.id > c.id)
            RETURNING c.user_id, c.chat_id)
        INSERT INTO memory_changes (user_id, chat_id)
        SELECT DISTINCT user_id, chat_id FROM pruned
        """)
    return moved


def fold_recalls(conn: Conn) -> int:
    """Fold the recalls noted since the last fold into their memories: last_surfaced_at
    and surface_count. Each note is folded once, whatever runs at the same time (the notes
    taken are locked, others skipped); returns how many were folded."""
    row = conn.execute(
        """
        WITH taken AS (
            UPDATE recalls SET folded = true
            WHERE id IN (SELECT id FROM recalls WHERE NOT folded FOR UPDATE SKIP LOCKED)
            RETURNING user_id, chat_id, at, memory_ids
        ), surfaced AS (
            SELECT t.user_id, t.chat_id, m.id, max(t.at) AS at, count(*) AS n
            FROM taken t CROSS JOIN LATERAL unnest(t.memory_ids) AS m(id)
            GROUP BY t.user_id, t.chat_id, m.id
        ), applied AS (
            UPDATE memories SET surface_count = memories.surface_count + s.n,
                   last_surfaced_at = greatest(memories.last_surfaced_at, s.at)
            FROM surfaced s
            WHERE memories.user_id = s.user_id AND memories.chat_id = s.chat_id
              AND memories.id = s.id
        )
        SELECT count(*) FROM taken
        """).fetchone()
    return int(row[0]) if row else 0


# -- reflection -------------------------------------------------------------------------------

def chats_to_reflect(conn: Conn, now: datetime, min_memories: int) -> list[Scope]:
    """Chats with enough active memories, changed since they were last reflected on."""
    rows = conn.execute(
        """
        SELECT c.user_id, c.chat_id FROM chats c
        JOIN memories m ON m.user_id = c.user_id AND m.chat_id = c.chat_id
        WHERE m.status = 'active' AND m.type <> 'reflection' AND m.updated_at <= %(now)s
        GROUP BY c.user_id, c.chat_id, c.last_reflected_at
        HAVING count(*) >= %(n)s
           AND (c.last_reflected_at IS NULL OR max(m.updated_at) > c.last_reflected_at)
        ORDER BY c.user_id, c.chat_id
        """,
        {"now": now, "n": min_memories},
    ).fetchall()
    return [Scope(user_id=r[0], chat_id=r[1]) for r in rows]


def set_reflected(conn: Conn, scope: Scope, at: datetime) -> None:
    conn.execute(
        "UPDATE chats SET last_reflected_at = %s WHERE user_id = %s AND chat_id = %s",
        (at, scope.user_id, scope.chat_id),
    )
