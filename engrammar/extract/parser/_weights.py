"""What the parser's learned models share (``parser._decisions``, ``parser._intent``):
feature names hashed into columns, weight files checked by sha256 before they load, and
the logistic regression over an embedder's vector (``parser._attributes``,
``parser._jobs``).

The hash is crc32, the same on every run and platform, so the columns a model was trained
on are the columns it reads.
"""

from __future__ import annotations

import hashlib
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engrammar.errors import ConfigError


def index(names: list[str], dim: int) -> np.ndarray:
    """Each feature name's column among ``dim``."""
    return np.fromiter((zlib.crc32(n.encode()) % dim for n in names), dtype=np.int64,
                       count=len(names))


def columns(names: list[str], dim: int) -> tuple[np.ndarray, np.ndarray]:
    """The columns a feature list uses and their weights: counts scaled to unit length
    (a sparse row of the vector the models were trained on, without building it)."""
    cols, counts = np.unique(index(names, dim), return_counts=True)
    return cols, counts.astype(np.float32) / np.float32(np.sqrt(float(counts @ counts)))


def checked(path: Path, expected: str, what: str) -> Path:
    """``path``, once it exists and its sha256 is ``expected``; ConfigError naming
    ``what`` otherwise."""
    if not path.exists():
        raise ConfigError(f"{what} not found at {path}: reinstall engrammar")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != expected:
        raise ConfigError(f"{path.name}: sha256 {digest}, expected {expected}")
    return path


@dataclass(frozen=True)
class VectorModel:
    """One logistic regression over a unit vector, and the bar it was chosen with."""

    w: np.ndarray  # (dim,)
    b: float
    threshold: float

    def chance(self, vector: np.ndarray) -> float:
        return float(1.0 / (1.0 + np.exp(-(float(vector @ self.w) + self.b))))


def vector_model(path: Path, expected: str, what: str) -> VectorModel:
    """The vector model in ``path``, once its sha256 is ``expected`` (``checked``)."""
    with np.load(checked(path, expected, what)) as data:
        return VectorModel(w=data["w"].astype(np.float32), b=float(data["b"]),
                           threshold=float(data["threshold"]))
