"""Which messages the offline extractor can read: its parser and its models are English
only, so a message in another language would yield nothing, silently. This finds those
messages, so the extraction job skips them and says so.

The detector is langid.py (py3langid: a naive Bayes model over byte n-grams, trained on 97
languages, shipped in the wheel). It is asked only about the languages a chat is likely to
be in, which keeps short English messages from being taken for Latin or Catalan, and a
message counts as another language only when it has at least ``MIN_WORDS`` words and the
model is sure it is none the extractor reads (``MIN_PROBABILITY``) and fairly sure which it
is (``MIN_FOUND``): "vegetarian.", "2 cats." and "oh im Ola btw" stay English. The
threshold is measured in tests/test_language.py against every turn of the eval fixtures
(none skipped) and sentences in twelve other languages (all skipped).
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from engrammar.models import Message

# The languages the offline extractor reads.
READS = ("en",)
# What the detector chooses among: English and the languages most used online.
CANDIDATES = ("en", "es", "fr", "de", "pt", "it", "nl", "ru", "zh", "ja", "ko", "ar", "tr",
              "pl", "sv", "hi", "id", "vi", "uk", "el", "he", "cs", "ro", "da", "fi", "no")
MIN_WORDS = 3
MIN_PROBABILITY = 0.9
MIN_FOUND = 0.5
_WORD = re.compile(r"\w+")

_lock = threading.Lock()
_identifier: Any = None


def _model() -> Any:
    """The detector, loaded once a process (about 3 s: the model is xz-compressed)."""
    global _identifier
    with _lock:
        if _identifier is None:
            from py3langid.langid import MODEL_FILE, LanguageIdentifier

            identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
            identifier.set_languages(list(CANDIDATES))
            _identifier = identifier
        return _identifier


def language(text: str) -> str | None:
    """The language of ``text`` (ISO 639-1) when it is surely not one the offline
    extractor reads; None when it is, or when the text is too short to tell."""
    words = _WORD.findall(text)
    # A script without spaces between words (Chinese, Japanese) is one long "word".
    if len(words) < MIN_WORDS and sum(len(w) for w in words) < 8:
        return None
    ranked = _model().rank(text)
    readable = sum(p for code, p in ranked if code in READS)
    found, probability = ranked[0]
    # Sure it is none the extractor reads, and fairly sure which it is: close languages
    # (Russian and Ukrainian) share the probability between them, while slang the model
    # has not seen ("oh im Ola btw") spreads it thin over many.
    if found in READS or readable > 1 - MIN_PROBABILITY or probability < MIN_FOUND:
        return None
    return str(found)


@dataclass
class Unread:
    """What one chat's extraction skipped as unreadable: how many messages, by language."""

    messages: int = 0
    languages: Counter[str] = field(default_factory=Counter)

    def to_json(self) -> dict[str, Any]:
        return {"messages": self.messages, "languages": dict(sorted(self.languages.items()))}


def readable(messages: Sequence[Message]) -> tuple[list[Message], Unread]:
    """The messages the offline extractor can read, and what was left out."""
    kept: list[Message] = []
    unread = Unread()
    for m in messages:
        found = language(m.content)
        if found is None:
            kept.append(m)
        else:
            unread.messages += 1
            unread.languages[found] += 1
    return kept, unread
