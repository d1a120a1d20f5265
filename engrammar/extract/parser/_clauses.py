"""Clause analysis over a dependency parse: each predicate of a sentence, judged.

A sentence holds one clause per predicate (its head verb, or the copula's head). For each,
read from the parse rather than from word patterns: its subject and whose it is
(``_owners``), whether it is asked, supposed or someone else's words (``_mood``), negation,
its tense, and the modal chain that turns "I'm going to renew my passport" into a plan to
*renew*.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from engrammar.extract.parser._mood import FUTURE_AUX, SPEECH, asks, hypothetical, quoted
from engrammar.extract.parser._nlp import past_form
from engrammar.extract.parser._owners import (
    Owner,
    copula_as_aux,
    owner_of,
    relatives_before,
    standing_for,
    subject_of,
)
from engrammar.extract.parser._phrases import is_clause
from engrammar.extract.parser._questions import (
    Asking,
    asking,
    given_reasons,
    has_subject,
    opening,
    own_tokens,
)

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token


# Verbs whose "to" complement is what is planned: "going to X", "need to X".
MODAL_VERBS = frozenset({"go", "need", "have", "plan", "promise", "want", "intend", "hope",
                         "try", "mean", "decide", "got", "get", "gotta", "wanna"})


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
    # Said inside an asking sentence, yet stated: hung on the question it comes before, or
    # the reason given for it ("..., cos I'm coeliac"); and where it stops stating: the
    # sentence's verbless tail question ("just turned six, any ideas?"), or a wh-word the
    # parse hung on it (``Asking.end``).
    told: bool = False
    until: int | None = None

    @property
    def lemma(self) -> str:
        lemma = self.head.lemma_.lower()
        return "get" if lemma == "got" else lemma  # "Got the job!": capitalised, unlemmatised

    @property
    def saying(self) -> bool:
        """Whether the clause is a verb of saying, or one with "to" ("used to say")."""
        return bool(self._speech())

    @property
    def says_what(self) -> bool:
        """Whether its verb of saying has a clause for what is said ("says she's moving";
        not one spliced on after a comma: "they'll ask Java, I'm weak in joins")."""
        doc = self.head.doc
        return any(k.dep_ == "ccomp" and k.i > v.i
                   and not any(t.text == "," for t in doc[v.i:k.i])
                   for v in self._speech() for k in v.children)

    def _speech(self) -> list[Token]:
        return [v for v in (self.head, *(k for k in self.head.children if k.dep_ == "xcomp"
                                          and any(a.tag_ == "TO" for a in k.children)))
                if v.lemma_.lower() in SPEECH]

    @property
    def factual(self) -> bool:
        """Not asked, not imagined, not someone else's words."""
        return not (self.question or self.hypothetical or self.quoted)

    def tokens(self) -> list[Token]:
        """The clause's own tokens: its head's subtree minus nested clauses."""
        tokens = own_tokens(self.head)
        return tokens if self.until is None else [t for t in tokens if t.i < self.until]


def _negated(head: Token) -> bool:
    for c in head.children:
        # "I live in Porto now, not Lisbon": a "not" after the predicate contrasts a value,
        # it does not deny the statement (except right after a copula: "I'm not a nurse").
        if (c.dep_ == "neg" or c.lower_ == "never") and (
                c.i < head.i or (c.i == head.i + 1 and head.lemma_ == "be")):
            return True
        if c.dep_ in ("nsubj", "nsubjpass") and any(
                d.dep_ == "det" and d.lower_ == "no" for d in c.children):
            return True  # "no ticket sorted": nothing is
    # "I don't want to go", and what is had or got done: "haven't got the tickets sorted"
    # (not a clause before it the parse hung on it: "given up the golf, my back won't
    # have it anymore")
    return (head.dep_ == "xcomp" or (head.dep_ == "ccomp" and head.i > head.head.i
                                     and head.head.lemma_.lower() in ("have", "get"))
            ) and _negated(head.head)


def _tense(head: Token, chain: list[Token]) -> str:
    auxes = [c for t in chain for c in t.children if c.dep_ in ("aux", "auxpass")]
    words = {a.lower_ for a in auxes}
    if words & FUTURE_AUX or any(t.lemma_ == "go" and t.tag_ == "VBG" for t in chain[:-1]):
        return "future"
    if _having(head, words):
        return "present"
    if head.tag_ == "VBD" or words & {"did", "had", "was", "were"} or (
            # (a bare verb with its subject is in the tense its tag says: "I rent a chair"
            # is not the past of "rend"; "Won the club singles", no subject, the tagger
            # misled by the capital, is the past of "win")
            head.tag_ in ("VB", "VBP") and not auxes and not has_subject(head)
            and past_form(head.text)) or (
            head.tag_ == "VBN" and words & {"have", "'ve", "has", "'s"}) or (
            _dropped_past(head, auxes)):
        return "past"
    return "present"


def _dropped_past(head: Token, auxes: list[Token]) -> bool:
    """Whether a participle with an object and no subject nor auxiliary is a past tense
    whose "I" chat dropped: "Taught the infants in Aberystwyth for 38 years" (the tagger's
    VBN opening a sentence). "Born in Cork" has no object: a participle still."""
    return head.tag_ == "VBN" and not auxes and any(
        c.dep_ == "dobj" for c in head.children) and not has_subject(head)


def _having(head: Token, auxes: set[str]) -> bool:
    """Whether a "have got" says what one has now ("I've got 8 weeks", "she's got two
    kids"): "got" with a present "have" and an object, not said as just happened ("I've
    finally got the keys")."""
    if head.lower_ != "got" or not auxes & {"have", "'ve", "has", "'s", "ve"}:
        return False  # (every clause's tense asks: the cheap test first)
    doc = head.doc
    # (what is had follows the verb, whatever the parse hung it on: "ive got ten days off")
    had = any(c.dep_ == "dobj" for c in head.children) or (
        head.i + 1 < len(doc) and doc[head.i + 1].tag_ in (
            "DT", "CD", "JJ", "PRP$", "NN", "NNS", "NNP", "NNPS"))
    return had and not any(
        c.dep_ == "advmod" and c.lower_ in ("just", "finally", "already", "recently", "now")
        for c in head.children)


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
                                  and is_clause(tok)) or copula_as_aux(tok):
            yield tok


def analyse(doc: Doc, antecedent: str | None = None,
            called: str | None = None) -> list[Clause]:
    """Every clause of ``doc``, in order; ``antecedent`` as for ``owner_of``, ``called``
    the name an earlier message gave it."""
    out: list[Clause] = []
    for sentence in doc.sents:
        predicates = list(heads(sentence))
        split = asking(predicates, sentence) if asks(sentence) else Asking(
            frozenset(), given_reasons(predicates))
        for head in predicates:
            subject = subject_of(head)
            owner, relation = owner_of(subject, head, antecedent)
            chain = _chain(head)
            # a "he" or "she" that stands for the earlier message's relative
            pronoun = standing_for(subject)
            earlier = relation is not None and relation == antecedent and pronoun is not None \
                and not relatives_before(pronoun)
            out.append(Clause(
                head=head, sentence=sentence, subject=subject, owner=owner, relation=relation,
                negated=_negated(head), question=head.i in split.asked,
                hypothetical=hypothetical(head), quoted=quoted(head, doc),
                tense=_tense(head, chain),
                modals=[t.lemma_.lower() for t in chain[:-1]],
                action=chain[-1] if len(chain) > 1 else None,
                earlier=earlier, called=called if earlier else None,
                told=head.i in split.told, until=split.end(head)))
    sentences = list(doc.sents)
    for n, sentence in enumerate(sentences):
        back = taken_back(sentence)
        if back is None:
            continue
        # What is taken back was never said: the sentence before a "Kidding." alone, or the
        # words before a "jk" that ends one ("getting a face tattoo lol jk").
        meant = sentences[n - 1] if back == sentence.start and n > 0 else sentence
        before = [c for c in out if c.sentence.start == meant.start and (
            meant is not sentence or c.head.i < back)]
        # Only the last of what was joined: "I work as a chef, and I'm a part-time wizard
        # lol jk" takes back the wizard.
        last = max((c for c in before if c.head.dep_ in ("ROOT", "conj")),
                   key=lambda c: c.head.i, default=None)
        start = last.head.left_edge.i if last is not None and last.head.dep_ == "conj" \
            else meant.start
        for c in before:
            if c.head.i >= start:
                c.hypothetical = True
    return out


# The words that take back what was just said, and those that may come with them.
_TAKE_BACK = frozenset({"kidding", "joking", "jk", "jking", "jks"})
_LAUGHS = frozenset({"lol", "haha", "hahaha", "lmao"})
_WITH_TAKE_BACK = _LAUGHS | {"just", "only", "mostly", "obviously", "i", "'m", "am", "of",
                             "course", "ofc", "ok"}


def taken_back(sentence: Span) -> int | None:
    """Where a sentence takes back what was said before it ("Kidding.", "lol jk",
    "...just joking 😂"): the index its words of taking back start at; None when it does
    not end so."""
    said = [t for t in sentence if not (t.is_punct or t.is_space or (
        t.pos_ in ("SYM", "X") and not t.is_alpha))]
    end = len(said)
    while end and said[end - 1].lower_ not in _TAKE_BACK \
            and said[end - 1].lower_ in _WITH_TAKE_BACK:
        end -= 1  # ("kidding. mostly")
    if not end or said[end - 1].lower_ not in _TAKE_BACK:
        # ("just kidding, I'm a teacher": it opens the sentence, and takes back the one
        # before)
        lead = 0
        while lead < len(said) and said[lead].lower_ in _WITH_TAKE_BACK:
            lead += 1
        if lead < len(said) - 1 and said[lead].lower_ in _TAKE_BACK \
                and said[lead + 1].i > said[lead].i + 1:
            return sentence.start  # (a mark after it: "just kidding, ...")
        return None
    start = end - 1
    while start and said[start - 1].lower_ in _WITH_TAKE_BACK | _TAKE_BACK:
        start -= 1
    if not start:
        return sentence.start
    # (set off from what it takes back, by a mark or a laugh, or chat's "jk": "my son
    # loves joking" takes nothing back)
    set_off = said[start].i > said[start - 1].i + 1 or any(
        t.lower_ in _LAUGHS or t.lower_.startswith("jk") for t in said[start:end])
    return said[start].i if set_off else None


def said_part(sentence: Span, clauses: Sequence[Clause]) -> list[Token]:
    """The words of ``sentence`` that its ``clauses`` state: all of them but those of the
    clauses that ask, and each clause's words after it stops stating (``Clause.until``: a
    tail question, a wh-word hung on it) ("I'm off to Lisbon next week, what should we
    pack?" -> "I'm off to Lisbon next week,")."""
    mine = [c for c in clauses if c.sentence.start == sentence.start]
    listening = [c for c in mine if to_listener(c)]
    if not listening and not any(c.question or c.until is not None for c in mine):
        return list(sentence)
    out = {t.i for c in mine for t in own_tokens(c.head)
           if c.question or (c.until is not None and t.i >= c.until)}
    # (said to the listener, the sentence's last words go whole, with what joins them)
    out |= {t.i for c in listening
            for t in c.sentence.doc[_joined_at(c.head.left_edge): c.sentence.end]}
    asked = {c.head.i for c in mine if c.question} | {c.head.i for c in listening}
    # a reason or a time hung on the question says its fact without its word: "...
    # one-handed while my wrist is in a cast" -> "my wrist is in a cast"
    out |= {o.i for c in mine if not c.question and asked and c.head.head.i != c.head.i
            and (o := opening(c.head)) is not None}
    return [t for t in sentence if t.i not in out]


def _joined_at(edge: Token) -> int:
    """Where a clause starting at ``edge`` starts with what joins it: the mark or "so",
    "and", "but" just before it."""
    before = edge.doc[edge.i - 1] if edge.i > edge.sent.start else None
    joins = before is not None and (before.is_punct or before.lower_ in _JOINERS)
    return edge.i - 1 if joins else edge.i


_JOINERS = frozenset({"so", "and", "but"})


def to_listener(c: Clause) -> bool:
    """Whether a clause hung on another is said of the one listening, what the reply is
    to do: "..., so whatever you suggest for meals has gotta be easy". (A sentence said to
    them alone is the readings' to judge: "you were right about the boots".)"""
    subject, head = c.subject, c.head
    # (only a clause joined after another, not one it says: "glad you enjoyed it", "loves
    # that you chose pottery"; nor one marked as its time or reason: "while you were ...")
    if subject is None or head.dep_ not in ("advcl", "conj") or head.i < head.head.i \
            or any(t.dep_ == "mark" or t.tag_ == "WRB" for t in head.subtree):
        return False
    # (and only the sentence's last words, set off by a mark or a "so", "and", "but": a
    # cut inside it would leave its words in pieces)
    said = [t for t in c.sentence if not (t.is_punct or t.is_space)]
    first = head.left_edge
    before = first.doc[first.i - 1] if first.i > c.sentence.start else None
    if not said or head.right_edge.i < said[-1].i or before is None or not (
            before.is_punct or first.lower_ in _JOINERS or before.lower_ in _JOINERS):
        return False
    if subject.head.i != head.i:
        return False  # (a verb sharing another's subject: "glad you're hopeful and inspired")
    if any(t.dep_ in ("nsubj", "nsubjpass") and t.lower_ in ("i", "we") for t in head.subtree):
        return False  # (what it says of the speaker: "so you'll know I work weekends")
    if subject.dep_ == "csubj":
        subject = next((t for t in subject.children if t.dep_ == "nsubj"), subject)
    return subject.lower_ in ("you", "u")
