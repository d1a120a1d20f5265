"""Whose a clause is: the user's, a relative's or friend's, the assistant's, or no one's.

Read from the parse: the subject of a predicate (or the one it shares with the verb it is
joined to), then what that subject is. "I" and "we" are the user; "you" the assistant; "my
brother", "mum", "my physio Dele" a relative; a "he" or "she" the relative named last before
it, in its message or an earlier one. A verb with no subject is the user's when chat dropped
the "I" ("went to the gym"), and an order to the assistant when it is bare ("forget that").
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from enum import StrEnum
from typing import TYPE_CHECKING

from engrammar.extract.parser._lexicon import (
    DISLIKE,
    KIN,
    LIKE,
    OPENERS,
    PETS,
    REQUEST_VERBS,
    kin,
)
from engrammar.extract.parser._nlp import past_form
from engrammar.extract.parser._phrases import child, dropped_my, the_kin

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token


class Owner(StrEnum):
    user = "user"            # I, me, we: the user's own
    relative = "relative"    # my brother, my friend Sam: about that person
    assistant = "assistant"  # you: the assistant, never a fact about the user
    other = "other"          # he, she, it, the weather: about no one we track
    command = "command"      # an imperative addressed to the assistant


# Relations whose word says whether a "she" or a "he" stands for them (the ends of words:
# "stepmum", "grandson"); the others ("partner", "cousin", "friend") may be either.
_SHE = ("wife", "mom", "mum", "mother", "sister", "daughter", "girlfriend", "gf", "fiancee",
        "grandma", "aunt", "niece", "nan", "gran", "granny", "wifey", "mil")
_HE = ("husband", "dad", "father", "brother", "son", "boyfriend", "bf", "fiance", "grandpa",
       "uncle", "nephew", "hubby", "fil")


# Verbs that take a "to" and make no order: "need to", "want to", "have to", "hope to".
_UNORDERED = frozenset({"need", "want", "have", "hope", "intend", "wanna", "gotta"})


# The words that call to the listeners: "y'all", "guys" ("y'" as the tokenizer cuts it;
# not "you": "you, my friend, are a genius" is said of the listener).
_LISTENERS = frozenset({"y'", "y'all", "yall", "guys"})


def _named_before(tok: Token) -> bool:
    """Whether a noun or pronoun comes before ``tok`` in its stretch of the sentence (back
    to the last mark of punctuation)."""
    for t in reversed(tok.doc[tok.sent.start:tok.i]):
        if t.is_punct:
            return False
        if t.pos_ in ("NOUN", "PROPN", "PRON") and t.lower_ not in OPENERS:  # ("lol", "omg")
            return True
    return False


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
        subject = pronoun[-1] if len(subjects) > 1 and pronoun else subjects[0]
        return addressed(subject) or subject
    # "I'm Winnie, 29, doing compliance": the parser may hang the subject on a "be" it
    # took for the verb's auxiliary.
    for aux in head.children:
        if copula_as_aux(aux):
            return next(c for c in aux.children if c.dep_ in ("nsubj", "nsubjpass"))
    # "I live in Lisbon and work at a bakery": the second verb shares the first's subject;
    # "I want to move": the modal's complement shares it too.
    # "I'm Aroha, 27, studying nursing": a participle hung on a clause, with no word to
    # join it, is said of that clause's subject.
    participle = head.dep_ == "advcl" and head.tag_ == "VBG" and head.i > head.head.i \
        and not any(c.dep_ in ("mark", "aux") for c in head.children)
    if (head.dep_ in ("conj", "xcomp") or participle) and head.head.i != head.i:
        shared = subject_of(head.head)
        if participle and (shared is None or shared.lower_ not in ("i", "we")):
            # (only the speaker's: "stepdaughter is 16 and can't stand me, trying my best"
            # is the speaker trying)
            return None
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
        if head.dep_ == "conj" and shared is not None and _singular_third(shared) and any(
                c.dep_ in ("dobj", "dative") and c.lower_ in ("him", "her")
                for t in (head, *_complements(head)) for c in t.children):
            # "my husband's just been made watch manager, want to do him a surprise tea":
            # a "him" is never the subject of its own clause, so the verb does not share
            # the husband; chat dropped its "I".
            return None
        return shared
    return None


def copula_as_aux(tok: Token) -> bool:
    """A "be" with a subject and a complement of its own that the parser hung on the verb
    after it as its auxiliary: "hi, I'm Winnie, 29, doing compliance at a bank" ("I'm
    doing", and no one named). It is a clause of its own, and lends the verb its subject."""
    return tok.dep_ == "aux" and tok.lemma_.lower() == "be" and tok.i < tok.head.i and any(
        c.dep_ in ("attr", "acomp") for c in tok.children) and any(
        c.dep_ in ("nsubj", "nsubjpass") for c in tok.children)


def _complements(head: Token) -> list[Token]:
    """The chain of "to" complements under a verb: want -> to do."""
    out = []
    tok = head
    while (nxt := next((c for c in tok.children if c.dep_ == "xcomp"), None)) is not None:
        out.append(nxt)
        tok = nxt
    return out


def addressed(subject: Token) -> Token | None:
    """The one a sentence is about when its subject is only the listeners it calls to:
    "y'all my baby sister got into nursing school" (the parser's subject "y'all", and "my
    sister" hung on it as an appositive)."""
    if subject.lower_ not in _LISTENERS:
        return None
    return next((c for c in subject.children if c.dep_ == "appos" and any(
        p.dep_ == "poss" and p.lower_ in ("my", "our") for p in c.children)), None)


def calling(tok: Token) -> bool:
    """Whether a word only calls to the listeners before what is said of someone: the
    "y'all" of "y'all my baby sister got into nursing school" (``addressed``)."""
    return tok.dep_ in ("nsubj", "nsubjpass") and addressed(tok) is not None


def _headed(subject: Token, verb: Token) -> bool:
    """Whether the sentence is headed with a label, and the verb has no subject of its own:
    a colon between a subject and its verb ("Quick favour: always give me ..."), or a
    comma after a singular noun with no article ("bit of background, left
    teaching in July", "one thing, please don't bring up my dad"), which English does not
    take for a subject."""
    if subject.i >= verb.i:
        return False
    between = subject.doc[subject.i + 1: verb.i]
    if any(t.text == ":" for t in between):
        return True
    # (a subject the parse made of a mark alone: the "-" of "my ex-boyfriend is ...")
    end = max((t.i for t in subject.subtree if not t.is_punct), default=subject.i)
    rest = subject.doc[end + 1: verb.i]
    # An adverb may stand between the label and its comma ("one thing though, ...").
    comma = next((t.i for t in rest if t.text == ","), None)
    if comma is None or not all(t.pos_ in ("ADV", "INTJ") for t in subject.doc[end + 1: comma]
                                ) or not all(t.pos_ in ("PUNCT", "ADV", "AUX", "PART", "INTJ")
                                             for t in rest):
        return False
    # A thing named first and set off before a bare verb of the requests about memory is
    # what the bidding is about, not its subject ("the stuff about my old job, just forget
    # it", "my ex, don't mention him"): a subject would take "forgets", "mentions". (Not
    # any bare verb: the tagger gives chat's present tense the base form often enough.)
    # It is taken up again by a pronoun ("forget it", "bring him up", "talk about it"):
    # "ages 2 to 16, don't ask" is a shrug, not a bidding about the ages.
    return (subject.tag_ == "NN" and not any(
        c.dep_ in ("det", "poss") for c in subject.children)) or (
        verb.tag_ == "VB" and verb.lemma_.lower() in REQUEST_VERBS
        and subject.pos_ in ("NOUN", "PROPN") and resumed(verb))


def resumed(verb: Token) -> bool:
    """Whether a verb takes up a thing said before it with a pronoun: its object ("forget
    it", "don't mention him") or the object of its particle or "about"."""
    return any(t.pos_ == "PRON" and ((t.head.i == verb.i and t.dep_ == "dobj") or (
        t.dep_ == "pobj" and t.head.head.i == verb.i)) for t in verb.subtree)


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
        # An order takes no modal: "can't sleep thinking about it", "should be home by 6"
        # dropped their "I" ("don't" is the order's own: "don't mention it"). Not when a
        # noun the parse did not make the subject comes right before ("pls my boyfriend
        # Cian cant stand them"): it is the subject.
        modal = next((c for c in head.children if c.dep_ == "aux" and c.tag_ == "MD"), None)
        if modal is not None and not _named_before(modal):
            return Owner.user, None
        # "need to plan a braai for Saturday, can you help?": a verb no one is ordered to
        # do, with its "to", is the speaker's own need or wish
        if head.lemma_.lower() in _UNORDERED and any(
                c.dep_ == "xcomp" and any(a.tag_ == "TO" for a in c.children)
                for c in head.children):
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
    pronoun = standing_for(subject)
    if pronoun is not None:
        # "my dad ... he taught chemistry": the relative named last before the pronoun
        # (or before "his" or "her" on the subject: "... for my father? His eyesight is
        # going").
        word = pronoun.lower_
        named = relatives_before(pronoun)
        if named:
            return Owner.relative, named[-1]
        if antecedent is not None and _agrees(word, antecedent) and not any(
                t.ent_type_ == "PERSON" or t.pos_ == "PROPN" or kin(t.lower_)
                for t in subject.doc[: pronoun.i]):
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
    if dropped_my(subject) or the_kin(subject) or (subject.lower_ in KIN and not any(
            c.dep_ in ("det", "poss") for c in subject.children)):
        return Owner.relative, subject.lower_
    return Owner.other, None


# Verbs of telling: a "he" or "she" who tells of a thing is someone else than the thing.
_REPORTING = frozenset({"say", "tell", "reckon", "think"})


@functools.cache
def english() -> frozenset[str]:
    """The whole words of the embedder's WordPiece vocabulary (all-MiniLM-L6-v2's, English):
    a word it cuts into pieces ("tita", "namorada", "bhabhi") is none of them."""
    from engrammar.runtime._embedder import minilm_tokenizer_file

    vocab = json.loads(minilm_tokenizer_file().read_text(encoding="utf-8"))["model"]["vocab"]
    return frozenset(w for w in vocab if w.isalpha())


def _relatives_in(tokens: Iterable[Token]) -> list[str]:
    """The relatives ``tokens`` name, in order: "my dad", "mum", and whoever or whatever
    the user names ("a sister called Jo", "a beagle called Rolo"): what a later "he" or
    "she" is."""
    tokens = list(tokens)
    kin_ = [_relation(t) or t.lower_ for t in tokens if _relation(t) is not None or (
        t.lower_ in KIN and not any(c.dep_ in ("det", "poss") for c in t.children))]
    if any(kin(k.split()[-1]) for k in kin_):
        # (a relation the lists know stands first: "showed my mum my sketchbook, she ...")
        guessed = {t.lower_ for t in tokens if _someone(t)}
        kin_ = [k for k in kin_ if kin(k.split()[-1]) or k not in guessed]
    # (a relative said with "my" comes first for a he or she: "my dad recommended a
    # podcast called Serial, he listens every night")
    named = [t.lower_ for t in tokens if _named_being(t) and _relation(t) is None]
    return named + kin_


def _named_being(noun: Token) -> bool:
    """A noun given a name by "called" or "named": "a beagle called Rolo"."""
    return noun.pos_ == "NOUN" and any(
        c.dep_ == "acl" and c.lemma_.lower() in ("call", "name")
        and any(g.pos_ == "PROPN" for g in c.children) for c in noun.children)


def _agrees(pronoun: str, relation: str) -> bool:
    """Whether a "he" or "she" (or "his", "her") may stand for ``relation``: "my daughter
    Hira ... he is not replying" is not the daughter."""
    word = relation.split()[-1].removesuffix("-in-law")
    she = word.endswith(_SHE)
    he = word.endswith(_HE)
    pronoun = _PERSONAL.get(pronoun, pronoun)
    return not he if pronoun == "she" else not she if pronoun == "he" else True


# The pronouns that stand for one person named before, as subject or as its possessor.
_PERSONAL = {"he": "he", "she": "she", "his": "he", "her": "she"}


def standing_for(subject: Token | None) -> Token | None:
    """The "he" or "she" a subject is, or the "his" or "her" it is owned by ("his eyesight
    is going"): the word that stands for someone named before. None for any other."""
    if subject is None:
        return None
    if subject.lower_ in ("he", "she"):
        return subject
    return next((c for c in subject.children if c.dep_ == "poss"
                 and c.lower_ in ("his", "her")), None)


def relatives_before(subject: Token, since: int = 0) -> list[str]:
    """The relatives its message names before ``subject`` (from token ``since`` on) that
    it may stand for: a "he" or "she" only those whose word agrees with it."""
    # (one person, so not a plural: "he was my grandads, hes 41" is not the grandads)
    return [r for r in _relatives_in(t for t in subject.doc[since: subject.i]
                                     if t.tag_ != "NNS")
            if _agrees(subject.lower_, r)]


def last_relative(doc: Doc) -> str | None:
    """The relative named last in ``doc`` ("my nan", "mum"), what a later "she" refers to."""
    named = _relatives_in(doc)
    return named[-1] if named else None


def mine(*tokens: Token) -> bool:
    """Whether any of ``tokens`` has "my" or "our" for its possessor: "my dog", "our
    offer", "me mam"."""
    return any((c.dep_ == "poss" and c.lower_ in ("my", "our"))
               # "me mam", "me husband Gary": the "me" of Irish, Australian and northern
               # English, which the parser hangs on the noun as a compound
               or (c.dep_ == "compound" and c.lower_ == "me" and c.i < t.i)
               for t in tokens for c in t.children)


# How chat names the user's children by their place among them: "our youngest", "the
# eldest", "the little one" (with "the", "our" or "my": "the youngest player" is anyone's).
_BY_PLACE = frozenset({"youngest", "eldest", "oldest"})


def _child_by_place(noun: Token) -> str | None:
    if not any(c.dep_ in ("det", "poss") and c.lower_ in ("the", "our", "my")
               for c in noun.children) or noun.dep_ not in ("nsubj", "nsubjpass"):
        return None
    if noun.lower_ in _BY_PLACE:
        return noun.lower_
    little = next((c for c in noun.children if c.dep_ == "amod"
                   and c.lower_ in ("little", "wee", *_BY_PLACE)), None)
    return f"{little.lower_} one" if noun.lower_ == "one" and little is not None else None


def _relation(noun: Token) -> str | None:
    """"my brother", "my best friend", "my daughter's name": the relative it is about."""
    if (place := _child_by_place(noun)) is not None:
        return place
    # ("my ex Dominic": the parser may hang the relation on the name, as a compound, and
    # the "my" on either)
    named = [c for c in noun.children if c.dep_ == "compound"] if noun.pos_ == "PROPN" else []
    for tok in (noun, *[c for c in noun.children if c.dep_ == "poss"], *named):
        lemma = tok.lemma_.lower()
        if (kin(lemma) or kin(tok.lower_)) and mine(tok, *((noun,) if tok in named else ())):
            best = any(c.lower_ == "best" for c in tok.children)
            return ("best " if best else "") + tok.lower_
    # "my dog hasn't eaten since friday": a pet's news is the pet's (the subject of a
    # finite verb: not "seeing my dog so happy")
    finite = ("VBD", "VBZ", "VBP", "MD")
    if noun.pos_ == "NOUN" and noun.lemma_.lower() in PETS and mine(noun) \
            and noun.dep_ in ("nsubj", "nsubjpass") and (noun.head.tag_ in finite or any(
                c.tag_ in finite and c.dep_ in ("aux", "auxpass") for c in noun.head.children)):
        return noun.lower_
    # "my paddy Chiamaka", "my physio Dele": a noun the user names someone by is that
    # person's relation to them, whether or not the word is one the list knows.
    if noun.pos_ == "NOUN" and mine(noun) and any(
            c.dep_ == "appos" and c.pos_ == "PROPN" for c in noun.children):
        return noun.lower_
    # ... and hung on the name as its compound: "my tortoise kofi", "my physio Dele"
    said = [c for c in named if c.pos_ == "NOUN"]
    if said and mine(noun, said[-1]):
        return said[-1].lower_
    if _someone(noun):
        return noun.lower_
    return None


def _someone(noun: Token) -> bool:
    """Whether "my" and a word of no English name the lists know (written in lower case:
    no name; not a whole word of the embedder's English vocabulary) name a person, by the
    "she" or "he" the sentence goes on with and nothing of theirs between: "my tita lives
    in cebu, she loves karaoke", "gift idea for my namorada, her bday is coming". Chat
    names its people in every language; "my car broke down, he says it's the clutch" is
    the mechanic."""
    if noun.pos_ not in ("NOUN", "PROPN") or noun.tag_ in ("NNS", "NNPS") \
            or not noun.text.islower() or not mine(noun) or noun.lower_ in english():
        return False
    for t in noun.doc[noun.i + 1: noun.sent.end]:
        if t.lower_ in _PERSONAL or t.lower_ in ("him",):
            # (one who reports on it is someone else: "my macbook died, he said it's the
            # logic board", "my moped's knackered, he reckons it's the clutch")
            return not (t.dep_ == "nsubj" and t.head.lemma_.lower() in _REPORTING)
        if t.pos_ in ("NOUN", "PROPN") and (mine(t) or kin(t.lower_)):
            return False  # someone else of theirs the pronoun may be
    return False
