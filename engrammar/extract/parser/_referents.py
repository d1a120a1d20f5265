"""What "it" and "them" (and chat's "its" for "it's") stand for, when a memory keeps a
sentence without the one before it that named the thing.

People name a thing once and go on with a pronoun: "could you help me revise for my theory
test? it's next thursday". Kept alone, "It's next thursday" says nothing. The thing is the
noun phrase a sentence before the pronoun's named, found the way a reader finds it (after
Hobbs's search): the nearest sentence first, each read from its most prominent nouns down;
the first that agrees in number and can be the thing meant. A memory words the pronoun as
that phrase ("Their theory test is next thursday"). Only the wording changes: whether the
sentence is worth keeping is decided on what was said (the turn model read "it" as said,
and reading it as the thing kept requests' passing details: "my kitchen sink ... it's full
of standing water").
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING

from engrammar.extract.parser._lexicon import PERFECT, kin, trade

if TYPE_CHECKING:
    from spacy.tokens import Span, Token

# A pronoun that stands for a thing named before, in the roles where it does: "it" as a
# subject ("it's due monday"), "them" as a subject or object ("my gf loves them"). Not
# "it" as an object, which stands for a doing as often as a thing ("been doing it 8 years",
# "bricking it"), nor after a preposition ("saving up for it"); not "they" (most often
# people, and the word a memory uses for the user) nor "this" or "that" (a situation).
_ROLES = {"it": frozenset({"nsubj", "nsubjpass"}),
          "them": frozenset({"nsubj", "nsubjpass", "dobj"}),
          # "its" as a subject is chat's "it's" ("its been at me a fortnight"), as is an
          # "its" the parser made the possessive of a preposition (``_its``)
          "its": frozenset({"nsubj", "nsubjpass"})}
# The verbs whose "it" stands for nothing (the weather's: "it rained all week").
_AMBIENT = frozenset({"rain", "snow", "pour", "drizzle", "hail", "sleet", "thunder",
                      "bucket", "teem", "spit"})
# How many sentences back a pronoun's referent may be: a chat message names a thing and
# goes on about it in the next sentence or two.
_REACH = 2


def points_back(tok: Token) -> bool:
    """Whether ``tok`` points at what the talk named before it: the third person, a
    demonstrative, "there" ("How's she keeping?", "why that one?", "How long have you
    lived there?")."""
    return tok.lower_ in _POINTING and tok.pos_ in ("PRON", "DET", "ADV")


# What points back: the third person, the demonstratives, "there".
_POINTING = frozenset({"he", "she", "it", "they", "him", "her", "them", "his", "its",
                       "their", "hers", "theirs", "this", "that", "these", "those", "there"})


# The sentences a memory worded a sentence at a time holds (a turn, parser._turns), by
# where they start: a thing named in one of them is in the memory already ("Ordered a bike
# online. It arrives friday" stays as said).
_WORDED: ContextVar[frozenset[int]] = ContextVar("worded", default=frozenset())


@contextmanager
def worded(starts: frozenset[int]) -> Iterator[None]:
    """Word the pronouns of what is rendered inside as standing for things named outside
    the sentences starting at ``starts`` only."""
    token = _WORDED.set(starts)
    try:
        yield
    finally:
        _WORDED.reset(token)


def unsaid_referent(pron: Token, rendered: set[int]) -> list[Token] | None:
    """What ``pron`` stands for (``referent``) when the memory's words do not name it: not
    among the ``rendered`` tokens, nor in a sentence the memory holds."""
    thing = referent(pron)
    if thing is None or any(t.i in rendered for t in thing) or (
            thing[0].sent.start in _WORDED.get()):
        return None
    return thing


def referent(pron: Token) -> list[Token] | None:
    """The words of the noun phrase ``pron`` stands for, or None when it stands for no
    phrase the message named before it (or for something said after: "it's hard to
    sleep")."""
    roles = _ROLES.get(pron.lower_)
    if roles is None or pron.pos_ != "PRON" or not (pron.dep_ in roles or _its(pron)) \
            or _anticipates(pron):
        return None
    plural = pron.lower_ == "them"
    for span in _before(pron):
        for noun in sorted(_nouns(span), key=_depth):
            if _agrees(noun, plural):
                return _phrase(noun)
    return None


def _its(pron: Token) -> bool:
    """Whether an "its" is chat's "it's" the parser took for a possessive of no thing:
    "its on thursday" (of a preposition)."""
    return pron.lower_ == "its" and pron.dep_ == "poss" and pron.head.pos_ in ("ADP", "ADV")


def dropped_verb(pron: Token) -> str:
    """The verb an "its" that is a subject has lost ("its been" -> "has been", "its really
    been" -> "has really been", "its on friday" -> "is on friday"); nothing for another
    pronoun, or when a verb follows."""
    if pron.lower_ != "its":
        return ""
    nxt = next((t for t in pron.doc[pron.i + 1:] if t.pos_ != "ADV" and t.dep_ != "neg"),
               None)
    if nxt is None:
        return " is"
    if nxt.lower_ in PERFECT:
        return " has"
    return "" if nxt.tag_ in ("VBZ", "VBD", "MD", "VBP") else " is"


def _anticipates(pron: Token) -> bool:
    """Whether "it" stands for a clause that follows its verb ("it's hard to sleep", "it
    turns out that ...", "I hate it when ..."), or for the weather."""
    verb = pron.head
    if verb.lemma_.lower() in _AMBIENT:
        return True
    # (an "xcomp" is what a copula's "it" anticipates, "it's hard to sleep"; under another
    # verb it is that verb's own: "it needs to be under 20 quid")
    return any((c.dep_ in ("ccomp", "csubj", "advcl") or (
        c.dep_ == "xcomp" and verb.lemma_.lower() == "be")) and c.i > pron.i
        for c in verb.children)


def _before(pron: Token) -> list[Span]:
    """Where to look, nearest first: the sentences before the pronoun's in its message.
    (A thing named in the pronoun's own sentence is in the memory's detail, which keeps
    the rest of the sentence: parser._detail.)"""
    sent = pron.sent
    previous = [s for s in pron.doc.sents if s.end <= sent.start]
    return list(reversed(previous[-_REACH:]))


def _nouns(span: Span) -> list[Token]:
    """The heads of the noun phrases in ``span``: not a noun that only qualifies another
    ("theory" in "theory test")."""
    return [t for t in span if t.pos_ in ("NOUN", "PROPN")
            and t.dep_ not in ("compound", "poss", "appos", "npadvmod")  # ("next year")
            and t.head.pos_ != "SCONJ"  # a misparse: "if poss" is no thing
            and not any(c.dep_ == "nummod" for c in t.children)]  # a count: "on day one"


def _depth(noun: Token) -> tuple[int, int]:
    """Prominence: how far the noun hangs below its sentence's root, then where it is."""
    depth, node = 0, noun
    while node.head.i != node.i and depth < 50:
        node, depth = node.head, depth + 1
    return depth, noun.i


def _agrees(noun: Token, plural: bool) -> bool:
    """Whether a noun can be what the pronoun stands for: the same number; and for "it", a
    common noun that names no relative (a name may be a person's: the parse does not
    say)."""
    if noun.like_num:
        return False
    if plural:
        return noun.tag_ in ("NNS", "NNPS")
    return noun.tag_ == "NN" and not kin(noun.lower_) and not trade(noun.lemma_.lower())


def _phrase(noun: Token) -> list[Token]:
    """The noun with the words before it that belong to it: "my driving theory test"."""
    return [t for t in noun.doc[noun.left_edge.i:noun.i + 1] if not t.is_punct]
