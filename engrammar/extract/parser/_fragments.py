"""Chat fragments: sentences without a subject or without a verb.

People drop the "I" ("live in Croydon", "allergic to latex", "34.") and the verb ("dentist
thurs 2pm"). A subjectless sentence gets its "I" back (``with_subject``) and is parsed
again; a verbless one naming an appointment with a day ahead is an open loop (``fragment``),
and so is each item of a list whose items name their days ("dentist tomorrow at 9, rent by
Friday": ``listed``).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from engrammar.extract.parser._events import day_ahead, plan_due
from engrammar.extract.parser._lexicon import (
    DIET,
    DISLIKE,
    EVENTS,
    HOME_IN,
    JOBS,
    LIKE,
    MOODS,
    OPENERS,
    PETS,
    REQUEST_VERBS,
    kin,
)
from engrammar.extract.parser._mood import supposing
from engrammar.extract.parser._nlp import entities, past_form
from engrammar.extract.parser._phrases import cap, with_article, words
from engrammar.extract.parser._requests import proposal
from engrammar.models import MemoryType, Op

if TYPE_CHECKING:
    from spacy.tokens import Span, Token


# What may follow an age said alone: "34.", "32 in case u wondered", "28 and single".
_AFTER_AGE = frozenset({"in", "and", "btw", "now", "years", "yrs", "y/o", "yo", "lol"})


# At most this many words before a colon make a label of them ("quick background:",
# "sorry for the essay but context:").
_LABEL = 6


def _a_label(words: Span) -> bool:
    """Whether the words before a colon are a label of what follows: a few words that say
    no one's ("quick background:"); "my wife: 38, ..." keeps them the wife's."""
    return sum(not t.is_punct for t in words) <= _LABEL and not any(
        t.dep_ in ("poss", "case") or t.pos_ in ("PRON", "PROPN") or kin(t.lower_)
        for t in words)


def with_subject(sentence: Span, age: bool = True) -> str | None:
    """The sentence with its dropped "I" put back ("I'm allergic to latex"), or None when
    it has a subject, asks something, or is a request to the assistant. ``age``: whether a
    number alone may be the speaker's age (``_asked.asks_age``)."""
    if sentence.text.rstrip().endswith("?"):
        return None
    colon = next((t for t in sentence if t.text == ":"), None)
    if colon is not None and colon.i + 1 < sentence.end and _a_label(
            sentence.doc[sentence.start: colon.i]):
        # "context: 41, divorced, two teens, work in logistics": what the label names is
        # read on its own (the parser made the label the list's subject)
        return sentence.doc.text[sentence.doc[colon.i + 1].idx: sentence.end_char].strip()
    # "Lechia fan. allergic to penicillin.": fragments the parser ran together, one by one.
    stop = next((t.i for t in sentence if t.text == "." and t.i < sentence.end - 1), None)
    if stop is not None:
        piece = sentence.doc[sentence.start: stop + 1]
        rest = sentence.doc.text[sentence.doc[stop + 1].idx: sentence.end_char]
        return f"{with_subject(piece, age) or piece.text} {rest}"
    lead = next((t for t in sentence if not t.is_punct and t.lower_ not in OPENERS), None)
    after = sentence.doc[lead.i + 1] if lead is not None and lead.i + 1 < sentence.end else None
    if age and lead is not None and lead.text.isdigit() and 0 < int(lead.text) < 120 and (
            after is None or after.is_punct or after.lower_ in _AFTER_AGE):
        return f"I'm {sentence.doc.text[lead.idx: sentence.end_char]}"  # "32 in case u wondered"
    if lead is not None and lead.lower_ == "not" and lead.i == sentence.start:
        return f"I'm {sentence.doc.text[lead.idx: sentence.end_char]}"  # "not a beer person"
    # A subject of the sentence's own verb, not one in brackets or a later clause.
    if any(t.dep_ in ("nsubj", "nsubjpass", "expl") and t.head.i == sentence.root.i
           for t in sentence):
        return None
    words_ = [t for t in sentence if not t.is_punct and t.lower_ not in OPENERS and not (
        t.lower_ == "no" and t.i + 1 < sentence.end and sentence.doc[t.i + 1].is_punct)]
    if not words_ or words_[0].lemma_.lower() in REQUEST_VERBS or supposing(words_[0]):
        return None  # (nor "say I was vegan": "I say I was vegan" would make it so)
    first = words_[0]
    rest = sentence.doc.text[first.idx: sentence.end_char]
    word = first.lower_
    # One-word fragments get no useful tags ("vegetarian." is a proper noun): the word
    # class decides first.
    if word in DIET or word in MOODS or word == "allergic":
        return f"I'm {rest}"
    if word in LIKE | DISLIKE | HOME_IN | {"work", "do", "don't", "dont", "never", "cant"}:
        return f"I {rest}"
    if word == "no" or (first.like_num and len(words_) > 1 and words_[1].tag_ == "NNS"):
        return f"I have {rest}"
    if word in ("married", "engaged", "divorced", "single"):
        return f"I'm {rest}"
    head = words_[: next((i for i, t in enumerate(words_) if t.lower_ in ("fan", *JOBS)),
                         len(words_)) + 1]
    # The trade must be what the fragment is ("ship electrician."), not whose it is
    # ("Doctor's orders.").
    if (head[-1].lower_ in JOBS or head[-1].lower_ == "fan") and len(head) <= 3 \
            and head[-1].i == sentence.root.i:
        return f"I'm {with_article(rest)}"  # "ship electrician.", "Lechia fan."
    if word in PETS:
        return f"I have a {rest}"
    if first.tag_ in ("VB", "VBP") and first.text[:1].isupper() and first.lower_ == \
            first.lemma_.lower() and not past_form(first.text):
        # "Write a poem about ...", "Give me 5 facts": a capitalised bare verb opening the
        # sentence is an order to the assistant, not a dropped "I" (in the labelled chat
        # messages, 21 of 27 such sentences stated nothing; the kept ones were requests
        # about replies, which the request model reads, and past forms: "Won the final")
        return None
    if first.tag_ in ("VB", "VBP") and any(
            c.dep_ in ("dobj", "dative", "iobj") and c.lower_ in ("me", "us")
            for c in first.children):
        return None  # "give me a packing list": an order, which an "I" would make odd
    if first.tag_ in ("VB", "VBP", "VBD", "MD"):
        return f"I {rest}"
    if first.tag_ == "VBN":
        return f"I've {rest}"
    if first.tag_ == "VBG" or first.pos_ in ("ADJ", "ADP") or first.lower_ in (
            "a", "an", "total", "huge", "big"):
        root = sentence.root
        if root.pos_ == "NOUN" and entities(sentence.doc)[root.i].ent_type_ in ("DATE", "TIME"):
            return None  # "Big week for the whānau!", "long day": of the time, not of them
        return f"I'm {rest}"
    return None


def fragment(sentence: Span, at: datetime) -> list[Op]:
    """"dentist appt tomorrow at 3": an appointment said without a verb."""
    root = sentence.root
    verbal = root.pos_ in ("VERB", "AUX") and root.lemma_.lower() not in EVENTS
    event = None if verbal else next((
        t for t in sentence if t.lemma_.lower() in EVENTS and t.pos_ in ("NOUN", "PROPN")
        and t.dep_ != "compound" and not any(a.pos_ in ("VERB", "AUX") for a in t.ancestors)),
        None)
    found = plan_due(sentence.text, at)
    inside = event is None
    if inside:
        # "..., so vet on tuesday about that": a verbless clause of its own in a longer
        # sentence; its day is read from its own words, not the sentence's.
        event = next((t for t in sentence if t.lemma_.lower() in EVENTS and t.pos_ == "NOUN"
                      and t.dep_ in ("advcl", "parataxis", "conj")
                      and t.head.pos_ in ("VERB", "AUX")
                      and not any(w.pos_ in ("VERB", "AUX") for w in t.subtree)), None)
        found = None if event is None else plan_due(
            " ".join(w.text for w in event.subtree), at)
    # "Long shift at the hospital today" tells of the day; only a day ahead is a plan.
    if event is None or found is None or found.when.date() <= at.date():
        return []
    what = words([t for t in event.subtree if t.pos_ in ("NOUN", "PROPN", "ADJ")
                  and t.i <= event.i])
    if inside and len(what.split()) < 2:
        # "vet" alone says too little: "vet on tuesday about that", without the "so"
        what = words([t for t in event.subtree if t.i >= event.i
                      or t.pos_ in ("NOUN", "PROPN", "ADJ")])
    return [proposal(MemoryType.open_loop, f"Has {what}", salience=0.7, due=found.when)]


_HOMES = frozenset({"flat", "house", "apartment", "place", "home", "condo", "bungalow"})


def new_home(sentence: Span, at: datetime) -> list[Op]:
    """"GOT THE KEYS, new flat in leeds is officially ours": a move said by the new place
    (not a month: "I got a new flat in March")."""
    for tok in sentence:
        if tok.lemma_.lower() in _HOMES and any(
                t.lower_ in ("new", "first") for t in tok.children) and not _to_come(
                    tok, sentence, at):
            where = next((p for p in tok.children if p.dep_ == "prep" and p.lower_ == "in"),
                         None)
            place = next((t for t in where.children if t.dep_ == "pobj"), None) if where else None
            if place is not None and not (place.like_num or entities(sentence.doc)[
                    place.i].ent_type_ in ("DATE", "TIME")):
                return [proposal(MemoryType.profile, f"Lives in {words(list(place.subtree))}",
                                 slot="home", salience=0.8)]
    return []


def _to_come(tok: Token, sentence: Span, at: datetime) -> bool:
    """Whether a word is said of what is to come: its sentence names a day ahead ("I'm
    moving to a new flat in Hove in 2 weeks"), or a verb above it is under a modal or "going
    to" ("we'll get a new place in Leeds"); not "loving my new flat in Leeds"."""
    if day_ahead(sentence.text, at) is not None:
        return True
    verbs = [a for a in tok.ancestors if a.pos_ in ("VERB", "AUX")]
    return any(c.dep_ == "aux" and c.tag_ == "MD" for v in verbs for c in v.children) or any(
        v.lemma_ == "go" and v.tag_ == "VBG" and any(c.dep_ == "xcomp" for c in v.children)
        for v in verbs)


# What an allergy sends one to: "shellfish = hospital for me", "nuts = epipen".
_EMERGENCY = frozenset({"hospital", "a&e", "er", "epipen", "anaphylaxis", "ambulance"})


def allergy(sentence: Span) -> list[Op]:
    """"shellfish = hospital for me": a thing equated with an emergency is an allergy."""
    sign = next((t for t in sentence if t.text in ("=", "==", "->", "equals")), None)
    if sign is None or not any(t.lower_ in _EMERGENCY for t in sentence if t.i > sign.i):
        return []
    thing: list[Token] = []
    for tok in reversed(sentence.doc[sentence.start: sign.i]):
        if tok.is_punct or tok.lower_ in OPENERS:
            break
        thing.insert(0, tok)
    what = words(thing)
    if not what or len(thing) > 4 or any(t.pos_ == "PRON" for t in thing):
        return []
    return [proposal(MemoryType.profile, f"Is allergic to {what}",
                     slot=f"allergy:{what.lower()}", salience=0.9, confidence=0.9)]


def pet_in_brackets(sentence: Span) -> list[Op]:
    """"the cat (Pixel) has decided to pee on everything": a pet named in brackets."""
    for tok in sentence:
        close = tok.i + 3
        if tok.lower_ in PETS and close < sentence.end and sentence.doc[tok.i + 1].text == "(" \
                and sentence.doc[close].text == ")" and sentence.doc[tok.i + 2].pos_ == "PROPN" \
                and not any(c.dep_ == "poss" and c.lower_ not in ("my", "our")
                            for c in tok.children):
            name = sentence.doc[tok.i + 2].text
            return [proposal(MemoryType.profile, f"Has a {tok.lower_} named {name}",
                             slot=f"pet:{name.lower()}", salience=0.7)]
    return []


def listed(sentence: Span, at: datetime) -> list[Op]:
    """"three things this week I can't forget: dentist tomorrow at 9, pay the council tax,
    and mum's birthday on Sunday, need a card": a list after a colon in which two items or
    more name a day ahead is a list of things to do, each an open loop of its own, due on
    the day it names, if it names one; so is one after a time not past ("three things this
    week: dentist, rent, mum's birthday"). The item an "and" opens is the last: what follows
    it says more of it ("need a card"). Any other list is left whole."""
    colon = next((t for t in sentence if t.text == ":"), None)
    if colon is None or sentence.text.rstrip().endswith("?"):
        return []
    items: list[list[Token]] = [[]]
    last = False  # an "and" opened the item being read
    for tok in sentence.doc[colon.i + 1: sentence.end]:
        if tok.text in (",", ";"):
            if last:
                items[-1].append(tok)
            else:
                items.append([])
        elif tok.dep_ == "cc" and not items[-1]:
            last = True  # (the "and" itself is no part of the item)
        elif not tok.is_punct:
            items[-1].append(tok)
    due = [day_ahead(" ".join(t.text for t in item), at) for item in items]
    if sum(when is not None for when in due) < 2:
        # "three things this week: dentist, rent, mum's birthday": a time before the colon
        # that is not past (this week's Monday is "this week") makes every item a thing
        # to do, due then
        lead = plan_due(sentence.doc[sentence.start: colon.i].text, at)
        monday = at.date() - timedelta(days=at.weekday())
        if lead is None or lead.when.date() < monday or sum(bool(i) for i in items) < 2:
            return []
        # ("this week", "next week" are due by that week's Sunday)
        then = lead.when if "week" not in lead.text else lead.when + timedelta(
            days=6 - lead.when.weekday())
        due = [when or then for when in due]
    return [proposal(MemoryType.open_loop, cap(words(item)), salience=0.7, due=when)
            for item, when in zip(items, due, strict=True) if item]
