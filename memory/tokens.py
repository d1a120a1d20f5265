"""Token counting that works offline, for every budget; pluggable with a model's tokenizer."""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Protocol, runtime_checkable

from memory.errors import ConfigError

_PIECES = re.compile(r"\w+|[^\w\s]", re.UNICODE)


@runtime_checkable
class TokenCounter(Protocol):
    name: str

    def count(self, text: str) -> int: ...


class HeuristicCounter:
    """A deterministic estimate that errs high against BPE tokenizers.

    Each word costs one token per started 4 characters and each punctuation mark one token;
    GPT-style tokenizers spend about 1.3 tokens per English word, this spends about 1.5, so a
    budget kept with it is kept with the model's own count too, in ordinary text.
    """

    name = "heuristic"

    def __init__(self) -> None:
        # Recall renders the same memory lines turn after turn: count each text once.
        self.count = functools.lru_cache(maxsize=65_536)(self._count)  # type: ignore[method-assign]

    def count(self, text: str) -> int:
        return self._count(text)

    @staticmethod
    def _count(text: str) -> int:
        total = 0
        for piece in _PIECES.findall(text):
            total += max(1, math.ceil(len(piece) / 4)) if piece[0].isalnum() else 1
        # Newlines and runs of spaces are tokens of their own in BPE vocabularies.
        return total + text.count("\n")


class TokenizerFileCounter:
    """A Hugging Face ``tokenizer.json`` (the model's own tokenizer), through ``tokenizers``."""

    def __init__(self, path: Path) -> None:
        from tokenizers import Tokenizer

        if not path.exists():
            raise ConfigError(f"tokenizer file not found: {path}")
        self._tokenizer = Tokenizer.from_file(str(path))
        self._tokenizer.no_truncation()
        self.name = f"tokenizer:{path.name}"

    def count(self, text: str) -> int:
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids)


def counter_from_setting(value: str | None) -> TokenCounter:
    """``None`` or ``heuristic`` for the estimate; otherwise a path to a tokenizer.json."""
    if value in (None, "", "heuristic"):
        return HeuristicCounter()
    return TokenizerFileCounter(Path(value))


def truncate_to(counter: TokenCounter, text: str, budget: int, marker: str = "…") -> str:
    """The longest prefix of ``text`` that, with ``marker``, fits ``budget``: cut at a word,
    or inside the first word when not even that fits whole (without the marker when not
    even one letter fits beside it)."""
    if counter.count(text) <= budget:
        return text
    words = text.split(" ")
    kept = _longest(lambda n: counter.count(" ".join(words[:n]) + marker) <= budget,
                    len(words))
    if kept:
        return " ".join(words[:kept]) + marker
    chars = _longest(lambda n: counter.count(words[0][:n] + marker) <= budget, len(words[0]))
    if chars:
        return words[0][:chars] + marker
    # Not even a letter beside the marker: the letters alone, if any fit.
    return words[0][:_longest(lambda n: counter.count(words[0][:n]) <= budget, len(words[0]))]


def _longest(fits: Callable[[int], bool], most: int) -> int:
    """The largest n in [0, most] with fits(n), for fits true up to some n and false after
    (binary search)."""
    lo, hi = 0, most
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo
