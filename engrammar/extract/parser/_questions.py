"""Which clauses of an asking sentence ask, and which state.

A question mark belongs to the sentence, not to every clause in it. Chat puts what it says
and what it asks in one sentence: "I'm off to Lisbon with my wife next week, what should we
pack?" states a trip and asks about packing; "my son Leo just turned six, any ideas for a
party?" states an age and asks for ideas; "can you do a pasta bake, has to be gluten free
cos I'm coeliac" gives its reason as a fact. Read clause by clause from the parse:

- a question that echoes the statement, an auxiliary with no predicate ("..., who doesn't?",
  "..., don't you?"), asks it back, in earnest or in irony: nothing of the sentence states;
- a clause asks by its own form: an auxiliary before its subject ("do you think", "is it
  normal"), or a wh-word opening it ("what should we pack");
- a clause the question governs asks with it: its condition (a marked clause), wherever it
  stands; its complement ("do you think [I should quit]"), a conjunct without a subject of
  its own ("can you give me a lift, [has to be] before six") and any predicate without a
  subject when they follow it; a frame that takes it for its object, with no break between
  ("I wonder which train ...");
- a clause said before the question it is hung on states ("I'm off to Lisbon, what should
  we pack?", however the parse hangs them), and so does a reason given with a question
  ("... cos I'm coeliac");
- what is said of the chat ("I read your reply twice, can you ...") goes with the question;
- a sentence with no clause that asks by its form (a mark only) asks in a verbless tail
  after its last break ("..., any ideas?", "..., right?"), and the clauses before the tail
  state; with no such tail it is a question said as a statement ("you're coming
  tomorrow?"), and every clause asks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from engrammar.extract.parser._mood import SAID_OR_THOUGHT, WH_TAGS, inverted, pictograph
from engrammar.extract.parser._phrases import is_clause

if TYPE_CHECKING:
    from spacy.tokens import Span, Token


# Subordinators that give a reason or a concession: what follows them is asserted, whatever
# the main clause does ("what can I cook, since my partner is coeliac?").
REASONS = frozenset({"because", "cos", "coz", "cause", "'cause", "since", "as", "though",
                     "although", "while", "whilst", "now", "after"})
# Dependencies by which a clause hangs on the one it belongs to.
_JOINS = ("conj", "ccomp", "advcl", "parataxis")
_SUBJECTS = ("nsubj", "nsubjpass", "expl")
_YOU = frozenset({"you", "your", "yours", "yourself", "u", "ur"})
# Where chat breaks a sentence before a tail question ("..., any tips?", "... - thoughts?").
_BREAKS = frozenset({",", ";", "-", "--", "—", "–", ":"})


def own_tokens(head: Token) -> list[Token]:
    """A clause's own tokens: its head's subtree minus the clauses nested in it."""
    out: list[Token] = []
    hung: list[Token] = []
    stack = [head]
    while stack:
        tok = stack.pop()
        out.append(tok)
        for child in tok.children:
            if child.dep_ in _JOINS and is_clause(child):
                continue
            if child.dep_ in ("cc", "punct") and child.i > head.i and any(
                    c.dep_ == "conj" and is_clause(c) for c in tok.children):
                continue
            if child.dep_ == "punct" and not (child.is_punct or child.pos_ == "SYM"):
                # a word the parser hung on as punctuation ("my mum retired when she
                # turned 60": the 60 on "retired") belongs to no phrase of this clause
                hung.append(child)
                continue
            stack.append(child)
    # ... unless the clause's own words stand on both sides of it ("started at Leeds uni
    # doing physics": "uni" hung on "started")
    at = {t.i for t in out}
    out += [t for t in hung if t.i - 1 in at and t.i + 1 in at]
    return sorted(out, key=lambda t: t.i)


class Asking(NamedTuple):
    """How an asking sentence divides: the clauses that ask, the ones that state on their
    own though the parse hangs them on a question, and where a verbless tail question
    starts."""

    asked: frozenset[int]     # indices of the heads that ask
    told: frozenset[int]      # heads that state, hung on a question or giving it a reason
    tail: int | None = None   # the index of the break before a tail question

    def end(self, head: Token) -> int | None:
        """Where the clause of ``head`` stops stating, if before its last word: at the
        tail question, or, for a clause that states beside a question, at a wh-word the
        parse hung on it ("cos my mum has diabetes [what desserts] can I make?")."""
        if head.i in self.asked or not self.asked:
            return self.tail
        wh = next((t.i for t in own_tokens(head) if t.tag_ in WH_TAGS and t.i > head.i), None)
        return min((i for i in (wh, self.tail) if i is not None), default=None)


def asking(heads: Sequence[Token], sentence: Span) -> Asking:
    """How the clause ``heads`` of an asking ``sentence`` divide."""
    own = {h.i for h in heads if _interrogative(h, sentence)}
    by_index = {h.i: h for h in heads}
    if any(_echo(by_index[i]) for i in own):
        # a question that echoes the statement ("I love working weekends, who doesn't?",
        # "..., don't you?") asks it back, in earnest or in irony: none of it is stated
        return Asking(frozenset(by_index), frozenset())
    if not own:
        tail = _tail(sentence)
        if tail is None:
            tail = _wh_break(sentence)
            if tail is not None and not any(h.i < tail and h.pos_ in ("VERB", "AUX")
                                            for h in heads):
                tail = None  # nothing stated before it: "random one, how long is ..."
        if tail is None:
            return Asking(frozenset(by_index), frozenset())
        asked = {h.i for h in heads if h.i > tail}
    else:
        tail = None
        asked = set()
        for h in sorted(heads, key=_depth):  # a governing clause is judged before its own
            governor = _governor(h, by_index)
            if h.i in own or (governor is not None and governor.i in asked
                              and _asks_with(h, governor)):
                asked.add(h.i)
    # a frame around a question it takes for its object asks with it ("I wonder what we
    # should pack", "tell me how long it keeps"); a comma makes two ("I'm off to Lisbon,
    # what should we pack?" however the parse hangs them), and so does an emoji, hung on
    # the question or not ("i cant find anything 😭 how do i get my chats over")
    asked |= {g.i for h in heads if h.i in asked and h.dep_ in ("ccomp", "xcomp")
              and (g := _governor(h, by_index)) is not None and g.i < h.i
              and not any(_break(t) for t in sentence.doc[g.i:h.left_edge.i + 1])}
    # a predicate with no subject after the question is the question's, however the parse
    # hangs it ("how many legs has a lobster got")
    if asked:
        first = min(asked)
        asked |= {h.i for h in heads if h.i > first and not has_subject(h)}
    # what is said of this chat goes with the question ("I read your reply twice, can you
    # explain the last step?"): no fact of the user's
    # (not a tail question's "you" the parse hung on the statement: "I'm a teacher, what
    # about you")
    asked |= {h.i for h in heads if any(t.lower_ in _YOU for t in own_tokens(h)
                                        if tail is None or t.i < tail)}
    told = {h.i for h in heads if h.i not in asked and _told(h, _governor(h, by_index), asked)}
    return Asking(frozenset(asked), frozenset(told), tail)


def _told(head: Token, governor: Token | None, asked: set[int]) -> bool:
    """Whether a clause that does not ask states on its own though it hangs on another:
    said before the question it is hung on ("I've been learning the oboe for a year, is it
    normal ...?"), or a reason ("..., cos I'm coeliac")."""
    if head.dep_ not in ("ccomp", "advcl", "parataxis") or governor is None:
        return False
    if _reason(head):
        return has_subject(head)
    # (with its subject, or a finite verb chat said without one: "need to book the vet
    # before the 12th, what should I ask?"; not a participle: "being vegan, what ...?")
    return governor.i in asked and head.i < governor.i and not _marked(head) and (
        has_subject(head) or head.tag_ in ("VB", "VBP", "VBZ", "VBD"))


# The words that give a reason as a fact: what follows them is so ("since I'm diabetic,
# suggest some snacks"). "While", "after" and "now" tell a time; "as" also compares ("as
# soon as", "as far as") and reports ("as I said").
_GIVEN = frozenset({"because", "cos", "coz", "cause", "'cause", "since", "as"})
_NOT_GIVEN = frozenset({"as", "so", "soon", "long", "far", "such", "just"})


def given_reasons(heads: Sequence[Token]) -> frozenset[int]:
    """The heads of a sentence that does not ask which give a reason as fact, with a
    subject of their own: "Since I am type 2 diabetic, kindly suggest ...", "As I use a
    wheelchair these days, I wonder whether ...". The parse hangs them on the order or
    the frame they explain, so they are no main clause; said as the reason, they are so."""
    out = set()
    for head in heads:
        edge = opening(head)
        if head.dep_ != "advcl" or edge is None or edge.lower_ not in _GIVEN \
                or not has_subject(head) or head.lemma_.lower() in SAID_OR_THOUGHT \
                or (edge.lower_ == "since" and head.tag_ == "VBD"):
            continue  # ("since we last chatted" is a time)
        before = head.doc[edge.i - 1] if edge.i > 0 else None
        if before is not None and before.lower_ in _NOT_GIVEN:
            continue  # "as soon as I'm home", "just as I was leaving"
        out.add(head.i)
    return frozenset(out)


def _marked(head: Token) -> bool:
    return any(c.dep_ == "mark" for c in head.children)


def opening(head: Token) -> Token | None:
    """The word that joins a clause as a reason or a time ("cos", "while"), or the "now"
    the parse hangs on it as an adverb ("... now I've retired"), when it opens the clause;
    else None. Said as fact, the clause's fact is what follows it."""
    edge = head.left_edge
    if edge.head.i != head.i or edge.i >= head.i:
        return None
    if (edge.dep_ == "mark" and edge.lower_ in REASONS) or (
            edge.dep_ == "advmod" and edge.lower_ == "now"):
        return edge
    return None


def _reason(head: Token) -> bool:
    # (or opened by "now", with its subject between: "how do I find a bridge club now
    # I've retired?")
    edge = opening(head)
    return any(c.dep_ == "mark" and c.lower_ in REASONS for c in head.children) or (
        edge is not None and edge.lower_ == "now" and edge.i + 1 < head.i)


def _interrogative(head: Token, sentence: Span) -> bool:
    """Whether a clause has the form of a question: an auxiliary before its subject, or a
    wh-word opening it."""
    subjects = [c for c in head.children if c.dep_ in _SUBJECTS]
    if subjects:
        subject = subjects[0]
        if (head.pos_ == "AUX" and head.i < subject.i) or any(
                c.dep_ in ("aux", "auxpass") and c.i < subject.i for c in head.children):
            return True
    tokens = [t for t in own_tokens(head) if not (t.is_punct or t.pos_ in ("CCONJ", "INTJ"))]
    if not tokens:
        return False
    first = tokens[0]
    if first.tag_ in WH_TAGS and first.i < head.i and head.dep_ != "advcl":
        return True
    # "kofi hasnt eaten since tuesday is that normal": an auxiliary run on after the clause
    # it follows, before its subject, though no break comes between
    if head.pos_ == "AUX" and head.dep_ in ("advcl", "ccomp", "parataxis") \
            and head.head.i < head.i \
            and inverted(head, sentence.end):
        return True
    # "settle a bet for me, was Napoleon short": inverted after a break, whatever the parse
    return any(t.i < head.i + 1 and (t.i == sentence.start or t.doc[t.i - 1].text in _BREAKS)
               and inverted(t, sentence.end) for t in tokens)


def _asks_with(head: Token, governor: Token) -> bool:
    """Whether a clause that follows an asked clause asks with it."""
    if _reason(head) and (head.dep_ == "advcl" or has_subject(head)):
        return False  # a reason or a time said as fact: "..., now I've retired?"
    if head.dep_ == "advcl" and (_marked(head) or head.i > governor.i):
        return True  # its condition, wherever it stands: "if ..., how long"
    if head.i < governor.i:
        return False  # said before the question: "I'm off to Lisbon, what should we pack?"
    if head.dep_ in ("conj", "parataxis"):
        # a conjunct with a subject of its own is a sentence of its own
        return not has_subject(head)
    return True


def _echo(head: Token) -> bool:
    """Whether a question has no predicate of its own, only an auxiliary: "who doesn't",
    "don't you", "wouldn't everyone", "isn't it"."""
    # (the statement it echoes may hang on it, before it: "I love hiking, [don't you]?")
    # (its subject a pronoun: "why is my crust so hard" is a question of its own, whatever
    # the parse made of "hard")
    return (head.pos_ == "AUX" or head.lemma_.lower() in ("do", "be", "have")) and all(
        c.dep_ in ("nsubj", "neg", "punct", "advmod", "cc", "intj", "expl")
        or (c.dep_ in _JOINS and c.i < head.i) for c in head.children) and all(
        c.pos_ == "PRON" for c in head.children if c.dep_ == "nsubj")


def has_subject(head: Token) -> bool:
    """Whether a verb has a subject of its own."""
    return any(c.dep_ in _SUBJECTS for c in head.children)


def _governor(head: Token, heads: dict[int, Token]) -> Token | None:
    tok = head
    while tok.head.i != tok.i:
        tok = tok.head
        if tok.i in heads:
            return heads[tok.i]
    return None


def _depth(tok: Token) -> int:
    n = 0
    while tok.head.i != tok.i:
        tok = tok.head
        n += 1
    return n


def _tail(sentence: Span) -> int | None:
    """Where a verbless tail question starts: the index of the last break before the
    sentence's mark, if no verb follows it ("my son just turned six, any ideas?")."""
    end = sentence.end
    while end > sentence.start and sentence.doc[end - 1].is_punct:
        end -= 1
    for i in range(end - 1, sentence.start, -1):
        tok = sentence.doc[i]
        if _break(tok):
            rest = sentence.doc[i + 1:end]
            if len(rest) and not _verbal(rest):
                return _first_of_run(sentence, _asked_from(sentence, i, end))
            return None
    return None


def _wh_break(sentence: Span) -> int | None:
    """The last break a wh-word follows, when a question without its mark is put after
    what the sentence states ("he's obsessed with birdwatching, spends every saturday
    down the wetlands 😂 what do I get him"); None when there is none or nothing before."""
    doc = sentence.doc
    for i in range(sentence.end - 2, sentence.start, -1):
        wh = doc[i + 1]
        if _break(doc[i]) and wh.tag_ in WH_TAGS and wh.head.dep_ != "relcl":
            # (not a relative's: "I met this woman, Jean, who had been ...")
            return _first_of_run(sentence, i)
    return None


def _first_of_run(sentence: Span, i: int) -> int:
    """The first of a run of pictographs ending at ``i``: a flag is two of them."""
    doc = sentence.doc
    while i - 1 > sentence.start and pictograph(doc[i]) and pictograph(doc[i - 1]):
        i -= 1
    return i


def _verbal(rest: Span) -> bool:
    # (a verb of a clause hung on the tail's noun is no verb of the tail's own:
    # "... 🙄 quick ideas that arent all beige?")
    return any(t.pos_ in ("VERB", "AUX") and not any(
        a.dep_ in ("relcl", "acl") and a.i >= rest.start for a in (t, *t.ancestors))
        for t in rest)


def _asked_from(sentence: Span, tail: int, end: int) -> int:
    """The break a verbless tail question starts at: the last one, or an earlier one a
    wh-word follows with no verb after it ("painting the spare room this wknd, how much
    paint for 3x4m, 2.4m ceiling": the question is all that follows "wknd,")."""
    doc = sentence.doc
    for i in range(sentence.start + 1, tail):
        if _break(doc[i]) and doc[i + 1].tag_ in WH_TAGS and not _verbal(doc[i + 1:end]):
            return i
    return tail


def _break(tok: Token) -> bool:
    """Whether ``tok`` breaks a sentence into parts: a comma, a dash, a colon, or a
    pictograph ("the eldest wont touch anything orange 🙄 quick ideas?")."""
    return tok.text in _BREAKS or pictograph(tok)
