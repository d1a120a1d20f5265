"""Values corrected in place: "she's called Nia not Mia", "we have 2 dogs not 3", "actually
it's four kids". A correction names no memory: it says which value replaces which, and
each memory (or fact proposed earlier in the same batch) that holds the old value takes the
new one. The old value was never true, so it is not kept beside the new one.

Read off the parse: a value negated beside another of its kind ("NEW not OLD"; things,
"trams, not buses", only in a message that takes something back), a value asked back and
said again ("did I say 3? 2."), and a
counted noun in a sentence that takes something back ("actually", "sorry", "I meant"),
whose count replaces the count of the same noun in the memories.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from spacy.lang.en.lex_attrs import _num_words

from engrammar.extract.parser._phrases import named, words
from engrammar.models import Memory, MemoryType, Op, OpKind

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token

# A number as a memory may write it: digits or a word ("three kids", "3 kids").
_NUMBER = rf"(?:\d+|{'|'.join(_num_words)})"
# How far a count may stand from its noun in a memory: "three young kids", "two rescue
# greyhounds".
_BETWEEN = r"(?:[\w'-]+\s+){0,2}?"
# The words by which a speaker takes back what they said: without one, a new count is a
# change or another set ("two of my kids are off sick"), not a correction.
_TAKING_BACK = frozenset({"actually", "sorry", "correction", "meant", "mean", "oops",
                          "wrong"})
# What a count is corrected in: a state. An event or a plan has its own count ("ran 10k",
# "5 km tomorrow"), which a count said later of another run does not correct.
_STATES = frozenset({MemoryType.profile, MemoryType.preference, MemoryType.shared_lore})
# Verbs by which a value is cited back before it is put right: "you called my cat
# Maureen", "I told you five".
_CITING = frozenset({"call", "say", "tell", "write", "put", "spell", "type"})
# The kinds of value a correction swaps: a name for a name, a number for a number.
_VALUES = frozenset({"PROPN", "NUM"})


@dataclass(frozen=True)
class Correction:
    """``old`` replaced by ``new``; ``noun`` set when the old value is a count of it (then
    any other count of that noun is the old value)."""

    new: str
    old: str | None = None
    noun: tuple[str, ...] = ()
    # A thing for a thing ("trams, not buses"): corrected in states only, like a count.
    states_only: bool = False

    def _count(self, number: str) -> re.Pattern[str]:
        """``number`` (a pattern) where it counts the corrected noun."""
        nouns = "|".join(re.escape(n) for n in self.noun)
        return re.compile(rf"(?<!\w){number}(?=\s+{_BETWEEN}(?:{nouns})(?!\w))",
                          re.IGNORECASE)

    def holds(self, text: str) -> bool:
        """Whether ``text`` already says the new value (a correction made before)."""
        if self.noun:
            return self._count(re.escape(self.new)).search(text) is not None
        return re.search(rf"(?<!\w){re.escape(self.new)}(?!\w)", text) is not None

    def apply(self, text: str, kind: MemoryType | None) -> str | None:
        """``text`` (a memory's or a proposal's, of type ``kind``) with the old value
        replaced, or None when it does not hold it."""
        if self.noun:
            if kind not in _STATES:
                return None
            count = self._count(_NUMBER)
            if not any(f.group(0).lower() != self.new.lower() for f in count.finditer(text)):
                return None
            # every count of it: a memory's claim and the words it was said in after it
            return count.sub(self.new, text)
        assert self.old is not None
        if self.states_only and kind not in _STATES:
            return None
        pattern = re.compile(rf"(?<!\w){re.escape(self.old)}(?!\w)", re.IGNORECASE)
        return pattern.sub(self.new, text) if pattern.search(text) else None


def _kind(tok: Token) -> str | None:
    if tok.pos_ in _VALUES:
        return tok.pos_
    if tok.is_title and not tok.is_sent_start and tok.pos_ in ("NOUN", "ADJ", "VERB", "X"):
        # The tagger reads a name it has not seen as a noun ("Kowalski, not Kowalsky"):
        # written with a capital mid-sentence, it is a name.
        return "PROPN"
    return "NUM" if tok.like_num else None


def _value(tok: Token, kind: str) -> Token | None:
    """The value of ``kind`` that ``tok`` is or counts it: "dogs" in "2 dogs" is 2."""
    if _kind(tok) == kind or (kind == "NOUN" and tok.pos_ == "NOUN"):
        return tok
    return next((c for c in tok.children if c.dep_ == "nummod" and _kind(c) == kind), None)


def corrections(doc: Doc) -> list[Correction]:
    """The values ``doc`` corrects, old and new (parse-based: see the module's docstring)."""
    out: list[Correction] = []
    # A thing negated beside another ("I want pasta, not pizza") is a correction only in a
    # message that takes something back ("I told you wrong ... it's trams, not buses").
    things = any(t.lower_ in _TAKING_BACK for t in doc)
    for tok in doc:
        if tok.lower_ != "not" or tok.i + 1 >= len(doc):
            continue
        after = doc[tok.i + 1]
        if after.pos_ == "DET" and tok.i + 2 < len(doc):
            after = doc[tok.i + 2]
        kind = _kind(after) or ("NOUN" if things and after.pos_ == "NOUN" else None)
        if kind is None:
            continue
        # The value the negated one stands beside: the token before "not" (past a comma
        # and the adverbs that stress a value: "Friday only, not Thursday", "Nia actually,
        # not Mia"), or what "not" hangs on.
        n = tok.i - 1
        while n > 0 and (doc[n].is_punct or doc[n].pos_ in ("ADV", "INTJ")):
            n -= 1
        before = doc[n] if n >= 0 else None
        # (or what the negated value is set beside: "trams I drive, not buses")
        set_by = after.head if after.dep_ in ("appos", "conj") else None
        beside = (v for v in (before, tok.head, set_by)
                  if v is not None and v.i not in (tok.i, after.i))
        new = next((value for v in beside if (value := _value(v, kind)) is not None), None)
        if new is not None and new.lower_ != after.lower_:
            out.append(Correction(new=new.text, old=after.text, states_only=kind == "NOUN"))
    out.extend(_asked_back(doc))
    out.extend(_cited_back(doc, out))
    for sentence in doc.sents:
        if not any(t.lower_ in _TAKING_BACK for t in sentence):
            continue
        for tok in sentence:
            if tok.dep_ == "nummod" and tok.head.pos_ == "NOUN" and not any(
                    c.old == tok.text for c in out):
                noun = tok.head
                out.append(Correction(new=tok.text,
                                      noun=tuple({noun.lower_, noun.lemma_.lower()})))
    return out


def _asked_back(doc: Doc) -> list[Correction]:
    """"did I say 3? 2.", "I said Mia? Nia, sorry": the speaker asks after a value they
    said (a question by its mark or its order, "did I say 3. 2."), and the words after it
    open with another value of its kind, which replaces it. Only in states, like a count:
    the old value may be any number or name elsewhere. (Read off the words around the
    question's end: the parser often runs the question and the answer together.)"""
    out: list[Correction] = []
    for said in doc:
        subject = next((c for c in said.children if c.dep_ == "nsubj" and c.lower_ == "i"),
                       None)
        if said.lemma_.lower() != "say" or subject is None:
            continue
        end = next((t for t in doc[said.i + 1:] if t.text in (".", "?", "!")), None)
        if end is None or end.i + 1 >= len(doc):
            continue
        inverted = any(c.dep_ == "aux" and c.i < subject.i for c in said.children)
        if end.text != "?" and not inverted:
            continue  # ("I said 3. Then we left.": no question)
        old = next((t for t in doc[said.i + 1: end.i] if _kind(t) is not None), None)
        new = next((t for t in doc[end.i + 1:] if not t.is_punct and t.lower_ not in
                    _TAKING_BACK and t.lower_ not in ("i", "no", "nah")), None)
        if old is not None and new is not None and _kind(new) == _kind(old) \
                and new.lower_ != old.lower_:
            out.append(Correction(new=new.text, old=old.text, states_only=True))
    return out


def _cited_back(doc: Doc, found: Sequence[Correction]) -> list[Correction]:
    """"you called my cat Maureen earlier. It's Mairéad!", "I told you five grandkids,
    didn't I? It's six!": a value said or written (by "you" or "I") cited, and the next
    sentence saying "it's" another value of its kind. Only in states, like a count."""
    out: list[Correction] = []
    sentences = list(doc.sents)
    for said, after in itertools.pairwise(sentences):
        words = [t for t in after if not t.is_punct and t.pos_ != "INTJ"]
        if len(words) < 2 or not (words[0].lower_ == "its" or (
                words[0].lower_ == "it" and words[1].lemma_.lower() == "be" and len(words) > 2)):
            continue
        new = words[2] if words[0].lower_ == "it" else words[1]
        kind = _kind(new)
        old = next((t for t in said if kind is not None and _kind(t) == kind and _cited(t)),
                   None)
        if old is not None and new.lower_ != old.lower_ and not any(
                c.old == old.text for c in found):
            out.append(Correction(new=new.text, old=old.text, states_only=True))
    return out


def _cited(value: Token) -> bool:
    """Whether a value is what a verb of saying or calling, said by "you" or "I", has said:
    "you called my cat Maureen", "I told you five grandkids"."""
    verb = next((a for a in value.ancestors if a.pos_ == "VERB"), None)
    return verb is not None and verb.lemma_.lower() in _CITING and any(
        c.dep_ == "nsubj" and c.lower_ in ("you", "i", "u") for c in verb.children)


def put_right(doc: Doc) -> list[tuple[Op, Span]]:
    """"you've got my birthday down wrong, it's the 21st of march", "you spelled my name
    wrong. It's Siobhan": a thing of the user's that "you" got wrong, and the "it's" that
    opens the next clause or sentence saying what it is. The wrong value is not said, so no
    memory is named: an update aimed at nothing, of the thing's new value, which the gate
    matches with the memory about it. Each with the sentence that says the value. Not when
    either is asked or hedged ("is it the 21st?", "you might have it wrong"), nor when the
    "it's" is denied ("it's not a big deal"). (A value put right beside the wrong one,
    "it's Okafor not Okafur", is a ``Correction``.)"""
    out: list[tuple[Op, Span]] = []
    for wrong in doc:
        if wrong.lower_ != "wrong" or wrong.sent.text.rstrip().endswith("?"):
            continue
        verb = next((a for a in wrong.ancestors if a.pos_ in ("VERB", "AUX")), None)
        if verb is None or not any(c.dep_ == "nsubj" and c.lower_ in ("you", "u")
                                   for c in verb.children) or any(
                c.dep_ == "neg" or (c.dep_ == "aux" and c.tag_ == "MD")
                for c in verb.children):
            continue
        # (what was got wrong: the verb's object, or the subject the parser gives "wrong")
        thing = next((c for c in (*verb.children, *wrong.children)
                      if c.dep_ in ("dobj", "nsubj") and c.i < wrong.i and any(
                          p.dep_ == "poss" and p.lower_ in ("my", "our") for p in c.children)),
                     None)
        someone = thing or next((c for c in verb.children if c.dep_ == "dobj"
                                 and c.pos_ == "PROPN" and c.i < wrong.i), None)
        if someone is not None and (told := _said_next(doc, wrong)) is not None:
            # "you've got Thandi wrong, she turned 13 in June": what "she" is now said to be
            # is the value put right, of the one named
            who = (f"Their {words([t for t in someone.subtree if t.dep_ != 'poss'])}"
                   if thing is not None else words(list(someone.subtree)))
            out.append((Op(op=OpKind.update, content=named(who, told), confidence=0.85,
                           salience=0.7, reason="put right"), told[0].sent))
            continue
        be = _its_next(doc, wrong)
        value = None if be is None else next(
            (c for c in be.children if c.dep_ == "attr"), None)
        if thing is None or be is None or value is None or be.sent.text.rstrip().endswith(
                "?") or any(t.dep_ == "neg" for t in (*value.subtree, *be.children)):
            continue
        what = words([t for t in thing.subtree if t.dep_ != "poss" and t.i <= thing.i])
        said = words([t for t in value.subtree if not t.is_punct])
        out.append((Op(op=OpKind.update, content=f"Their {what} is {said}",
                       confidence=0.85, salience=0.7, reason="put right"), be.sent))
    return out


def _said_next(doc: Doc, wrong: Token) -> list[Token] | None:
    """The clause after ``wrong``'s that a "she", "he" or "they" opens (after a comma or a
    full stop, and an opener at most), without its subject and the clauses joined to it;
    None when there is none, or it is asked or denied."""
    at = wrong.i + 1
    while at < len(doc) and (doc[at].is_punct or doc[at].pos_ == "INTJ"):
        at += 1
    if at + 1 >= len(doc) or doc[at].lower_ not in ("she", "he", "they") \
            or doc[at].dep_ not in ("nsubj", "nsubjpass"):
        return None
    verb = doc[at].head
    if verb.sent.text.rstrip().endswith("?") or any(c.dep_ == "neg" for c in verb.children):
        return None
    apart = {t.i for c in verb.children if c.dep_ in ("conj", "cc", "punct", "parataxis")
             for t in c.subtree}
    told = [t for t in verb.subtree if t.i > at and t.i not in apart]
    return told or None


def _its_next(doc: Doc, wrong: Token) -> Token | None:
    """The "be" of the "it's" that opens the clause or sentence after ``wrong``'s (after
    a comma or a full stop, and an opener at most), or None."""
    at = wrong.i + 1
    while at < len(doc) and (doc[at].is_punct or doc[at].pos_ == "INTJ"
                             or doc[at].lower_ in ("btw", "though", "too")):
        at += 1
    if at + 1 >= len(doc) or doc[at].lower_ != "it" or doc[at + 1].lemma_ != "be":
        return None
    return doc[at + 1]


def updates(found: Sequence[Correction], memories: Sequence[Memory]) -> list[Op]:
    """An update (by handle ``m<id>``) of each memory holding a corrected value, with the
    new value in its place; the gate checks the target."""
    out: list[Op] = []
    if not found:
        return out  # most messages correct nothing: no pass over the chat's memories
    for memory in memories:
        content = corrected_text(memory.content, found, memory.type)
        if content is not None:
            out.append(Op(op=OpKind.update, type=memory.type, slot=memory.slot,
                          content=content, target=f"m{memory.id}", confidence=0.85,
                          salience=memory.salience))
    return out


def corrected_text(text: str, found: Sequence[Correction], kind: MemoryType | None
                   ) -> str | None:
    """``text`` (of a memory of type ``kind``) with the corrected values in it, or None
    when it holds none."""
    content = text
    for correction in found:
        content = correction.apply(content, kind) or content
    return content if content != text else None


def corrected(op: Op, found: Sequence[Correction]) -> Op | None:
    """``op`` with the corrected values in its content, or None when it holds none."""
    content = corrected_text(op.content, found, op.type)
    return op.model_copy(update={"content": content}) if content is not None else None
