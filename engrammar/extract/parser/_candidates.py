"""Candidates, recall first: every clause in which the speaker says something about
themselves or their people, whatever its verb, as a third-person clause in their own words.

Whether a candidate is worth keeping, and as what, is not decided here: the learned model
(``parser._decisions``) reads each candidate's features. The parse decides only what a parse
can: whose fact it is, whether it is asked, imagined or quoted, its polarity and tense.
The content keeps every word of the clause but the subject "I" (a memory is about the user
already), so names, numbers, places and negations survive, and no word is ever cut.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from engrammar.extract.parser._clauses import Clause, said_part
from engrammar.extract.parser._events import MAYBE
from engrammar.extract.parser._mood import HEDGE_AUX, spliced_before
from engrammar.extract.parser._nlp import past_form
from engrammar.extract.parser._owners import Owner, calling, relatives_before, standing_for
from engrammar.extract.parser._phrases import cap, named, words
from engrammar.extract.parser._questions import opening

if TYPE_CHECKING:
    from spacy.tokens import Token

# Shorter than this many words, a clause says nothing to keep ("I know", "I did").
MIN_WORDS = 2
# Longer than this many characters, a candidate is cut at the last whole word before it,
# and only at a clause's end if one is there: a memory is a sentence, not a paragraph.
MAX_CHARS = 240
# The first person's verb forms in the third person, for a clause whose "I" is dropped.
_THIRD_VERB = {"am": "is", "'m": "is", "m": "is", "was": "was", "have": "has", "'ve": "has",
               "do": "does", "are": "is", "were": "was", "ca": "can", "wo": "will"}
# The words that put a date behind: "last month", "a year ago", "yesterday".
_PAST_MARKS = frozenset({"last", "ago", "yesterday"})
# Clause-internal connectors that begin no memory of their own.
_LEADING = frozenset({"and", "but", "so", "or", "because", "cause", "cos", "then", "also"})


@dataclass
class Candidate:
    """One sentence proposed for keeping: the first clause in it about the speaker or their
    people (what the parse says of it), its words, and the content it would be stored as."""

    clause: Clause
    tokens: list[Token]
    content: str
    clauses: int = 1  # how many of the sentence's clauses are the speaker's own

    @property
    def owner(self) -> Owner:
        return self.clause.owner


def candidates(clauses: list[Clause]) -> list[Candidate]:
    """Each sentence with a stated clause about the speaker or their people, whole: the
    clauses around it carry the what and the why ("went to a support group yesterday and
    it was so powerful")."""
    out: list[Candidate] = []
    by_sentence: dict[int, list[Clause]] = {}
    for c in clauses:
        by_sentence.setdefault(c.sentence.start, []).append(c)
    for every in by_sentence.values():
        # what a sentence asks is left out of it ("my son just turned six, any ideas?")
        said = [c for c in every if not c.question]
        if any(t.lower_ in MAYBE for t in every[0].sentence):
            continue  # a maybe: nothing of it is a fact
        if not said or not all(c.factual for c in said):
            # a question, a wish, quoted words: nothing of it is a fact but the reason it
            # gives ("As I use a wheelchair these days, I wonder whether you might ...")
            reason = next((c for c in said if c.factual and stated(c) and gives_reason(c)),
                          None)
            if reason is not None:
                out += clause_candidates([reason])
            continue
        own = [c for c in said if stated(c)]
        if own:
            tokens = _spoken(said_part(own[0].sentence, every))
            if len(said) == len(every) and all(gives_reason(c) for c in own):
                # a reason given for an order or a frame is the fact, not the sentence:
                # "Since I am type 2 diabetic, kindly suggest some snacks"
                tokens = _spoken(_own_words(own[0]))
            content = third_person(own[0], tokens)
            if len(content.split()) >= MIN_WORDS:
                out.append(Candidate(own[0], tokens, content, len(own)))
    return out


def stated(c: Clause) -> bool:
    """A main clause about the speaker or their people, said as so: not hedged ("I'd",
    "might"), not the object of a verb of saying or remembering."""
    return (c.owner in (Owner.user, Owner.relative) and c.factual
            and (c.head.dep_ in ("ROOT", "conj") or spliced_before(c.head) or c.told)
            and not any(m in HEDGE_AUX for m in c.modals)
            and not any(t.lower_ in HEDGE_AUX for t in c.head.children if t.dep_ == "aux")
            # (what another person says is their word: "my nan used to say ...", and what
            # anyone but the speaker says in quotes: "my oupa always said '...'")
            and not (c.owner is Owner.relative and c.saying)
            and not (c.saying and c.subject is not None and c.subject.lower_ not in ("i", "we")
                     and any(t.is_quote for t in c.sentence if t.i > c.head.i)))


def clause_candidates(clauses: list[Clause]) -> list[Candidate]:
    """Clauses of their own, each a candidate: the speaker's stated main or coordinated
    clauses, their own tokens alone ("and I'm learning the oboe" -> "Is learning the oboe")."""
    out: list[Candidate] = []
    for c in clauses:
        if not stated(c):
            continue
        tokens = _spoken(_own_words(c))
        content = third_person(c, tokens)
        if len(content.split()) >= MIN_WORDS:
            out.append(Candidate(c, tokens, content))
    return out


def gives_reason(c: Clause) -> bool:
    """Whether a clause states as a reason it gives (``_questions.given_reasons``)."""
    return c.told and c.head.dep_ == "advcl" and opening(c.head) is not None


def _own_words(c: Clause) -> list[Token]:
    """The clause's own words, without the word that gives it as a reason."""
    edge = opening(c.head) if gives_reason(c) else None
    return [t for t in c.tokens() if edge is None or t.i != edge.i]


def _spoken(tokens: list[Token]) -> list[Token]:
    """The sentence without the openers that say nothing ("Yeah,", "Wow!", "Oh and")."""
    while tokens and (tokens[0].is_punct or tokens[0].pos_ == "INTJ"
                      or tokens[0].lower_ in _LEADING or calling(tokens[0])):
        tokens = tokens[1:]
    return tokens


def third_person(c: Clause, tokens: list[Token]) -> str:
    """The words in the third person, a leading "I" dropped and its verb agreeing: "I've
    been painting lately" -> "Has been painting lately"; "my sister moved to Leeds" ->
    "Their sister moved to Leeds"."""
    subject = c.subject
    if subject is None and c.owner is Owner.user and tokens and tokens[0].i == c.head.i \
            and c.head.tag_ in ("VB", "VBP") and c.head.lower_ == c.head.lemma_.lower() \
            and not past_form(c.head.text) and not _said_past(c.head):
        # the "I" chat dropped: "want to learn the cello" -> "Wants to learn the cello"
        return _cut(cap(third(c.head.lower_) + _rest(tokens)))
    if (subject is None or (subject.lower_ == "i" and all(t.i != subject.i for t in tokens))) \
            and c.owner is Owner.user and tokens and tokens[0].head.i == c.head.i \
            and tokens[0].dep_ in ("aux", "auxpass") and tokens[0].lower_ in _THIRD_VERB:
        # the second verb of an "I" said once: "I taught for 38 years and have been
        # retired since 2012" -> "Has been retired since 2012"
        return _cut(cap(_agree(tokens[0]) + _rest(tokens)))
    if subject is not None and subject.lower_ == "i" and len(tokens) > 1 \
            and tokens[0].i == subject.i:
        tokens = tokens[1:]
        # the verb after the adverbs before it: "I still live" -> "Still lives"
        lead = 0
        while lead + 1 < len(tokens) and tokens[lead].pos_ == "ADV" \
                and tokens[lead].dep_ in ("advmod", "neg") and tokens[lead + 1].pos_ in (
                    "ADV", "VERB", "AUX"):
            lead += 1
        before = words(tokens[:lead])
        said = _agree(tokens[lead]) + _rest(tokens[lead:])
        return _cut(cap(f"{before} {said}" if before else said))
    pronoun = standing_for(subject)
    if pronoun is not None and tokens[0].i == pronoun.i and c.relation and (
            c.earlier or relatives_before(pronoun, since=pronoun.sent.start)):
        # "she's into gardening" after "mum's birthday on Sunday": whose the fact is lives
        # in an earlier message, or in the words of its sentence before it, which the
        # memory does not keep (the question of "how do I get my dad to accept a carer now
        # his Parkinson's is getting worse?"); read alone (and found by a query for
        # "mum"), it must name her. (Named in a sentence before, the memory carries it.)
        who = f"{c.relation} {c.called}" if c.called else c.relation  # "their friend Sourav"
        if pronoun is not subject:  # "his eyesight is going" -> "Their father's eyesight"
            return _cut(cap(f"their {who}'s {words(tokens[1:])}"))
        return _cut(cap(named(f"their {who}", tokens[1:])))
    return _cut(cap(words(tokens)))


def _agree(verb: Token) -> str:
    """The first word after a dropped "I", in the third person."""
    low = verb.lower_
    if low in _THIRD_VERB:
        return _THIRD_VERB[low]
    if verb.tag_ == "VBP" and verb.pos_ in ("VERB", "AUX") and not _said_past(verb):
        return third(verb.lemma_.lower() if low not in ("ca", "wo") else low)
    return verb.text


def _said_past(verb: Token) -> bool:
    """A verb whose past is its present ("quit", "put", "cut") said with a time behind:
    "I quit smoking last month" is no "Quits smoking"."""
    return verb.lower_ == verb.lemma_.lower() and any(
        t.lower_ in _PAST_MARKS for c in verb.children
        if c.dep_ not in ("ccomp", "xcomp", "advcl", "conj") for t in c.subtree)


def _rest(tokens: list[Token]) -> str:
    first = tokens[0]
    text = words(tokens[1:])
    if not text:
        return ""
    # ("I am, for now": the comma goes with the words' edge, and "for" must not glue on)
    glued = first.whitespace_ == "" and not tokens[1].text.startswith("'") \
        and not tokens[1].is_punct
    joiner = "" if glued else " "
    if tokens[1].text.startswith("n't") or tokens[1].lower_ == "n't":
        return " not" + text[3:]
    return joiner + text


def third(verb: str) -> str:
    """The third person singular of a verb: "cycle" -> "cycles", "go" -> "goes"."""
    if verb in ("ca", "can"):
        return "can"
    if verb == "wo":
        return "will"
    if verb == "have":
        return "has"
    if verb.endswith(("s", "sh", "ch", "x", "o", "z")):
        return f"{verb}es"
    if verb.endswith("y") and verb[-2:-1] not in "aeiou":
        return f"{verb[:-1]}ies"
    return f"{verb}s"


def _cut(text: str, limit: int = MAX_CHARS) -> str:
    """At most ``limit`` characters, cut after a whole word (never inside one)."""
    text = text.strip(" .,!?;:-")
    if len(text) <= limit:
        return text
    head = text[:limit + 1]
    for mark in (", ", "; ", " - "):
        at = head.rfind(mark)
        if at > limit // 2:
            return head[:at].strip(" .,!?;:-")
    return head[:head.rfind(" ")].strip(" .,!?;:-")
