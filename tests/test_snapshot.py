"""The recall copy (recall._snapshot) must answer exactly as the scan in PostgreSQL does, and
stay so through every kind of write."""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any

import numpy as np
import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pgvector.psycopg import register_vector

from engrammar import Client, Database, InvalidInput, LocalEmbedder, Op, Scope, Settings, store
from engrammar.models import Memory
from engrammar.nightly._lifecycle import run_lifecycle
from engrammar.recall._candidates import from_scan
from engrammar.recall._snapshot import Snapshot, lexeme_counts, top_k
from engrammar.runtime._tokens import CountCache
from engrammar.settings import LogSettings, RecallSettings
from engrammar.store import Conn
from tests.conftest import T0

U, C = "u1", "c1"
SCOPE = Scope(user_id=U, chat_id=C)
WORDS = ("walk", "walking", "dog", "Lisbon", "coffee", "sister", "guitar", "it's", "back\\slash",
         "marathon", "tea", "deadline", "piano")
KINDS = (("episodic", "speak"), ("preference", "adapt"), ("profile", "speak"),
         ("open_loop", "continue"), ("protocol", "avoid"), ("shared_lore", "factcheck"),
         ("episodic", "never"), ("reflection", "adapt"))


def unit(rng: np.random.Generator) -> np.ndarray:
    v = rng.normal(size=384).astype(np.float32)
    return v / np.linalg.norm(v)


def memory_fields(rng: np.random.Generator, i: int) -> dict[str, Any]:
    type_, surface = KINDS[int(rng.integers(len(KINDS)))]
    words = " ".join(rng.choice(WORDS, size=int(rng.integers(1, 6))).tolist())
    return {"type": type_, "surface": surface, "content": f"{words} number {i}",
            "confidence": float(rng.uniform(0.5, 1)), "salience": float(rng.uniform(0.2, 1)),
            "pinned": bool(rng.random() < 0.05),
            "embedding": None if rng.random() < 0.05 else unit(rng),
            "due_at": T0 + timedelta(days=int(rng.integers(-3, 10)))
            if type_ == "open_loop" else None,
            "created_at": T0 - timedelta(days=int(rng.integers(0, 400))), "updated_at": T0}


def seed(client: Client, n: int, seed: int = 0, scope: Scope = SCOPE) -> np.ndarray:
    rng = np.random.default_rng(seed)
    with client.db.connection() as conn:
        for i in range(n):
            store.insert_memory(conn, scope, memory_fields(rng, i))
    return unit(rng)


def scanner(db: Database, embedder: LocalEmbedder) -> Client:
    return Client(db, settings=Settings(recall=RecallSettings(cache_memories=0)),
                  embedder=embedder)


def copy_of(client: Client, scope: Scope = SCOPE) -> Snapshot:
    with client.db.connection() as conn:
        version = store.recall_probe(conn, scope, "", 0, 0).version
        copy = client.snapshots.get(conn, scope, version)
    assert copy is not None
    return copy


def fresh_copy(client: Client, scope: Scope = SCOPE) -> Snapshot:
    with client.db.connection() as conn:
        log = store.change_log(conn, scope)
        copy = Snapshot.of((c for c, _ in log), *store.active_rows(conn, scope))
    assert copy is not None
    return copy


def assert_same(a: Snapshot, b: Snapshot) -> None:
    assert a.changes == b.changes
    assert a.columns.memories == b.columns.memories
    assert np.array_equal(a.has_vector, b.has_vector)
    assert np.array_equal(a.inverse_norm, b.inverse_norm)
    if a.has_vector.any():  # with none, a patched copy may keep its width, a fresh one not
        assert np.array_equal(a.matrix, b.matrix)
    assert np.array_equal(a.always, b.always)
    words = set(a.vocabulary) | set(b.vocabulary)
    for word in words:  # same postings per word, whatever ids the vocabularies gave it
        assert postings(a, word) == postings(b, word), word


def postings(copy: Snapshot, word: str) -> list[tuple[int, float]]:
    lexeme = copy.vocabulary.get(word)
    if lexeme is None:
        return []
    span = slice(copy.offsets[lexeme], copy.offsets[lexeme + 1])
    return sorted(zip(copy.posting_row[span].tolist(), copy.posting_count[span].tolist(),
                      strict=True))


def test_top_k_orders_by_value_then_id() -> None:
    ids = np.array([5, 3, 9, 1], dtype=np.int64)
    values = np.array([1.0, 0.0, 1.0, 0.6])
    assert ids[top_k(ids, values, 2)].tolist() == [5, 9]
    assert ids[top_k(ids, -values, 3)].tolist() == [3, 1, 5]
    assert top_k(ids[:0], values[:0], 3).tolist() == []


def test_lexeme_counts_read_what_postgres_wrote(client: Client) -> None:
    text = "It's Walking, walking, walked! O'Brien's back\\slash 'quoted' walk"
    with client.db.connection() as conn:
        row = conn.execute("SELECT to_tsvector('english', %s)::text", (text,)).fetchone()
        expected = conn.execute(
            "SELECT lexeme, array_length(positions, 1) FROM unnest(to_tsvector('english', %s))",
            (text,)).fetchall()
    assert row is not None
    assert sorted(lexeme_counts(row[0])) == sorted((w, n) for w, n in expected)
    assert dict(lexeme_counts(row[0]))["walk"] == 4
    assert lexeme_counts("'a''b':1 'c\\\\d':2,3 'e'") == [("a'b", 1), ("c\\d", 2), ("e", 1)]


def test_cached_and_scanned_recall_agree(client: Client, clean: Database,
                                         embedder: LocalEmbedder) -> None:
    seed(client, 400)
    scanning = scanner(clean, embedder)
    rng = np.random.default_rng(42)
    texts = ("walking the dog in Lisbon", "coffee", "nothing matches this", "",
             "https://shop.example/item?id=3&color=red")
    for i in range(40):  # to the last digit of every score, on many random queries
        query = unit(rng)
        budget = (200, 600, 2000)[i % 3]
        text = texts[i % len(texts)]
        cached = client.recall(U, C, text, now=T0, budget_tokens=budget, record=False,
                               vector=query)
        scanned = scanning.recall(U, C, text, now=T0, budget_tokens=budget,
                                  record=False, vector=query)
        assert cached.text == scanned.text and cached.items == scanned.items
        assert cached.dropped == scanned.dropped


def test_a_query_word_holding_an_ampersand_matches_on_both_paths(
        client: Client, clean: Database, embedder: LocalEmbedder) -> None:
    url = "https://shop.example/item?id=3&color=red"
    with client.db.connection() as conn:
        for content in (f"bought it at {url}", "shop.example and shop.example again"):
            store.insert_memory(conn, SCOPE, memory_fields(np.random.default_rng(1), 0) | {
                "content": content, "type": "episodic", "surface": "speak", "pinned": False})
        rows = store.recall_candidates(conn, SCOPE, unit(np.random.default_rng(2)), url, 1)
    content, n = store.RECALL_COLUMNS.index("content"), len(store.RECALL_COLUMNS)
    with client.db.connection() as conn:
        lexemes = conn.execute("SELECT tsvector_to_array(to_tsvector('english', %s))",
                               (url,)).fetchone()[0]
    whole = lexemes.index(next(w for w in lexemes if "&" in w))
    occurs = {r[content]: r[n + 1][whole] for r in rows}  # the URL is one lexeme, & and all
    assert occurs == {f"bought it at {url}": 1.0, "shop.example and shop.example again": 0.0}
    one = Settings(recall=RecallSettings(top_k=1))
    cached = Client(clean, settings=one, embedder=embedder)
    scanning = Client(clean, settings=Settings(recall=RecallSettings(top_k=1,
                                                                     cache_memories=0)),
                      embedder=embedder)
    vector = unit(np.random.default_rng(2))
    assert cached.recall(U, C, url, now=T0, record=False, vector=vector).items \
        == scanning.recall(U, C, url, now=T0, record=False, vector=vector).items


def test_text_rank_is_bm25_alike_on_both_paths(client: Client) -> None:
    with client.db.connection() as conn:
        for content in ("walk the dog, walk again, walking home", "a walk", "tea time"):
            store.insert_memory(conn, SCOPE, {
                "type": "episodic", "surface": "speak", "content": content,
                "confidence": 0.9, "salience": 0.5, "embedding": unit(np.random.default_rng(1)),
                "created_at": T0, "updated_at": T0})
    vector = unit(np.random.default_rng(2))
    found = copy_of(client).candidates(vector, ["walk"], 10)  # "walks", stemmed
    assert found is not None
    cached = {m.content: r for m, r in zip(found.columns.memories, found.text_rank.tolist(),
                                           strict=True)}
    with client.db.connection() as conn:
        rows = store.recall_candidates(conn, SCOPE, vector, "walks", 10)
    found = from_scan(rows, vector, 10)
    scanned = {m.content: r for m, r in zip(found.columns.memories, found.text_rank.tolist(),
                                            strict=True)}
    assert cached == scanned
    # BM25 over three memories, "walk" in two: idf ln(1 + 1.5/2.5); lengths in distinct
    # lexemes, stop words out: (walk, dog, home), (walk), (tea, time), average 2.
    idf = math.log1p(1.5 / 2.5)
    norm = [1.2 * (1 - 0.75 + 0.75 * n / 2) for n in (3, 1, 2)]
    assert scanned["walk the dog, walk again, walking home"] == pytest.approx(
        idf * 3 * 2.2 / (3 + norm[0]))
    assert scanned["a walk"] == pytest.approx(idf * 1 * 2.2 / (1 + norm[1]))
    assert scanned["tea time"] == 0.0


def test_every_kind_of_write_patches_the_copy(client: Client) -> None:
    query = seed(client, 80)
    before = copy_of(client)
    with client.db.connection() as conn:
        new = store.insert_memory(conn, SCOPE, {
            "type": "episodic", "content": "the closest event of all", "confidence": 0.9,
            "salience": 0.5, "surface": "speak", "embedding": query, "created_at": T0,
            "updated_at": T0})
    block = client.recall(U, C, "x", now=T0, record=False, vector=query)
    assert next(i.memory_id for i in block.items if i.section == "speak") == new.id
    ids = [m.id for m in before.columns.memories]
    with client.db.connection() as conn:
        store.set_memory(conn, SCOPE, ids[0], {"salience": 0.01})
        store.set_memory(conn, SCOPE, ids[1], {"content": "rewritten guitar lesson"})
        store.set_memory(conn, SCOPE, ids[2], {"status": "archived"})
        store.set_memory(conn, SCOPE, ids[3], {"pinned": True})
        conn.execute("DELETE FROM memories WHERE id = %s", (ids[4],))
    client.apply(U, C, [Op(op="forget", target=str(new.id))], now=T0)
    patched = copy_of(client)
    assert_same(patched, fresh_copy(client))
    assert new.id not in patched.columns.ids and ids[2] not in patched.columns.ids
    assert patched.columns.memories[0].salience < 0.02
    # Noting what a recall surfaced changes nothing the copy holds.
    client.recall(U, C, "x", now=T0, record=True, vector=query)
    assert copy_of(client) is patched


def test_a_pruned_log_reloads_the_chat(client: Client) -> None:
    seed(client, 40)
    before = copy_of(client)
    with client.db.connection() as conn:
        store.insert_memory(conn, SCOPE, memory_fields(np.random.default_rng(9), 99))
        conn.execute("UPDATE memory_changes SET at = at - interval '2 hours'")
    # Lifecycle prunes rows an hour old, but each chat's newest; it moves some memories too.
    run_lifecycle(client.db, T0, client.settings.lifecycle, client.settings.decay)
    with client.db.connection() as conn:
        assert not before.changes <= {c for c, _ in store.change_log(conn, SCOPE)}
    assert_same(copy_of(client), fresh_copy(client))


def test_copy_never_crosses_chats(client: Client) -> None:
    query = seed(client, 20)
    other = Scope(user_id=U, chat_id="other")
    seed(client, 5, seed=3, scope=other)
    mine, theirs = copy_of(client), copy_of(client, other)
    assert len(mine) == 20 and len(theirs) == 5
    assert not set(mine.columns.ids.tolist()) & set(theirs.columns.ids.tolist())
    found = mine.candidates(query, ["walk"], 50)
    assert found is not None
    assert set(found.columns.ids.tolist()) <= set(mine.columns.ids.tolist())


def test_a_chat_over_the_size_is_scanned(clean: Database, embedder: LocalEmbedder) -> None:
    small = Client(clean, settings=Settings(recall=RecallSettings(cache_memories=10)),
                   embedder=embedder)
    query = seed(small, 25)
    block = small.recall(U, C, "dog", now=T0, record=False, vector=query)
    assert block.items and len(small.snapshots._chats) == 0
    assert block.text == scanner(clean, embedder).recall(
        U, C, "dog", now=T0, record=False, vector=query).text


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(st.tuples(st.sampled_from(["add", "salience", "status", "content",
                                                 "delete", "recall"]),
                                st.integers(0, 10_000)), min_size=1, max_size=12))
def test_patched_copies_equal_fresh_ones(client: Client, clean: Database,
                                         embedder: LocalEmbedder,
                                         steps: list[tuple[str, int]]) -> None:
    with client.db.connection() as conn:
        # Not RESTART IDENTITY: a change id is never reused, which the copy relies on.
        conn.execute("TRUNCATE memories, memory_changes, recalls")
    query = seed(client, 15, seed=7)
    scanning = scanner(clean, embedder)
    for kind, n in steps:
        rng = np.random.default_rng(n)
        with client.db.connection() as conn:
            ids = [m.id for m in store.list_memories(conn, SCOPE)]
            target = ids[n % len(ids)] if ids else None
            if kind == "add" or target is None:
                store.insert_memory(conn, SCOPE, memory_fields(rng, n))
            elif kind == "salience":
                store.set_memory(conn, SCOPE, target, {"salience": float(rng.random())})
            elif kind == "status":
                store.set_memory(conn, SCOPE, target,
                                 {"status": ["active", "stale", "archived"][n % 3]})
            elif kind == "content":
                store.set_memory(conn, SCOPE, target, {"content": f"dog tea {n}"})
            elif kind == "delete":
                conn.execute("DELETE FROM memories WHERE id = %s", (target,))
        if kind == "recall":  # noted, so the next ones cool what it spoke
            client.recall(U, C, "dog", now=T0, vector=query)
        cached = client.recall(U, C, "dog walk tea", now=T0, record=False, vector=query)
        scanned = scanning.recall(U, C, "dog walk tea", now=T0, record=False, vector=query)
        assert cached.text == scanned.text
        assert_same(copy_of(client), fresh_copy(client))


def test_a_late_commit_pruned_unseen_still_reaches_the_copy(client: Client,
                                                            database_url: str) -> None:
    def quiet(conn: Conn, i: int) -> Memory:  # a memory lifecycle leaves alone
        return store.insert_memory(conn, SCOPE, memory_fields(np.random.default_rng(i), i)
                                   | {"type": "preference", "created_at": T0})

    def prune() -> None:  # lifecycle's, once the rows are over an hour old
        with client.db.connection() as conn:
            conn.execute("UPDATE memory_changes SET at = at - interval '2 hours'")
        run_lifecycle(client.db, T0, client.settings.lifecycle, client.settings.decay)

    with client.db.connection() as conn:
        for i in range(40):  # a log busy enough to be pruned
            quiet(conn, 100 + i)
    # A writer takes its change id first and commits last.
    slow = psycopg.connect(database_url)
    register_vector(slow)
    late = quiet(slow, 1)
    with client.db.connection() as conn:
        quiet(conn, 2)  # a newer change, committed at once
    prune()  # the log is down to the newest row: the copy sees only that
    copy_of(client)
    slow.commit()
    slow.close()
    prune()  # the late row goes, unseen by the copy
    assert late.id in copy_of(client).columns.ids.tolist()
    assert_same(copy_of(client), fresh_copy(client))


def test_odd_vectors_agree_with_the_scan(client: Client, clean: Database,
                                         embedder: LocalEmbedder) -> None:
    rng = np.random.default_rng(3)
    with client.db.connection() as conn:
        for i in range(8):  # fewer vectors than top_k: the scan ranks only those it has
            vector = [None, unit(rng), np.zeros(384, dtype=np.float32)][i % 3]
            store.insert_memory(conn, SCOPE, memory_fields(rng, i) | {
                "embedding": vector, "pinned": False, "type": "episodic", "surface": "speak",
                "content": f"guitar lesson {i}"})
    scanning = scanner(clean, embedder)
    for query in (unit(rng), np.zeros(384, dtype=np.float32)):
        cached = client.recall(U, C, "piano", now=T0, record=False, vector=query)
        scanned = scanning.recall(U, C, "piano", now=T0, record=False, vector=query)
        assert cached.items == scanned.items and cached.dropped == scanned.dropped
        assert all(i.score == i.score for i in cached.items)  # no NaN


def test_empty_and_vectorless_chats_are_served_from_the_copy(client: Client) -> None:
    query = unit(np.random.default_rng(0))
    assert client.recall(U, C, "hello", now=T0, record=False, vector=query).items == []
    with client.db.connection() as conn:
        only = store.insert_memory(conn, SCOPE, memory_fields(np.random.default_rng(1), 0)
                                   | {"embedding": None, "type": "profile"})
    assert copy_of(client).candidates(query, [], 5) is not None
    assert [i.memory_id for i in client.recall(U, C, "hello", now=T0, record=False,
                                               vector=query).items] == [only.id]
    client.apply(U, C, [Op(op="forget", target=str(only.id))], now=T0)
    assert client.recall(U, C, "hello", now=T0, record=False, vector=query).items == []


def test_bulk_writes_and_truncate_reach_the_copy(client: Client) -> None:
    seed(client, 10)
    copy_of(client)
    with client.db.connection() as conn:
        conn.execute(  # 100 memories in one statement, as an import writes them
            "INSERT INTO memories (user_id, chat_id, type, surface, content, confidence,"
            " salience, created_at, updated_at) SELECT %s, %s, 'episodic', 'speak',"
            " 'bulk ' || g, 0.9, 0.5, %s, %s FROM generate_series(1, 100) g",
            (U, C, T0, T0))
        log = store.change_log(conn, SCOPE)
    assert sum(1 for _, m in log if m is None) == 1  # one row for the 100, naming none
    assert len(copy_of(client)) == 110
    assert_same(copy_of(client), fresh_copy(client))
    with client.db.connection() as conn:
        conn.execute("TRUNCATE memories")  # no row triggers: the statement's marks the chat
    assert len(copy_of(client)) == 0


def test_recall_wants_an_aware_now(client: Client) -> None:
    with pytest.raises(InvalidInput, match="time zone"):
        client.recall(U, C, "x", now=T0.replace(tzinfo=None), record=False)


def test_change_ids_survive_a_restart_of_identity(client: Client) -> None:
    seed(client, 3)
    with client.db.connection() as conn:
        before = max(c for c, _ in store.change_log(conn, SCOPE))
        conn.execute("TRUNCATE memory_changes RESTART IDENTITY")
    seed(client, 1, seed=5)
    with client.db.connection() as conn:
        assert min(c for c, _ in store.change_log(conn, SCOPE)) > before


def test_copies_of_chats_with_no_memories_are_evicted_by_bytes(clean: Database,
                                                                embedder: LocalEmbedder) -> None:
    """Each copy costs at least its chat's overhead, so the room bounds copies of empty
    chats too; the log copies and the token counts keep within their bytes as well."""
    cfg = Settings(recall=RecallSettings(cache_bytes=64 * 1024),
                   log=LogSettings(cache_bytes=64 * 1024), token_cache_bytes=20_000)
    small = Client(clean, settings=cfg, embedder=embedder)
    for i in range(40):
        small.record("u1", f"c{i}", "user", f"Hello number {i}", at=T0)
        small.recall("u1", f"c{i}", "hello", now=T0, record=False)
    assert 0 < small.snapshots.nbytes <= 64 * 1024
    assert len(small.snapshots._chats) < 40
    assert small.logs.nbytes <= 64 * 1024
    for i in range(2_000):
        small.counter.count(f"text {i} " * 50)
    cache = small.counter.count
    assert isinstance(cache, CountCache) and cache.nbytes <= 20_000
