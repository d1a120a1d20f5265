"""Turn candidates: what a message states, whole, in the speaker's words.

The readings (``_extractor``) and the clause candidates (``_candidates``) see one sentence at
a time and need a clause about the speaker. Much of what people tell a chat is neither: a
short answer to the question just asked ("yeah, a beagle called Rolo"), a list ("three
things this week: dentist weds, pay the council tax"), chat with its subject dropped or a
typo in it ("im dyslexic so shorter messages help a lot"). So after the readings, the
sentences of a message that state something (not asked, imagined, quoted or hedged) become
one candidate, and the learned turn model (``_decisions.Model.keep_turn``) decides whether
it is worth keeping. The candidate's content is those sentences in the third person, every
word kept; an answer too short to stand alone keeps the question it answers beside it.

A sentence a structured reading kept (a slot such as a name or a home, a request, a
correction) stays that reading's alone. The plain adds and resolutions the readings and the
clause model made of the other sentences are what the turn *replaces* when it is kept: one
memory per message, in the speaker's words, rather than a clause of it beside the whole.
On LoCoMo's dev split a message's own words say the annotated facts far more often than
the clauses cut from it (each turn as a memory keeps 75.2% of them; the memories extracted
before this kept 43.9%), and each clause beside the whole cost the budget of memories per
100 turns without adding facts.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from engrammar.extract.parser._asked import about_someone, asks_name
from engrammar.extract.parser._candidates import MAX_CHARS, _cut, _spoken, candidates
from engrammar.extract.parser._clauses import Clause, said_part
from engrammar.extract.parser._events import MAYBE
from engrammar.extract.parser._forgetting import boundary
from engrammar.extract.parser._lexicon import OPENERS, POLITENESS, kin
from engrammar.extract.parser._mood import in_condition
from engrammar.extract.parser._nlp import is_label
from engrammar.extract.parser._others import told_before
from engrammar.extract.parser._owners import Owner, standing_for
from engrammar.extract.parser._phrases import DATED, cap, words
from engrammar.extract.parser._referents import worded
from engrammar.extract.parser._requests import REFERS_BACK
from engrammar.models import MemoryType, OpKind

if TYPE_CHECKING:
    from collections.abc import Collection, Sequence

    from spacy.tokens import Doc, Span, Token

    from engrammar.extract.parser._candidates import Candidate
    from engrammar.models import Message, Op

# An answer with fewer content words than this keeps the question beside it: "Glasgow"
# alone says nothing a later query could find.
_SHORT_ANSWER = 4
# A turn memory is the message, not one sentence of it: cut at 240 characters like a
# clause, the LoCoMo dev split's turns lost the facts told at their end (628 facts said
# by the turn candidates at 240, 655 at 400, the same 655 with no cut at all).
TURN_MAX_CHARS = 400
_WORD = re.compile(r"[^\W_]+")
# What a verb does or is, when it has it: a clause without any leaves it to the question.
_COMPLEMENTS = frozenset({"dobj", "attr", "acomp", "xcomp", "ccomp", "prep", "oprd", "dative",
                          "advcl", "agent", "nsubjpass", "auxpass"})
# A sentence that only says the speaker does not know or has not decided ("dunno yet",
# "not sure tbh", "no idea"): it states nothing, whatever question it answers.
_NONCOMMITTAL = re.compile(
    r"^(?:i\s+)?(?:dunno|don'?t know|do not know|idk|not sure|unsure|no idea|no clue|"
    r"haven'?t decided|not decided|undecided|we'?ll see|who knows|not yet)"
    r"(?:\s+(?:yet|really|tbh|honestly|either|lol|haha|tho|though))*$", re.IGNORECASE)
# Someone's words in quotation marks, when they speak in the first or second person:
# "this guy on the bus was like "im moving to berlin"" reports what he said, not a fact of
# the user's (a title or a saying in quotes has no "I" or "you" of its own).
_SPEECH = re.compile(r"[\"“”]([^\"“”]+)[\"“”]")
_PERSON = re.compile(r"\b(?:i|im|i'm|me|my|we|we're|our|you|you're|your)\b", re.IGNORECASE)
# The fact types the learned parts decide among, in the clause model's order (its weights'
# columns: _decisions.TYPES is this tuple).
FACT_TYPES = (MemoryType.profile, MemoryType.preference, MemoryType.episodic,
              MemoryType.open_loop)


@dataclass
class TurnCandidate:
    """The stating sentences of one message that no op says, as one candidate."""

    sentences: list[Span]
    clauses: list[Clause]
    content: str
    answer: bool  # the message answers a question asked just before it
    question: str | None = None
    # The readings' plain ops on these sentences: the turn stands for them when it is kept.
    replaces: list[Op] = field(default_factory=list)
    # The sentence a reading kept just before its first, when that one has no verb: what
    # it names details that reading ("my citizenship ceremony is in two weeks!! finally
    # after 9 years in Leeds").
    follows: Span | None = None

    @property
    def tokens(self) -> list[Token]:
        """The words its sentences state (what they ask left out)."""
        return [t for s in self.sentences for t in said_part(s, self.clauses)]

    @property
    def own(self) -> bool:
        """Whether a clause of it is about the speaker or someone of theirs."""
        return any(c.owner in (Owner.user, Owner.relative) and not c.question
                   for c in self.clauses)

    @property
    def leans(self) -> bool:
        """Whether it opens with words that need the question to say anything ("sage
        green.", "mostly web apps"): a first sentence with no verb."""
        return bool(self.sentences) and not any(
            t.pos_ in ("VERB", "AUX") for t in said_part(self.sentences[0], self.clauses))

    @property
    def first(self) -> Candidate | None:
        """The first clause candidate among the sentences, whose type the clause model
        knows how to give."""
        found = candidates(self.clauses)
        return found[0] if found else None


def word_set(text: str) -> set[str]:
    """Every word of ``text``, lower case."""
    return {w.lower() for w in _WORD.findall(text)}


def content_words(text: str) -> set[str]:
    return {w for w in word_set(text) if len(w) > 2 or w.isdigit()}


def stating(doc: Doc, clauses: Sequence[Clause], answer: bool = False) -> list[Span]:
    """The sentences of ``doc`` that state something: none of their clauses is asked,
    imagined or quoted, no hedge is in them, and they are not addressed to the assistant.
    ``answer``: the message answers a question, where a word alone is no order whatever
    the tagger made of it ("what's her name?" "dixie", "what position?" "goalie")."""
    by_sentence: dict[int, list[Clause]] = {}
    for c in clauses:
        by_sentence.setdefault(c.sentence.start, []).append(c)
    out = []
    for sentence in doc.sents:
        every = by_sentence.get(sentence.start, [])
        # what it asks is left out of it ("I'm off to Lisbon next week, what should we
        # pack?" states the trip)
        said = [c for c in every if not c.question]
        root = next((c for c in said if c.head.i == sentence.root.i), said[0] if said and len(
            said) < len(every) else None)
        # A real main clause keeps the sentence whatever its condition says ("I'm building
        # a chest for her graduation, if I can get the lid to sit right").
        real = root is not None and root.factual
        if (every and not said) or (not every and sentence.text.rstrip().endswith("?")) \
                or not all(
                c.factual or (real and in_condition(c.head) and not (c.question or c.quoted))
                for c in said):
            continue
        if any(t.lower_ in MAYBE for t in sentence) or noncommittal(sentence) \
                or choosing(sentence) or is_label(sentence):
            continue
        word = answer and sum(not t.is_punct for t in sentence) == 1
        if root is not None and (root.owner is Owner.assistant or (
                root.owner is Owner.command and not word)):
            continue  # "guess what I do for work": said to the assistant, not a fact
        own = any(c.owner in (Owner.user, Owner.relative) for c in said)
        if not own and any(_reacting(c, sentence) for c in said):
            continue  # "so happy you're pushing forward with dancing": the listener's news
        opening = next((t for t in sentence if not (t.is_punct or t.lower_ in OPENERS)),
                       None)
        if not own and not word and any(c.owner is Owner.command and c.head == opening
                                        for c in said):
            continue  # "write a profile for a farmer, it's for a sketch": an order that opens
            # the sentence, and its terms, whichever clause the parse made the root
        if not own and any(t.lower_ in POLITENESS for t in sentence) and not any(
                c.subject is not None and c.head.lower_ not in POLITENESS for c in said):
            continue  # "gift ideas please": asked for, with no clause to state anything
            # (the tagger may take the "please" for a verb, the ideas for its subject)
        if (root is None or root.owner not in (Owner.user, Owner.relative)) and any(
                _PERSON.search(q) for q in _SPEECH.findall(sentence.text)):
            continue  # someone else's words, quoted
        quoted_ = _SPEECH.search(sentence.text) is not None
        if root is not None and root.saying and (
                (root.owner is Owner.relative and (quoted_ or root.says_what)) or (
                quoted_ and root.subject is not None
                and root.subject.lower_ not in ("i", "we"))):
            continue  # what another says is their word ("my nan used to say, '...'", "my
            # oupa always said '...'", whatever word the speaker has for them; not what
            # one tells of the user: "GP says my blood pressure's too high")
        if any(not t.is_punct and t.pos_ not in ("INTJ", "PUNCT", "SYM") for t in sentence):
            out.append(sentence)
    return out


def _reacting(c: Clause, sentence: Span) -> bool:
    """Whether a clause is what the listener did or has, said as the sentence's point: its
    root, or what the root's feeling or verdict is about ("glad you had a blast", "it's
    great that you have your family with you"); not a thing of theirs the speaker's own
    clause mentions ("been reading that book you recommended")."""
    if c.owner is not Owner.assistant:
        return False
    head = c.head
    return head == sentence.root or (head.dep_ in ("ccomp", "advcl")
                                     and head.head == sentence.root
                                     and head.head.pos_ != "VERB")


def choosing(sentence: Span) -> bool:
    """Whether a sentence only takes up a choice: a thing named, then "it is" ("chicken and
    rice it is", "the blue one it is then"), with no verb of its own before it. What is
    picked for the moment is no fact of the speaker's."""
    # (what has no letter or digit is a mark or an emoji)
    said = [t for t in sentence if any(ch.isalnum() for ch in t.text)
            and t.pos_ not in ("INTJ", "SYM", "X")]
    while said and said[-1].lower_ in ("then", "now", "lol", "haha", "x"):
        said.pop()
    if len(said) < 3 or said[-2].lower_ != "it" or said[-1].lower_ not in ("is", "'s"):
        return False
    before = said[:-2]
    return any(t.pos_ in ("NOUN", "PROPN") for t in before) and not any(
        t.pos_ in ("VERB", "AUX") for t in before)


def noncommittal(sentence: Span) -> bool:
    """Whether a sentence only says the speaker does not know or has not decided."""
    kept = [t.text for t in sentence if not t.is_punct and t.lower_ not in OPENERS]
    return bool(_NONCOMMITTAL.match(" ".join(kept).replace(" n't", "n't").replace(" '", "'")
                                    .replace("dun no", "dunno")))


def turn_candidate(doc: Doc, clauses: Sequence[Clause], read: Collection[str],
                   question: str | None, plain: Sequence[tuple[str, Op]] = (),
                   reworded: Collection[int] = ()) -> TurnCandidate | None:
    """The candidate of a message whose sentences ``read`` (their texts) a structured
    reading kept; ``question`` is the question asked just before it (by the assistant or
    the other speaker), if any; ``plain``: each plain op the readings made (``replaceable``)
    with the text of the sentence it came from. A sentence whose plain op says something in
    words the sentence does not use ("Likes coffee" of "I love coffee") stays that op's:
    the gate compares such a statement with the pool (its polarity, its value), and the
    turn could not say it the same way; unless its id is in ``reworded``: a reading's op
    that leaves out what the sentence says (``loses``), which the sentence says better."""
    stated = [s for s in stating(doc, clauses, question is not None)
              if s.text not in read and not _greeting(s) and not _opens_list(s)]
    starts = {s.start for s in stated}
    kept = [c for c in clauses if c.sentence.start in starts]
    left: list[Span] = []
    said: list[str] = []
    for s in stated:
        # (a pronoun in a later sentence may stand for what the first one names)
        with worded(frozenset(x.start for x in left)):
            third = in_third_person(s, kept)
        ops = [op for origin, op in plain if origin == s.text]
        if all(id(op) in reworded or _says(third, op) for op in ops):
            if not left:
                # The turn's first sentence: a "he" or "she" an earlier sentence named,
                # which the turn does not carry, is named ("Their sister Renée is going
                # to live with them"); within the turn the pronoun stays as said.
                third = in_third_person(s, told_before(
                    [c for c in kept if c.sentence.start == s.start]))
            left.append(s)
            said.append(third)
    text = " ".join(filter(None, said))
    if not left or not content_words(text):
        return None
    starts = {s.start for s in left}
    kept = [c for c in kept if c.sentence.start in starts]
    answer = question is not None
    if not answer and not any(t.pos_ in ("VERB", "AUX") or t.like_num or (
            t.pos_ == "PROPN" and t.is_alpha) for s in left
            for t in said_part(s, kept)):  # (not an emoji)
        # Words with no predicate, no name or figure, and no question to lend them
        # one ("morning, double shift today", "sea view from the kitchen!") comment on the
        # day: no fact to keep. ("rent's 1,450 in Lyon" says its figure; a verbless plan,
        # "dentist thurs 2pm", is the fragment reading's.)
        return None
    own_clause = any(c.owner in (Owner.user, Owner.relative) for c in kept
                     if not c.question)
    asking = _asking_before(left[0], clauses, read)
    bare = _opens_bare(left[0], kept)
    if asking is not None and bare:
        # A fragment after the user's own question ("what stretches help a groin that keeps
        # tweaking? third time this season") says its fact of the thing asked about.
        text = f"{cap(text)} (asking {_quoted(words(list(asking)))})"
    elif answer and question and (
            (not own_clause and len(content_words(text)) < _SHORT_ANSWER)
            or any(_elliptical(c) for c in kept if not c.question)
            or about_someone(question) or bare):
        text = f"{cap(text)} (asked {_asked(question)})"
    texts = {s.text for s in left}
    return TurnCandidate(left, kept, _cut(cap(text), TURN_MAX_CHARS), answer, question,
                         [op for origin, op in plain if origin in texts],
                         _read_before(left, kept, read) if bare and asking is None else None)


def _read_before(left: Sequence[Span], clauses: Sequence[Clause], read: Collection[str]
                 ) -> Span | None:
    """The sentence a reading kept just before a turn that is one verbless sentence naming
    a thing (a noun, a name or a figure), which is then a detail of it."""
    if len(left) != 1:
        return None
    last = _before(left[0])
    named = any(t.pos_ in ("NOUN", "PROPN") or t.like_num for t in said_part(left[0], clauses))
    return last if last is not None and last.text in read and named else None


def _before(sentence: Span) -> Span | None:
    """The sentence just before ``sentence`` in its message, if any."""
    return next((s for s in reversed(list(sentence.doc.sents)) if s.end <= sentence.start),
                None)


def _asking_before(sentence: Span, clauses: Sequence[Clause], read: Collection[str]
                    ) -> Span | None:
    """The sentence just before ``sentence`` in its message when it asks something (of the
    assistant, as a rule), rather than stating a fact a reading kept."""
    last = _before(sentence)
    if last is None or last.text in read:
        return None
    asks = any(c.question for c in clauses if c.sentence.start == last.start)
    return last if asks or last.text.rstrip().endswith("?") else None


def _opens_bare(sentence: Span, clauses: Sequence[Clause]) -> bool:
    """Whether an answer's first sentence needs the question to say anything: it has no
    verb ("couple of years now, since lockdown"). (Taking a first phrase with none before
    a comma, "Pepper, she's a collie cross", lost a visible fixture and moved no other.)"""
    said = [t for t in said_part(sentence, clauses)
            if not (t.is_punct or t.pos_ == "INTJ" or t.lower_ in OPENERS)
            and any(ch.isalnum() for ch in t.text)]  # (an emoji the tagger took for a verb)
    return bool(said) and not any(t.pos_ in ("VERB", "AUX") for t in said)


def gives_name(turn: TurnCandidate) -> bool:
    """Whether a turn answers a question about a name with one, said alone ("what's her
    name?" "dixie"; "what's he called?" "Oisin"): kept whatever the turn model says, which
    reads a word alone as saying little."""
    if not turn.answer or not turn.sentences or not asks_name(turn.question):
        return False
    said = [t for t in said_part(turn.sentences[0], turn.clauses)
            if not (t.is_punct or t.pos_ in ("INTJ", "SYM", "ADV") or t.lower_ in OPENERS)]
    # (a word alone is tagged as it may: "dixie" is an order to the small model)
    kinds = ("PROPN", "NOUN", "X", "VERB") if len(said) == 1 else ("PROPN", "NOUN", "X")
    return 0 < len(said) <= _NAME_WORDS and all(
        t.is_alpha and t.pos_ in kinds and not t.is_stop
        and t.lemma_.lower() not in ("thank", "thanks", "cheer", "cheers") for t in said)


def tells_name(turn: TurnCandidate) -> bool:
    """Whether a turn tells what someone is called: "his name's Mr Dhillon btw", "the vet
    is called Dr Okafor". A name is what a later turn asks for and cannot guess: kept
    whatever the turn model says of the chat around it ("aye that's spot on cheers")."""
    for sentence in turn.sentences:
        said = [t for t in sentence if not t.is_punct]
        for whose, naming, verb, named in zip([None, *said], said, said[1:], said[2:],
                                               strict=False):
            if naming.lower_ == "names" and whose is not None and whose.lower_ in _THEIR \
                    and _a_name(verb, lower=True):
                return True  # "her names kayla by the way" (chat's "name's")
            if naming.lower_ == "name" and verb.lower_ in ("is", "'s") and (
                    whose is None or whose.lower_ != "your") and _a_name(named, lower=True):
                return True
            if naming.lower_ in ("is", "'s", "are") and verb.lower_ == "called" \
                    and _a_name(named) and _a_person(naming, named):
                return True
    return False


# Titles only a person's name takes.
_TITLES = frozenset({"mr", "mrs", "ms", "miss", "dr", "prof", "sir", "auntie", "uncle"})


def _a_person(aux: Token, named: Token) -> bool:
    """Whether what "is called" a name is a person (``aux``: the "is"): the name takes a
    title ("the vet is called Dr Okafor"), or its subject is someone's ("my boss is called
    Sandra"); not "the app is called Notion"."""
    if named.lower_.rstrip(".") in _TITLES:
        return True
    subject = next((c for c in aux.head.children if c.dep_ in ("nsubj", "nsubjpass")), None)
    return subject is not None and (kin(subject.lower_) or any(
        c.dep_ == "poss" and c.lower_ in ("my", "his", "her", "their", "our")
        for c in subject.children))


# Whose name it is, when chat writes "name's" as "names".
_THEIR = ("his", "her", "their")


def _a_name(token: Token, lower: bool = False) -> bool:
    """Whether a word is a name: tagged one with its capital, or (``lower``: where only a
    name can follow, "her name is kayla") any word that is no function word, verb,
    adverb nor adjective ("his name is just ...", "her name is lovely")."""
    if token.text[:1].isupper() and token.pos_ == "PROPN":
        return True
    # (the tagger takes a name it does not know for anything: "dougie" for a pronoun. The
    # embedder's vocabulary cannot tell a word from a name: it holds "kayla" as it holds
    # "mud", so "her name is mud now" is read as a name.)
    return lower and token.is_alpha and not token.is_stop and token.pos_ not in (
        "VERB", "AUX", "ADV", "ADP", "DET", "ADJ")


# A name given alone is this many words at most ("Mr Dhillon", "Mary Kate O'Neill").
_NAME_WORDS = 3


def _elliptical(clause: Clause) -> bool:
    """Whether a clause leaves its verb phrase to the question it answers: "yes, tomorrow
    evening we will do", "on Sunday we can", "we can do it" (to "shall we do a mock
    round?"). Its head is a modal standing alone, or a "do", "have" or "be" with nothing
    done to anything but an "it", "that" or "this". A modal or "do" takes no phrase with a
    preposition, so one beside it is when or where ("on Sunday"); a "be" or "have" may
    ("I'm at the bakery")."""
    head = clause.head
    lemma = head.lemma_.lower()
    if not (lemma in ("do", "have", "be") or head.tag_ == "MD"):
        return False
    adjunct = {"prep"} if lemma == "do" or head.tag_ == "MD" else set()
    return not any(c.dep_ in _COMPLEMENTS - adjunct and not (
        c.dep_ == "dobj" and c.lower_ in ("it", "that", "this")) for c in head.children)


def _greeting(sentence: Span) -> bool:
    """Whether a message's first sentence, with more after it, only greets or thanks: "Oh
    thanks!", "Hiya!". A name in it stays: who the user talks to ("Thanks, Melanie!")
    tells whose news follows (LoCoMo dev, end to end: R@5 60.1 with the names, 59.6
    without)."""
    doc = sentence.doc
    if sentence.start != 0 or sentence.end >= len(doc):
        return False
    return all(t.is_punct or t.pos_ == "INTJ" or t.lower_ in OPENERS
               or t.lemma_.lower() in ("thank", "thanks", "hello") for t in sentence)


def _opens_list(sentence: Span) -> bool:
    """Whether a sentence only opens the list on the lines after it: "Some background
    before my question:". What it states is what the lines say."""
    end = sentence.end
    return sentence.text.rstrip().endswith(":") and end < len(sentence.doc) and (
        sentence.doc[end - 1].is_space or sentence.doc[end].is_space)


def in_lines(turn: TurnCandidate) -> bool:
    """Whether each of a turn's sentences is a line of its own in the message (a list's
    items: "- I don't eat pork")."""
    return bool(turn.sentences) and all(
        s.start > 0 and "\n" in s.doc[s.start - 1].text_with_ws for s in turn.sentences)


def _says(sentence: str, op: Op) -> bool:
    """Whether a sentence, as the turn words it, says what the op says in the same words
    (the date an event's content carries in brackets aside)."""
    return content_words(DATED.sub("", op.content)) <= content_words(sentence)


def replaceable(op: Op, reworded: bool = False) -> bool:
    """A plain add of a fact or a resolution, which the turn that says it may stand for: no
    slot for the gate to update, no request, no surface or pin of its own. ``reworded``:
    a reading's add that leaves out what its sentence says (``loses``), a mood's too."""
    if op.slot or op.pinned or op.surface is not None or op.due is not None \
            or op.reason == REFERS_BACK:
        return False
    if op.op is OpKind.close_loop:
        return bool(op.content)
    return op.op is OpKind.add and (op.type in FACT_TYPES or (
        reworded and op.type is MemoryType.ephemeral))


def in_third_person(sentence: Span, clauses: Sequence[Clause]) -> str:
    """What one sentence states, in the third person; a leading "I" goes the way the
    clause candidates drop it, so the memory reads like theirs."""
    text = in_third_person_words(said_part(sentence, clauses), clauses)
    return text and text.rstrip(" .,;:-") + "."


def in_third_person_words(tokens: list[Token], clauses: Sequence[Clause]) -> str:
    """Some words of a sentence in the third person, as ``in_third_person`` words it."""
    from engrammar.extract.parser._candidates import third_person

    tokens = _spoken(tokens)
    if not tokens:
        return ""
    first = next((c for c in clauses if _opened_by(c, tokens[0])), None)
    return third_person(first, tokens) if first is not None else cap(words(tokens))


def _opened_by(c: Clause, tok: Token) -> bool:
    """Whether ``tok`` opens clause ``c``: its subject (its head, with none), or the "his"
    or "her" its subject is owned by ("his cholesterol is high")."""
    if (c.subject.i if c.subject is not None else c.head.i) == tok.i:
        return True
    owner = standing_for(c.subject)
    return owner is not None and owner.i == tok.i


def _asked(question: str) -> str:
    """The question, its "you" turned to the user: "where are you based?" -> "where they
    are based"; cut to its last sentence and to a length a memory can carry."""
    last = last_sentence(question)
    swapped = re.sub(r"\b(you|your|yours|yourself)\b",
                     lambda m: {"you": "they", "your": "their", "yours": "theirs",
                                "yourself": "themself"}[m.group(1).lower()],
                     last, flags=re.IGNORECASE)
    return _quoted(swapped)


def last_sentence(question: str) -> str:
    """The last sentence of the message that asked a question: the question itself."""
    # (a sentence may end inside its quote or bracket: 'Here's one: "... no shortcuts."
    # Want a version with your signature dish?')
    return re.split(r"(?:(?<=[.!?])|(?<=[.!?][\"'”’)]))\s+", question.strip())[-1]


def _quoted(text: str) -> str:
    """Words beside a memory's own, in quotes, cut to a length a memory can carry."""
    return f'"{text.strip()[: MAX_CHARS // 2]}"'


def features(tc: TurnCandidate) -> list[str]:
    """The turn model's features: the parse of its clauses and the words it uses."""
    out = ["t:bias", f"t:answer={tc.answer}", f"t:sentences={min(len(tc.sentences), 4)}",
           f"t:clauses={min(len(tc.clauses), 5)}"]
    if not tc.clauses:
        out.append("t:noclause")
    # Whose each sentence is, by its root's clause: "this guy on the bus was like ..." is
    # about someone the memory does not track, however many "I"s its quote holds.
    roots = {c.head.i: c for c in tc.clauses}
    asked = [w.lower() for w in _WORD.findall(tc.question.rsplit(".", 1)[-1])] \
        if tc.question else []
    owners = [_whose(roots.get(s.root.i), tc.question, asked) for s in tc.sentences]
    out += [f"t:root={o}" for o in owners]
    own = sum(o in (Owner.user.value, Owner.relative.value) for o in owners)
    out.append(f"t:own_share={round(4 * own / max(len(owners), 1))}")
    out += ["t:quoted" for c in tc.clauses if c.quoted]
    # What the readings made of the same sentences: a fact they found says the turn has one.
    out += [f"t:reads={op.op.value}/{op.type.value if op.type else '-'}" for op in tc.replaces]
    out.append(f"t:replaces={min(len(tc.replaces), 3)}")
    if tc.question:
        # What was asked says what an answer is worth: "any pets?" against "how was it?"
        out += [f"t:q={w}" for w in asked[:6]]
        out.append(f"t:q_you={any(w in ('you', 'your') for w in asked)}")
    for c in tc.clauses:
        if c.question:
            continue  # (what the sentence asks is not the turn's)
        head = c.head.lemma_.lower()
        subj = ("none" if c.subject is None else c.subject.lower_
                if c.subject.pos_ == "PRON" else c.subject.pos_)
        out += [f"t:owner={c.owner.value}", f"t:tense={c.tense}", f"t:neg={c.negated}",
                f"t:head={head}", f"t:subj={subj}", f"t:owner+head={c.owner.value}/{head}",
                f"t:owner+tense={c.owner.value}/{c.tense}"]
        out += [f"t:modal={m}" for m in c.modals]
        if c.relation:
            out.append("t:relation")
    tokens = [t for t in tc.tokens if not t.is_punct]
    firsts = sum(t.lower_ in ("i", "me", "my", "mine", "myself", "im") for t in tokens)
    out += [f"t:first={min(firsts, 4)}", f"t:len={min(len(tokens) // 5, 8)}"]
    for t in tokens:
        lemma = t.lemma_.lower()
        out += [f"t:w={lemma}", f"t:pos={t.pos_}"]
        if t.like_num:
            out.append("t:has=num")
        if t.pos_ == "PROPN":
            out.append("t:has=propn")
    lemmas = [t.lemma_.lower() for t in tokens]
    out += [f"t:bi={a}_{b}" for a, b in itertools.pairwise(lemmas)]
    return out


def _whose(root: Clause | None, question: str | None, asked: Sequence[str]) -> str:
    """Whose a sentence is, by its root's clause. A fragment answering a question that
    names something ("Dixie" to "what's her name?", "lemon" to "what flavours does your
    nan like?") is whoever the question asked about: the parse of a word alone says no one,
    or an order. ``asked``: the words of the question's last sentence, lower case."""
    if root is None:
        return "none"
    # (a fragment that names nothing says nothing of anyone: "either is fine", "warmer")
    if root.subject is None and root.owner in (Owner.other, Owner.command) and question \
            and any(t.pos_ in ("NOUN", "PROPN") or (t.like_num and t.tag_ == "CD")
                    for t in root.sentence):
        if about_someone(question):
            return Owner.relative.value
        if any(w in ("you", "your", "u", "ur") for w in asked):
            return Owner.user.value
    return root.owner.value


def questions(messages: Sequence[Message]) -> dict[int, str]:
    """For each message, the question the message just before it asked, if it asked one,
    whoever asked it: the message up to its last question, since a reason often follows
    ("Does anyone work from home? That decides whether the third room is a study")."""
    out: dict[int, str] = {}
    for before, msg in itertools.pairwise(messages):
        if (text := asked_in(before.content)) is not None and before.id != msg.id:
            out[msg.id] = text
    return out


def asked_in(text: str) -> str | None:
    """``text`` up to the end of its last question, if it asks one: a "?" that ends the
    text or a sentence. (A "?" inside a link, or a question quoted in a sentence that
    goes on, asks nothing: '"have you eaten?" says more than hello'.)"""
    end = text.rfind("?")
    while end >= 0:
        rest = text[end + 1:]
        after = rest.lstrip(_CLOSING)
        quoted = rest[:1] in _QUOTES
        if not after.strip() or (after[:1].isspace() and not (
                quoted and after.lstrip()[:1].islower())):
            return text[:end + 1].rstrip()
        end = text.rfind("?", 0, end)
    return None


# What may close a question after its mark: quotes, brackets, more marks.
_CLOSING = "\"'”’)!?"
_QUOTES = "\"'”’"


def detailed(ops: Sequence[Op]) -> int | None:
    """The index of the fact an answer to a follow-up question details: the last add of a
    fact the message before the question made, or the fact it put right ("It's Mairéad!"
    "How's she keeping?" "asleep on the radiator")."""
    return next((i for i in range(len(ops) - 1, -1, -1)
                 if (ops[i].op is OpKind.add or (ops[i].op is OpKind.update
                                                 and ops[i].target is not None))
                 and ops[i].type in FACT_TYPES and ops[i].content
                 and ops[i].reason != REFERS_BACK), None)


def adds_only(ops: Sequence[Op]) -> bool:
    """Whether the readings made nothing of a message but facts to add, things done and
    styles of reply. One that corrects, forgets or sets a boundary ("it's Kate not Katie",
    "don't bring up my ex") is about what it acts on: its other words are not a fact of
    their own. A thing done ("went to the support group yesterday") is a fact whether or
    not it closes a plan: the gate decides that, from the turn as from the clause. A style
    of reply often gives its reason, which is the user's fact ("bullet points please, my
    eyesight is not what it was"). A change aimed at nothing (a thing stopped, "I've given up
    the coffee"; a plan moved, a retirement) acts on what it is about, and the rest of the
    message is still said ("it's green tea now"). A correction names its target: it is
    about what it acts on."""
    return all(((op.op is OpKind.add and op.type is not None and not boundary(op))
                or (op.op in (OpKind.close_loop, OpKind.contradict, OpKind.update)
                    and bool(op.content) and op.target is None))
               and op.reason != REFERS_BACK for op in ops)
