"""What a memory keeps of the sentence it was read from: a reading's template ("Works as a
nurse", "Feels excited") may leave out what the speaker named ("at St James's, 12 years",
"I started a yoga class"). Such a reading gives way to the turn in the speaker's words
(``loses``), or keeps its claim first and the sentence after it (``with_detail``): the gate
reads a fact's value off its claim, and the words keep the names, places and figures.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from engrammar.extract.parser._clauses import THIRD_PERSON
from engrammar.extract.parser._turns import (
    DATED,
    FACT_TYPES,
    content_words,
    in_third_person,
    word_set,
)
from engrammar.models import MemoryType, OpKind

if TYPE_CHECKING:
    from collections.abc import Sequence

    from spacy.tokens import Span, Token

    from engrammar.extract.parser._clauses import Clause
    from engrammar.models import Op

# What sets off the parts of a sentence (``_rest_of``).
_PARTS = re.compile(r"\s*(?:[,;]|\s-+\s|\s–\s)\s*")
# Nouns beside the clause, not in it: said to someone ("Hey Maria,"), or when ("yesterday").
_ASIDE = ("npadvmod", "intj", "vocative")


def _spoken_words(sentence: Span) -> set[str]:
    """The sentence's content words, and its first person's in the third ("my" says
    "their"): a memory words the speaker's "my fam" as "their fam"."""
    said = content_words(sentence.text)
    return said | {THIRD_PERSON[w] for w in word_set(sentence.text) if w in THIRD_PERSON}


def loses(op: Op, sentence: Span) -> bool:
    """Whether a reading's add leaves out what its sentence names: a name or a figure, or
    two nouns ("Feels excited" of "I'm so excited, I started a yoga class with a
    colleague"; "Works as a nurse" of "I'm a nurse at St James's, 12 years now")."""
    if op.op is not OpKind.add or op.type not in (*FACT_TYPES, MemoryType.ephemeral):
        return False
    said = content_words(DATED.sub("", op.content))
    if len(said - _spoken_words(sentence)) > 1:
        # More than its template's verb in words of its own ("Is a night owl" of "mornings
        # aren't my thing"): the reading says what the sentence means.
        return False
    return _names(_lost(said, sentence))


def _in_its_words(op: Op, sentence: Span) -> bool:
    """Whether an op's content, its template's verb aside ("Likes", "Works as"), is in the
    sentence's words: a reading in words of its own says what the sentence means ("Is a
    night owl" of "mornings aren't my thing", "Is vegan" of "nothing from animals")."""
    _, _, rest = DATED.sub("", op.content).partition(" ")
    return content_words(rest) <= _spoken_words(sentence)


def with_detail(ops: list[Op], sentence: Span, clauses: Sequence[Clause]) -> list[Op]:
    """The ops of one sentence, each fact's claim (which the gate matches by its template:
    "Works as a nurse", "Plans to visit Lisbon") followed by the sentence in the speaker's
    words when the ops together leave out what it names ("12 years now", "in March")."""
    fixed = [op for op in ops if op.op is OpKind.add and op.type in FACT_TYPES
             and op.slot != "name" and _in_its_words(op, sentence)]
    if len(fixed) != 1:
        # A name is all there is to it: what is said beside an introduction is what the
        # user came for ("Priyanka here, need a hand with a cover letter"). A reading in
        # words of its own ("Is vegan" of "no honey, nothing from animals") says the gist.
        # Facts that share the sentence share its words out: each would carry them all.
        return ops
    said = content_words(DATED.sub("", " ".join(op.content for op in ops)))
    lost = _lost(said, sentence)
    if not _names(lost) or not (third := in_third_person(sentence, clauses)):
        return ops
    # A name or figure left out beside the slot's own ("moved from Perth to Hobart", "34,
    # 35 in May") is the value it had or will have: the words would hold it as well.
    (fact,) = fixed
    kinds = {t.pos_ for t in lost if t.pos_ != "NOUN"}
    if kinds & {t.pos_ for t in sentence if t.lower_ in word_set(fact.content)}:
        return ops
    detailed = fact.model_copy(
        update={"content": f"{fact.content.rstrip(' .')}. {_rest_of(third, lost)}"})
    return [detailed if op is fact else op for op in ops]


def _lost(said: set[str], sentence: Span) -> list[Token]:
    """The nouns, names and figures of ``sentence`` that ``said`` (content words) leaves
    out. Words said to someone ("Hey Maria,"), when ("yesterday") and a sentence's opener
    set off by a comma ("Ugh,") are not the fact's."""
    doc = sentence.doc
    return [t for t in sentence if t.pos_ in ("NOUN", "PROPN", "NUM") and not t.is_stop
            and t.dep_ not in _ASIDE and not (t.dep_ == "compound" and t.head.dep_ in _ASIDE)
            and t.head.pos_ != "INTJ"
            and not (t.i == sentence.start and t.i + 1 < len(doc) and doc[t.i + 1].is_punct)
            and t.lower_ not in said and t.lemma_.lower() not in said
            and content_words(t.text)]


def _names(lost: Sequence[Token]) -> bool:
    """Whether what was left out names something: a name or a figure, or two nouns."""
    return len(lost) >= 2 or any(t.pos_ != "NOUN" for t in lost)


def _rest_of(third: str, lost: Sequence[Token]) -> str:
    """The parts of the sentence, as the memory words it, that hold what the claim left
    out: "Is a nurse at St James's, been there 12 years" after "Works as a nurse at St
    James's" is "Been there 12 years". Parts are what commas, semicolons and dashes set off."""
    parts = [p.strip() for p in _PARTS.split(third) if p.strip()]
    words = {t.lower_ for t in lost}
    kept = [p for p in parts if word_set(p) & words]
    if not kept or len(kept) == len(parts):
        return third
    text = ", ".join(kept).rstrip(" .") + "."
    first = next(n for n, ch in enumerate(text) if ch.isalnum())
    return text[:first] + text[first].upper() + text[first + 1:]

