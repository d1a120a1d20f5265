"""The user giving their name without "my name is": "I'm Tomás btw", "Ada here, quick
question", "myself Ramesh from Pune".

Read along the tokens, as ``_requests.names`` reads "called" and "named": the small model
tags a name it has never seen as an adjective or a noun as often as a proper noun. What
follows "I'm" may be no name ("I'm Irish", "I'm Catholic", "I'm Vegan"), so the named-entity
recogniser, run on these sentences only, vetoes a nationality, a place or a group and must
call a word the tagger did not take for a proper noun a person.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engrammar.extract.parser._lexicon import OPENERS
from engrammar.extract.parser._nlp import entities
from engrammar.extract.parser._phrases import hyphen_after
from engrammar.extract.parser._requests import proposal
from engrammar.models import MemoryType, Op

if TYPE_CHECKING:
    from spacy.tokens import Span, Token

_BE = frozenset({"'m", "’m", "am"})
# Entity labels that say the word after "I'm" is not a name: "I'm Irish", "I'm Muslim".
# Not ORG: the small recogniser calls many a name it has not seen one ("Karthik").
_NOT_A_NAME = frozenset({"NORP", "GPE", "LOC", "LANGUAGE", "DATE", "TIME", "CARDINAL",
                         "ORDINAL", "QUANTITY"})
_TAGS = frozenset({"PROPN", "ADJ", "NOUN"})


def _capital(tok: Token) -> bool:
    return (tok.text[:1].isupper() and tok.text[1:2].islower()) or (
        len(tok.text) == 1 and tok.text.isupper())


def _name_at(sentence: Span, first: Token) -> str | None:
    """The name that starts at ``first``, when the tokens and the recogniser allow one."""
    if not _capital(first) or first.pos_ not in _TAGS or first.is_stop:
        return None
    doc = entities(sentence.doc)
    label = first.ent_type_
    if label in _NOT_A_NAME or (first.pos_ != "PROPN" and label != "PERSON"):
        return None
    run = [first]
    for nxt in doc[first.i + 1: sentence.end]:
        if hyphen_after(run[-1]) or run[-1].text == "-":
            run.append(nxt)  # "Ji-woo", "Jean-Luc": one name, the hyphen kept
            continue
        if nxt.pos_ != "PROPN" or not _capital(nxt) or nxt.ent_type_ in _NOT_A_NAME:
            break
        run.append(nxt)
    end = run[-1].i + 1
    if end < sentence.end and doc[end].like_num:
        return None  # a kind and its number, "I'm Type 1", "I'm Year 10": no name
    return doc[first.i:end].text


def introduction(sentence: Span) -> list[Op]:
    """"I'm Tomás btw", "Łukasz here", "myself Ramesh": the user's name."""
    found = _introduced(sentence)
    if found is None:
        return []
    return [proposal(MemoryType.profile, f"Name is {found[0]}", slot="name", salience=0.9)]


def after_name(sentence: Span) -> str | None:
    """What an introduction goes on to say after a comma, as a sentence of its own
    ("Łukasz here, plasterer in Reading" -> "plasterer in Reading."), or None."""
    found = _introduced(sentence)
    if found is None:
        return None
    end = found[1]
    doc = sentence.doc
    if end >= sentence.end or doc[end].text != ",":
        return None
    rest = [t for t in doc[end + 1: sentence.end] if not t.is_punct]
    if len(rest) < 2:  # "I'm Tomás, btw"
        return None
    return doc.text[rest[0].idx: sentence.end_char].rstrip(" .!,") + "."


def _introduced(sentence: Span) -> tuple[str, int] | None:
    """The name an introduction gives and the index of the token after it."""
    toks = list(sentence)
    # (a greeting before it opens nothing: "hey, Sam here")
    lead = next((n for n, t in enumerate(toks) if not (
        t.is_punct or t.pos_ == "INTJ" or t.lower_ in OPENERS)), 0)
    for n, tok in enumerate(toks[:-1]):
        after = toks[n + 1]
        name, start = None, tok
        if tok.lower_ == "i" and after.lower_ in _BE and n + 2 < len(toks):
            start = toks[n + 2]
            name = _name_at(sentence, start)
        elif tok.lower_ == "myself" and n == lead:
            start = after
            name = _name_at(sentence, after)
        elif n == lead and after.lower_ == "here" and (
                n + 2 == len(toks) or toks[n + 2].is_punct):
            name = _name_at(sentence, tok)
            if name:
                return name, after.i + 1
        if name:
            return name, start.i + len(name.split())
    return None
