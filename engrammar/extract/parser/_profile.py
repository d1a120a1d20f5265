"""Who the user is, read off a clause: copular statements ("I'm a nurse", "I'm from Madrid",
"I'm vegan", "I'm 34", "I'm best man"), jobs ("I teach year 4", "got the job at Google"),
and what they have ("a cat named Miso", "two kids", "a dentist appointment on Friday").
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import TYPE_CHECKING

from engrammar.extract.parser._attributes import MEANING, complement, lasting
from engrammar.extract.parser._clauses import Clause
from engrammar.extract.parser._dates import named_days
from engrammar.extract.parser._events import feeling, plan_due
from engrammar.extract.parser._jobs import is_profession, known_trade
from engrammar.extract.parser._lexicon import DIET, EVENTS, MOODS, PETS, kin
from engrammar.extract.parser._phrases import (
    child,
    phrase,
    predicate,
    prep_object,
    proper,
    trim,
    with_article,
    words,
)
from engrammar.extract.parser._requests import proposal
from engrammar.models import MemoryType, Op

if TYPE_CHECKING:
    from spacy.tokens import Token

# Nouns that say what a person is like: "a night owl", "an introvert", "best man".
_TRAITS = frozenset({"owl", "introvert", "extrovert", "bird", "person", "man", "woman",
                     "vegan", "geek", "nerd", "homebody", "workaholic", "insomniac"})
_NOT_TRAITS = frozenset({"bit", "lot", "mess", "fan", "person"})
# What one has or has not, as a fact of its own: "no kids", "2 cats", "I don't have pets".
OWNED = frozenset({"pet", "kid", "child", "car", "cat", "dog", "sibling", "license",
                    "licence", "tv", "job"})


def being(c: Clause) -> list[Op]:
    """Copular statements: "I'm a nurse", "I'm from Madrid", "I'm vegan", "I'm 34"."""
    head, attr, subject = c.head, child(c.head, "attr"), c.subject
    value = predicate(head)
    if subject is not None and subject.lower_ not in ("i", "we") and value:
        if subject.lemma_ == "name" and value[:1].isupper():
            # (the name is its capitalised words: "my name is Kwame btw" is Kwame)
            words_ = value.split()
            name = " ".join(words_[:next((n for n, w in enumerate(words_)
                                          if not w[:1].isupper()), len(words_))])
            return [proposal(MemoryType.profile, f"Name is {name.rstrip(',;')}",
                             slot="name", salience=0.9)]
        kind = next((ch for ch in subject.children if ch.lower_ in ("favorite", "favourite")),
                    None)
        if kind is not None:
            topic = words([t for t in subject.subtree if t.i > kind.i])
            return [proposal(MemoryType.preference, f"Favorite {topic} is {value}",
                         slot=f"favorite:{topic.lower()}", salience=0.6)]
        if attr is not None and c.tense == "present" and not c.modals \
                and _mine_not_kin(subject) and is_profession(attr) \
                and not any(t.dep_ in ("det", "poss") for t in attr.children):
            # "my job is icu nurse", "my current role is staff nurse": what they work as,
            # said of a thing of theirs that is no person ("my sister is a nurse" is hers)
            # and no other job ("my dream job is vet", "my old job was teacher", "my
            # character is a wizard")
            return [proposal(MemoryType.profile, f"Works as {with_article(phrase(attr))}",
                             slot="job", salience=0.8)]
        return []
    place = prep_object(head, "in")
    if place is not None and any(t.dep_ == "det" and t.lower_ in ("a", "an")
                                 for t in place.children) \
            and place.lemma_.lower() not in EVENTS:
        # "we're in a little two-up two-down in Bedminster now": the named place a home
        # is in (not "in a meeting in Leeds", where they are for an hour, nor "in the
        # office in Dublin", a place they go)
        named = [prep_object(place, "in"), *(child(p, "pobj") for p in head.children
                                             if p.dep_ == "prep" and p.lower_ == "in"
                                             and p.i > place.i)]
        place = next((t for t in named if t is not None and t.pos_ == "PROPN"), None)
    if place is not None and place.pos_ in ("PROPN", "NOUN") and not any(
            t.dep_ == "det" for t in place.children) and any(
            t.lower_ in ("now", "currently", "still") for t in head.children):
        # "now I'm in Rome": where they are now, said against where they were.
        return [proposal(MemoryType.profile, f"Lives in {phrase(place)}", slot="home",
                         salience=0.8)]
    if attr is not None and attr.tag_ in ("NNP", "NN") and attr.text[:1].isupper() \
            and not attr.lower_.endswith(("ian", "ese", "ish", "can")) and not any(
            t.dep_ == "det" for t in attr.children) and subject is not None \
            and subject.lower_ == "i" and len(c.tokens()) <= 5 and not (
                attr.i + 1 < len(attr.doc) and attr.doc[attr.i + 1].like_num):
        # (not a kind and its number, "I'm Type 1")
        return [proposal(MemoryType.profile, f"Name is {attr.text}", slot="name",
                         salience=0.9)]  # "oh I'm Ola btw"
    diet = next((t for t in _own_rights(head) if t.lower_ in DIET), None)
    if diet is not None and not c.negated:
        return [proposal(MemoryType.preference, f"Is {diet.lower_}", slot="diet",
                         salience=0.8)]
    team = prep_object(head, "on")
    if team is not None and team.lemma_ in ("team", "squad", "crew", "staff", "board"):
        return [proposal(MemoryType.profile, f"Works on {phrase(team)}", slot="job",
                         salience=0.8)]  # "I'm on the payments team at Revolut"
    if (origin := prep_object(head, "from")) is not None and origin.head.i > head.i \
            and not named_days(phrase(origin)):
        # (where one is from follows the verb: "From this month I am a driving instructor"
        # says when, and nothing of where)
        return [proposal(MemoryType.profile, f"Is from {phrase(origin)}", slot="origin",
                     salience=0.7)]
    if (base := child(head, "acomp", "prep")) is not None and base.lower_ == "based":
        place = prep_object(base, "in")
        if place is not None:
            return [proposal(MemoryType.profile, f"Is based in {phrase(place)}", slot="home",
                         salience=0.8)]
    if (comp := child(head, "acomp")) is not None and (
            found := _by_complement(c, comp)) is not None:
        return found
    if attr is not None and (found := _by_attribute(c, attr)) is not None:
        return found
    trade = next((t for t in _own_rights(head) if t.pos_ == "NOUN"
                  and is_profession(t) and any(d.lower_ in ("a", "an") for d in t.children)),
                 None) if subject is not None and subject.lower_ == "i" else None
    if trade is not None:  # "(I'm a radiographer btw)", however the words were attached
        return [proposal(MemoryType.profile, f"Works as a {trade.lower_}", slot="job",
                         salience=0.8)]
    into = prep_object(head, "into")
    if into is not None and into.pos_ != "PRON":
        return [proposal(MemoryType.preference, f"Likes {trim(phrase(into))}",
                         salience=0.55)]
    return lasting_state(c)


def _own_rights(head: Token) -> list[Token]:
    """The words after a verb that are its clause's, however they were attached: not a
    clause joined to it ("I am 31 years old and I'm a designer": the designer is the
    second clause's)."""
    return [t for r in head.rights if r.dep_ not in _JOINED for t in r.subtree]


_JOINED = frozenset({"conj", "cc", "ccomp", "advcl", "parataxis", "relcl"})


def lasting_state(c: Clause) -> list[Op]:
    """"im asthmatic", "I'm bipolar, for context", "I'm left handed": what the user is,
    by what the words mean (``_attributes``), where no reading knew them. An adjective or a
    participle only: what they are by a noun, the readings know (a job, a trait); "an
    auntie x2", "long shift at the hospital" say the day's news."""
    said = complement(c.head, ("acomp",))
    if said is None or c.negated or c.modals or c.tense == "past" or not lasting(said):
        return []
    return [proposal(MemoryType.profile, f"Is {trim(said)}", salience=0.7)
            .model_copy(update={"reason": MEANING})]


def _by_complement(c: Clause, comp: Token) -> list[Op] | None:
    """"I'm allergic to ...", "married to ...", "vegan", "retired", a mood; None when
    the complement says none of these."""
    word = comp.lemma_.lower()
    if word == "allergic":
        what = trim(predicate(comp).removeprefix("to "))
        if what and (more := _coordinated_too_high(c, comp)) is not None:
            # "allergic to nuts and shellfish": the tagger took "shellfish" for a verb and
            # hung it on the copula; it is the allergy's second thing
            what = f"{what} and {more.text}"
        if what:
            return [proposal(MemoryType.profile, f"Is allergic to {what}",
                             slot=f"allergy:{what.lower()}", salience=0.9,
                             confidence=0.9)]
    if word in ("married", "engaged") and (whom := prep_object(comp, "to")) is not None:
        return [proposal(MemoryType.profile, f"Is {word} to {phrase(whom)}",
                         slot="family:spouse", salience=0.8)]
    if word == "intolerant":
        return [proposal(MemoryType.preference, f"Is {phrase(comp)}", slot="diet",
                         salience=0.8)]
    if word in DIET or comp.lower_ in DIET:
        return [proposal(MemoryType.preference, f"Is {comp.lower_}", slot="diet",
                         salience=0.8)]
    if word in ("unemployed", "retired", "self-employed", "freelance"):
        return [proposal(MemoryType.profile, f"Is {comp.lower_}", slot="job",
                         salience=0.8)]
    if comp.lower_ in MOODS:
        return feeling(c.head, comp)
    if word == "based" and (place := prep_object(comp, "in")) is not None:
        return [proposal(MemoryType.profile, f"Is based in {phrase(place)}", slot="home",
                     salience=0.8)]
    return None


def _coordinated_too_high(c: Clause, comp: Token) -> Token | None:
    """A bare word after the complement that the parse joined to the clause's head with
    "and" or "or" (it has nothing of its own: no subject, object or particle)."""
    return next((t for t in c.head.children if t.dep_ == "conj" and t.i > comp.i
                 and t.n_lefts + t.n_rights == 0
                 and any(k.dep_ == "cc" and comp.i < k.i < t.i for k in c.head.children)),
                None)


def _by_attribute(c: Clause, attr: Token) -> list[Op] | None:
    """"I'm a nurse", "I'm 34", "a total night owl", "a huge fan of ..."; None when the
    attribute says none of these."""
    head = c.head
    if attr.lemma_.lower() in DIET:
        return [proposal(MemoryType.preference, f"Is {phrase(attr)}", slot="diet",
                     salience=0.8)]
    if attr.like_num and attr.lower_ != "one":  # ("nice one", "the blue one": a pronoun)
        if c.tense == "past":
            return []  # "when I was 19": an age they had, not theirs now
        if (c.subject is not None and c.subject.lower_ == "we") or any(
                t.dep_ == "quantmod" and t.lower_ == "up" for t in attr.children):
            return []  # a count, "we're up to 300 finds": an age is one person's
        return [proposal(MemoryType.profile, f"Is {attr.text} years old", slot="age",
                     salience=0.7)]
    if is_profession(attr):
        role = phrase(attr, frozenset({"advmod", "poss"}))
        # "a line cook at a brewpub here in Albuquerque": a place hung on an adverb stays
        # (or on the copula: "I'm a nurse here in Dubai and ...")
        place = next((t for t in (*attr.subtree, *head.children) if t.dep_ == "advmod" and any(
            p.dep_ == "prep" and any(o.pos_ == "PROPN" for o in p.children)
            for p in t.children)), None)
        if place is not None:
            role = f"{role} {phrase(place)}"
        if any(t.dep_ == "poss" and t.lower_ in ("their", "its") for t in attr.children):
            # "Ocado said yes!!! I'm their new warehouse supervisor"
            org = next((t for t in c.sentence.doc[: c.sentence.start + 40]
                        if t.pos_ == "PROPN" and t.i < head.i), None)
            if org is not None:
                return [proposal(MemoryType.profile, f"Works as {role} at {org.text}",
                                 slot="job", salience=0.8)]
        job = proposal(MemoryType.profile, f"Works as {role}", slot="job", salience=0.8)
        # a trade by the words' meaning, not the list's: as an answer read again with an
        # "I'm" put back, the workplace it may name is no trade ("same call centre")
        return [job if known_trade(attr) else job.model_copy(update={"reason": MEANING})]
    if attr.lemma_.lower() in _TRAITS or (
            any(t.lower_ in ("best", "night", "morning", "only", "middle", "oldest",
                             "youngest", "eldest", "big") for t in attr.children)
            and attr.lemma_.lower() not in _NOT_TRAITS):
        # "total night owl", "I'm best man", "I'm the eldest": what the user is
        return [proposal(MemoryType.profile, f"Is {trim(phrase(attr).split(',')[0])}",
                         salience=0.6)]
    if attr.lemma_.lower() == "fan":
        fan = prep_object(attr, "of")
        names = [t for t in attr.children if t.dep_ == "compound"]
        what = phrase(fan) if fan is not None else " ".join(
            words(list(t.subtree)) for t in names)
        if what:
            return [proposal(MemoryType.preference, f"Likes {what}", salience=0.55)]
    return None


def job(c: Clause) -> list[Op]:
    parts = []
    for prep in c.head.children:
        if prep.dep_ == "prep" and prep.lower_ in ("as", "at", "in", "for") and not (
                prep.lower_ == "for" and c.lemma == "teach"):
            obj = child(prep, "pobj")
            if obj is not None and obj.pos_ != "PRON" and obj.lemma_ not in ("home", "moment"):
                # (a name beside it stays: "in Infosys, Chennai"; what else is said of it
                # goes: "at Tesco, the big one on the ring road")
                named = "".join(f", {phrase(t)}" for t in obj.children if t.dep_ == "appos"
                                and all(w.pos_ == "PROPN" for w in t.subtree))
                parts.append(f"{prep.lower_} {phrase(obj, frozenset({'appos', 'punct'}))}{named}")
    # ("I've worked at Tesco for 5 years" still does)
    past = c.tense == "past" and not any(
        a.dep_ == "aux" and a.lemma_.lower() == "have" for a in c.head.children)
    if any(o.dep_ in ("dobj", "dative") and o.lower_.endswith(("self", "selves"))
           for o in c.head.children):
        return []  # "taught myself guitar": learnt, no job
    verb = ({"work": "Worked", "teach": "Taught", "study": "Studied"} if past else
            {"work": "Works", "teach": "Teaches", "study": "Studies"})[c.lemma]
    obj = child(c.head, "dobj")
    if obj is not None and obj.pos_ != "PRON":
        parts.insert(0, phrase(obj))
    if not parts:
        return []
    said = f"{verb} {' '.join(parts[:2])}"
    if c.lemma == "teach":
        said = f"{'Worked' if past else 'Works'} as a teacher: {said[0].lower()}{said[1:]}"
    if past:
        # What they did for years is who they were, not the job they hold: no slot for a
        # later job or a retirement to replace.
        span = _span(c)
        return [proposal(MemoryType.profile, said if span in said else f"{said} {span}",
                         salience=0.7)]
    slot = "study" if c.lemma == "study" else "job"
    return [proposal(MemoryType.profile, said, slot=slot, salience=0.8)]


def years_long(c: Clause) -> bool:
    """Whether a clause says it went on for years: "for 38 years", "for two decades"."""
    return _span(c) != ""


def _span(c: Clause) -> str:
    """The clause's "for <so many> years" (or decades), or its "<so many> years" alone
    ("worked in the mines 22 year"), as said; "" when it has none."""
    for prep in c.head.children:
        if prep.dep_ == "prep" and prep.lower_ == "for" and (
                obj := child(prep, "pobj")) is not None and _years(obj):
            return phrase(prep)
    # (the parser may hang the bare one on an adverb of the verb's: "... 22 year over in")
    for near in (c.head, *(t for t in c.head.children if t.dep_ == "advmod")):
        for obj in near.children:
            # (not when: "2 years ago")
            if obj.dep_ == "npadvmod" and _years(obj) and near.lower_ != "ago" and not any(
                    t.lower_ == "ago" for t in obj.children):
                return phrase(obj)
    return ""


def _years(noun: Token) -> bool:
    """Whether a noun counts years: "38 years", "two decades", "many years"."""
    return noun.lemma_ in ("year", "yr", "decade") and any(
        t.like_num or t.lower_ in ("many", "a") for t in noun.children)


def hired(c: Clause) -> list[Op]:
    """"Got the job at Google", "I was hired as a nurse", "landed a role at Shopify"."""
    places = [c.head, *[t for t in c.head.children if t.dep_ == "dobj"]]
    found = [(prep, obj) for prep in ("as", "at", "by", "with") for tok in places
             if (obj := prep_object(tok, prep)) is not None]
    if not found:
        return []
    prep, obj = found[0]
    said = f"Works {'as' if prep == 'as' else 'at'} {phrase(obj)}"
    org = next((o for p, o in found[1:] if p != "as"), None) or next(
        (t for t in c.head.children if t.dep_ == "dobj" and t.pos_ == "PROPN"), None)
    if prep == "as" and org is not None:
        # "started with the council as a bin man in june": both, the time aside
        said = f"Works as {phrase(obj, frozenset({'prep'}))} at {phrase(org)}"
    return [proposal(MemoryType.profile, said, slot="job", salience=0.8)]


def having(c: Clause, at: datetime) -> list[Op]:
    """"I have a cat named Miso", "I've got a dentist appointment on Friday"."""
    obj = child(c.head, "dobj")
    if obj is None:
        return []
    noun = obj.lemma_.lower()
    if any(t.lower_ == "no" for t in obj.children) and noun in OWNED:
        return [proposal(MemoryType.profile, f"Does not have {obj.lower_}",
                         slot=f"has:{noun}", salience=0.7)]
    if noun in OWNED and any(t.like_num for t in obj.children):
        return [proposal(MemoryType.profile, f"Has {phrase(obj)}", salience=0.65)]
    if noun in PETS:
        name = name_of(obj)
        if name:
            return [proposal(MemoryType.profile, f"Has a {obj.lower_} named {name}",
                         slot=f"pet:{name.lower()}", salience=0.7)]
        said = _described(obj)  # ("a cat", "two cats", "cats": its own determiner, if any)
        if obj.tag_ != "NNS" and not any(t.dep_ in ("det", "poss", "nummod")
                                         for t in obj.children):
            said = f"a {said}"
        return [proposal(MemoryType.profile, f"Has {said}", salience=0.6)]
    if noun in EVENTS:
        found = plan_due(c.sentence.text, at)
        return [proposal(MemoryType.open_loop, f"Has {phrase(obj)}", salience=0.7,
                     due=found.when if found else None)]
    if kin(noun):
        name = name_of(obj)
        if name and obj.tag_ == "NNS":
            # "three daughters, Ama 9, Efua 6 and Esi 2": more than one, each named; the phrase
            # keeps them all (one name in a slot would drop the rest)
            return [proposal(MemoryType.profile, f"Has {phrase(obj)}", salience=0.8)]
        if name:
            return [proposal(MemoryType.profile, f"Has a {obj.lower_} named {name}",
                         slot=f"family:{obj.lower_}", salience=0.8)]
    core = " ".join(t.text for t in obj.subtree if t.i <= obj.i)  # ("a question", not
    # what it is about: "a question about my tax return")
    if c.lemma in ("have", "get") and obj.pos_ in ("NOUN", "PROPN") and not (
            c.negated or c.modals) and lasting(core):
        # "I have asthma", "got a bad knee", "I've got tinnitus": a condition had, by what
        # the words mean (``_attributes``); "got a headache", "I have a question" are not
        return [proposal(MemoryType.profile, f"Has {_described(obj)}", salience=0.7)
                .model_copy(update={"reason": MEANING})]
    return []


def _described(obj: Token) -> str:
    """What is had, with what a relative clause in the present says of it: "two girls who
    are mad into camogie", "a dog that hates the postman" (not what was: "a car that I
    bought in 2019" is the car)."""
    present = ("VBZ", "VBP")
    said = [r for r in obj.children if r.dep_ == "relcl" and r.i > obj.i and (
        r.tag_ in present or any(a.dep_ == "aux" and a.tag_ in present
                                 for a in r.children))]
    if not said:
        return phrase(obj)
    # (up to a mark: "a staffie who hates the postman, any way to train that out of him")
    end = next((t.i for t in obj.doc[said[0].i: said[0].sent.end] if t.is_punct), None)
    return f"{phrase(obj)} {phrase(said[0], before=end)}"


_POSSESSIVE = re.compile(r"\s*['’]s$")


def name_of(noun: Token) -> str | None:
    """"a cat named Miso", "my dog Rex", "a sister, Mia"."""
    for kid in noun.children:
        if kid.dep_ in ("acl", "relcl") and kid.lemma_ in ("name", "call"):
            return proper(child(kid, "oprd", "attr", "dobj", "xcomp", "npadvmod"))
        if kid.dep_ in ("appos", "npadvmod", "compound") and kid.pos_ == "PROPN" \
                and kid.i > noun.i:
            # (a "'s" the parser hung on the name is no part of it: "my wife Aroha's
            # turning 40" is her "is")
            name = proper(kid)
            return None if name is None else _POSSESSIVE.sub("", name)
    if noun.dep_ == "compound" and noun.head.pos_ == "PROPN" and noun.head.i > noun.i:
        # "My granddaughter Siobhán, ...": the name is the head, the words after the noun
        return " ".join(t.text for t in noun.doc[noun.i + 1: noun.head.i + 1])
    return None


def _mine_not_kin(subject: Token) -> bool:
    """Whether ``subject`` is a thing of the speaker's ("my job", "my current role"), no
    person of theirs ("my sister", "my flatmate") and no other one ("my dream job")."""
    return subject.pos_ == "NOUN" and not kin(subject.lower_) and any(
        t.dep_ == "poss" and t.lower_ == "my" for t in subject.children) and not any(
        t.dep_ in ("amod", "compound") and t.lower_ != "current" for t in subject.children)
