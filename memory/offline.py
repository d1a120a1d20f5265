"""The offline extractor: ops from a dependency parse of what the user said, no model calls.

Each clause (memory.clauses) that is the user's own, or a relative's, and is stated as a fact
(not asked, imagined, quoted or denied) is read by its predicate: the head's lemma and the
grammatical roles around it. "I relocated to Porto", "we moved to Porto last month" and
"I live in Porto now" all reach "Lives in Porto" because the lemma and the preposition's
object say so, whatever the wording around them. Requests (forget, never mention, keep
answers short) are imperatives or "you" clauses. Like the LLM extractor it only proposes: the
write gate decides duplicates, updates, contradictions and which loop a resolution closes.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from memory.clauses import RELATIONS, SPEECH, Clause, Owner, _is_clause, analyse
from memory.extractor import Extraction
from memory.lexicon import (
    BOUNDARY,
    CLOSED_STATES,
    DIET,
    DISLIKE,
    EVENTS,
    FORGET,
    HOME_IN,
    HOME_TO,
    LIKE,
    MOODS,
    PETS,
    STATIVE,
    is_profession,
)
from memory.models import Memory, MemoryType, Message, Op, OpKind, Role, Scope, Surface
from memory.nlp import parse
from memory.when import Found, past_day, plan_due

if TYPE_CHECKING:
    from spacy.tokens import Span, Token

_THIRD = {"i": "they", "me": "them", "my": "their", "mine": "theirs", "myself": "themself",
          "am": "are", "'m": "are", "i'm": "they're", "we": "they", "our": "their",
          "us": "them"}
# Parts of a past clause that are no part of what was done: who, when, how surely.
_NOT_EVENT = frozenset({"nsubj", "nsubjpass", "advmod", "npadvmod", "aux", "auxpass", "punct",
                        "mark", "cc", "intj", "discourse", "neg"})
_HEDGES = frozenset({"finally", "already", "just", "actually", "also", "really", "even"})
# Requests inside these take their clause along: "remember that I'm allergic to peanuts".
_CONSUMING = frozenset({"remember", "forget", "mention", "say", "tell"})
# Longer than this, a sentence is no single fact: it is passed over and stays in the log.
MAX_SENTENCE_CHARS = 1000


def words(tokens: Sequence[Token]) -> str:
    """The tokens as text, first person turned third: "my passport" -> "their passport"."""
    out = []
    for tok in tokens:
        word = _THIRD.get(tok.lower_, tok.text) if tok.pos_ in ("PRON", "AUX") else tok.text
        if word != tok.text and tok.text.startswith("'") and out:
            word = " " + word  # "I'm" -> "they are", not "theyare"
        out.append(word + tok.whitespace_)
    return "".join(out).strip(" .,!?;:-")


def predicate(head: Token) -> str:
    """What follows the copula or verb inside its own clause: "is Spirited Away" ->
    "Spirited Away", however the parser attached the words."""
    nested = [c for c in head.children if c.dep_ in ("conj", "ccomp", "advcl", "parataxis")
              and c.i > head.i and _is_clause(c)]
    cut = min((min(t.i for t in n.subtree) for n in nested), default=head.right_edge.i + 1)
    tokens = [t for t in head.subtree if head.i < t.i < cut]
    while tokens and (tokens[-1].dep_ in ("punct", "cc") or tokens[-1].pos_ == "PUNCT"):
        tokens.pop()
    return words(tokens)


def phrase(tok: Token, skip: frozenset[str] = frozenset()) -> str:
    """``tok``'s subtree as text, leaving out relative clauses and the deps in ``skip``."""
    keep = [t for t in tok.subtree if not any(a.dep_ in ("relcl", *skip) and a is not tok
                                              for a in (t, *t.ancestors) if (a.i >= tok.i
                                              and tok in a.ancestors) or a is t)]
    return words(keep)


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _child(tok: Token, *deps: str) -> Token | None:
    return next((c for c in tok.children if c.dep_ in deps), None)


def _prep_object(tok: Token, *preps: str) -> Token | None:
    for child in tok.children:
        if child.dep_ in ("prep", "dative") and child.lower_ in preps:
            return _child(child, "pobj")
    return None


def _proper(tok: Token | None) -> str | None:
    """A name: the proper-noun run at ``tok`` ("Art Gallery of Ontario" kept whole)."""
    if tok is None or (tok.pos_ != "PROPN" and not tok.text[:1].isupper()):
        return None
    return phrase(tok, frozenset({"punct", "cc", "conj"}))


class ParserExtractor:
    """Deterministic and offline, on spaCy's parse: the default when no model is set."""

    name = "parser"

    def extract(self, scope: Scope, messages: Sequence[Message], memories: Sequence[Memory],
                now: datetime) -> Extraction:
        said = [m for m in messages if m.role is Role.user]
        ops: list[Op] = []
        for msg, doc in zip(said, parse([m.content for m in said]), strict=True):
            found: list[Op] = []
            for sentence in doc.sents:
                if len(sentence.text) <= MAX_SENTENCE_CHARS:
                    found.extend(names(sentence))
            for clause in analyse(doc):
                if len(clause.sentence.text) <= MAX_SENTENCE_CHARS:
                    found.extend(read(clause, msg.at))
            ops.extend(op.model_copy(update={"evidence": [msg.id]}) for op in found)
        return Extraction(ops=_unique(ops), handles={})


_NAMING = frozenset({"is", "'s", "was", "called", "named", "name"})


def names(sentence: Span) -> list[Op]:
    """Names given to the user or a relative: "my name's Dana", "my sister is called Mia and
    my brother is named Leo". Read along the tokens from the possessed noun, since the small
    model often misparses a name it does not know (as an adjective, or the root)."""
    out: list[Op] = []
    for tok in sentence:
        mine = any(c.dep_ == "poss" and c.lower_ == "my" for c in tok.children)
        relation = tok.lower_ if tok.lower_ in RELATIONS and mine else None
        if tok.lemma_ == "name" and not mine:
            owner = next((c for c in tok.children if c.dep_ == "poss"), None)
            if owner is None or owner.lower_ not in RELATIONS or not any(
                    c.lower_ == "my" for c in owner.children):
                continue
            relation = owner.lower_
        elif tok.lemma_ != "name" and relation is None:
            continue
        between = list(sentence.doc[tok.i + 1: min(tok.i + 4, sentence.end)])
        gap = 0
        while gap < len(between) and between[gap].lower_ in _NAMING:
            gap += 1
        said = {t.lower_ for t in between[:gap]}
        if gap == len(between) or not (said & {"called", "named"} or (tok.lemma_ == "name"
                                       and said & {"is", "'s", "was"})):
            continue
        first = between[gap]
        if not first.text[:1].isupper() or first.lower_ == "i":
            continue
        run = [first]
        for nxt in sentence.doc[first.i + 1: sentence.end]:
            if nxt.pos_ != "PROPN" or not nxt.text[:1].isupper():
                break
            run.append(nxt)
        name = " ".join(t.text for t in run)
        if relation is None:
            out.append(_add(MemoryType.profile, f"Name is {name}", slot="name", salience=0.9))
        else:
            out.append(_add(MemoryType.profile, f"Has a {relation} named {name}",
                            slot=f"family:{relation}", salience=0.8))
    return out


def _unique(ops: list[Op]) -> list[Op]:
    seen: set[tuple[str, str, str]] = set()
    out = []
    for op in ops:
        key = (op.op.value, op.content.lower(), ",".join(map(str, op.evidence)))
        if key not in seen:
            seen.add(key)
            out.append(op)
    return out


def _add(kind: MemoryType, content: str, *, slot: str | None = None, salience: float = 0.6,
         confidence: float = 0.85, surface: Surface | None = None, pinned: bool = False,
         due: datetime | None = None) -> Op:
    return Op(op=OpKind.add, type=kind, content=content, slot=slot, salience=salience,
              confidence=confidence, surface=surface, pinned=pinned, due=due)


def read(c: Clause, at: datetime) -> list[Op]:
    """The ops one clause proposes, possibly none."""
    if c.head.dep_ in ("ccomp", "xcomp") and c.head.head.lemma_.lower() in _CONSUMING:
        return []
    if c.owner in (Owner.command, Owner.assistant):
        return request(c)
    if not c.factual:
        return []
    if c.owner is Owner.user:
        return boundary_wish(c) or user_fact(c, at)
    if c.owner is Owner.relative:
        return relative_fact(c, at)
    return resolved_thing(c)


def request(c: Clause) -> list[Op]:
    """What the user asks of the assistant: forget, never mention, remember, call me, style."""
    head, lemma = c.head, c.lemma
    if c.hypothetical or c.quoted:
        return []
    if lemma in FORGET and not c.negated:
        target = _child(head, "dobj") or _prep_object(head, "about")
        if target is None:
            return []
        return [Op(op=OpKind.forget, content=phrase(target), reason="user asked to forget")]
    if c.question:
        return []
    if (lemma in BOUNDARY and c.negated) or (lemma == "stop" and _child(head, "xcomp")):
        verb = _child(head, "xcomp") if lemma == "stop" else head
        assert verb is not None
        target = (_child(verb, "dobj") or _prep_object(verb, "about", "of", "up")
                  or (_child(verb, "prt") and _child(verb, "dobj")))
        if target is None:
            return []
        thing = phrase(target)
        if verb.lemma_ in ("bring", "remind"):
            return [_add(MemoryType.protocol, f"Does not want {thing} brought up",
                         surface=Surface.never, salience=0.9, confidence=0.95)]
        return [_add(MemoryType.protocol, f"Never mention {thing}", surface=Surface.avoid,
                     salience=0.95, confidence=0.95)]
    if lemma == "remember":
        fact = _child(head, "ccomp")
        if fact is not None:
            return [_add(MemoryType.profile, _cap(phrase(fact, frozenset({"mark"}))),
                         pinned=True, salience=0.9, confidence=0.9)]
    if lemma == "call" and any(c.lower_ == "me" for c in head.children):
        name = _proper(_child(head, "oprd", "attr", "xcomp", "npadvmod"))
        if name:
            return [_add(MemoryType.shared_lore, f"Likes to be called {name}", slot="nickname",
                         salience=0.7)]
    if lemma in ("keep", "make", "be"):
        obj = _child(head, "dobj")
        how = _child(head, "ccomp", "oprd", "acomp", "xcomp")
        if obj is not None and obj.lemma_ in ("answer", "reply", "response") and how:
            return [_add(MemoryType.protocol, f"Prefers {how.lower_} answers", slot="style",
                         salience=0.7)]
    return []


def boundary_wish(c: Clause) -> list[Op]:
    """"I don't want to talk about my ex", "I'd rather not discuss work": a boundary."""
    if c.action is None or c.action.lemma_ not in BOUNDARY or not (
            c.negated and c.lemma in ("want", "like", "prefer")):
        return []
    target = _child(c.action, "dobj") or _prep_object(c.action, "about")
    if target is None:
        return []
    return [_add(MemoryType.protocol, f"Never mention {phrase(target)}", surface=Surface.avoid,
                 salience=0.95, confidence=0.9)]


def user_fact(c: Clause, at: datetime) -> list[Op]:
    head, lemma = c.head, c.lemma
    if lemma in LIKE | DISLIKE or (lemma == "stand" and c.negated):
        return preference(c)
    if c.negated:
        if lemma in ("eat", "drink") and (obj := _child(head, "dobj")) is not None:
            return [_add(MemoryType.preference, f"Does not {lemma} {phrase(obj)}",
                         slot=f"diet:{obj.lemma_.lower()}", salience=0.7)]
        return []
    if c.action is not None and (c.tense != "past" or "promise" in c.modals):
        return plan(c, at)
    if lemma == "be":
        return being(c)
    if lemma == "feel":
        mood = _child(head, "acomp")
        if mood is not None and mood.lower_ in MOODS:
            return [_add(MemoryType.ephemeral, f"Feels {mood.lower_}", salience=0.3,
                         confidence=0.8)]
        return []
    if lemma in ("work", "teach") and c.tense != "past":
        return job(c)
    if lemma in HOME_IN and (place := _prep_object(head, "in")) is not None:
        return [_add(MemoryType.profile, f"Lives in {phrase(place)}", slot="home",
                     salience=0.8)]
    if lemma in HOME_TO and (place := _prep_object(head, "to")) is not None:
        return [_add(MemoryType.profile, f"Lives in {phrase(place)}", slot="home",
                     salience=0.8)]
    if lemma == "hire" and (place := _prep_object(head, "at", "by", "as")) is not None:
        return [_add(MemoryType.profile, f"Works at {phrase(place)}", slot="job",
                     salience=0.8)]
    if (lemma in ("have", "get", "adopt", "own") and c.tense != "past") or lemma == "adopt":
        return having(c, at)
    if lemma == "turn" and (num := _child(head, "dobj", "attr", "npadvmod")) is not None \
            and num.like_num:
        return [_add(MemoryType.profile, f"Is {num.text} years old", slot="age", salience=0.7)]
    if c.tense == "past" and lemma not in STATIVE:
        return happened(c, at)
    return []


def preference(c: Clause) -> list[Op]:
    head, lemma = c.head, c.lemma
    thing = _child(head, "dobj", "xcomp", "ccomp")
    if thing is None or thing.pos_ == "PRON" or thing.lower_ in ("idea", "one"):
        return []
    if any(t.lower_ in ("you", "your") for t in thing.subtree):
        return []  # "I love your answers": a reaction to the assistant, no preference
    dislikes = lemma in DISLIKE or c.negated or lemma == "stand"
    text = phrase(thing, frozenset({"advmod"})) if thing.pos_ != "VERB" else phrase(thing)
    for tail in (" anymore", " any more", " these days", " nowadays"):
        text = text.removesuffix(tail)
    return [_add(MemoryType.preference, f"{'Dislikes' if dislikes else 'Likes'} {text}",
                 salience=0.6 if dislikes else 0.55)]


def being(c: Clause) -> list[Op]:
    """Copular statements: "I'm a nurse", "I'm from Madrid", "I'm vegan", "I'm 34"."""
    head = c.head
    attr = _child(head, "attr")
    comp = _child(head, "acomp")
    subject = c.subject
    value = predicate(head)
    if subject is not None and subject.lower_ != "i" and value:
        if subject.lemma_ == "name" and value[:1].isupper():
            return [_add(MemoryType.profile, f"Name is {value}", slot="name", salience=0.9)]
        kind = next((ch for ch in subject.children if ch.lower_ in ("favorite", "favourite")),
                    None)
        if kind is not None:
            topic = words([t for t in subject.subtree if t.i > kind.i])
            return [_add(MemoryType.preference, f"Favorite {topic} is {value}",
                         slot=f"favorite:{topic.lower()}", salience=0.6)]
        return []
    if (origin := _prep_object(head, "from")) is not None:
        return [_add(MemoryType.profile, f"Is from {phrase(origin)}", slot="origin",
                     salience=0.7)]
    if (base := _child(head, "acomp", "prep")) is not None and base.lower_ == "based":
        place = _prep_object(base, "in")
        if place is not None:
            return [_add(MemoryType.profile, f"Is based in {phrase(place)}", slot="home",
                         salience=0.8)]
    if comp is not None:
        word = comp.lemma_.lower()
        if word == "allergic" and (what := _prep_object(comp, "to")) is not None:
            return [_add(MemoryType.preference, f"Is allergic to {phrase(what)}",
                         slot=f"allergy:{what.lemma_.lower()}", salience=0.9,
                         confidence=0.9)]
        if word in DIET:
            return [_add(MemoryType.preference, f"Is {comp.lower_}", slot="diet", salience=0.8)]
        if comp.lower_ in MOODS:
            return [_add(MemoryType.ephemeral, f"Feels {comp.lower_}", salience=0.3,
                         confidence=0.8)]
        if word == "based" and (place := _prep_object(comp, "in")) is not None:
            return [_add(MemoryType.profile, f"Is based in {phrase(place)}", slot="home",
                         salience=0.8)]
    if attr is not None:
        if attr.lemma_.lower() in DIET:
            return [_add(MemoryType.preference, f"Is {phrase(attr)}", slot="diet",
                         salience=0.8)]
        if attr.like_num:
            return [_add(MemoryType.profile, f"Is {attr.text} years old", slot="age",
                         salience=0.7)]
        if is_profession(attr):
            return [_add(MemoryType.profile, f"Works as {phrase(attr, frozenset({'advmod'}))}",
                         slot="job", salience=0.8)]
        if attr.lemma_.lower() == "fan" and (what := _prep_object(attr, "of")) is not None:
            return [_add(MemoryType.preference, f"Likes {phrase(what)}", salience=0.55)]
    if (what := _prep_object(head, "into")) is not None and what.pos_ != "PRON":
        return [_add(MemoryType.preference, f"Likes {phrase(what)}", salience=0.55)]
    return []


def job(c: Clause) -> list[Op]:
    parts = []
    for child in c.head.children:
        if child.dep_ == "prep" and child.lower_ in ("as", "at", "in", "for"):
            obj = _child(child, "pobj")
            if obj is not None and obj.pos_ != "PRON" and obj.lemma_ not in ("home", "moment"):
                parts.append(f"{child.lower_} {phrase(obj)}")
    if not parts:
        return []
    return [_add(MemoryType.profile, f"Works {' '.join(parts[:2])}", slot="job", salience=0.8)]


def having(c: Clause, at: datetime) -> list[Op]:
    """"I have a cat named Miso", "I've got a dentist appointment on Friday"."""
    obj = _child(c.head, "dobj")
    if obj is None:
        return []
    noun = obj.lemma_.lower()
    if noun in PETS:
        name = _name_of(obj)
        if name:
            return [_add(MemoryType.profile, f"Has a {obj.lower_} named {name}",
                         slot=f"pet:{name.lower()}", salience=0.7)]
        return [_add(MemoryType.profile, f"Has a {phrase(obj)}", salience=0.6)]
    if noun in EVENTS:
        found = plan_due(c.sentence.text, at)
        return [_add(MemoryType.open_loop, f"Has {phrase(obj)}", salience=0.7,
                     due=found.when if found else None)]
    if noun in RELATIONS:
        name = _name_of(obj)
        if name:
            return [_add(MemoryType.profile, f"Has a {obj.lower_} named {name}",
                         slot=f"family:{obj.lower_}", salience=0.8)]
    return []


def _name_of(noun: Token) -> str | None:
    """"a cat named Miso", "my dog Rex", "a sister, Mia"."""
    for child in noun.children:
        if child.dep_ in ("acl", "relcl") and child.lemma_ in ("name", "call"):
            return _proper(_child(child, "oprd", "attr", "dobj", "xcomp", "npadvmod"))
        if child.dep_ in ("appos", "npadvmod", "compound") and child.pos_ == "PROPN" \
                and child.i > noun.i:
            return _proper(child)
    return None


def plan(c: Clause, at: datetime) -> list[Op]:
    """"I'm going to renew my passport next week", "I promised to call mom on Friday"."""
    action = c.action
    assert action is not None
    if action.lemma_ in STATIVE or c.lemma in ("want", "hope", "try", "like", "love"):
        return []
    objects = [t for t in action.subtree if t is not action and t.pos_ in ("NOUN", "PROPN")
               and t.ent_type_ != "DATE"]
    if not objects:
        return []  # "I have to go now", "I need to think about it": no plan of substance
    verb = "Promised to" if "promise" in c.modals else "Plans to"
    found = plan_due(c.sentence.text, at)
    return [_add(MemoryType.open_loop, f"{verb} {phrase(action, frozenset({'aux'}))}",
                 salience=0.7,
                 due=found.when if found else None)]


def happened(c: Clause, at: datetime) -> list[Op]:
    """A past action: it may resolve an open loop (the gate judges which), and with a date
    it is an event of its own."""
    head = c.head
    dropped = [ch for ch in head.children if ch.dep_ in _NOT_EVENT
               or (ch.dep_ in ("conj", "ccomp", "advcl", "parataxis") and _is_clause(ch))]
    gone = {t.i for ch in dropped for t in ch.subtree}
    what = words([t for t in head.subtree if t.i not in gone])
    if len(what.split()) < 2:
        return []
    # The resolution keeps its time words: "rang their mother last night" is closer to
    # "call mom on Friday" than the bare action is.
    timed = {t.i for ch in dropped if ch.dep_ in ("npadvmod", "advmod")
             and ch.lower_ not in _HEDGES for t in ch.subtree}
    resolution = words([t for t in head.subtree if t.i not in gone - timed])
    ops = [Op(op=OpKind.close_loop, content=resolution, confidence=0.8)]
    marked = any(t.lower_ in ("finally", "already") for t in head.children)
    when: Found | None = past_day(c.sentence.text, at)
    if when is not None and not marked:
        ops.append(_add(MemoryType.episodic, f"{_cap(what)} ({when.text}, "
                                             f"{when.when.date().isoformat()})", salience=0.5))
    return ops


def relative_fact(c: Clause, at: datetime) -> list[Op]:
    """"My brother is a firefighter" is about the brother; so is "my sister is called Mia"."""
    head = c.head
    if c.negated or c.question or c.lemma in SPEECH:
        return []
    if (c.subject is not None and c.subject.lemma_ == "name") or head.lemma_ in ("call", "name"):
        return []  # read by names(), along the tokens
    if c.tense == "future" or c.action is not None:
        return []
    text = words([t for t in c.tokens() if t.dep_ not in ("cc",)])
    if len(text.split()) < 3:
        return []
    return [_add(MemoryType.profile, _cap(text), salience=0.65)]


def resolved_thing(c: Clause) -> list[Op]:
    """"The passport is sorted", "the thesis is done": a resolution without an "I"."""
    comp = _child(c.head, "acomp", "attr")
    if c.lemma != "be" or comp is None or comp.lemma_.lower() not in CLOSED_STATES \
            or c.subject is None or c.subject.pos_ == "PRON" or c.negated:
        return []
    return [Op(op=OpKind.close_loop, content=f"{phrase(c.subject)} {comp.lower_}",
               confidence=0.8)]

