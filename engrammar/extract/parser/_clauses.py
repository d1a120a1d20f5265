"""Clause analysis over a dependency parse: who a statement is about and whether it is a fact.

A sentence holds one clause per predicate (its head verb, or the copula's head). For each,
read from the parse rather than from word patterns: the subject and whose it is (the user's,
a relative's or friend's, the assistant's, someone else's), negation, whether it is a
question, a hypothetical or conditional, a wish, quoted or reported speech, its tense, and the
modal chain that turns "I'm going to renew my passport" into a plan to *renew*.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from engrammar.extract.parser._lexicon import DISLIKE, LIKE, OPENERS, REQUEST_VERBS
from engrammar.extract.parser._nlp import past_form

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token


class Owner(StrEnum):
    user = "user"            # I, me, we: the user's own
    relative = "relative"    # my brother, my friend Sam: about that person
    assistant = "assistant"  # you: the assistant, never a fact about the user
    other = "other"          # he, she, it, the weather: about no one we track
    command = "command"      # an imperative addressed to the assistant


RELATIONS = frozenset({
    "wife", "husband", "partner", "spouse", "son", "daughter", "kid", "child", "sister",
    "brother", "sibling", "mom", "mum", "mother", "dad", "father", "parent", "parents",
    "girlfriend", "boyfriend", "fiance", "fiancee", "grandma", "grandmother", "grandpa",
    "grandfather", "aunt", "uncle", "cousin", "niece", "nephew", "friend", "roommate",
    "boss", "coworker", "colleague", "neighbor", "neighbour", "stepson", "stepdaughter",
    "ex", "baby", "twin", "bestie", "bf", "gf", "hubby", "mil", "fil", "mate", "pal",
    "buddy", "manager", "flatmate", "housemate", "teammate", "nan", "gran", "granny",
})
# Kin said without "my" in chat ("mum's diabetic", "nan's 91"): still the user's relative.
KIN = frozenset({"mom", "mum", "mother", "dad", "father", "grandma", "grandpa", "nan",
                 "gran", "granny", "hubby", "wifey"})
# Heads that put what follows in someone else's mouth: "my mom says I work too hard".
SPEECH = frozenset({"say", "tell", "ask", "write", "text", "yell", "shout", "claim",
                    "insist", "reply", "mention"})
# Heads that make their complement unreal: "I wish I lived in Rome", "imagine I were rich".
IRREALIS = frozenset({"wish", "imagine", "suppose", "pretend", "dream", "hope"})
POLITE = frozenset({"prefer", "appreciate", "like", "love", "rather"})
CONDITIONAL = frozenset({"if", "unless", "whether", "suppose", "supposing", "assuming"})
FUTURE_AUX = frozenset({"will", "shall", "'ll", "wo", "gonna"})
HEDGE_AUX = frozenset({"would", "could", "might", "may", "should", "'d"})
# Verbs whose "to" complement is what is planned: "going to X", "need to X".
MODAL_VERBS = frozenset({"go", "need", "have", "plan", "promise", "want", "intend", "hope",
                         "try", "mean", "decide", "got", "get", "gotta", "wanna"})
WH = frozenset({"what", "who", "whom", "where", "when", "why", "how", "which", "whose"})
# The first person's words in the third: how a memory words what the user said.
THIRD_PERSON = {"i": "they", "me": "them", "my": "their", "mine": "theirs",
                "myself": "themself", "am": "are", "'m": "are", "i'm": "they're", "we": "they",
                "our": "their", "us": "them"}


@dataclass
class Clause:
    """One predicate of a sentence, with everything the extractor needs to judge it."""

    head: Token
    sentence: Span
    subject: Token | None
    owner: Owner
    relation: str | None = None
    negated: bool = False
    question: bool = False
    hypothetical: bool = False
    quoted: bool = False
    tense: str = "present"   # past | present | future
    modals: list[str] = field(default_factory=list)
    action: Token | None = None  # the innermost verb of the modal chain
    # Whether its subject is a "he" or "she" standing for the relative an earlier message
    # named; and the name that message gave them ("our son Leo" ... "he's 5").
    earlier: bool = False
    called: str | None = None

    @property
    def lemma(self) -> str:
        lemma = self.head.lemma_.lower()
        return "get" if lemma == "got" else lemma  # "Got the job!": capitalised, unlemmatised

    @property
    def factual(self) -> bool:
        """Not asked, not imagined, not someone else's words."""
        return not (self.question or self.hypothetical or self.quoted)

    def tokens(self) -> list[Token]:
        """The clause's own tokens: its head's subtree minus nested clauses."""
        out: list[Token] = []
        stack = [self.head]
        while stack:
            tok = stack.pop()
            out.append(tok)
            for child in tok.children:
                if child.dep_ in ("conj", "ccomp", "advcl", "parataxis") and _is_clause(child):
                    continue
                if child.dep_ in ("cc", "punct") and child.i > self.head.i and any(
                        c.dep_ == "conj" and _is_clause(c) for c in tok.children):
                    continue
                stack.append(child)
        return sorted(out, key=lambda t: t.i)


def _is_clause(tok: Token) -> bool:
    return tok.pos_ in ("VERB", "AUX") or any(
        c.dep_ in ("nsubj", "nsubjpass", "cop") for c in tok.children)


def subject_of(head: Token) -> Token | None:
    # "omg finally passed my test", "ugh finally sorted the car thing": the small model takes
    # a chat opener for the subject of a sentence that dropped its "I"
    subjects = [c for c in head.children if c.dep_ in ("nsubj", "nsubjpass", "expl", "csubj")
                and not (c.i == c.sent.start and c.lower_ in OPENERS and not any(c.children))
                and not _headed(c, head)]
    if subjects:
        # "no honey either pls, I don't eat ...": the parser may take a fronted topic for a
        # second subject; a personal pronoun right before the verb is the verb's own.
        pronoun = [c for c in subjects if c.i < head.i and c.tag_ == "PRP"]
        return pronoun[-1] if len(subjects) > 1 and pronoun else subjects[0]
    # "I live in Lisbon and work at a bakery": the second verb shares the first's subject;
    # "I want to move": the modal's complement shares it too.
    if head.dep_ in ("conj", "xcomp") and head.head.i != head.i:
        shared = subject_of(head.head)
        if head.dep_ == "conj" and head.tag_ == "VB" and not any(
                c.dep_ in ("aux", "auxpass") for c in head.children) and not any(
                c.tag_ == "MD" or c.dep_ in ("aux", "auxpass") for c in head.head.children
        ) and shared is not None and (_singular_third(shared) or (
                shared.lower_ == "i" and any(c.dep_ == "dobj" and c.lower_ == "me"
                                             for c in head.children))):
            # "it's Joanna ... but call me Jo": a bare verb cannot share "it" (it would be
            # "calls"), nor an "I" it has "me" for object ("I'm Sam but call me Sammy"):
            # it is an imperative of its own.
            return None
        return shared
    return None


def _headed(subject: Token, verb: Token) -> bool:
    """Whether a colon stands between a subject and its verb: "Quick favour: always give
    me ..." heads the sentence with a label, and the verb has no subject of its own."""
    return subject.i < verb.i and any(t.text == ":" for t in subject.doc[subject.i + 1: verb.i])


def _singular_third(subject: Token) -> bool:
    """Whether a subject takes a verb's third person singular: "it", "she", "Dana",
    "the car"."""
    return subject.tag_ in ("NN", "NNP") or subject.lower_ in ("it", "he", "she", "this",
                                                               "that")


def owner_of(subject: Token | None, head: Token,
             antecedent: str | None = None) -> tuple[Owner, str | None]:
    """Whose the clause is; ``antecedent`` is the relative named last in the user's earlier
    messages, for a "she" or "he" whose message names no one."""
    if subject is None:
        # Chat drops the "I": "went to the gym", "got the job!" are the user's; a bare verb
        # ("forget about that") is an imperative.
        if (head.lower_ != head.lemma_.lower() and head.tag_ in ("VBD", "VBN", "VB")) or (
                head.tag_ in ("VB", "VBP") and past_form(head.text)) or (
                head.lower_ == "got") or (head.tag_ == "VBG" and head.i == head.sent.start) or (
                head.lower_ == "going" and child(head, "xcomp") is not None):
            return Owner.user, None
        # "mushrooms tho, love em": chat drops the "I" of a liking too; no one orders the
        # assistant to love something ("prefer" and "appreciate" do make polite requests).
        if head.tag_ in ("VB", "VBP") and head.lemma_.lower() in (LIKE | DISLIKE) - {
                "prefer", "appreciate"} and head.i > head.sent.start:
            return Owner.user, None
        # An infinitive is an order only when it is what "you" are asked to do ("would
        # you be so kind as to put ..."); "I find them hard to read on my phone" orders
        # nothing.
        if any(c.dep_ == "aux" and c.tag_ == "TO" for c in head.children):
            whose = next((s for a in head.ancestors if (s := subject_of(a)) is not None), None)
            asked = whose is not None and whose.lower_ in ("you", "u")
            return (Owner.command if asked else Owner.other), None
        # The tagger reads a request it has seen little ("Scratch that") as a noun.
        command = head.tag_ in ("VB", "VBP") or (
            head.i == head.sent.start and head.lemma_.lower() in REQUEST_VERBS)
        return (Owner.command, None) if command else (Owner.other, None)
    word = subject.lower_
    if word in ("i", "we", "me", "us") or (word == "'s" and subject.head.head.lemma_ == "let"):
        return Owner.user, None
    if word == "you" or word == "u":
        return Owner.assistant, None
    if word in ("he", "she"):
        # "my dad ... he taught chemistry": the relative named last before the pronoun.
        named = _relatives_before(subject)
        if named:
            return Owner.relative, named[-1]
        if antecedent is not None and not any(
                t.ent_type_ == "PERSON" or t.pos_ == "PROPN" or kin(t.lower_)
                for t in subject.doc[: subject.i]):
            # "told my nan I'd pop round" then "she's 91": the same nan, a message later.
            return Owner.relative, antecedent
    conj_user = any(c.lower_ in ("i", "me") for c in subject.conjuncts)
    if conj_user:
        return Owner.user, None
    relation = _relation(subject)
    if relation is not None:
        return Owner.relative, relation
    # "My name is Dana", "my favorite band is Radiohead": the user's, by possession.
    if any(c.dep_ == "poss" and c.lower_ == "my" for c in subject.children) or any(
            c.lower_ in ("favorite", "favourite") for c in subject.children):
        return Owner.user, None
    if subject.lower_ in KIN and not any(c.dep_ in ("det", "poss") for c in subject.children):
        return Owner.relative, subject.lower_
    return Owner.other, None


def _relatives_in(tokens: Iterable[Token]) -> list[str]:
    """The relatives ``tokens`` name, in order: "my dad", "mum", and whoever or whatever
    the user names ("a sister called Jo", "a beagle called Rolo"): what a later "he" or
    "she" is."""
    tokens = list(tokens)
    kin_ = [_relation(t) or t.lower_ for t in tokens if _relation(t) is not None or (
        t.lower_ in KIN and not any(c.dep_ in ("det", "poss") for c in t.children))]
    # (a relative said with "my" comes first for a he or she: "my dad recommended a
    # podcast called Serial, he listens every night")
    named = [t.lower_ for t in tokens if _named_being(t) and _relation(t) is None]
    return named + kin_


def _named_being(noun: Token) -> bool:
    """A noun given a name by "called" or "named": "a beagle called Rolo"."""
    return noun.pos_ == "NOUN" and any(
        c.dep_ == "acl" and c.lemma_.lower() in ("call", "name")
        and any(g.pos_ == "PROPN" for g in c.children) for c in noun.children)


def _relatives_before(subject: Token) -> list[str]:
    """The relatives its message names before ``subject``."""
    return _relatives_in(subject.doc[: subject.i])


def last_relative(doc: Doc) -> str | None:
    """The relative named last in ``doc`` ("my nan", "mum"), what a later "she" refers to."""
    named = _relatives_in(doc)
    return named[-1] if named else None


def _relation(noun: Token) -> str | None:
    """"my brother", "my best friend", "my daughter's name": the relative it is about."""
    for tok in (noun, *[c for c in noun.children if c.dep_ == "poss"]):
        lemma = tok.lemma_.lower()
        if (kin(lemma) or kin(tok.lower_)) and any(
                c.lower_ in ("my", "our") for c in tok.children if c.dep_ == "poss"):
            best = any(c.lower_ == "best" for c in tok.children)
            return ("best " if best else "") + tok.lower_
    # "my paddy Chiamaka", "my physio Dele": a noun the user names someone by is that
    # person's relation to them, whether or not the word is one the list knows.
    if noun.pos_ == "NOUN" and any(c.dep_ == "poss" and c.lower_ in ("my", "our")
                                   for c in noun.children) and any(
            c.dep_ == "appos" and c.pos_ == "PROPN" for c in noun.children):
        return noun.lower_
    return None


# A relation made of another: "grandson", "stepmum", "godmother", "half-sister",
# "sister-in-law".
_KIN_PREFIXES = ("great-", "grand", "step", "god", "half-", "half")


def kin(word: str) -> bool:
    """Whether ``word`` names a relation: one of RELATIONS, or one made of it."""
    word = word.removesuffix("-in-law")
    if word in RELATIONS:
        return True
    for prefix in _KIN_PREFIXES:
        if word.startswith(prefix) and len(word) > len(prefix) + 2:
            return kin(word[len(prefix):])
    return False


def _negated(head: Token) -> bool:
    for c in head.children:
        # "I live in Porto now, not Lisbon": a "not" after the predicate contrasts a value,
        # it does not deny the statement (except right after a copula: "I'm not a nurse").
        if (c.dep_ == "neg" or c.lower_ == "never") and (
                c.i < head.i or (c.i == head.i + 1 and head.lemma_ == "be")):
            return True
    return head.dep_ == "xcomp" and _negated(head.head)


WH_TAGS = frozenset({"WRB", "WP", "WDT", "WP$"})  # Penn tags of wh-words


def _question(sentence: Span) -> bool:
    text = sentence.text.rstrip()
    if text.endswith("?"):
        return True
    first = sentence[0]
    # "Do you think ...", "Where is ...": inversion or a wh-word leading the sentence.
    if first.lower_ in WH and len(sentence) > 2 and sentence[1].pos_ in ("AUX", "VERB"):
        return True
    if (first.pos_ == "AUX" and first.dep_ == "aux" and len(sentence) > 1
            and sentence[1].dep_ in ("nsubj", "nsubjpass")):
        return True
    # "how long do ye boil an egg for", "Ada here, how do I ...": chat leaves the question
    # mark off. A wh-word opening the sentence or a clause (after a comma or a conjunction)
    # and an auxiliary inverted with its subject within the next few words.
    for tok in sentence:
        before = tok.doc[tok.i - 1] if tok.i > sentence.start else None
        if tok.tag_ in WH_TAGS and (before is None or before.is_punct
                                     or before.pos_ in ("CCONJ", "INTJ")):
            ahead = tok.doc[tok.i + 1: min(tok.i + 4, sentence.end - 1)]
            if any(a.pos_ == "AUX" and a.dep_ in ("aux", "ROOT") and a.i + 1 < sentence.end
                   and tok.doc[a.i + 1].dep_ in ("nsubj", "nsubjpass", "expl")
                   for a in ahead):
                return True
            if _wh_then_verb(tok, sentence):
                return True
    return False


def _wh_then_verb(wh: Token, sentence: Span) -> bool:
    """"whats the capital of burkina faso", "how many hearts has an octopus got": a wh-word
    (with "many" or "much" and its noun) straight before a form of "be", "have" or "do" or
    a modal, which no statement has ("what I want is ..." puts a subject between)."""
    n = wh.i + 1
    if wh.lower_ == "how" and n < sentence.end and wh.doc[n].lower_ in ("many", "much"):
        n += 1
        while n < sentence.end and wh.doc[n].pos_ in ("NOUN", "ADJ"):
            n += 1
    if n >= sentence.end - 1 or (n == wh.i + 1 and wh.tag_ not in ("WP", "WRB")):
        return False
    verb = wh.doc[n]
    return verb.tag_ in ("VBZ", "VBP", "VBD", "MD") and (
        verb.lemma_.lower() in ("be", "have", "do") or verb.tag_ == "MD"
        or verb.lower_ in ("s", "'s", "re", "'re"))


def supposing(verb: Token) -> bool:
    """A bare "say" that supposes what it says: "say I was vegan", "let's say I'm 40"
    (not "I say we go", "my mum would say I was spoilt")."""
    return verb.lemma_.lower() == "say" and verb.tag_ in ("VB", "VBP") and not any(
        c.dep_ in ("nsubj", "aux") and c.lower_ not in ("'s", "us") for c in verb.children)


def hypothetical(head: Token) -> bool:
    """Whether the clause of ``head`` is only supposed, wished or hedged."""
    tok: Token | None = head
    while tok is not None:
        if _conditional(tok):
            # "I'd prefer if you didn't mention it": a polite request, not a supposition.
            return tok.head.lemma_.lower() not in POLITE
        you = any(c.dep_ == "nsubj" and c.lower_ == "you" for c in tok.children)
        # "told my nan I'd pop round sunday": a promise reported, not a supposition.
        promised = tok.dep_ == "ccomp" and tok.head.lemma_.lower() in ("tell", "promise")
        if tok.dep_ in ("ccomp", "xcomp") and (tok.head.lemma_.lower() in IRREALIS
                                               or supposing(tok.head)):
            return True
        if any(c.lower_ == "hypothetically" for c in tok.children) or (
                tok.i == head.i and supposing(tok)):
            return True  # "hypothetically I quit my job tomorrow", "let's say ..." itself
        # "I'd love to", "I would move", "I'd have been a vet": a hedge, unless it is an
        # ordinary polite request. "'d" is "would" only as a modal ("I'd eaten": "had").
        if tok.i == head.i and not you and not promised and any(
                c.dep_ == "aux" and c.lower_ in ("would", "could", "might", "'d")
                and c.tag_ == "MD" for c in tok.children):
            return True
        if tok.dep_ == "ROOT" or tok.head.i == tok.i:
            break
        tok = tok.head if tok.dep_ in ("xcomp", "ccomp", "conj", "advcl") else None
    # The main clause of a conditional: "if I had a dog I'd call him Rex", "if I move to
    # Spain, I will learn Spanish". Only what the speaker is doing now, under a condition
    # in the present, is real: "I'm building a chest, if I can get the lid to sit right".
    # ("if I move to Skye, I must learn to drive": what it would take, no plan yet)
    ahead = any(c.dep_ == "aux" and (c.lower_ in FUTURE_AUX or c.lower_ in HEDGE_AUX
                                     or c.lower_ in ("must", "ought"))
                for c in head.children) or (
        head.lemma_.lower() in ("go", "have", "need") and child(head, "xcomp") is not None)
    return head.lemma_.lower() not in POLITE and any(
        c.dep_ == "advcl" and _conditional(c) and (ahead or _unreal(c))
        for c in head.children)


def _conditional(tok: Token) -> bool:
    """Whether ``tok`` heads a clause marked as a condition: "if ...", "unless ..."."""
    return any(m.dep_ == "mark" and m.lower_ in CONDITIONAL for m in tok.children)


def in_condition(head: Token) -> bool:
    """Whether a clause's head is in a condition ("if I can get the lid to sit right")
    hung on another clause."""
    tok = head
    while tok.dep_ != "ROOT" and tok.head.i != tok.i:
        if tok.dep_ == "advcl" and _conditional(tok):
            return True
        tok = tok.head
    return False


def _unreal(condition: Token) -> bool:
    """Whether a condition is unreal or doubtful: its verb in the past ("if I won") or
    nothing of the present about it. A condition in the present ("if I can get the lid
    right", "if the visa comes through") leaves its main clause real."""
    verbs = [condition, *(c for c in condition.children if c.dep_ in ("aux", "auxpass"))]
    return not any(v.tag_ in ("VBZ", "VBP", "MD") and v.lower_ not in ("could", "would",
                                                                      "might", "'d")
                   for v in verbs)


def _quoted(head: Token, doc: Doc) -> bool:
    quotes = [t.i for t in doc if t.text in ('"', "“", "”", "«", "»")]
    before = sum(1 for q in quotes if q < head.i)
    if before % 2 == 1:
        return True
    # "the doctor says my A1C came back at 7.8": said of a thing of the user's, the report
    # is a fact of theirs; of the user themself ("my boss said I work too hard") it is a
    # judgement, and of anyone else ("my friend said she's moving") that person's word
    return reported(head) and not _of_the_user(subject_of(head))


def reported(head: Token) -> bool:
    """Whether a clause is what someone other than the user said: "my friend said ...",
    "mum says ..."."""
    tok = head
    while tok.dep_ in ("ccomp", "parataxis") and tok.head.i != tok.i:
        parent = tok.head
        if parent.lemma_.lower() in SPEECH:
            speaker = subject_of(parent)
            # "I'm so excited to tell you I started a class": the one who tells is the
            # subject of the clause the infinitive hangs from.
            up = parent
            while speaker is None and up.dep_ in ("xcomp", "acomp") and up.head.i != up.i:
                up = up.head
                speaker = subject_of(up)
            # "told my nan I'd pop round": chat drops the "I" of the user's own report.
            mine = speaker is None and parent.tag_ in ("VBD", "VBN")
            if not mine and (speaker is None or speaker.lower_ not in ("i", "we")):
                return True
        tok = parent
    return False


def _of_the_user(subject: Token | None) -> bool:
    """Whether a subject is something of the user's: "my A1C", "our offer"."""
    return subject is not None and any(
        c.dep_ == "poss" and c.lower_ in ("my", "our") for c in subject.children)


def _tense(head: Token, chain: list[Token]) -> str:
    auxes = [c for t in chain for c in t.children if c.dep_ in ("aux", "auxpass")]
    words = {a.lower_ for a in auxes}
    if words & FUTURE_AUX or any(t.lemma_ == "go" and t.tag_ == "VBG" for t in chain[:-1]):
        return "future"
    if head.tag_ == "VBD" or words & {"did", "had", "was", "were"} or (
            head.tag_ in ("VB", "VBP") and not auxes and past_form(head.text)) or (
            head.tag_ == "VBN" and words & {"have", "'ve", "has", "'s"}):
        return "past"
    return "present"


def _chain(head: Token) -> list[Token]:
    """The modal chain from the head down its "to" complements: going -> to renew."""
    chain = [head]
    tok = head
    while True:
        nxt = next((c for c in tok.children if c.dep_ == "xcomp" and c.pos_ in ("VERB", "AUX")),
                   None)
        if nxt is None or tok.lemma_.lower() not in MODAL_VERBS:
            return chain
        chain.append(nxt)
        tok = nxt


def heads(sentence: Span) -> Iterator[Token]:
    """Each predicate of ``sentence``: the root and every clause joined to it."""
    for tok in sentence:
        if tok.dep_ == "ROOT" or (tok.dep_ in ("conj", "ccomp", "advcl", "parataxis")
                                  and _is_clause(tok)):
            yield tok


def analyse(doc: Doc, antecedent: str | None = None,
            called: str | None = None) -> list[Clause]:
    """Every clause of ``doc``, in order; ``antecedent`` as for ``owner_of``, ``called``
    the name an earlier message gave it."""
    out: list[Clause] = []
    for sentence in doc.sents:
        question = _question(sentence)
        for head in heads(sentence):
            subject = subject_of(head)
            owner, relation = owner_of(subject, head, antecedent)
            chain = _chain(head)
            # a "he" or "she" that stands for the earlier message's relative
            earlier = relation is not None and relation == antecedent and subject is not None \
                and subject.lower_ in ("he", "she") and not _relatives_before(subject)
            out.append(Clause(
                head=head, sentence=sentence, subject=subject, owner=owner, relation=relation,
                negated=_negated(head), question=question, hypothetical=hypothetical(head),
                quoted=_quoted(head, doc), tense=_tense(head, chain),
                modals=[t.lemma_.lower() for t in chain[:-1]],
                action=chain[-1] if len(chain) > 1 else None,
                earlier=earlier, called=called if earlier else None))
    return out


# -- the clause as text ------------------------------------------------------------------


def words(tokens: Sequence[Token]) -> str:
    """The tokens as text, first person turned third: "my passport" -> "their passport"."""
    out: list[str] = []
    for n, tok in enumerate(tokens):
        word = THIRD_PERSON.get(tok.lower_, tok.text) if tok.pos_ in ("PRON", "AUX") else tok.text
        if tok.lower_ == "was" and n and tokens[n - 1].lower_ == "i":
            word = "were"  # "I was 19" -> "they were 19" ("was" alone may be anyone's)
        if word != tok.text and tok.text.startswith("'") and out:
            word = " " + word  # "I'm" -> "they are", not "theyare"
        # A token left out ("I'll" without its "'ll") must not glue its neighbours.
        gap = n + 1 < len(tokens) and tokens[n + 1].i != tok.i + 1 \
            and not tokens[n + 1].is_punct
        out.append(word + (" " if gap else tok.whitespace_))
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
    """``tok``'s subtree as text, leaving out relative clauses and the deps in ``skip``
    (each with its own subtree)."""
    dropped = {"relcl", *skip}
    keep = []
    for t in tok.subtree:
        node, out = t, False
        while node.i != tok.i:
            if node.dep_ in dropped:
                out = True
                break
            node = node.head
        if not out:
            keep.append(t)
    return words(keep)


def cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def child(tok: Token, *deps: str) -> Token | None:
    return next((c for c in tok.children if c.dep_ in deps), None)


def prep_object(tok: Token, *preps: str) -> Token | None:
    for child in tok.children:
        if child.dep_ in ("prep", "dative") and child.lower_ in preps:
            return next((c for c in child.children if c.dep_ == "pobj"), None)
    return None


def proper(tok: Token | None) -> str | None:
    """A name: the proper-noun run at ``tok`` ("Art Gallery of Ontario" kept whole)."""
    if tok is None or (tok.pos_ != "PROPN" and not tok.text[:1].isupper()):
        return None
    return phrase(tok, frozenset({"punct", "cc", "conj"}))


# Chat filler that ends a clause without being part of what it says.
_TAILS = ("btw", "tbh", "lol", "haha", "honestly", "ok", "okay", "pls", "please", "anymore",
          "any more", "these days", "nowadays", "though", "too", "really", "so much", "a lot",
          "lately", "now")


# A name said to the listener at the end: "I like the thought, Nate".
_VOCATIVE = re.compile(r",\s*[A-Z][a-z]+[!.]*$")


def trim(text: str) -> str:
    """``text`` without the chat filler at its end ("cilantro tbh" -> "cilantro") and without
    a name said to the listener ("..., Nate")."""
    text = _VOCATIVE.sub("", text)
    changed = True
    while changed:
        changed = False
        for tail in _TAILS:
            if text.lower().endswith(" " + tail):
                text, changed = text[: -len(tail) - 1].rstrip(" ,"), True
    return text
