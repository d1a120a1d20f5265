"""A statement and a question in one sentence, in either order: "I'm vegan btw, what should
I make for dinner?", "my daughter turns 7 on Saturday, any party ideas?", "can you help me
write to my landlord, the hot water has been off for 9 days". People tell an assistant
about themselves on the way to asking it something, or to say why they ask; the question
mark at the end, or the request at the start, made the whole sentence a question, so
nothing of it was kept. The parse says where the statement ends or begins; the message is
parsed again with a sentence break there, and the statement is read like any other.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

from engrammar.extract.parser._events import plan_due
from engrammar.extract.parser._lexicon import POLITENESS, kin
from engrammar.extract.parser._mood import (
    CONDITIONAL,
    IRREALIS,
    SAID_OR_THOUGHT,
    WH,
    WH_TAGS,
    asks,
    hypothetical,
    inverted,
)
from engrammar.extract.parser._nlp import parse
from engrammar.extract.parser._owners import Owner, mine, owner_of, subject_of
from engrammar.extract.parser._phrases import cap, words
from engrammar.extract.parser._requests import proposal
from engrammar.models import MemoryType, Op

if TYPE_CHECKING:
    from datetime import datetime

    from spacy.tokens import Doc, Span, Token

# Where a statement may end and a question begin in one sentence: "I'm vegan btw, what
# should I make?", "my knee's been dodgy since April so what exercises are safe?".
_BREAKS = frozenset({",", ";", ":", "-", "--", "—", "so", "but"})


def statement_end(sentence: Span) -> int | None:
    """For a sentence that asks ("?") after stating something, the index where the question
    begins: the first break (a comma, a dash, "so", "but") with a declarative clause before
    it (a verb after its subject, or a verb with its "I" dropped: "just moved to Leeds")
    and an interrogative after it (a wh-word, an inverted auxiliary, or a fragment with no
    clause of its own: "any party ideas?"). None when the whole sentence is the question."""
    # (chat often drops the question mark: "planning my son's party, what should I get
    # him"; without it the question must show in its word order)
    marked = sentence.text.rstrip().endswith("?")
    if _inverted(sentence, sentence.start) or sentence[0].lower_ in WH:
        return None
    doc = sentence.doc
    for tok in sentence:
        if tok.i <= sentence.start or tok.i + 1 >= sentence.end or not _break(tok):
            continue  # (a dash that opens the message has no word before it)
        before = doc[sentence.start: tok.i]
        after = [t for t in doc[tok.i + 1: sentence.end] if not t.is_punct]
        if not after or not _declarative(before) or _unreal(before) or any(
                _inverted(sentence, t.i) or "Person=2" in str(t.morph) for t in before):
            continue  # (a statement with "you" in it is about this chat: "I read your
            # answer, can you explain ...")
        first = after[0].i
        # (a statement asked by its mark alone, after one of the speaker's own: "so I'm
        # 31, I'm fine to open one then?" asks the second and states the first)
        if (marked and (doc[first].lower_ in WH or _inverted(sentence, first)
                        or not _declarative(doc[first: sentence.end])
                        or (_of_the_speaker(before) and not _tag(after)))) or (
                not marked and (_asks(sentence, first) or _bids(sentence, first))):
            return tok.i
    return None


def _bids(sentence: Span, i: int) -> bool:
    """Whether the words from ``i`` bid the assistant do something, politely: "so please
    correct it", "pls check my maths" (a bare verb after a "please"; a bare verb alone may
    be a clause that dropped its "I": "got the job, start monday")."""
    said = [t for t in sentence.doc[i: sentence.end] if not t.is_punct]
    while said and said[0].lower_ in ("so", "then", "and", "but", "now"):
        said = said[1:]
    return len(said) > 1 and said[0].lower_ in POLITENESS and said[1].tag_ == "VB" \
        and not any(c.dep_ in ("nsubj", "nsubjpass") for c in said[1].children)


def _break(tok: Token) -> bool:
    """Whether ``tok`` may end a statement: a comma, a dash between words (not the one of
    "brand-new"), "so" or "but" joining clauses (not the "so" of "so excited")."""
    if tok.lower_ in ("so", "but"):
        return tok.dep_ in ("cc", "mark") or tok.head.pos_ in ("VERB", "AUX")
    if tok.text == "-":
        return bool(tok.whitespace_) and bool(tok.nbor(-1).whitespace_)
    return tok.text in _BREAKS


# "is" as chat writes it after a wh-word: "hows", "whats" ("how" "s").
_IS = frozenset({"s", "'s"})


def _asks(sentence: Span, i: int) -> bool:
    """Whether the words from ``i`` ask by their order alone, with no question mark: a
    modal or "do" before a pronoun ("can you ...", "do I need ..."), after a wh-word or
    not ("what should I get him"). Not "been there 12 years": "there" is no subject."""
    doc = sentence.doc
    at = i + 1 if doc[i].lower_ in WH else i
    if at + 1 >= sentence.end:
        return False
    aux, subject = doc[at], doc[at + 1]
    if at > i and (aux.lower_ in _IS or (aux.pos_ == "AUX" and aux.lemma_.lower() == "be")) \
            and not (aux.dep_ == "relcl" and doc[i].lower_ in ("which", "who", "whose")):
        return True  # a wh-word and its "be": "hows the least awkward way to ask" (not
        # a relative clause: "we sold the house, which is a relief")
    return ((aux.tag_ == "MD" or aux.lemma_.lower() == "do") and subject.pos_ == "PRON"
            and subject.dep_ in ("nsubj", "nsubjpass")) or inverted(aux, sentence.end)


def _unreal(span: Span) -> bool:
    """Whether a statement is only supposed: "say I was vegan", "if I quit my job",
    "hypothetically I ..." (a clause's own test, ``hypothetical``, or a word of condition
    or wishing anywhere in it)."""
    return any(t.lower_ in CONDITIONAL or t.lemma_.lower() in IRREALIS
               or (t.pos_ in ("VERB", "AUX") and hypothetical(t)) for t in span)


def _inverted(sentence: Span, i: int) -> bool:
    """An auxiliary at ``i`` before its subject: "can you ...", "is it ..."."""
    doc = sentence.doc
    if i + 1 >= sentence.end:
        return False
    after = doc[i + 1]
    return (doc[i].pos_ == "AUX" and after.dep_ in ("nsubj", "nsubjpass", "expl")) or (
        doc[i].tag_ == "MD" and after.pos_ == "PRON")


def _tag(after: list[Token]) -> bool:
    """Whether the words after a break only ask back what was said, a tag: "I think?",
    "I assume?", "right?" (a verb of thought or speech with nothing of its own)."""
    verbs = [t for t in after if t.pos_ in ("VERB", "AUX")]
    start = after[0].i if after else 0
    return not verbs or (len(verbs) == 1 and verbs[0].lemma_.lower() in SAID_OR_THOUGHT
                         and not any(c.dep_ in ("dobj", "ccomp", "xcomp", "attr", "acomp")
                                     and c.i >= start for c in verbs[0].children))


def _of_the_speaker(span: Span) -> bool:
    """Whether a statement's verb has the speaker for its subject: "I'm 31", "we live in
    Ottawa"."""
    return any(t.pos_ in ("VERB", "AUX") and any(
        c.dep_ in ("nsubj", "nsubjpass") and c.lower_ in ("i", "we") for c in t.children)
        for t in span)


def _declarative(span: Span) -> bool:
    """A verb after its subject in ``span``, or one with its "I" dropped, first ("just moved
    to Leeds", "heading to Porto in May")."""
    for t in span:
        if t.pos_ not in ("VERB", "AUX"):
            continue
        subjects = [c for c in t.children if c.dep_ in ("nsubj", "nsubjpass", "expl")
                    and span.start <= c.i < span.end]
        if any(c.i < t.i for c in subjects):
            return True
        if not subjects and t.i == next(
                (w.i for w in span if w.pos_ not in ("ADV", "INTJ", "PUNCT")), -1) and (
                t.tag_ in ("VBD", "VBN", "VBG") or owner_of(None, t)[0] is Owner.user):
            # (or a need or wish whose "I" chat dropped: "wanna start running but got a
            # bad knee, can suggest a plan?")
            return True
    return False


def asked_apart(doc: Doc, requested: bool = False) -> str | None:
    """``doc``'s text with a sentence break where each statement ends and its question
    begins, or each question ends and its statement begins; None when no sentence of it
    does either. A message that is a request about the memory or the replies
    (``requested``: "can you keep it short, I read these on my phone") keeps the reason
    after its request with it."""
    cuts: list[tuple[Token, bool]] = []  # each break, and whether a question ends at it
    for s in doc.sents:
        if (end := statement_end(s)) is not None:
            cuts.append((doc[end], False))
        elif not requested and (end := question_end(s)) is not None:
            cuts.append((doc[end], True))
    if not cuts:
        return None
    text, at = [], 0
    for tok, asked in cuts:
        said = doc.text[at: tok.idx].rstrip(" ,;:-")
        # (a question before its statement keeps its mark: the statement's end is theirs)
        text.append(said.rstrip("?") + ("? " if asked else ". "))
        # (the break itself goes, but an "I" that opens the statement with no mark)
        at = tok.idx if asked and _unmarked(tok) else tok.idx + len(tok.text_with_ws)
    # The part after the last break starts with a capital, so that the parser starts a
    # sentence there ("... for uni. where should I go" stayed one sentence); a statement
    # keeps its case.
    last, asked = cuts[-1]
    if asked:
        # "can you help me with a letter, my boiler's been off for a week?": the mark was
        # the question's, and the statement after it ends with a full stop
        end = last.sent.end_char
        asking = doc.text[last.sent.start_char: last.idx]
        close = doc.text.find(")", at, end)
        if asking.count("(") > asking.count(")") and close >= 0:
            # a statement in brackets ends with them: "sort this list: ..., slaw (the
            # eggless one, im allergic to egg), buns, beers" (the rest is the question's)
            text.append(cap(doc.text[at:close].strip()) + ". " + doc.text[end:].lstrip())
            return "".join(text)
        said = doc.text[at:end].rstrip()
        text.append(cap(said[:-1].rstrip() + "." if said.endswith("?") else said)
                    + doc.text[len(said) + at:])
    else:
        text.append(cap(doc.text[at:].lstrip()))
    return "".join(text)


@functools.lru_cache(maxsize=256)
def about_someone(question: str | None) -> bool:
    """Whether a question asks about someone other than the user: "how old are your
    kids?", "is your sister coming?", "what does he do?". A fragment that answers it ("7
    and 4", "a nurse") is theirs, and no "I" is put back in it."""
    if question is None:
        return False
    doc = _last_asked(question)
    # (or a thing of theirs: "what's her name?", "where does his school go?")
    return any(t.dep_ in ("nsubj", "nsubjpass") and any(
        kin(w.lemma_.lower()) or kin(w.lower_) or w.lower_ in ("he", "she", "they")
        or (w.dep_ == "poss" and w.lower_ in ("his", "her", "their"))
        for w in (t, *t.children)) for t in doc)


@functools.lru_cache(maxsize=256)
def asked_relative(question: str | None) -> str | None:
    """The relative of the user's a question names last ("what does your son like to
    eat?": son), what a "he" or "she" in the answer stands for ("pasta. he won't touch
    rice"); None when it names none."""
    if question is None:
        return None
    doc = _last_asked(question)
    named = [t.lower_ for t in doc if kin(t.lower_) and any(
        c.dep_ == "poss" and c.lower_ in ("your", "ur") for c in t.children)]
    return named[-1] if named else None


@functools.lru_cache(maxsize=256)
def asks_name(question: str | None) -> bool:
    """Whether ``question`` asks what someone or something is called: "what's her name?",
    "what's your dog's name?", "what's he called?", "what do you call him?". A name given
    in answer is worth keeping, however few its words."""
    if question is None:
        return False
    doc = _last_asked(question)
    if not any(t.lower_ in ("what", "whats", "what's") for t in doc):
        return False
    return any((t.lemma_.lower() == "name" and t.pos_ == "NOUN" and any(
        c.dep_ == "poss" for c in t.children)) or (t.lemma_.lower() == "call" and any(
            c.dep_ in ("nsubjpass", "dobj", "nsubj") and (c.lower_ in _SOMEONE or any(
                p.dep_ == "poss" for p in c.children)) for c in t.children)) for t in doc)


# Who a question about a name asks about, when it says so by a pronoun ("what's he
# called?"); a thing's name ("what do you call that dish?") is no fact of the user's.
_SOMEONE = frozenset({"he", "she", "it", "they", "him", "her", "them"})


def asks_age(question: str | None) -> bool:
    """Whether a number alone answering ``question`` may be the user's age: no question was
    asked ("34. live in Gdansk"), or it asks how old. Answering anything else ("roughly what
    do you weigh now?" "108", "how many nights in a row?" "4") it is that, not an age."""
    if question is None:
        return True
    return re.search(r"\bhow old\b|\bage[sd]?\b", _last_sentence(question).lower()) is not None


def offered(question: str | None, answer: str) -> bool:
    """Whether ``answer`` (a style of reply, in the user's words) only takes up one of the
    choices ``question`` offered ("would you like it formal or a bit friendlier?" "formal
    pls"): the question joins things with "or", and every word the answer names is among
    the question's. The choice is for the piece at hand; "spanish, and always reply in
    spanish from now on" says more than the choice, and lasts."""
    if question is None:
        return False
    doc = _last_asked(question)
    if not any(t.lower_ == "or" and t.dep_ == "cc" for t in doc):
        return False
    # (what "or" joins, as the words that name or describe: the parse of the two sides is
    # often wrong, "as a numbered list or as one paragraph")
    choices = {t.lower_ for t in doc if t.is_alpha and not t.is_stop
               and t.pos_ in ("NOUN", "PROPN", "ADJ", "ADV", "NUM")}
    (said,) = parse([answer])
    named = {t.lower_ for t in said if t.is_alpha and not t.is_stop
             and t.lower_ not in ("asked", *POLITENESS)}
    return bool(named) and named <= choices


def _last_sentence(question: str) -> str:
    """The sentence of a message that asks: its last ("Nice! What does your son eat?")."""
    return re.split(r"(?<=[.!?])\s+", question.strip())[-1]


@functools.lru_cache(maxsize=256)
def _last_asked(question: str) -> Doc:
    """The parse of ``question``'s last sentence, once for each reader of it."""
    (doc,) = parse([_last_sentence(question)])
    return doc


def question_end(sentence: Span) -> int | None:
    """For a sentence that asks or requests something first and states a fact of its own
    after a break, the index of the break: "can you help me write to my landlord, the hot
    water in our flat has been off for 9 days", "can u do a pasta bake for tonight, has to
    be gluten free cos im coeliac". The statement has its own subject, before its verb and
    first after the break; a "you" is the request's still ("..., can you make it
    short"), and a condition or a supposition states nothing. None when no statement
    follows the question."""
    doc = sentence.doc
    root = sentence.root
    requested = _ordered(root)
    if not (requested or asks(sentence)):
        return None
    for tok in sentence:
        if tok.i <= sentence.start + 1 or tok.i + 2 >= sentence.end:
            continue
        unmarked = _unmarked(tok)
        if not (unmarked or _break(tok) or (tok.dep_ == "mark" and tok.lower_ in _BECAUSE)):
            continue
        after = doc[tok.i if unmarked else tok.i + 1: sentence.end]
        # (what comes before the break must be the asking: the mark at the end may be the
        # question's after it, "picked up a tesla saturday, gert chuffed, where's ...?")
        before = doc[sentence.start: tok.i]
        if _states(after) and not _unreal(after) and (
                (requested and root.i < tok.i) or asks(before) or _bidding(before)):
            return tok.i
    return None


def _unmarked(tok: Token) -> bool:
    """Whether an "I" opens a statement run on after a question with no mark between:
    "can u help me figure out what to eat this week im vegetarian". Not what the question
    itself says or asks of: a word that ties it to the question stands before it ("what I
    should eat", "if I send it"), it is what a verb of saying or thinking takes ("do you
    think honestly I'm overweight"), or it follows the one it is told to ("can you tell my
    boss I'm sick", "how do I explain to my kids I lost my job")."""
    if tok.lower_ != "i" or tok.dep_ != "nsubj" or tok.i == 0:
        return False
    before = tok.nbor(-1)
    verb = tok.head
    return before.pos_ in ("NOUN", "PROPN", "ADV", "NUM") and before.tag_ not in WH_TAGS \
        and before.dep_ not in ("dobj", "dative", "pobj") \
        and verb.dep_ in ("ccomp", "parataxis", "conj") and verb.head.i < tok.i \
        and verb.head.lemma_.lower() not in SAID_OR_THOUGHT | IRREALIS


def _bidding(span: Span) -> bool:
    """Whether ``span`` opens with a bare verb and no subject: a request ("help me with a
    letter", "pls sort this list")."""
    first = next((t for t in span if not (t.is_punct or t.pos_ == "INTJ"
                                          or t.lower_ in POLITENESS)), None)
    return first is not None and first.tag_ == "VB" and subject_of(first) is None


# A reason given after a request: "..., cos I'm coeliac".
_BECAUSE = frozenset({"because", "cos", "coz", "cause", "'cause"})


def _states(span: Span) -> bool:
    """Whether ``span`` opens with a clause in declarative order with a subject of its own
    that is not the assistant: "the hot water has been off", "I'm coeliac", "my son is 7"
    (an interjection or a conjunction before it aside)."""
    first = next((t for t in span if not (t.is_punct or t.pos_ in ("INTJ", "CCONJ"))), None)
    if first is None:
        return False
    for verb in span:
        if verb.pos_ not in ("VERB", "AUX") or verb.dep_ in ("aux", "auxpass"):
            continue
        subject = next((c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")
                        and span.start <= c.i < verb.i), None)
        if subject is not None and subject.left_edge.i == first.i:
            # (a list the parser made a subject is the question's: "a list: crisps, dips,
            # nachos (..., Priti is lactose intolerant)")
            listed = any(t.text in (",", "(", ":") for t in subject.subtree)
            return subject.lower_ not in ("you", "u") and subject.lower_ not in WH \
                and not listed
    return False


def _ordered(root: Token) -> bool:
    """Whether a sentence's root is a bare verb with no subject: an order ("help me ...")."""
    return root.tag_ == "VB" and subject_of(root) is None


def asked_plan(sentence: Span, at: datetime) -> list[Op]:
    """What a question or a request says the user has ahead, in passing: "any tips for my
    job interview tomorrow?", "what should I wear to my cousin's wedding on Saturday?",
    "can u explain photosynthesis for my science test on thursday", "help me plan a menu
    for my daughter's christening on sunday". A thing of the user's (said with "my", not
    a person) in a question or request that names a day ahead is an open loop due that
    day; the question itself is not kept."""
    if not (sentence.text.rstrip().endswith("?") or asks(sentence) or _ordered(sentence.root)) \
            or _unreal(sentence):
        return []
    found = plan_due(sentence.text, at)
    if found is None or found.when <= at:
        return []
    for noun in sentence:
        # (the head of "my yr 9 science test" is the test: the parser may hang the "my" on
        # a word before it)
        if noun.pos_ != "NOUN" or noun.dep_ in ("compound", "nmod") or kin(noun.lemma_.lower()) \
                or not _mine(noun) or _calling(noun):
            continue
        said = words([t for t in noun.subtree if t.lower_ not in ("my", "our")])
        if found.text.lower() not in said.lower():
            said = f"{said} {_as_said(sentence, found.text)}"
        return [proposal(MemoryType.open_loop, cap(f"their {said}"), salience=0.65,
                         due=found.when)]
    return []


def _calling(noun: Token) -> bool:
    """Whether a noun calls to the one listening, set off by a mark: "good afternoon my
    dear, how are you today?" names no thing of the user's."""
    after = noun.doc[noun.i + 1] if noun.i + 1 < len(noun.doc) else None
    if after is not None and not after.is_punct:
        return False
    # (set off after a greeting at the sentence's start: "morning my love, ...", not the
    # thing a sentence opens with: "my interview, tomorrow at 9, what should I wear?")
    owner = next((t for t in noun.children if t.dep_ == "poss"), noun.left_edge)
    greeted = noun.doc[noun.sent.start: owner.i]
    return noun.dep_ in ("npadvmod", "intj", "ROOT") or (
        len(greeted) > 0 and not any(t.pos_ in ("VERB", "AUX", "ADP") for t in greeted))


def _mine(noun: Token) -> bool:
    """Whether a noun is said as the user's: "my interview", "my cousin's wedding", "my
    yr 9 science test"."""
    return mine(noun, *(c for c in noun.children if c.dep_ in ("poss", "compound", "nmod")))


def _as_said(sentence: Span, text: str) -> str:
    """A time ``text`` (as the date reader found it, lower case) in the sentence's own
    words, with the preposition it hangs on: "on Saturday", "next month"."""
    start = sentence.text.lower().find(text)
    span = sentence.doc.char_span(sentence.start_char + start,
                                  sentence.start_char + start + len(text),
                                  alignment_mode="expand") if start >= 0 else None
    if span is None:
        return text
    head = span.root.head
    if span.root.dep_ == "pobj" and head.i == span.start - 1:
        return f"{head.text} {span.text}"
    return span.text
