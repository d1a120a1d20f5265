"""What the parser's learned models share (``parser._decisions``, ``parser._intent``):
feature names hashed into columns, and weight files checked by sha256 before they load.

The hash is crc32, the same on every run and platform, so the columns a model was trained
on are the columns it reads.
"""

from __future__ import annotations

import hashlib
import zlib
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
