"""Facts about other people and things: a relative's or friend's own facts ("my brother is a
firefighter" is about the brother), their plans and dated events, and resolutions or due
dates said without an "I" ("the thesis is done", "council tax is due on the 14th").
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING

from engrammar.extract.parser._abilities import LIMIT, lasting_limit
from engrammar.extract.parser._attributes import complement, lasting
from engrammar.extract.parser._clauses import Clause
from engrammar.extract.parser._events import PLAN_AHEAD, past_day, plan_due
from engrammar.extract.parser._jobs import is_profession
from engrammar.extract.parser._lexicon import CLOSED_STATES, EVENTS, STATIVE
from engrammar.extract.parser._mood import WH_TAGS
from engrammar.extract.parser._owners import Owner, _relatives_in, calling, standing_for
from engrammar.extract.parser._phrases import (
    cap,
    causative,
    child,
    named,
    phrase,
    predicate,
    proper,
    trim,
    words,
    written_out,
)
from engrammar.extract.parser._profile import name_of
from engrammar.extract.parser._questions import opening
from engrammar.extract.parser._requests import proposal
from engrammar.models import MemoryType, Op, OpKind

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence

    from spacy.tokens import Doc, Span, Token


# The words of how often: a doing said with one is done as a rule, on no one day.
_RULE = frozenset({"always", "every", "usually", "often", "never", "normally", "each",
                   "sometimes", "still"})
# The subordinators of a clause that says when or on what condition, not what is so.
_UNASSERTED = frozenset({"till", "until", "til", "before", "once", "when", "whenever",
                         "if", "unless", "while"})


def _timetabled(c: Clause, tokens: Sequence[Token]) -> bool:
    """Whether a clause in the simple present, whose own ``tokens`` name a day ahead, says
    a thing timetabled ("my son starts uni in september"), not what is done as a rule
    ("she always gets joint presents", "mum rings every 30 november")."""
    return c.head.tag_ in ("VBZ", "VBP") and c.lemma not in STATIVE and not any(
        t.lower_ in _RULE for t in tokens)


def _doing(tok: Token) -> bool:
    """Whether ``tok`` heads a bare participle after its verb that says what the doing
    is: "started at Leeds uni doing medicine" (not "... till she finds a place")."""
    return tok.dep_ == "advcl" and tok.tag_ == "VBG" and tok.i > tok.head.i and not any(
        k.dep_ in ("mark", "nsubj", "nsubjpass") for k in tok.children)


def _unasserted(head: Token) -> bool:
    """Whether the clause of ``head`` says when or on what condition something else is
    (its "when" may be parsed a modifier, not a mark)."""
    return head.dep_ == "advcl" and any(m.dep_ in ("mark", "advmod") and m.lower_ in _UNASSERTED
                                        for m in head.children)


# How a phrase before the subject sets the scene of a clause: "in March, he ...".
_SETTING = frozenset({"prep", "advmod", "npadvmod", "tmod", "punct", "cc", "intj"})


def relative_fact(c: Clause, at: datetime) -> list[Op]:
    """"My brother is a firefighter" is about the brother; so is "my sister is called Mia"."""
    head = c.head
    if c.question or c.saying:
        return []  # (what they say is their word: "my nan used to say ...")
    # (what they cannot do is theirs too, when it lasts: "my son can't have dairy")
    bounded = c.negated and lasting_limit(c)
    if c.negated and not bounded:
        return []
    if _unasserted(head):
        return []  # "... till she finds her own place": when, not what happened
    if (c.subject is not None and c.subject.lemma_ == "name") or head.lemma_ in ("call", "name"):
        return []  # read by names(), along the tokens
    if head.lemma_ != "be" and child(head, "dobj") is None and any(
            k.dep_ == "ccomp" and k.i > head.i and not causative(k)
            and not any(t.is_punct or t.tag_ in WH_TAGS for t in head.doc[head.i + 1: k.i])
            and k.left_edge.tag_ not in WH_TAGS for k in head.children):
        # "my husband just found out he has high BP": what he found out is read as a
        # clause of its own; the frame without it says nothing ("Their husband just found
        # out")
        return []
    pronoun = standing_for(c.subject)
    if (said := complement(head)) is not None and pronoun in (None, c.subject) \
            and not lasting(said):
        # "my mum's great", "he's a legend": a judgement, not what they are (said of the
        # person, not of a thing of theirs: "his eyes are bad")
        return []
    # The clause's own conjunction and subordinator go ("and he loves fishing", "till she
    # finds a place"); one inside a phrase stays ("her and her dog Boudreaux").
    # (what was had done is no clause of its own: "he had his hip replaced in march")
    done = [t for k in head.children if causative(k) or _doing(k) for t in k.subtree]
    # (and an interjection before them all: "Oh and he can't stand mushrooms")
    leading = _interjection(c)
    tokens = [t for t in sorted([*c.tokens(), *done], key=lambda t: t.i)
              if not (t.dep_ in ("cc", "mark") and t.head.i == head.i)
              and not calling(t) and t.i not in leading]
    if c.subject is not None:
        # "nothing he'd have to lug about tho, he had his hip replaced": a fragment before
        # the comma is the answer's, not what is told of them; a time or place before it
        # ("in March, he ...") is
        fronted = [t for t in tokens if t.i < c.subject.left_edge.i]
        if fronted and fronted[-1].text == "," and any(
                (t.head.i == head.i and t.dep_ not in _SETTING) or t.pos_ in ("VERB", "AUX")
                for t in fronted[:-1]):
            tokens = tokens[len(fronted):]
    text = cap(words(tokens))
    if c.subject is not None and c.relation and c.subject.pos_ != "PRON" and all(
            t.i != c.subject.i for t in tokens):
        # "my sister lives in Leeds and works at a bank": the second verb's subject is the
        # first's, and the memory must say whose work it is (a "he" the parser hung on
        # another word goes: "and he loves fishing").
        text = named(f"Their {c.relation}", [
            t for t in tokens if not (t.dep_ == "nsubj" and t.lower_ in ("he", "she"))])
    if pronoun is not None and pronoun is not c.subject and c.relation:
        # "his eyesight is going" after "my father": said of the father's, by name too
        name = _named(c)
        who = c.relation if name is None else f"{c.relation} {name}"
        # (what comes before the "his" stays before it, but the word that joined the
        # clause to a question: "now her balance is going")
        joined = opening(head)
        fronted = [t for t in tokens if t.i < pronoun.i
                   and (joined is None or t.i != joined.i)]
        said = words([t for t in tokens if t.i > pronoun.i])
        text = (f"{cap(words(fronted))} their {who}'s {said}" if fronted
                else f"Their {who}'s {said}")
    if c.subject is not None and c.subject.pos_ == "PRON" and c.relation:
        # "he taught chemistry" after "my dad": said of the dad, by name of relation. Only
        # a predicate with a thing to it: "she's doing fine", "she turned six" add nothing.
        obj = child(head, "dobj")
        # a name anywhere in the predicate: "started at Trinity doing law"
        place = next((t for t in head.subtree if t.pos_ == "PROPN"
                      and t.i not in {s.i for s in c.subject.subtree}), None)
        age = child(head, "attr") if head.lemma_ == "be" else None
        # by name too when the message or the one before gave one ("my brother Callum",
        # "a beagle called Rolo"): what a later query about them asks by
        name = _named(c)
        who = c.relation if name is None else f"{c.relation} {name}"
        if age is not None and age.like_num and not c.negated and c.tense != "past":
            # "she's 91": the relative's age, whoever "she" is by the message before ("since
            # he was 19" is an age he had)
            return [proposal(MemoryType.profile, f"Their {who} is {age.text} years old",
                             slot=f"age:{c.relation}", salience=0.65)]
        thing = obj is not None and obj.pos_ == "NOUN" and obj.lower_ not in (
            "fine", "well", "ok", "okay", "great")
        # "he's an electrician out there now": what the relative is, a noun with its article
        what = age if age is not None and is_profession(age) and next(
            t for t in tokens if not t.is_punct).i == c.subject.i \
            else None
        if what is None and (head.lemma_ in ("do", "be") or not (thing or place is not None)):
            return []
        text = named(f"Their {who}", [t for t in tokens if t.i != c.subject.i])
    if len(text.split()) < 3:
        return []
    # The clause's own words: a date is read best without the next clause around it.
    own = plan_due(" ".join(t.text for t in tokens), at)
    due = own or plan_due(c.sentence.text, at)
    if bounded:
        # (a limit until a day, or on one, does not last: "can't drive until next month")
        return [] if due is not None else [
            proposal(MemoryType.profile, text, salience=0.65).model_copy(
                update={"reason": LIMIT})]
    obj = child(head, "dobj")
    if due is not None and due.when.date() > at.date() and (
            head.tag_ == "VBG" or c.tense == "future" or c.action is not None
            or any(a.tag_ == "VBG" for a in head.children if a.dep_ in ("aux", "auxpass"))
            or (obj is not None and obj.lemma_.lower() in EVENTS)
            or (c.subject is not None and c.lemma == "be" and c.subject.pos_ == "NOUN"
                and c.tense != "past" and not c.negated
                and any(t.dep_ == "poss" for t in c.subject.children)
                and due.when - at <= PLAN_AHEAD)
            or (own is not None and _timetabled(c, tokens))):
        # "my sister's coming to stay this weekend", "my son has his school play on friday",
        # "my son starts uni in september"; a thing of theirs set on a day ahead: "my
        # brother's wedding is in 10 days", "my dad's operation is tomorrow"
        return [proposal(MemoryType.open_loop, text, salience=0.65, due=due.when)]
    if c.tense == "future" or c.action is not None:
        return []
    when = past_day(" ".join(t.text for t in tokens), at) if c.tense == "past" else None
    if when is not None:
        return [proposal(MemoryType.episodic,
                         f"{text} ({when.text}, {when.when.date().isoformat()})", salience=0.5)]
    return [proposal(MemoryType.profile, text, salience=0.65)]


def _interjection(c: Clause) -> set[int]:
    """The indices of the interjections that open a clause before its subject, with the
    words they hold ("oh my god my sister is pregnant") and the comma after them."""
    if c.subject is None:
        return set()
    out: set[int] = set()
    for k in c.head.children:
        if k.dep_ == "intj" and k.right_edge.i < c.subject.left_edge.i:
            out |= {t.i for t in k.subtree}
            after = k.doc[k.right_edge.i + 1]
            if after.is_punct:
                out.add(after.i)
    return out


def _named(c: Clause) -> str | None:
    """The name the message gave the relative a pronoun stands for: "my brother Callum
    ..., he's an electrician"."""
    assert c.subject is not None and c.relation is not None
    return next(_names_given(c.sentence.doc[: c.subject.i], c.relation), c.called)


def told_before(clauses: Sequence[Clause]) -> list[Clause]:
    """The clauses, each "he" or "she" that stands for a relative an earlier sentence of
    its message named marked so (``Clause.earlier``), with the name given them, in a copy:
    "my sister Renée got into nursing school! she's going to live with me" keeps, read
    alone, whose the plan is ("Their sister Renée is going to live with them")."""
    out: list[Clause] = []
    for c in clauses:
        pronoun = standing_for(c.subject)
        before = c.sentence.doc[: c.sentence.start]
        if c.earlier or c.relation is None or pronoun is None \
                or c.relation in _relatives_in(pronoun.doc[c.sentence.start: pronoun.i]) \
                or c.relation not in _relatives_in(before):
            out.append(c)  # (named in its own sentence, the sentence says whose it is)
            continue
        out.append(replace(c, earlier=True,
                           called=next(_names_given(reversed(before), c.relation), None)))
    return out


def relative_name(doc: Doc, relation: str) -> str | None:
    """The name ``doc`` gives the relative it names last as ``relation`` ("our son Leo"):
    what a "he" in the next message is called."""
    return next(_names_given(reversed(doc), relation), None)


def _names_given(tokens: Iterable[Token], relation: str) -> Iterator[str]:
    """The names ``tokens`` give the relative ``relation`` ("my brother Callum"), in the
    order the tokens come."""
    word = relation.split()[-1]
    return (name for tok in tokens if tok.lower_ == word and (name := name_of(tok)) is not None)


def with_relative(sentence: Span, clauses: Sequence[Clause]) -> str | None:
    """The sentence with its "he" or "she" put as the relative it is, when the subject
    just before it is that relative ("my dad is 64 and he just retired from the railway",
    parsed as two sentences): read alone, "he just retired" says nothing of whose it is.
    None when its subject is no such pronoun, or someone else was the subject since
    ("my aunt saw a girl who was alone. she ..."); the readings are then the judge."""
    root = next((c for c in clauses if c.head.i == sentence.root.i), None)
    if root is None or root.owner is not Owner.relative or root.relation is None \
            or root.subject is None or root.subject.lower_ not in ("he", "she"):
        return None
    pronoun = root.subject
    subjects = [t for t in pronoun.doc[: pronoun.i] if t.dep_ in ("nsubj", "nsubjpass")]
    if not subjects or _relatives_in(subjects[-1:]) != [root.relation]:
        return None
    text = sentence.doc.text
    after = pronoun.idx + len(pronoun.text)
    verb = pronoun.doc[pronoun.i + 1] if pronoun.i + 1 < sentence.end else None
    if verb is not None and verb.idx == after and (full := written_out(verb)) is not None:
        # (written out: "my son's been" would read as the son's)
        return (text[sentence.start_char: pronoun.idx] + f"my {root.relation} {full}"
                + text[after + len(verb.text): sentence.end_char])
    return (text[sentence.start_char: pronoun.idx] + f"my {root.relation}"
            + text[after: sentence.end_char])


def resolved_thing(c: Clause, at: datetime) -> list[Op]:
    """"The passport is sorted", "the thesis is done": a resolution without an "I"; and
    "council tax is due on the 14th", "test is on the 20th": a thing due."""
    subject = c.subject
    due = plan_due(c.sentence.text, at)
    if subject is not None and subject.pos_ != "PRON" and not c.negated and due is not None \
            and due.when.date() > at.date() and c.lemma == "be" and (
                any(t.lower_ == "due" for t in c.head.children)
                or subject.lemma_.lower() in EVENTS):
        # (a mark inside a word group stays: "tues/thurs 2-7", "9:30")
        text = cap(words([t for t in c.tokens() if t.dep_ != "cc" and (
            t.dep_ != "punct" or (t.i > 0 and not t.doc[t.i - 1].whitespace_
                                  and not t.whitespace_))]))
        return [proposal(MemoryType.open_loop, text, salience=0.7, due=due.when)]
    if _unasserted(c.head):
        return []  # "we'll get a dog when the house is sorted": when, not what is done
    if c.head.lower_ in CLOSED_STATES and c.subject is not None \
            and c.subject.pos_ != "PRON" and not c.negated:
        return [Op(op=OpKind.close_loop, content=f"{phrase(c.subject)} is {c.head.lower_}",
                   confidence=0.8)]
    if c.lemma in ("go", "be") and c.tense == "past" and c.subject is not None \
            and c.subject.pos_ != "PRON" and any(
            t.lower_ in ("fine", "well", "great", "ok", "okay", "smoothly", "good")
            for t in c.sentence if t.i > c.head.i):
        return [Op(op=OpKind.close_loop, content=f"{phrase(c.subject)} went well",
                   confidence=0.8)]
    comp = child(c.head, "acomp", "attr")
    if c.lemma != "be" or comp is None or comp.lemma_.lower() not in CLOSED_STATES \
            or c.subject is None or c.subject.pos_ == "PRON" or c.negated:
        return []
    return [Op(op=OpKind.close_loop, content=f"{phrase(c.subject)} {comp.lower_}",
               confidence=0.8)]


def lore(c: Clause) -> list[Op]:
    """Shared lore: a name given to the assistant ("ur name is Jeeves now"), a code word
    ("if I say code red it means I need cheering up"), a nickname ("we all call him Bear")."""
    head, subject = c.head, c.subject
    if subject is not None and subject.lemma_ == "name" and c.lemma == "be" and any(
            t.lower_ == "your" for t in subject.children):
        value = trim(predicate(head).split(",")[0])
        if value[:1].isupper():
            return [proposal(MemoryType.shared_lore, f"Calls the assistant {value}",
                             slot="assistant_name", salience=0.7)]
    if c.lemma == "mean":
        said = next((t for t in head.children if t.dep_ == "advcl" and t.lemma_ == "say"),
                    None)
        meaning = child(head, "ccomp", "xcomp")
        code = child(said, "dobj", "ccomp", "oprd") if said is not None else None
        if code is not None and meaning is not None:
            return [proposal(MemoryType.shared_lore,
                             f'"{words(list(code.subtree))}" means {phrase(meaning)}',
                             salience=0.7)]
    if c.lemma == "call" and subject is not None and not c.hypothetical \
            and subject.lower_ in ("we", "i", "everyone"):
        whom = child(head, "dobj")
        name = proper(child(head, "oprd", "attr", "npadvmod", "xcomp"))
        if whom is not None and name and whom.pos_ == "PRON" and whom.lower_ != "me":
            named = [t for t in c.sentence.doc[: c.sentence.start + (head.i - c.sentence.start)]
                     if t.pos_ == "PROPN"]
            who = named[-1].text if named else whom.lower_
            return [proposal(MemoryType.shared_lore, f"Calls {who} {name}", salience=0.65)]
    return []


def offered(c: Clause) -> list[Op]:
    """"Pret offered me assistant manager at the Waterloo branch": a new job, said by the
    employer's side."""
    if c.lemma not in ("offer", "hire", "give") or c.subject is None or c.negated:
        return []
    if not any(t.lower_ == "me" for t in c.head.children):
        return []
    role = child(c.head, "dobj")
    # What is given must be a trade: "the support group gave me courage" gives no job.
    if role is None or role.lower_ == "me" or not is_profession(role):
        return []
    org = c.subject.text if c.subject.pos_ == "PROPN" else None
    at = f" at {org}" if org else ""
    return [proposal(MemoryType.profile, f"Works as {phrase(role, frozenset({'det'}))}{at}",
                     slot="job", salience=0.8)]
