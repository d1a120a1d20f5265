"""What a request to forget reaches, and what a message that keeps something out does not
keep of it.

"can you forget everything about Dominic?" is one request and three memories ("Has an ex
named Dominic", "Their ex Dominic still has their road bike", ...). The gate, given the
words alone, archives the one memory they match best, as it must for a vague request
("forget the hospital stuff" is no reason to archive "Works as a nurse at St James's
hospital", nor "forget about friday" to archive a choir on Friday nights). A forget of
someone or something by name (``by_name``) reaches every memory that names it, each by
its handle, as the LLM extractor proposes them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from spacy.lang.en.stop_words import STOP_WORDS

from engrammar.extract.parser._dates import named_days
from engrammar.models import Memory, MemoryType, Op, OpKind, Surface

if TYPE_CHECKING:
    from spacy.tokens import Token

# The reason a forget of a name carries from the parse to ``forgotten``.
BY_NAME = "user asked to forget everything about a name"
# Entities a name of which is no one and nothing to forget everything about: "friday".
_NOT_NAMES = frozenset({"DATE", "TIME"})
# Words, with "ex-wife" two of them and a possessive "'s" gone.
_WORD = re.compile(r"[a-z0-9]+")
_POSSESSIVE = re.compile(r"['’]s\b")
# Heads that say only that something was said: "the IVF stuff", "that thing about work".
_VAGUE = frozenset({"thing", "things", "stuff", "bit", "bits"})
# The boundaries _requests words: "Never mention their ex", "Does not want X brought up".
_BOUNDARY = re.compile(r"^(?:Never mention|Does not want) (.+?)(?: brought up)?$")
_JOINS = re.compile(r",|\band\b|&|\bor\b")
_DETERMINER = re.compile(r"^(?:the|their|his|her|a|an)\s+", re.IGNORECASE)


def by_name(target: Token) -> bool:
    """Whether the thing a forget names is a name, or has one: "Dominic", "my son Leo";
    not "the gym" or "Friday"."""
    return any(t.pos_ == "PROPN" and t.ent_type_ not in _NOT_NAMES
               and not named_days(t.text)
               for t in (target, *(c for c in target.children
                                   if c.dep_ in ("appos", "compound", "npadvmod", "nmod"))))


def _words(text: str) -> frozenset[str]:
    """The words of ``text`` that name something, lower-cased."""
    words = _WORD.findall(_POSSESSIVE.sub("", text.lower()))
    return frozenset(w for w in words if w not in STOP_WORDS and w not in _VAGUE)


def _topics(content: str) -> list[frozenset[str]]:
    """What a forget of a name reaches, each a set of words a memory must all name: the
    whole, and each name joined to others ("all that Dilan and wedding stuff": everything
    naming Dilan too, though not every memory of a wedding)."""
    whole = _words(content)
    parts = [_words(p) for p in _JOINS.split(content)
             if any(w[:1].isupper() for w in p.split()[1:] or p.split())]
    return [t for t in (whole, *parts) if t]


def boundary(rule: Op | Memory) -> bool:
    """Whether an op or a memory keeps a topic out of the conversation (a protocol under
    ``Surface.never`` or ``avoid``)."""
    return rule.type is MemoryType.protocol and rule.surface in (Surface.never, Surface.avoid)


def forgotten(ops: Sequence[Op], memories: Sequence[Memory]) -> list[Op]:
    """``ops`` with each forget of a name replaced by one forget for each of ``memories``
    that names it; kept as it is when none does, or when it names no one, for the gate."""
    out: list[Op] = []
    for op in ops:
        # (every word: "my ex Tom" is not "Has a cat named Tom")
        topics = _topics(op.content) if op.op is OpKind.forget and not op.target \
            and op.reason == BY_NAME else []
        named = [m for m in memories
                 # (forgetting a person keeps the rule about them: "Never mention their
                 # ex Dominic")
                 if any(topic <= _words(m.content) for topic in topics) and not boundary(m)]
        if not named:
            out.append(op)
            continue
        out.extend(op.model_copy(update={"target": f"m{m.id}"}) for m in named)
    return out


def kept_out(op: Op) -> str | None:
    """What ``op`` asks to forget or never to raise, as a memory about it would open
    ("their dad", "dominic"); None for another op."""
    if op.op is OpKind.forget and not op.target:
        thing = op.content
    elif boundary(op) and (m := _BOUNDARY.match(op.content)):
        thing = m.group(1)
    else:
        return None
    return _DETERMINER.sub("", thing.strip().lower()) or None


def unsaid(ops: Sequence[Op]) -> list[Op]:
    """The ops of one message without its statements about what it asks to forget or never
    to raise: the reason for a request is no fact to keep against it. About it is a
    statement that opens with it, as a "he" named does ("forget Dominic. he's a liar",
    "please dont bring up my dad, he passed in feb": "Their dad passed in feb"); "forget
    about the gym, I joined a new gym" keeps the new gym."""
    things = [t for t in map(kept_out, ops) if t]
    return [op for op in ops if kept_out(op) or not any(
        re.match(rf"{re.escape(t)}(?![\w-])", _DETERMINER.sub("", op.content.lower()))
        for t in things)]


def unsaid_relation(ops: Sequence[Op]) -> list[Op]:
    """The ops of the sentence of a request to forget or never raise someone without the
    relation its own words name: "never mention my ex Tom again" is no "Has an ex named
    Tom"."""
    topics = [w for w in (_words(t) for t in map(kept_out, ops) if t) if w]
    return [op for op in ops if not (op.slot or "").startswith("family:") or not any(
        t <= _words(op.content) for t in topics)]
