from __future__ import annotations

import numpy as np

from memory import Client, Database, LocalEmbedder, Op, Scope, Settings, store
from memory.settings import RecallSettings
from memory.vectors import top_k
from tests.conftest import T0

U, C = "u1", "c1"
SCOPE = Scope(user_id=U, chat_id=C)


def seed(client: Client, n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    with client.db.connection() as conn:
        for i in range(n):
            v = rng.normal(size=384).astype(np.float32)
            store.insert_memory(conn, SCOPE, {
                "type": "episodic", "content": f"event number {i}", "confidence": 0.9,
                "salience": 0.5, "surface": "speak", "embedding": v / np.linalg.norm(v),
                "created_at": T0, "updated_at": T0})
    q = rng.normal(size=384).astype(np.float32)
    return q / np.linalg.norm(q)


def test_top_k_orders_by_cosine_then_id() -> None:
    ids = np.array([5, 3, 9, 1], dtype=np.int64)
    matrix = np.array([[1, 0], [0, 1], [1, 0], [0.6, 0.8]], dtype=np.float32)
    assert top_k(ids, matrix, np.array([1, 0], dtype=np.float32), 2) == [5, 9]
    assert top_k(ids, matrix, np.array([0, 1], dtype=np.float32), 3) == [3, 1, 5]
    assert top_k(ids[:0], matrix[:0], np.array([1, 0], dtype=np.float32), 3) == []


def test_cached_and_scanned_recall_agree(client: Client, clean: Database,
                                         embedder: LocalEmbedder) -> None:
    query = seed(client, 300)
    scanning = Client(clean, settings=Settings(recall=RecallSettings(cache_vectors=0)),
                      embedder=embedder)
    for budget in (200, 600, 2000):
        cached = client.recall(U, C, "event", now=T0, budget_tokens=budget, record=False,
                               vector=query)
        scanned = scanning.recall(U, C, "event", now=T0, budget_tokens=budget, record=False,
                                  vector=query)
        assert cached.text == scanned.text and cached.items == scanned.items
    with client.db.connection() as conn:
        assert client.vectors.nearest(conn, SCOPE, query, 10) is not None  # it was cached


def test_writes_invalidate_the_cache(client: Client) -> None:
    query = seed(client, 50)
    first = client.recall(U, C, "x", now=T0, record=False, vector=query)
    # A memory pointing exactly at the query, written after the chat was cached.
    with client.db.connection() as conn:
        new = store.insert_memory(conn, SCOPE, {
            "type": "episodic", "content": "the closest event of all", "confidence": 0.9,
            "salience": 0.5, "surface": "speak", "embedding": query, "created_at": T0,
            "updated_at": T0})
    second = client.recall(U, C, "x", now=T0, record=False, vector=query)
    assert new.id not in [i.memory_id for i in first.items]
    assert second.items[0].memory_id == new.id
    # Retiring it is a change too: it leaves the nearest set at once.
    client.apply(U, C, [Op(op="forget", target=str(new.id))], now=T0)
    third = client.recall(U, C, "x", now=T0, record=False, vector=query)
    assert new.id not in [i.memory_id for i in third.items]
    # Noting what a recall surfaced changes nothing the cache holds.
    with client.db.connection() as conn:
        before = store.memories_version(conn, SCOPE)
    client.recall(U, C, "x", now=T0, record=True, vector=query)
    with client.db.connection() as conn:
        assert store.memories_version(conn, SCOPE) == before


def test_cache_never_crosses_chats(client: Client) -> None:
    query = seed(client, 20)
    other = Scope(user_id=U, chat_id="other")
    with client.db.connection() as conn:
        store.insert_memory(conn, other, {
            "type": "episodic", "content": "elsewhere", "confidence": 0.9, "salience": 0.5,
            "surface": "speak", "embedding": query, "created_at": T0, "updated_at": T0})
        mine = client.vectors.nearest(conn, SCOPE, query, 50)
        theirs = client.vectors.nearest(conn, other, query, 50)
        own_ids = {m.id for m in store.list_memories(conn, SCOPE)}
    assert mine is not None and set(mine) <= own_ids and len(mine) == 20
    assert theirs is not None and len(theirs) == 1 and theirs[0] not in own_ids
