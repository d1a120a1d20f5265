"""pgvector's binary form, decoded into numpy columns in one call."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def decode_vectors(blobs: Sequence[bytes | None]) -> tuple[np.ndarray, np.ndarray] | None:
    """From pgvector's binary form (int16 dims, int16 unused, big-endian float32s), in one
    numpy call: the vectors as the columns of a (dims, rows) float32 matrix (zeros where
    there is none), and which rows have one. None when the widths differ."""
    widths = {len(b) for b in blobs if b is not None}
    if len(widths) > 1:
        return None
    width = widths.pop() if widths else 4
    present = np.array([b is not None for b in blobs], dtype=bool)
    raw = np.frombuffer(b"".join(b for b in blobs if b is not None), dtype=">f4")
    matrix = np.zeros((width // 4 - 1, len(blobs)), dtype=np.float32)
    matrix[:, present] = raw.reshape(-1, width // 4)[:, 1:].T
    return matrix, present


def norms(vectors: np.ndarray) -> np.ndarray:
    """The float64 length of each column of ``vectors`` (dims, rows)."""
    return lengths(np.ascontiguousarray(vectors.T, dtype=np.float64))


def lengths(rows: np.ndarray) -> np.ndarray:
    # Summed along contiguous memory: the same bits for a vector whatever rows come with it.
    result: np.ndarray = np.sqrt((rows * rows).sum(axis=1))
    return result
