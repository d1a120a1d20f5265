"""What a memory keeps of the sentence it was read from: a reading's template ("Works as a
nurse", "Feels excited") may leave out what the speaker named ("at St James's, 12 years",
"I started a yoga class"). Such a reading gives way to the turn in the speaker's words
(``loses``), or keeps its claim first and the sentence after it (``with_detail``): the gate
reads a fact's value off its claim, and the words keep the names, places and figures.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engrammar.extract.parser._clauses import said_part
from engrammar.extract.parser._dates import calendar_word, named_days
from engrammar.extract.parser._mood import SAID_OR_THOUGHT
from engrammar.extract.parser._owners import Owner
from engrammar.extract.parser._phrases import DATED, THIRD_PERSON, cap, joined
from engrammar.extract.parser._turns import (
    FACT_TYPES,
    content_words,
    in_third_person,
    in_third_person_words,
    word_set,
)
from engrammar.models import MemoryType, OpKind

if TYPE_CHECKING:
    from collections.abc import Sequence

    from spacy.tokens import Span, Token

    from engrammar.extract.parser._clauses import Clause
    from engrammar.models import Op

# The punctuation that sets off the parts of a sentence (``sentence_parts``).
_MARKS = frozenset({",", ";", "-", "--", "–", "—"})
# How many parts from a fact's own a name may be the value it had: "I live in Porto,
# actually, not Lisbon".
_NEAR = 2
# Nouns beside the clause, not in it: said to someone ("Hey Maria,"), or when ("yesterday").
_ASIDE = ("npadvmod", "intj", "vocative")
# The words that say something of their own: a part of the sentence holding one is detail.
_SAYING = ("NOUN", "PROPN", "NUM", "VERB", "ADJ", "ADV")
# The slots that say who the speaker is, one value of an introduction each.
_WHO = frozenset({"name", "age", "origin"})


def _spoken_words(sentence: Span) -> set[str]:
    """The sentence's content words, and its first person's in the third ("my" says
    "their"): a memory words the speaker's "my fam" as "their fam"."""
    said = content_words(sentence.text)
    return said | {THIRD_PERSON[w] for w in word_set(sentence.text) if w in THIRD_PERSON}


def loses(op: Op, sentence: Span) -> bool:
    """Whether a reading's add leaves out what its sentence names: a name or a figure, or
    two nouns ("Feels excited" of "I'm so excited, I started a yoga class with a
    colleague"; "Works as a nurse" of "I'm a nurse at St James's, 12 years now")."""
    if op.op is not OpKind.add or op.type not in (*FACT_TYPES, MemoryType.ephemeral):
        return False
    said = content_words(DATED.sub("", op.content))
    if len(said - _spoken_words(sentence)) > 1:
        # More than its template's verb in words of its own ("Is a night owl" of "mornings
        # aren't my thing"): the reading says what the sentence means.
        return False
    return _names(_lost(said, sentence))


def _in_its_words(op: Op, sentence: Span) -> bool:
    """Whether an op's content, its template's verb aside ("Likes", "Works as"), is in the
    sentence's words: a reading in words of its own says what the sentence means ("Is a
    night owl" of "mornings aren't my thing", "Is vegan" of "nothing from animals")."""
    _, _, rest = DATED.sub("", op.content).partition(" ")
    return content_words(rest) <= _spoken_words(sentence)


def with_detail(ops: list[Op], sentence: Span, clauses: Sequence[Clause]) -> list[Op]:
    """The ops of one sentence, each fact's claim (which the gate matches by its template:
    "Works as a nurse", "Plans to visit Lisbon") followed by the sentence in the speaker's
    words when the ops together leave out what it names ("12 years now", "in March") or a
    clause of its own ("my son is 4 and he is mad about dinosaurs")."""
    facts = _facts(ops)
    fixed = [op for op in facts if _in_its_words(op, sentence)]
    said = content_words(DATED.sub("", " ".join(op.content for op in ops)))
    # (what the sentence asks is no detail of what it states: "I live in Cork and do you
    # know any good pubs?")
    stated = {t.i for t in said_part(sentence, clauses)}
    # (nor what is only supposed or hedged: "As I use a wheelchair these days, I wonder
    # whether you might suggest ..." states the wheelchair alone)
    stated -= {t.i for c in clauses if c.sentence.start == sentence.start
               and c.hypothetical for t in c.tokens()}
    if not any(op.type is MemoryType.open_loop for op in ops):
        # (nor is the order a fact is said under, the order not being a plan: "Since I'm
        # diabetic, kindly suggest some snacks" is "Is diabetic")
        here = [c for c in clauses if c.sentence.start == sentence.start]
        stated -= {t.i for c in here if c.owner is Owner.command and any(
            k.owner is not Owner.command and c.head.is_ancestor(k.head) for k in here)
            for t in c.tokens()}
    parts = [(tokens, clause) for tokens, clause in sentence_parts(sentence)
             if all(t.i in stated for t in tokens) and not _their_word(tokens, clauses)]
    lost = [t for t in _lost(said, sentence) if t.i in stated and not _dated(t, ops)]
    if len(fixed) != 1:
        # A name is all there is to it: what is said beside an introduction is what the
        # user came for ("Priyanka here, need a hand with a cover letter"). A reading in
        # words of its own ("Is vegan" of "no honey, nothing from animals") says the gist,
        # but not of a clause joined with a subject of its own ("I'm 34 and I still live
        # with my parents"). Facts that share the sentence share its words out: each would
        # carry them all.
        # A part of its own that names what the reading left out is kept too ("I'm 29, a
        # night nurse at the Royal Infirmary": "Is 29 years old. A night nurse at ...").
        if len(facts) == 1:
            return _with_clause(ops, facts[0], parts, said, clauses, lost)
        return _shared_out(ops, facts, [tokens for tokens, _ in parts], lost, clauses)
    (fact,) = fixed
    if not _names(lost):
        # nothing named left out, but maybe a clause of its own, or a noun said apart
        return _with_clause(ops, fact, parts, said, clauses, lost)
    if not (third := in_third_person(sentence, clauses)):
        return ops
    # A name or figure left out beside the slot's own ("moved from Perth to Hobart", "34,
    # 35 in May", "I live in Porto, actually, not Lisbon") is the value it had or will
    # have: the part that says it is no detail. (Not one in a clause of its own: "I'm
    # Winnie, 29, ..., living w my parents in Tseung Kwan O" names the user, no place.)
    own = word_set(DATED.sub("", fact.content))
    heads = {c.head.i for c in clauses}
    gone = {t.i for t in lost}
    kinds = {t.pos_ for t in sentence if t.lower_ in own}
    # (near the fact's own part: a list's other items are no value of it)
    at = [n for n, (tokens, _) in enumerate(parts) if any(t.lower_ in own for t in tokens)]
    valued = [tokens for n, (tokens, _) in enumerate(parts)
              if any(abs(n - k) <= _NEAR for k in at)
              and (n in at or not any(t.i in heads for t in tokens))
              and {t.pos_ for t in tokens if t.i in gone and t.pos_ != "NOUN"} & kinds]
    if valued:
        rest_parts = [tokens for tokens, _ in parts if not any(tokens is v for v in valued)]
        if not _names([t for tokens in rest_parts for t in tokens if t.i in gone]):
            return ops
        # (what the list says besides: "- from mandeville, living in kingston now - don't
        # drink" keeps the drink)
        rest = _rest_of(rest_parts, own, clauses) or (
            cap(text) + "." if (text := _said(rest_parts, clauses)) else "")
        if not rest:
            return ops
    else:
        # (the parts are the fact's detail: what another op of the sentence says, such as
        # a thing done beside it, "moved out of Leeds", stays in it too)
        rest = _rest_of([tokens for tokens, _ in parts], own, clauses) or third
    content = joined(fact.content, rest)
    detailed = fact.model_copy(update={"content": content})
    return [detailed if op is fact else op for op in ops]


def _shared_out(ops: list[Op], facts: Sequence[Op], parts: Sequence[list[Token]],
                lost: Sequence[Token], clauses: Sequence[Clause]) -> list[Op]:
    """The ops of a sentence of several facts, each fact followed by the parts of the
    sentence that share its words and name what it left out: "I'm a vet in Braga, living
    in Porto now" is "Works as a vet. A vet in Braga" and "Lives in Porto"."""
    # (a day is when, which a plan keeps as its due day: "Saturday's jobs: clear the
    # gutters, ...")
    gone = {t.i for t in lost if not calendar_word(t.text)}
    detail: dict[int, list[list[Token]]] = {}
    for tokens in parts:
        if not _names([t for t in tokens if t.i in gone]):
            continue
        words = content_words(" ".join(t.text for t in tokens))
        owner = next((n for n, fact in enumerate(facts)
                      if words & content_words(DATED.sub("", fact.content))), None)
        if owner is not None:
            detail.setdefault(owner, []).append(tokens)
    out = {id(facts[n]): facts[n].model_copy(update={
        "content": joined(facts[n].content, f"{cap(text)}.")})
        for n, its in detail.items() if (text := _said(its, clauses))}
    return [out.get(id(op), op) for op in ops]


def _dated(tok: Token, ops: Sequence[Op]) -> bool:
    """Whether ``tok`` is a word of the day a plan among ``ops`` is due, which the plan
    keeps as its due date ("in 3 days I have my moped test": "Has their moped test", due in
    3 days, not the sentence again after it)."""
    if not any(op.due is not None for op in ops):
        return False
    start = tok.idx - tok.sent.start_char
    return any(w.start <= start < w.end for w in named_days(tok.sent.text))


def _facts(ops: Sequence[Op]) -> list[Op]:
    """The adds of facts among a sentence's ops, a name aside."""
    return [op for op in ops if op.op is OpKind.add and op.type in FACT_TYPES
            and op.slot != "name"]


def left_over(ops: Sequence[Op], sentence: Span, clauses: Sequence[Clause]) -> list[Op]:
    """What a sentence of several facts says beside them all, as a fact of its own: "im
    34, married with 2 boys, i work as process engineer ..." is an age and a job, and
    "Married with 2 boys". A part of the sentence (not its opening aside unless it has a
    verb) that names something the facts left out and shares no word of substance with
    them; none when one fact stands for the sentence (``with_detail`` keeps such parts
    beside it)."""
    facts = _facts(ops)
    if len(facts) < 2:
        return []
    said = content_words(DATED.sub("", " ".join(op.content for op in ops)))
    stated = {t.i for t in said_part(sentence, clauses)}
    gone = {t.i for t in _lost(said, sentence) if t.i in stated}
    left = [tokens for n, (tokens, _) in enumerate(sentence_parts(sentence))
            if all(t.i in stated for t in tokens) and any(t.i in gone for t in tokens)
            and (n > 0 or any(t.pos_ == "VERB" for t in tokens))
            # (a figure alone says nothing of what it counts: "I'm Ines, 44, a vet")
            and any(t.is_alpha and not t.is_stop for t in tokens)
            # (nor is what another says: "..., he says in America they have ...")
            and not _their_word(tokens, clauses) and not _to_listener(tokens)
            # (nor the order the facts were given for: "..., since I work nights, suggest
            # sleep tips")
            and not any(c.owner is Owner.command and c.head in tokens for c in clauses)
            and not {t.lower_ for t in tokens if not (t.is_stop or t.is_punct)} & said]
    text = _said(left, clauses)
    if not text:
        return []
    tenses = {c.tense for c in clauses for tokens in left if c.head in tokens}
    kind = MemoryType.episodic if tenses == {"past"} else MemoryType.profile
    return [facts[-1].model_copy(update={"content": cap(text), "type": kind, "slot": None,
                                         "due": None})]


def names_left_out(ops: Sequence[Op], sentence: Span, clauses: Sequence[Clause]) -> bool:
    """Whether an introduction's ops leave out a name or a figure its sentence states,
    besides what it asks, supposes or orders: "I'm from Lagos but now in Toronto studying
    nursing at Humber, 27" is more than a home town and an age. Only
    when every op reads who the speaker is (a name, an age, where they are from), one value
    each of a sentence that lists them: a move or a job reading keeps the value it had
    beside its own, and its detail (``with_detail``). Those readings stay (the gate
    updates by their slots); the turn reads the sentence too, in the speaker's words."""
    if any(op.slot not in _WHO for op in ops) or all(op.slot == "name" for op in ops):
        return False  # (what follows a name alone is read as a sentence of its own)
    said = content_words(DATED.sub("", " ".join(op.content for op in ops)))
    here = [c for c in clauses if c.sentence.start == sentence.start]
    stated = {t.i for t in said_part(sentence, clauses)}
    stated -= {t.i for c in here if c.hypothetical or c.owner is Owner.command
               for t in c.tokens()}
    return any(t.i in stated and t.pos_ in ("PROPN", "NUM") and not calendar_word(t.text)
               and not _dated(t, ops) for t in _lost(said, sentence))


def _to_listener(tokens: Sequence[Token]) -> bool:
    """Whether a part of a sentence is said of the one listening, what the reply is to
    do: "so whatever you suggest for meals has gotta be easy" is no fact of the user."""
    return any(t.lower_ in ("you", "u") and t.dep_ in ("nsubj", "nsubjpass") for t in tokens)


def _their_word(tokens: Sequence[Token], clauses: Sequence[Clause]) -> bool:
    """Whether a part of a sentence is another person's saying, or what they say."""
    at = {t.i for t in tokens}
    return any(c.head.i in at and c.owner is not Owner.user and c.saying for c in clauses)


def _with_clause(ops: list[Op], fact: Op, parts: Sequence[tuple[list[Token], bool]],
                 said: set[str], clauses: Sequence[Clause], lost: Sequence[Token] = ()
                 ) -> list[Op]:
    """The ops, ``fact`` followed by the parts of its sentence (``sentence_parts``) no op
    says a word of (``said``): a clause joined with a subject of its own ("Is 34 years old.
    Still lives with their parents"), or a part holding a noun the fact left out, not the
    sentence's opening aside unless it has a verb ("Works as a nurse. Honestly thinking of
    retraining as a plumber")."""
    gone = {t.i for t in lost}
    left = [tokens for n, (tokens, clause) in enumerate(parts)
            if not content_words(" ".join(t.text for t in tokens)) & said
            and not _to_listener(tokens) and (
                (clause and any(t.pos_ in _SAYING for t in tokens))
                or (any(t.i in gone for t in tokens)
                    and (n > 0 or any(t.pos_ == "VERB" for t in tokens) or (
                        len(parts) > 1 and any(_predicate(t) for t in tokens)))))]
    text = _said(left, clauses)
    if not text:
        return ops
    detailed = fact.model_copy(
        update={"content": joined(fact.content, f"{cap(text)}.")})
    return [detailed if op is fact else op for op in ops]


def _predicate(tok: Token) -> bool:
    """Whether a word is a clause's verb: a verb, or a "be" or "have" standing for one
    ("we're in Didsbury, I don't drive"), not a helper of another, nor what a verb of
    speech or thought after it says ("I'm too soft on the kids, my husband complains").
    (A sentence of one part is the one its reading read: "mornings aren't my thing" is
    "Is a night owl".)"""
    if tok.dep_ == "ccomp" and tok.head.i > tok.i and tok.head.lemma_.lower() in \
            SAID_OR_THOUGHT:
        return False
    return tok.pos_ == "VERB" or (tok.pos_ == "AUX" and tok.dep_ not in ("aux", "auxpass"))


def sentence_parts(sentence: Span) -> list[tuple[list[Token], bool]]:
    """The parts of a sentence: what commas, semicolons and dashes set off, and each
    clause a conjunction joins with a subject of its own ("... and she works for a shipping
    firm"); each with whether it is such a clause."""
    parts: list[tuple[list[Token], bool]] = []
    current: list[Token] = []
    by_clause = False
    for tok in sentence:
        clause = tok.dep_ == "cc" and _joins_clause(tok)
        if (tok.is_punct and tok.text in _MARKS) or clause:
            if current:
                parts.append((current, by_clause))
            current, by_clause = [], clause
        else:
            current.append(tok)
    if current:
        parts.append((current, by_clause))
    return parts


def _joins_clause(cc: Token) -> bool:
    """Whether a conjunction joins a clause with a subject of its own: "and she works".
    (The parser hangs it on the verb before it, or on the one it joins.)"""
    if not any(t.pos_ in ("VERB", "AUX") for t in cc.doc[cc.sent.start: cc.i]):
        return False  # "But that's okay, ...": no clause before it to join
    heads = [cc.head] if cc.head.i > cc.i else [
        c for c in cc.head.children if c.dep_ == "conj" and c.i > cc.i]
    return any((c.pos_ in ("VERB", "AUX")
                and any(s.dep_ in ("nsubj", "nsubjpass") for s in c.children))
               # a second predicate of the same "I'm", with words of its own: "I'm 15 and
               # honestly more into drawing" (not "tired and hungry")
               or (c.dep_ == "conj" and c.head.dep_ in ("attr", "acomp")
                   and any(k.dep_ == "prep" for k in c.children))
               for c in heads)


def _lost(said: set[str], sentence: Span) -> list[Token]:
    """The nouns, names and figures of ``sentence`` that ``said`` (content words) leaves
    out. Words said to someone ("Hey Maria,"), when ("yesterday") and a sentence's opener
    set off by a comma ("Ugh,") are not the fact's."""
    doc = sentence.doc
    return [t for t in sentence if t.pos_ in ("NOUN", "PROPN", "NUM") and not t.is_stop
            and t.dep_ not in _ASIDE and not (t.dep_ == "compound" and t.head.dep_ in _ASIDE)
            and t.head.pos_ != "INTJ"
            and not (t.i == sentence.start and t.i + 1 < len(doc) and doc[t.i + 1].is_punct)
            and t.lower_ not in said and t.lemma_.lower() not in said
            and content_words(t.text)]


def _names(lost: Sequence[Token]) -> bool:
    """Whether what was left out names something: a name or a figure, or two nouns."""
    return len(lost) >= 2 or any(t.pos_ != "NOUN" for t in lost)


def _rest_of(parts: Sequence[list[Token]], said: set[str], clauses: Sequence[Clause]
             ) -> str | None:
    """The parts of the sentence (``sentence_parts``), as the memory words them, that say
    something the fact (its words, ``said``) does not: "Is a nurse at St James's, been
    there 12 years" after "Works as a nurse at St James's" is "Been there 12 years". None
    when every part does."""
    # (a verb the fact words in the third person is its own: "live" of "Lives in Croydon")
    kept = [tokens for tokens in parts if any(
        t.pos_ in _SAYING and not t.is_stop and t.lower_ not in said
        and t.lemma_.lower() not in said and f"{t.lemma_.lower()}s" not in said
        and t.dep_ not in _ASIDE for t in tokens)]
    if not kept or len(kept) == len(parts):
        return None
    text = _said(kept, clauses)
    return cap(text) + "." if text else None


def _said(parts: Sequence[list[Token]], clauses: Sequence[Clause]) -> str:
    """Parts of a sentence as the memory words them, one after another: each in the third
    person, the first capital of all but the first undone ("No honey, nothing from
    animals")."""
    said: list[str] = []
    for part in parts:
        # (a list's line breaks are no words: its items are joined with commas)
        tokens = [t for t in part if not t.is_space]
        text = in_third_person_words(tokens, clauses)
        first = next((t for t in tokens if not t.is_punct), None)
        if said and text and first is not None and first.pos_ != "PROPN" \
                and first.text[:1].islower():
            text = text[:1].lower() + text[1:]
        if text:
            said.append(text)
    return ", ".join(said).rstrip(" .,;:-")
