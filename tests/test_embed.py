from __future__ import annotations

import threading

import numpy as np
import pytest

from engrammar import LocalEmbedder, Settings
from engrammar.runtime._batcher import Batcher
from engrammar.runtime._embedder import embedder_from_settings
from engrammar.runtime._int8 import has_int8_dot, int8_graph
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
    assert isinstance(one, Batcher) and isinstance(one.inner, LocalEmbedder)
    assert one.inner._session.get_session_options().intra_op_num_threads == 1
    monkeypatch.setenv("MEMORY_EMBEDDER_BATCH", "1")
    assert isinstance(embedder_from_settings(Settings()), LocalEmbedder)


@pytest.mark.skipif(not has_int8_dot(), reason="no int8 dot products on this CPU")
def test_int8_products_keep_the_float_vectors(embedder: LocalEmbedder) -> None:
    # The shipped weights as they are, multiplied in int8 (runtime._int8): each vector
    # within a cosine of 0.998 of the float graph's, and the graph is not the float one.
    float_graph = LocalEmbedder(int8=False)
    assert embedder.int8_products and not float_graph.int8_products
    assert embedder._session.get_providers() == ["CPUExecutionProvider"]
    ours, theirs = embedder.embed(QUERIES), float_graph.embed(QUERIES)
    cosine = np.sum(ours * theirs, axis=1)
    assert cosine.min() >= 0.998 and not np.array_equal(ours, theirs)


def test_the_int8_graph_replaces_every_weight_product() -> None:
    # The 36 products of weights by activations (6 layers of q, k, v, out, up, down); the
    # products of activations by activations (attention) stay float.
    import onnx

    from engrammar.runtime._embedder import _model_files

    graph = int8_graph(_model_files()[0], fuse=False)
    assert graph is not None
    ops = [node.op_type for node in onnx.load_from_string(graph).graph.node]
    assert ops.count("MatMulNBits") == 36 and ops.count("MatMul") == 12


@pytest.mark.skipif(not has_int8_dot(), reason="no int8 dot products on this CPU")
def test_each_layers_attention_runs_fused(embedder: LocalEmbedder,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # runtime._attention: per layer one product of q, k and v together and one fused
    # attention, where the export had three products and ~25 small nodes; the vectors
    # within a cosine of 0.999 of the unfused graph's.
    import onnx

    from engrammar.runtime import _int8
    from engrammar.runtime._embedder import _model_files

    graph = int8_graph(_model_files()[0])
    assert graph is not None
    nodes = onnx.load_from_string(graph).graph.node
    ops = [node.op_type for node in nodes]
    assert ops.count("MultiHeadAttention") == 6 and ops.count("MatMulNBits") == 24
    assert "MatMul" not in ops and "Softmax" not in ops and len(nodes) < 150
    unfused = _int8.int8_graph
    monkeypatch.setattr(_int8, "int8_graph", lambda model: unfused(model, fuse=False))
    plain = LocalEmbedder()
    ours, theirs = embedder.embed(QUERIES), plain.embed(QUERIES)
    assert np.sum(ours * theirs, axis=1).min() >= 0.999 and not np.array_equal(ours, theirs)


def test_int8_is_a_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_EMBEDDER_INT8", "false")
    monkeypatch.setenv("MEMORY_EMBEDDER_BATCH", "1")
    plain = embedder_from_settings(Settings())
    assert isinstance(plain, LocalEmbedder) and not plain.int8_products


def test_batching_does_not_change_vectors(embedder: LocalEmbedder) -> None:
    texts = ["short", "a somewhat longer sentence that pads the batch"]
    batch = embedder.embed(texts)
    single = np.vstack([embedder.embed([t]) for t in texts])
    assert np.allclose(batch, single, atol=1e-4)


# Queries as a service gets them at once: similar lengths, and a few far apart.
QUERIES = [f"what did I tell you about {topic}? (question {i})" for i, topic in enumerate(
    ["tea", "hiking", "Berlin", "the dentist", "Python", "jazz", "the garden", "Lisbon",
     "marathon training", "the new job", "my sister's wedding", "the cat"])] + [
    "hi", "ok", "a much longer question about the many things I told you last week about "
    "hiking in the Alps with my brother, the weather, the huts and the food " * 3]


def test_a_batch_gives_each_text_the_vector_it_gets_alone(embedder: LocalEmbedder) -> None:
    # Bit for bit: the batcher may put any texts in one model call.
    alone = np.vstack([embedder.embed([q]) for q in QUERIES])
    assert np.array_equal(embedder.embed(QUERIES), alone)
    assert np.array_equal(embedder.embed(QUERIES[::-1]), alone[::-1])


def test_concurrent_calls_share_model_calls_and_get_their_own_vectors(
        embedder: LocalEmbedder) -> None:
    alone = {q: embedder.embed([q])[0] for q in QUERIES}
    batcher = Batcher(embedder, max_batch=8)
    got: dict[str, np.ndarray] = {}
    start = threading.Barrier(len(QUERIES))

    def call(query: str) -> None:
        start.wait()
        for _ in range(3):
            vector = batcher.embed([query])
            assert vector.shape == (1, embedder.dim)
            got[query] = vector[0]

    threads = [threading.Thread(target=call, args=(q,)) for q in QUERIES]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert set(got) == set(QUERIES)
    assert all(np.array_equal(got[q], alone[q]) for q in QUERIES)
    assert batcher.texts == 3 * len(QUERIES)
    # 45 calls of one text: waiting callers went to the model together.
    assert batcher.model_calls < batcher.texts
    # A pair (record_turn) and a big call (an import) come back whole and in order.
    pair = batcher.embed(QUERIES[:2])
    assert np.array_equal(pair, np.vstack([alone[q] for q in QUERIES[:2]]))
    assert np.array_equal(batcher.embed(QUERIES), np.vstack([alone[q] for q in QUERIES]))
    assert batcher.embed([]).shape == (0, embedder.dim)


def test_an_error_reaches_the_caller_and_the_batcher_goes_on(embedder: LocalEmbedder) -> None:
    batcher = Batcher(embedder)
    with pytest.raises(Exception) as alone:  # whatever the tokenizer raises
        embedder.embed([42])  # type: ignore[list-item]
    with pytest.raises(alone.type):
        batcher.embed([42])  # type: ignore[list-item]
    assert batcher.embed(["still works"]).shape == (1, embedder.dim)


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
