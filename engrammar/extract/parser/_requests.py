"""What the user asks of the assistant, and the names they give: requests read off the parse.

Imperatives and "you" clauses ("forget about that coffee shop", "please never mention my
ex", "you can call me Dee", "keep your answers short"), and boundaries said as wishes ("I'd
rather not talk about my dad", "can we not talk about work"). Names ("my name's Dana", "my
sister is called Mia") are read along the tokens, because the small model often misparses a
name it has never seen.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from engrammar.extract.parser._clauses import Clause, heads
from engrammar.extract.parser._dates import named_days
from engrammar.extract.parser._forgetting import BY_NAME, by_name
from engrammar.extract.parser._intent import Intent, decide
from engrammar.extract.parser._lexicon import FORGET, POLITENESS, kin
from engrammar.extract.parser._mood import POLITE, SPEECH, WH_TAGS
from engrammar.extract.parser._nlp import entities, parse
from engrammar.extract.parser._owners import Owner, resumed, subject_of
from engrammar.extract.parser._phrases import (
    cap,
    child,
    hyphen_after,
    is_clause,
    phrase,
    prep_object,
    proper,
    trim,
    with_article,
)
from engrammar.models import MemoryType, Op, OpKind, Surface

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token


def proposal(kind: MemoryType, content: str, *, slot: str | None = None, salience: float = 0.6,
         confidence: float = 0.85, surface: Surface | None = None, pinned: bool = False,
         due: datetime | None = None) -> Op:
    return Op(op=OpKind.add, type=kind, content=_DANGLING.sub("", content), slot=slot,
              salience=salience, confidence=confidence, surface=surface, pinned=pinned,
              due=due)


# A conjunction that joins what a clause's edge cut off ("Plans to relax and"): no memory
# ends on it.
_DANGLING = re.compile(r"(?:[\s,;:-]+(?:and|or|but|nor|because))+[\s,;:-]*$",
                       re.IGNORECASE)


# The reason on a boundary whose topic is the sentence before: that sentence is not stored.
REFERS_BACK = "the topic is the sentence before"
_NAMING = frozenset({"is", "'s", "was", "called", "named", "name"})


def _relative_named(relation: str, name: str) -> Op:
    return proposal(MemoryType.profile, f"Has {with_article(relation)} named {name}",
                    slot=f"family:{relation}", salience=0.8)


def _identified(relation: Token) -> str | None:
    """The name a relation is given by saying who someone is: "it's Niamh, the wife",
    "that's Dev, my brother" (chat's "the wife" is the speaker's own); None for anything
    else ("it's Tesco, the big one")."""
    name = relation.head
    if relation.dep_ != "appos" or not kin(relation.lower_) or name.pos_ != "PROPN" \
            or not any((c.dep_, c.lower_) in (("det", "the"), ("poss", "my"))
                       for c in relation.children):
        return None
    if any(c.dep_ == "poss" and c.lower_ == "its" for c in name.children):
        return name.text  # chat's "its" for "it's": no name is owned by an "it"
    copula = name.head
    subject = next((c for c in copula.children if c.dep_ == "nsubj"), None)
    if name.dep_ != "attr" or copula.lemma_ != "be" or subject is None \
            or subject.lower_ not in ("it", "that", "this"):
        return None
    return name.text


# How ``_relative_named`` words it, read back.
_NAMED = re.compile(r"Has an? (?P<relation>.+) named (?P<name>.+)")


def relative_named(op: Op) -> tuple[str, str] | None:
    """The relation and name of an op ``names`` made of a relative's name, else None."""
    named = _NAMED.fullmatch(op.content) if (op.slot or "").startswith("family:") else None
    return None if named is None else (named["relation"], named["name"])


def names(sentence: Span) -> list[Op]:
    """Names given to the user or a relative: "my name's Dana", "my sister is called Mia and
    my brother is named Leo". Read along the tokens from the possessed noun, since the small
    model often misparses a name it does not know (as an adjective, or the root)."""
    out: list[Op] = []
    for tok in sentence:
        if (named := _identified(tok)) is not None:
            out.append(_relative_named(tok.lower_, named))
            continue
        mine = any(c.dep_ == "poss" and c.lower_ == "my" for c in tok.children)
        # "coworker Lena keeps nicking my lunch": chat drops the "my" before a name.
        bare = not any(c.dep_ in ("det", "poss") for c in tok.children) and (
            tok.i + 1 < sentence.end and sentence.doc[tok.i + 1].pos_ == "PROPN") and not (
            # (nor someone else's, the "his" hung on the name: "his girlfriend Chloe")
            tok.dep_ == "compound" and any(c.dep_ == "poss" and c.lower_ not in ("my", "our")
                                           for c in tok.head.children))
        relation = tok.lower_ if kin(tok.lower_) and (mine or bare) else None
        if relation is None and mine and tok.pos_ == "NOUN" and (
                person := _person_after(tok)) is not None:
            # "write to my landlord Mr Hughes", "my physio Dele": whoever the user names
            # by their role, whether or not the word is a relation the list knows
            out.append(_relative_named(tok.lower_, person).model_copy(
                update={"reason": BY_ROLE}))
            continue
        if tok.lemma_ == "name" and not mine:
            owner = next((c for c in tok.children if c.dep_ == "poss"), None)
            if owner is None or not kin(owner.lower_) or not any(
                    c.lower_ == "my" for c in owner.children):
                continue
            relation = owner.lower_
        elif tok.lemma_ != "name" and relation is None:
            continue
        after = sentence.doc[tok.i + 1] if tok.i + 1 < sentence.end else None
        # Beside a relation that is the subject, the name goes with what is said of them
        # ("my husband Femi is a civil engineer"): one memory, not two.
        if relation is not None and after is not None and after.pos_ == "PROPN" \
                and not kin(after.lower_) and tok.dep_ not in ("nsubj", "nsubjpass"):
            # "my wife Sarah works as a nurse": the name stands beside the relation (with
            # its title: "my boss Ms Carter")
            titled = after.lower_ in _TITLES and after.i + 1 < sentence.end \
                and sentence.doc[after.i + 1].pos_ == "PROPN"
            out.append(_relative_named(relation, sentence.doc[
                after.i: after.i + 2].text if titled else after.text))
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
        if first.lower_ == "i" or not first.text[:1].isalpha() or first.is_stop or not (
                first.text[:1].isupper() or first.pos_ in ("PROPN", "NOUN")):
            continue
        run = [first]
        for nxt in sentence.doc[first.i + 1: sentence.end]:
            if nxt.pos_ != "PROPN" or not (nxt.text[:1].isupper() and first.text[:1].isupper()):
                break
            run.append(nxt)
        end = run[-1].i + 1
        doc = sentence.doc
        while end + 1 < sentence.end and hyphen_after(doc[end - 1]):
            end += 2  # "Ji-woo", "Mary-Kate": one name
        name = doc[first.i:end].text
        if relation is None:
            out.append(proposal(MemoryType.profile, f"Name is {name}", slot="name", salience=0.9))
        else:
            out.append(_relative_named(relation, name))
    return out




# The reason of a name given beside a role: a fact aside, which leaves what its sentence
# states to the other readings and the turn ("take my dog to my vet Dr Shah on friday").
BY_ROLE = "a person named beside their role"
# Titles before a person's name.
_TITLES = frozenset({"mr", "mrs", "ms", "miss", "dr", "mr.", "mrs.", "ms.", "dr."})


def _person_after(noun: Token) -> str | None:
    """The name of a person right after ``noun`` ("my landlord Mr Hughes"): a title and a
    name, or a name the entity recogniser calls a person; None for any other word ("my
    flight BA12", "my Samsung Galaxy")."""
    doc = noun.doc
    run: list[Token] = []
    for tok in doc[noun.i + 1: noun.sent.end]:
        if tok.pos_ != "PROPN" or not tok.text[:1].isupper():
            break
        run.append(tok)
    if not run or (run[0].lower_ not in _TITLES and not any(
            t.ent_type_ == "PERSON" for t in entities(doc)[run[0].i: run[-1].i + 1])):
        return None
    if run[0].lower_ in _TITLES and len(run) == 1:
        return None
    return " ".join(t.text for t in run)


# The clauses joined to another, each with a verb of its own.
_CLAUSES = ("advcl", "conj", "parataxis")


def _task(c: Clause) -> bool:
    """Whether the sentence of a request bids something else done too, a task the request
    is about ("rewrite this email and don't mention my name")."""
    return any(t.i != c.head.i and t.tag_ == "VB" and t.dep_ in (*_CLAUSES, "ROOT")
               and not any(k.dep_ in ("nsubj", "nsubjpass") for k in t.children)
               and any(k.dep_ in ("dobj", "dative") for k in t.children)
               for t in c.sentence)  # ("listen, don't bring up my mum" bids no task)


def _own(target: Token) -> bool:
    """Whether a topic is the user's or someone named: "my ex Tom", "Dominic"."""
    return target.pos_ == "PROPN" or any(
        t.dep_ == "poss" and t.lower_ in ("my", "our") for t in target.subtree)


def _in_a_clause_of_its_own(tok: Token, verb: Token) -> bool:
    """Whether ``tok`` hangs on a clause joined to ``verb`` rather than on ``verb`` or what
    it takes: "nudge me abt the mot, always forget it" forgets nothing about the MOT."""
    while tok.i != verb.i and tok.head.i != tok.i:
        if tok.dep_ in _CLAUSES or (tok.dep_ == "ccomp" and tok.i < tok.head.i):
            return True  # (a clause spliced on before: "remind me about X, I always forget")
        tok = tok.head
    return False


def topic(verb: Token) -> Token | None:
    """What a request is about: "forget about X", "don't ask me about X", "delete the thing
    about X", "scratch what I said about X". The innermost "about" wins over a vague object."""
    about = [t for t in verb.subtree if t.dep_ == "prep" and t.lower_ in ("about", "regarding")
             and not _in_a_clause_of_its_own(t, verb)]
    for prep in about:
        # (what it is about may be a thing done: "forget about me dropping out of uni";
        # not "what I told you yesterday", which names nothing)
        obj = child(prep, "pobj") or child(prep, "pcomp")
        if obj is not None and obj.pos_ != "PRON" and obj.left_edge.tag_ not in WH_TAGS:
            return obj
        if obj is not None and (person := _named_before(obj)) is not None:
            return person
    obj = child(verb, "dobj")
    vague = obj is not None and obj.lower_ in ("thing", "stuff") and not any(
        c.dep_ in ("compound", "amod", "nmod") for c in obj.children)
    if obj is not None and obj.pos_ != "PRON" and not vague:
        return obj
    up = child(verb, "prt")
    if up is not None and (obj := child(up, "pobj")) is not None:
        return obj
    return _set_before(verb)


def _skipped(target: Token, *deps: str) -> frozenset[str]:
    """What a topic leaves out of its words: ``deps``, and the speaker joined to it, who is
    none of it ("my sister and I fell out, forget about her" forgets "my sister")."""
    joined = ("cc", "conj") if _with_the_speaker(target) else ()
    return frozenset({*deps, *joined})


def _named_before(pron: Token) -> Token | None:
    """The person "him" or "her" stands for: the nearest name, or relation of the user's,
    said before it in the message ("me and jamie are done. forget everything about him").
    (Not "it" or "them", as often a doing or a thing as a person.)"""
    if pron.lower_ not in ("him", "her") or pron.tag_ != "PRP":
        return None
    return next((t for t in reversed(pron.doc[:pron.i])
                 if (t.pos_ == "PROPN" and t.is_alpha and not named_days(t.text))
                 or (t.pos_ == "NOUN" and kin(t.lemma_.lower()) and _own(t))), None)


def _set_before(verb: Token) -> Token | None:
    """The topic said first and set off before a bidding verb, which the parser takes for
    its subject ("all that Dilan stuff you have, just forget it", "my ex, don't mention
    him"): a bidding has no subject of its own, so a noun there, with a comma between,
    is what it is about."""
    doc = verb.doc
    if not resumed(verb):
        return None
    return next((t for t in verb.children
                 if t.dep_ in ("nsubj", "npadvmod") and t.pos_ in ("NOUN", "PROPN")
                 and t.i < verb.i and not named_days(phrase(t))
                 and any(doc[i].text == "," for i in range(t.right_edge.i + 1, verb.i))),
                None)


def request(c: Clause) -> list[Op]:
    """The readings of a request with a canonical form: forget (an imperative verb of
    forgetting with a topic), remember that, call me, you're allowed to, keep your answers
    short, stop with. Which request a sentence is, and whether it is one, the model says
    (``asked``); these stand where it says none, because their forms are precise and the
    model, trained on a few hundred lines, misses some ("ok scrap the red lion stuff")."""
    head, lemma = c.head, c.lemma
    if c.hypothetical or c.quoted:
        return []
    never_mind = lemma == "mind" and any(t.lower_ == "never" for t in head.children)
    # (bid to the assistant: "I always forget" is no request)
    # (and "did you forget ...?", "have you forgotten my name?" ask whether it did: no
    # request to forget anything)
    if (lemma in FORGET and not c.negated and c.tense != "past"
            and c.owner in (Owner.command, Owner.assistant)) or never_mind:
        target = topic(head) or _said_that(head)
        if target is None:
            return []
        return [Op(op=OpKind.forget, content=trim(phrase(target, _skipped(target, "mark"))),
                   reason=BY_NAME if by_name(target) else "user asked to forget")]
    # "can you stop with the bullet points": a request in the form of a question.
    polite = c.subject is not None and c.subject.lower_ == "you" and any(
        a.lower_ in ("can", "could", "would", "will") for a in head.children)
    if c.question and not polite:
        return []
    if lemma == "stop" and (what := prep_object(head, "with")) is not None:
        # "can u stop with the bullet points": how to answer, not a topic to avoid
        style = trim(phrase(what, frozenset({"det"})))
        return [proposal(MemoryType.protocol, f"No {style} in answers",
                         slot=f"style:{what.lemma_.lower()}", salience=0.75)]
    if lemma == "allow" and (verb := child(head, "xcomp")) is not None:
        allowed = trim(phrase(verb, frozenset({"aux"})))
        return [proposal(MemoryType.protocol, f"The assistant may {allowed}", salience=0.7)]
    if lemma == "remember":
        fact = child(head, "ccomp")
        # Only a fact about the user ("that I'm allergic to peanuts") or an instruction
        # ("that you must ..."); "remember that small things make a difference" is advice.
        # "remember, I'm always here for you" reassures: only "remember that ..." records.
        about = fact is not None and any(
            t.dep_ == "mark" and t.lower_ == "that" for t in fact.children) and (
            any(t.lower_ in ("i", "my", "me", "we", "our") for t in fact.subtree)
            or any(t.dep_ == "nsubj" and t.lower_ == "you" for t in fact.children))
        if fact is not None and about:
            return [proposal(MemoryType.profile, cap(phrase(fact, frozenset({"mark"}))),
                             pinned=True, salience=0.9, confidence=0.9)]
    if lemma == "call" and any(c.lower_ == "me" for c in head.children):
        name = proper(child(head, "oprd", "attr", "xcomp", "npadvmod"))
        if name:
            return [proposal(MemoryType.shared_lore, f"Likes to be called {name}",
                             slot="nickname", salience=0.7)]
    if lemma in ("keep", "make", "be"):
        obj = child(head, "dobj")
        how = child(head, "ccomp", "oprd", "acomp", "xcomp")
        if obj is not None and obj.lemma_ in ("answer", "reply", "response") and how:
            # ("keep replies short and in Polish": all the ways it is asked for)
            said = trim(phrase(how, frozenset())) if any(
                t.dep_ == "conj" for t in how.children) else how.lower_
            content = f"Prefers {said} answers" if " " not in said \
                else f"Prefers answers {said}"
            return [proposal(MemoryType.protocol, content, slot="style", salience=0.7)]
    raising = lemma == "mention" or (
        lemma == "bring" and (up := child(head, "prt")) is not None and up.lower_ == "up")
    if raising and c.owner is Owner.command and c.negated and not _task(c) \
            and (target := topic(head)) is not None and _own(target):
        # "never mention my ex Tom again": a boundary in its plainest form (not one of a
        # task: "write me a cover letter but don't mention my age")
        return _boundary_on(head, target)
    return []


# Words that only make a request polite or glue it on: left out of what is kept of it. Not
# a leading phrase ("From now on, answer me in French"): its head alone would go and leave
# its words cut from it ("now on, answer ...").
_FILLER_DEPS = frozenset({"cc", "intj", "punct", "discourse", "mark"})


def asked(intent: Intent, clauses: Sequence[Clause], before: Span | None = None
          ) -> tuple[list[Op], Clause | None]:
    """The ops of a sentence the model calls a request of kind ``intent``, read off its
    clauses, and the clause the request is (whose readings it replaces); no ops when the
    parse finds nothing for it to be about. ``before`` is the sentence before it in the
    message, what a boundary with no topic of its own refers to ("... go there")."""
    if intent is Intent.none or not clauses:
        return [], None
    c = _request_clause(clauses)
    head = c.action if c.owner is Owner.user and c.action is not None else c.head
    if intent is Intent.remember and c.owner is Owner.command and c.lemma in FORGET \
            and not c.negated:
        # "forget that I'm vegan" bids the opposite of "remember that I'm vegan", which
        # the model, reading the words around the verb, may take it for
        intent = Intent.forget
    if intent is Intent.forget:
        if any(k.lemma in FORGET and k.owner is Owner.user for k in clauses):
            return [], None  # the user's own forgetting: "remind me about X, I always forget"
        if any(k.lemma in FORGET and k.owner is Owner.assistant and k.tense == "past"
               for k in clauses):
            # "did you forget what I said about my sister?", "have you forgotten my name?":
            # whether it did, not a bid to forget
            return [], None
        if _made_for_the_user(head) or _remembering_whether(head):
            return [], c
        target = topic(head) or _about(c.sentence) or _said(head) or (
            _about(before) if before is not None else None)
        if target is None:
            return [], c
        # (without an opener the parser may hang on it: "Right, the chemo stuff")
        return [Op(op=OpKind.forget, content=trim(phrase(target, _skipped(target, "mark", "intj"))),
                   reason=BY_NAME if by_name(target) else "user asked to forget")], c
    if intent is Intent.avoid and _raising(c) and _asks(c):
        return [], c  # "can you mention my ex?": asked to raise it, not to keep it out
    if intent is Intent.avoid and not _permits(c):
        target = topic(head) or _about(c.sentence) or _subject_topic(c)
        if target is not None:
            return _boundary_on(head, target), c
        said = [t for t in before if t.dep_ in ("nsubj", "nsubjpass")
                and t.pos_ != "PRON"] if before is not None else []
        if not said:
            return [], c
        # "my mum passed in march. id rather we didnt go there": the topic is what the
        # message said before, which is kept as no fact of its own.
        # (the speaker joined to them is no part of the topic: "my son and I had a
        # falling out ... don't ever bring him up")
        (op,) = _boundary_named(head, phrase(said[0], _skipped(said[0])))
        return [op.model_copy(update={"reason": REFERS_BACK})], c
    shaped = [op for op in request(c) if op.op is OpKind.add and (
        op.type in (MemoryType.protocol, MemoryType.shared_lore)
        or (intent is Intent.remember and op.type is MemoryType.profile))]
    if shaped:
        return shaped, c
    if intent is Intent.remember:
        # What is said to the assistant to keep, about the user, as a fact (not "wish I
        # was on a beach", not a clause of someone else's).
        fact = child(c.head, "ccomp")
        kept = next((f for f in clauses if fact is not None and f.head.i == fact.i), None)
        # (asked with the bid that asks to keep it, "can you remember I'm vegan?", the
        # fact is still said: only imagined or quoted words are not)
        # (a fact is a clause of its own: not the two objects of "make me a meal plan",
        # nor a relative clause the parser hung on the verb, "the disc that I've had")
        if fact is None or not is_clause(fact) or fact.left_edge.tag_ == "WDT" or (
                fact.pos_ not in ("VERB", "AUX") and any(
                    c.dep_ in ("nsubj", "nsubjpass") and c.lower_ in _OBJECT_CASE
                    for c in fact.children)) \
                or c.owner not in (Owner.command, Owner.assistant) or (
                kept is not None and (kept.hypothetical or kept.quoted)) or not any(
                t.lower_ in ("i", "my", "me", "we", "our") for t in fact.subtree):
            return [], c
        return [proposal(MemoryType.profile, cap(phrase(fact, frozenset({"mark"}))),
                         pinned=True, salience=0.9, confidence=0.85)], c
    words_ = _instruction(c)
    if not words_:
        return [], c
    return [proposal(MemoryType.protocol, f"Asked: {words_}", surface=Surface.adapt,
                     salience=0.75, confidence=0.8)], c


# Pronouns in the object case: a noun the parser gives one for subject is the second of a
# verb's two objects ("make me a meal plan"), no clause.
_OBJECT_CASE = frozenset({"me", "us", "him", "them"})


def _request_clause(clauses: Sequence[Clause]) -> Clause:
    """The clause of a sentence that is the request: the imperative, else the one said to
    "you", else the speaker's wish ("I'd rather not ..."), else the sentence's root."""
    for owners in ((Owner.command,), (Owner.assistant,)):
        found = [c for c in clauses if c.owner in owners and not c.quoted]
        if found:
            return found[0]
    wish = [c for c in clauses if c.owner is Owner.user and c.negated]
    if wish:
        return wish[0]
    return next((c for c in clauses if c.head.dep_ == "ROOT"), clauses[0])


# The verbs by which the user says they told of something: "forget that I said ...", "the
# stuff I mentioned earlier".
_TELLING = SPEECH | {"mention"}


# Nouns that name nothing of their own: what they stand for is what follows them.
_VAGUE = frozenset({"thing", "things", "stuff", "bit", "part", "one"})


def _about(sentence: Span) -> Token | None:
    """What the sentence says its words are about, wherever the "about" hangs: "that stuff
    about my brother's arrest, can you just forget it?"."""
    for tok in sentence:
        # (not what another verb is about: "nudge me abt the mot, always forget it")
        if tok.dep_ == "prep" and tok.lower_ in ("about", "regarding") \
                and tok.head.pos_ not in ("VERB", "AUX"):
            obj = child(tok, "pobj")
            if obj is not None and obj.pos_ != "PRON":
                return obj
    # "the IVF stuff I told you about, would you forget all that?", "the chemo stuff I
    # mentioned earlier, ...": the thing the speaker says they told of, put first
    told = next((tok for tok in sentence if tok.pos_ in ("NOUN", "PROPN") and any(
        c.dep_ == "relcl" and c.lemma_.lower() in _TELLING for c in tok.children)), None)
    if told is None:
        return None
    # ("that thing I told you about my credit card debt": what it was told about, when
    # the telling names it)
    telling = next(c for c in told.children if c.dep_ == "relcl")
    inner = next((o for p in telling.children if p.dep_ == "prep"
                  and p.lower_ in ("about", "regarding")
                  and (o := child(p, "pobj")) is not None and o.pos_ != "PRON"), None)
    return inner if inner is not None and told.lower_ in _VAGUE else told


def _said(head: Token) -> Token | None:
    """What "forget that I said I'm moving to Leeds" asks to forget: the innermost thing
    said, through the verbs of saying."""
    fact = child(head, "ccomp")
    while fact is not None and fact.lemma_.lower() in _TELLING:
        inner = child(fact, "ccomp")
        if inner is None:
            break
        fact = inner
    return fact


def _said_that(head: Token) -> Token | None:
    """What "forget that I'm vegetarian" asks to forget, when a "that" says it is a fact
    (not "forget I asked")."""
    that = child(head, "ccomp")
    if that is None or not any(t.dep_ == "mark" and t.lower_ == "that" for t in that.children):
        return None
    return _said(head)


def _subject_topic(c: Clause) -> Token | None:
    """A topic said of ("my brother is off limits") or named with no verb ("no diet talk"):
    the sentence's subject, or its verbless root."""
    root = c.sentence.root
    subject = next((t for t in root.children if t.dep_ in ("nsubj", "nsubjpass")), None)
    if subject is not None and subject.pos_ in ("NOUN", "PROPN"):
        return subject
    if root.pos_ in ("NOUN", "PROPN"):
        return root
    return None


def _made_for_the_user(verb: Token) -> bool:
    """Whether ``verb`` makes something for the user, who is its indirect object: "write me
    a limerick about my cat" drops nothing."""
    return any(k.dep_ == "dative" or (k.dep_ == "dobj" and k.lower_ in ("me", "us")
                                      and child(verb, "dobj") not in (None, k))
               for k in verb.children)


def _remembering_whether(verb: Token) -> bool:
    """Whether ``verb`` asks what is remembered: "can you remember if I told you my
    address?" drops nothing."""
    return verb.lemma_.lower() == "remember" and any(
        k.dep_ == "mark" and k.lower_ in ("if", "whether")
        for t in verb.children if t.dep_ == "ccomp" for k in t.children)


def _permits(c: Clause) -> bool:
    """Whether the clause lets the assistant raise what it names: "you can mention my
    sister", "you may bring up my dad again", "you can talk about my ex now". Only the
    verbs of raising a topic, which a boundary forbids, said as a statement: "you can keep
    my dad out of this" and "you can refuse to talk about it" keep out. Nor when denied:
    "you can't", "you can no longer"."""
    return _raising(c) and not _asks(c) and c.subject is not None and c.subject.i < c.head.i


def _asks(c: Clause) -> bool:
    return c.question or c.sentence.text.rstrip().endswith("?")


def _raising(c: Clause) -> bool:
    """Whether the clause has the assistant ("you" with "can", "may", "could" or "would")
    raise a topic, undenied: "you can mention my sister", "can you bring up my dad?"."""
    head = c.head
    if c.subject is None or c.subject.lower_ != "you" or c.negated:
        return False
    start, end = sorted((c.subject.i, head.i))
    return (any(t.dep_ == "aux" and t.lemma_.lower() in ("can", "may", "could", "would")
                for t in head.children)
            and not any(t.lower_ in ("no", "never", "not", "longer")
                        for t in c.sentence.doc[start: end + 1])
            and (head.lemma_.lower() in _RAISING or (
                head.lemma_.lower() == "bring" and any(
                    t.dep_ == "prt" and t.lower_ == "up" for t in head.children))))


# The verbs of raising a topic: what a boundary forbids, and a permission allows.
_RAISING = frozenset({"mention", "talk", "discuss", "ask", "raise"})


def _with_the_speaker(topic: Token) -> bool:
    """Whether a topic is said joined to the speaker, who is no part of it: "my son and I
    had a falling out"."""
    return any(t.dep_ == "conj" and t.lower_ in ("i", "me") for t in topic.children)


def _boundary_on(verb: Token, target: Token) -> list[Op]:
    """A boundary on ``target``, however the request named it."""
    # "my weight or calories, just the running": what is set against the topic is no part
    # of it (the parser hangs it on as an appositive, its adverb first)
    contrast = min((t.left_edge.i for t in target.subtree if t.dep_ == "appos"
                    and t.left_edge.pos_ == "ADV"), default=None)
    # ("my father and I are estranged. don't bring him up": the speaker is none of it)
    skip = _skipped(target, *(("det",) if any(
        c.dep_ == "det" and c.lower_ == "no" for c in target.children) else ()))
    return _boundary_named(verb, trim(phrase(target, skip, before=contrast)))


def _boundary_named(verb: Token, thing: str) -> list[Op]:
    """The boundary ``verb`` sets on ``thing``: "don't bring up my divorce" keeps it out of
    every prompt, "never mention my ex" keeps it in mind, unraised."""
    if verb.lemma_ in ("bring", "remind"):
        return [proposal(MemoryType.protocol, f"Does not want {thing} brought up",
                         surface=Surface.never, salience=0.9, confidence=0.9)]
    return [proposal(MemoryType.protocol, f"Never mention {thing}", surface=Surface.avoid,
                     salience=0.95, confidence=0.9)]


def _instruction(c: Clause) -> str:
    """The request in the user's own words: the request clause as written (its whole
    sentence when it is the root), without the words that only make it polite or join it
    on ("oh and pls stop using emojis" -> "stop using emojis")."""
    tokens = list(c.head.subtree) if c.head.dep_ != "ROOT" else list(c.sentence)
    # (a label before a colon says what kind of message it is: "Quick favour: ...")
    label = next((t.i for t in tokens if t.text == ":" and t.i < c.head.i), None)
    kept = [t for t in tokens if t.lower_ not in POLITENESS and (label is None or t.i > label)]
    while kept and kept[0].lower_ not in ("no", "not", "never") and (
            (kept[0].dep_ in _FILLER_DEPS and kept[0].head.i != kept[0].i)
            or kept[0].pos_ in ("CCONJ", "INTJ", "PUNCT") or kept[0].tag_ == "TO"):
        kept.pop(0)
    if len(kept) > 2 and kept[0].tag_ == "MD" and kept[1].lower_ in ("you", "u"):
        kept = kept[2:]  # "can you stop using so many exclamation marks": the bidding
    while kept and (kept[-1].is_punct or kept[-1].pos_ in ("CCONJ", "INTJ")):
        kept.pop()
    if not any(t.pos_ in ("VERB", "NOUN", "PROPN", "ADJ", "ADV", "NUM") for t in kept):
        return ""  # a yes to the assistant's offer ("ye pls") asks for no manner of reply
    text = "".join(t.text + (t.whitespace_ if n + 1 < len(kept) and kept[n + 1].i == t.i + 1
                             else " ") for n, t in enumerate(kept))
    return trim(re.sub(r"\s+([,;:.!?])", r"\1", " ".join(text.split())))


def requests(doc: Doc, decided: tuple[Intent, list[Span]] | None = None
             ) -> dict[int, Intent]:
    """The sentences of ``doc`` (by their first token) that say the request the model
    finds in it (``decided``: the model's answer for it, when the caller batched them):
    those that pass the gate, and for a style, only those said as a request (an
    imperative, a "can you ...", a "please", a "no X") rather than of the assistant ("you
    sound like a bank letter")."""
    intent, gated = decided if decided is not None else decide([doc])[0]
    if intent is Intent.none:
        return {}
    return {s.start: intent for s in gated if intent is not Intent.style or _bidding(s)}


# The speaker's verbs whose "that you ..." is what they ask ("I would ask that you give
# all figures in metric"); not "I know you prefer ...", "I hate that you ...".
_ASKING = frozenset({"ask", "request", "insist", "prefer", "require"})


def _bidding(sentence: Span) -> bool:
    """Whether a sentence is said as a request, by its parse: any of its clauses, not only
    the root ("no emojis pls, n keep it short, i read these at work"; "I wonder if you
    would be so kind as to put your answers in bullet points")."""
    if any(t.lower_ in POLITENESS for t in sentence):
        return True  # anything with "please"
    if sentence.root.lemma_.lower() == "thank" and sum(not t.is_punct for t in sentence) <= 4:
        return False  # ("Thank you." before the request: thanks alone, bidding nothing)
    for head in heads(sentence):
        subject = subject_of(head)
        if subject is None and (head.dep_ == "ROOT" or (head.tag_ == "VB" and not any(
                c.dep_ in ("aux", "auxpass", "mark") for c in head.children))):
            # an imperative, a verbless "no emojis"; a clause joined on only as a bare
            # verb ("n keep it short"), not "just saying" or "easy to skim"
            return True
        if subject is None:
            continue
        modal = any(c.tag_ == "MD" for c in head.children)
        wish = head.lemma_.lower() in POLITE | {"want", "need"}
        # ("I would ask that you give all figures in metric": what "you" are to do, said
        # as the object of the speaker's own verb)
        bid = head.dep_ == "ccomp" and head.head.lemma_.lower() in _ASKING and (
            asker := subject_of(head.head)) is not None and asker.lower_ in ("i", "we")
        # ("I would ask you to refrain from emojis": the speaker's asking, of "you", which
        # the request model still has to call a request)
        asking = head.lemma_.lower() in _ASKING and (modal or any(
            c.dep_ == "dobj" and c.lower_ in ("you", "u") for c in head.children))
        if (subject.lower_ in ("you", "u") and (modal or bid)) or (
                subject.lower_ in ("i", "we") and (wish or asking)):
            return True
    return False


def asks_not_to_mention(texts: Sequence[str]) -> list[bool]:
    """For each text, whether it asks that something never be brought up or mentioned: a
    protocol the extractor stores, not conversation for a summary to repeat. The
    extractor's decision: the gate on the parse, then the model (only the texts that pass
    the gate are embedded)."""
    if not texts:
        return []
    docs = parse(list(texts))
    return [Intent.avoid in requests(doc, d).values()
            for doc, d in zip(docs, decide(docs), strict=True)]
