"""What a request to forget reaches: every memory of the chat that names what it is about.

"can you forget everything about Dominic?" is one request and three memories ("Has an ex
named Dominic", "Their ex Dominic still has their road bike", ...). The gate, given the
words alone, archives the one memory they match best, as it must for a vague request
("forget the hospital" is no reason to archive "Works as a nurse"). A memory that names
every word of the topic is what the user asked to forget, so each is proposed by its
handle, as the LLM extractor proposes them: the gate still decides each.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from spacy.lang.en.stop_words import STOP_WORDS

from engrammar.models import Memory, MemoryType, Op, OpKind, Surface

_WORD = re.compile(r"[a-z0-9][a-z0-9-]*")
# Heads that say only that something was said: "the IVF stuff", "that thing about work".
VAGUE = frozenset({"thing", "things", "stuff", "bit", "bits"})


# The boundaries _requests words: "Never mention their ex", "Does not want X brought up".
_BOUNDARY = re.compile(r"^(?:Never mention|Does not want) (.+?)(?: brought up)?$")


def topic_words(text: str) -> frozenset[str]:
    """The words of ``text`` that name something, lower-cased, with no possessive "'s"."""
    words = _WORD.findall(re.sub(r"['’]s\b", "", text.lower()))
    return frozenset(w for w in words if w not in STOP_WORDS and w not in VAGUE)


def forgotten(ops: Sequence[Op], memories: Sequence[Memory]) -> list[Op]:
    """``ops`` with each forget by its words alone replaced by one forget for each of
    ``memories`` that names every word of its topic; kept as it is when none does."""
    out: list[Op] = []
    for op in ops:
        topic = topic_words(op.content) if op.op is OpKind.forget and not op.target \
            else frozenset()
        named = [m for m in memories if topic and topic <= topic_words(m.content)]
        if not named:
            out.append(op)
            continue
        out.extend(op.model_copy(update={"target": f"m{m.id}"}) for m in named)
    return out


def _kept_out(op: Op) -> frozenset[str]:
    """The words of what ``op`` asks to forget or never to raise; none for another op."""
    if op.op is OpKind.forget and not op.target:
        return topic_words(op.content)
    if op.type is MemoryType.protocol and op.surface in (Surface.never, Surface.avoid) \
            and (m := _BOUNDARY.match(op.content)):
        return topic_words(m.group(1))
    return frozenset()


def unsaid(ops: Sequence[Op]) -> list[Op]:
    """The ops of one message without its statements about what the message asks to
    forget or never to raise: "forget Dominic, he's a liar", "please dont bring up my dad,
    he passed in feb" (the reason for a request is no fact to keep against it)."""
    topics = [t for t in map(_kept_out, ops) if t]
    return [op for op in ops if _kept_out(op) or not any(
        t <= topic_words(op.content) for t in topics)]
