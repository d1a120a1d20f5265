from __future__ import annotations

import numpy as np
import pytest

from engrammar import LocalEmbedder, Settings
from engrammar.runtime._embedder import embedder_from_settings
from engrammar.runtime._tokens import HeuristicCounter, truncate_to


def test_vectors_are_unit_length_and_384d(embedder: LocalEmbedder) -> None:
    v = embedder.embed(["hello there", "a much longer sentence about the weather in Lisbon"])
    assert v.shape == (2, 384)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert embedder.embed([]).shape == (0, 384)


def test_paraphrases_are_closer_than_unrelated(embedder: LocalEmbedder) -> None:
    a, para, other = embedder.embed([
        "The user lives in Berlin.",
        "They are based in Berlin.",
        "My favourite food is spicy ramen.",
    ])
    assert a @ para > a @ other + 0.3


def test_embedder_threads_are_a_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_EMBEDDER_THREADS", "1")
    one = embedder_from_settings(Settings())
    assert isinstance(one, LocalEmbedder)
    assert one._session.get_session_options().intra_op_num_threads == 1


def test_batching_does_not_change_vectors(embedder: LocalEmbedder) -> None:
    texts = ["short", "a somewhat longer sentence that pads the batch"]
    batch = embedder.embed(texts)
    single = np.vstack([embedder.embed([t]) for t in texts])
    assert np.allclose(batch, single, atol=1e-4)


def test_heuristic_counter_and_truncation() -> None:
    counter = HeuristicCounter()
    assert counter.count("") == 0
    assert counter.count("hello, world") == 5  # hello(2) ,(1) world(2)
    text = "one two three four five six seven eight nine ten"
    cut = truncate_to(counter, text, 6)
    assert counter.count(cut) <= 6 and cut.endswith("…")
    assert truncate_to(counter, text, 1000) == text
    # One word too long for the budget is cut inside, not dropped whole.
    word = "Pneumonoultramicroscopicsilicovolcanoconiosis"
    cut = truncate_to(counter, word, 4)
    assert cut and word.startswith(cut.rstrip("…")) and counter.count(cut) <= 4
    assert truncate_to(counter, word, 1) == word[:len(truncate_to(counter, word, 1))] != ""
    assert truncate_to(counter, word, 0) == ""
