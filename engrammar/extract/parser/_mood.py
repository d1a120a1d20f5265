"""A clause's mood: whether it is asked, supposed, or someone else's words.

What a clause states is a fact only when it is none of these. A question may leave its mark
off ("whats the capital of burkina faso"); a supposition may hang on an "if", a wish or a
hedge ("I'd love to", "if I won the lottery"); and what someone else said ("my friend said
she's moving") is their word, unless it is a report of a thing of the user's ("the doctor
says my A1C came back at 7.8").
"""

from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING

from engrammar.extract.parser._owners import mine, subject_of
from engrammar.extract.parser._phrases import child

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token


# Heads that put what follows in someone else's mouth: "my mom says I work too hard".
SPEECH = frozenset({"say", "tell", "ask", "write", "text", "yell", "shout", "claim",
                    "insist", "reply", "mention"})
# Heads that make their complement unreal: "I wish I lived in Rome", "imagine I were rich".
IRREALIS = frozenset({"wish", "imagine", "suppose", "pretend", "dream", "hope"})
POLITE = frozenset({"prefer", "appreciate", "like", "love", "rather"})
# Heads of thought and perception, which take a clause for what is thought: "we're moving,
# I think" is hedged, not two facts.
THOUGHT = frozenset({"think", "guess", "reckon", "believe", "know", "suppose", "feel", "bet",
                     "mean", "swear", "admit", "figure", "expect", "doubt", "realise",
                     "realize", "gather", "understand", "assume", "remember", "forget", "see",
                     "hear", "read", "find", "notice", "complain", "joke", "argue", "warn",
                     "suspect", "moan", "tease", "worry", "fear"})
# The heads whose complement is what someone says or thinks, not a fact said.
SAID_OR_THOUGHT = SPEECH | THOUGHT
CONDITIONAL = frozenset({"if", "unless", "whether", "suppose", "supposing", "assuming"})
FUTURE_AUX = frozenset({"will", "shall", "'ll", "wo", "gonna"})
HEDGE_AUX = frozenset({"would", "could", "might", "may", "should", "'d"})
WH = frozenset({"what", "who", "whom", "where", "when", "why", "how", "which", "whose"})
WH_TAGS = frozenset({"WRB", "WP", "WDT", "WP$"})  # Penn tags of wh-words


def _cut_off(sentence: Span) -> bool:
    """Whether a question's last words were split off as a sentence of their own: the
    parser breaks before a name it takes for a new start ("Which capacitor should replace
    a 0.05 µF capacitor in a 1950s | Grundig set?"). An opening wh-word or auxiliary, no
    stop, and after it a few words with no pronoun or auxiliary (nor a determiner first:
    "..., any tips?" is a question of its own) that end in the mark."""
    doc = sentence.doc
    last = sentence[-1]
    if sentence.end >= len(doc) or last.is_punct or "\n" in last.whitespace_ or not (
            sentence[0].tag_ in WH_TAGS or sentence[0].pos_ == "AUX"):
        return False
    rest = doc[sentence.end].sent
    return (rest.text.rstrip().endswith("?") and len(rest) <= 5
            and rest[0].pos_ in ("PROPN", "NOUN", "ADJ", "NUM")
            and not any(t.pos_ in ("PRON", "AUX") for t in rest))


def asks(sentence: Span) -> bool:
    """Whether a sentence asks: its question mark, or the order of its words."""
    text = sentence.text.rstrip()
    if text.endswith("?") or _cut_off(sentence):
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
                                     or before.pos_ in ("CCONJ", "INTJ")
                                     or pictograph(before)):
            ahead = tok.doc[tok.i + 1: min(tok.i + 4, sentence.end - 1)]
            if any(a.pos_ == "AUX" and a.dep_ in ("aux", "ROOT") and a.i + 1 < sentence.end
                   and _opens_subject(tok.doc[a.i + 1])
                   for a in ahead):
                return True
            if _wh_then_verb(tok, sentence):
                return True
            after = tok.doc[tok.i + 1] if tok.i + 1 < sentence.end else None
            if after is not None and (before is None or before.pos_ != "CCONJ") and (
                    (after.lower_ == "about" and tok.lower_ in ("what", "how")
                     and not _of_the_listener(after))
                    or (tok.lower_ == "how" and after.lower_ in _DEGREES
                        and not _verb_before_break(after))):
                # "what about on shift days", "how much paint for 3x4m": no verb, no mark.
                # Not after "and" ("the struggles I had and how much I've grown"), nor
                # with a verb ("how much I love my wife"), nor turned back to the
                # listener ("I'm a teacher, what about you": the statement stands)
                return True
        # "settle a bet for me, was Napoleon actually short", "random one but is a peanut
        # a legume": an auxiliary inverted with its subject after a break
        if (before is None or before.text == "," or before.pos_ in ("CCONJ", "INTJ")
                or _opener(before, sentence)) and inverted(tok, sentence.end):
            return True
    return False


def _opens_subject(tok: Token) -> bool:
    """Whether ``tok`` is a subject or opens one ("the sun" of "what time does the sun
    set")."""
    subjects = ("nsubj", "nsubjpass", "expl")
    return tok.dep_ in subjects or (
        tok.dep_ in ("det", "poss", "amod", "compound", "nummod")
        and tok.head.dep_ in subjects and tok.head.i > tok.i)


# What "how" asks the degree of, verb or none: "how much paint", "how long for".
_DEGREES = frozenset({"much", "many", "long", "far", "often", "old", "big"})


def _of_the_listener(about: Token) -> bool:
    """Whether "what about" asks the listener back: "what about you", "how about yours"."""
    nxt = about.doc[about.i + 1] if about.i + 1 < len(about.doc) else None
    return nxt is not None and nxt.lower_ in ("you", "u", "yours", "yourself", "ya", "urself")


def _verb_before_break(tok: Token) -> bool:
    """Whether a verb follows ``tok`` before the next break or the sentence's end."""
    for t in tok.doc[tok.i + 1:]:
        if t.is_punct or t.is_sent_start:
            return False
        if t.pos_ in ("VERB", "AUX"):
            return True
    return False


def pictograph(tok: Token) -> bool:
    """Whether ``tok`` is a pictograph, which chat puts where it breaks a sentence ("the
    eldest wont touch anything orange 🙄 quick ideas?"), or a joiner or selector the
    tokenizer cut from the one before it ("👩‍⚕️")."""
    if not tok.text or not all(unicodedata.category(ch) in ("So", "Sk", "Mn", "Cf", "Me")
                               for ch in tok.text):
        return False
    return any(unicodedata.category(ch) == "So" for ch in tok.text) or (
        tok.i > 0 and pictograph(tok.doc[tok.i - 1]))


def _opener(tok: Token, sentence: Span) -> bool:
    """Whether ``tok`` only opens the sentence: its first word, alone, no subject ("yo can
    u put together a plan", "ok can we talk about dinner")."""
    return tok.i == sentence.start and not any(tok.children) and tok.dep_ not in (
        "nsubj", "nsubjpass", "expl", "csubj")


_SUBJECT_PRONOUNS = frozenset({"i", "you", "u", "he", "she", "it", "we", "they", "there",
                               "that", "this"})


def inverted(aux: Token, end: int) -> bool:
    """Whether the words from ``aux`` up to ``end`` put an auxiliary before its subject
    and the subject before its predicate, as only a question does: "is it safe", "do fish
    sleep", "can dogs eat grapes", "was Napoleon short". Read from the tags, which the
    parse of such a question gets wrong more often than not. A subject with nothing after
    it is chat that dropped its own ("..., is a lovely place", "..., did it for mum")."""
    doc = aux.doc
    lemma = aux.lemma_.lower()
    auxiliary = aux.tag_ == "MD" or (
        aux.tag_ in ("VBZ", "VBP", "VBD") and lemma in ("be", "do", "have"))
    if not auxiliary or aux.lower_ in ("'s", "s", "'re", "'m", "'ve", "'d"):
        return False  # (a clitic follows its subject: "it's", "we've")
    n = aux.i + 1
    if n < end and doc[n].lower_ in ("n't", "not"):
        # "isn't the weather awful", "didn't I say": asked the other way round (a tag on a
        # statement, "..., isn't it", has nothing after its subject)
        n += 1
    if n < end and doc[n].lower_ in _SUBJECT_PRONOUNS:
        n += 1
    else:
        # a noun phrase: its determiners and adjectives, then its nouns ("a peanut a
        # legume" is two)
        while n < end and doc[n].tag_ in ("DT", "PRP$", "CD", "JJ"):
            n += 1
        nouns = n
        while n < end and doc[n].tag_ in ("NN", "NNS", "NNP", "NNPS", "POS"):
            n += 1
        if n == nouns or (lemma != "be" and doc[n - 1].dep_ in ("dobj", "pobj", "attr")):
            return False  # ("I'm 40 and have kids aged 5 and 7": the kids are had)
    while n < end and doc[n].tag_ in ("RB", "RBR"):
        n += 1
    if n >= end:
        return False
    predicate = doc[n]
    if lemma == "be":
        return predicate.tag_ in ("JJ", "JJR", "JJS", "DT", "NN", "NNS", "NNP", "VBG",
                                  "VBN", "CD", "IN")
    return predicate.tag_ == "VB" or (lemma == "have" and predicate.tag_ == "VBN")


def _wh_then_verb(wh: Token, sentence: Span) -> bool:
    """"whats the capital of burkina faso", "how many hearts has an octopus got": a wh-word
    (with "many" or "much" and its noun, or "how" with its adjective: "how long") straight
    before a form of "be", "have" or "do" or a modal, which no statement has ("what I want
    is ..." puts a subject between)."""
    n = wh.i + 1
    if wh.lower_ == "how" and n < sentence.end and wh.doc[n].lower_ in ("many", "much"):
        n += 1
        while n < sentence.end and wh.doc[n].pos_ in ("NOUN", "ADJ"):
            n += 1
    elif wh.lower_ == "how" and n < sentence.end and wh.doc[n].pos_ in ("ADJ", "ADV"):
        n += 1  # "how long is the training", "how often do I water it"
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


def promising(verb: Token) -> bool:
    """Whether a verb commits the speaker to the "I'd ..." it takes: "told my nan I'd pop
    round", "promised I'd call", and "said I'd make the cake" when the user said it (what
    someone else said they'd do is their word)."""
    lemma = verb.lemma_.lower()
    if lemma in ("tell", "promise"):
        return True
    speaker = subject_of(verb)
    return lemma == "say" and (speaker.lower_ in ("i", "we") if speaker is not None
                               else verb.tag_ == "VBD")


def hypothetical(head: Token) -> bool:
    """Whether the clause of ``head`` is only supposed, wished or hedged."""
    if head.dep_ == "conj" and head.tag_ in ("VB", "VBP") and head.head.i != head.i and not any(
            c.dep_ in ("nsubj", "nsubjpass", "aux", "auxpass") for c in head.children) \
            and hypothetical(head.head):
        # A bare verb that shares another's subject shares its "would" and its "if" too:
        # "if I was rich, I would buy a castle and have ten dogs" (not a past one: "I'd
        # been wanting to try yoga and finally took the plunge").
        return True
    tok: Token | None = head
    while tok is not None:
        if _conditional(tok):
            # "I'd prefer if you didn't mention it": a polite request, not a supposition.
            return tok.head.lemma_.lower() not in POLITE
        you = any(c.dep_ == "nsubj" and c.lower_ == "you" for c in tok.children)
        # "told my nan I'd pop round sunday": a promise reported, not a supposition.
        promised = tok.dep_ == "ccomp" and promising(tok.head)
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
        head.lemma_.lower() in ("go", "have", "need") and child(head, "xcomp") is not None) or (
        # the present progressive of what is to come, its condition first: "if I win the
        # Lotto tonight I'm buying a game farm" (not what is being done, its condition
        # after: "I'm building a chest, if I can get the lid to sit right")
        head.tag_ == "VBG" and any(c.dep_ == "aux" and c.lemma_.lower() == "be"
                                   for c in head.children)
        and any(c.dep_ == "advcl" and _conditional(c) and c.i < head.i
                for c in head.children))
    return head.lemma_.lower() not in POLITE and any(
        c.dep_ == "advcl" and _conditional(c) and (ahead or _unreal(c))
        for c in head.children)


def _conditional(tok: Token) -> bool:
    """Whether ``tok`` heads a clause marked as a condition: "if ...", "unless ...". A mark
    with a word of its own is a condition cut short ("gluten free if poss, my partner can't
    have it": "if possible"), which the parser may hang on the next clause."""
    return any(m.dep_ == "mark" and m.lower_ in CONDITIONAL
               and not (m.lower_ == "if" and any(c.dep_ == "pobj" for c in m.children))
               for m in tok.children)


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


def quote_mark(tok: Token) -> bool:
    """Whether a token opens or closes a quotation. A single quote standing alone is one
    too when its sentence pairs it with another ("correct it: 'Dear Mr Ortega, I would
    like ...'"); not the one of a plural's possessive ("the kids' room"), nor one left
    alone by a typo."""
    if tok.text in ('"', "“", "”", "«", "»"):
        return True
    # (the parser may end a sentence inside the quotation: "this girl goes 'im 22, a
    # dentist and i live in dubai' and ..." is cut after "dentist"; the pair is the
    # message's then)
    return _single(tok) and (sum(_single(t) for t in tok.sent) % 2 == 0
                             or sum(_single(t) for t in tok.doc) == 2)


def _single(tok: Token) -> bool:
    return tok.text in ("'", "‘", "’") and tok.pos_ == "PUNCT" and tok.tag_ != "POS"


def quoted(head: Token, doc: Doc) -> bool:
    """Whether a clause is someone's words: inside quotation marks, or reported."""
    quotes = [t.i for t in doc if quote_mark(t)]
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
        if parent.lemma_.lower() in SPEECH and not _spliced(tok, parent):
            speaker = subject_of(parent)
            if speaker is not None and speaker.i > parent.i:
                # "Said ta-ra to Cardiff on Saturday, we're in Bedminster now": no one
                # speaks after their verb in a statement; the parser took a word of what
                # was said for a subject, and chat dropped the "I"
                speaker = None
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


def _spliced(clause: Token, verb: Token) -> bool:
    """Whether a clause hung on a verb of speech is a sentence of its own, spliced on with a
    comma after the verb's object: "they will ask Java and SQL, I am weak in joins" says
    what they will ask about, then a fact. So is a clause before the verb when the verb
    says its own words after it. What is said follows the verb ("he said, I'm off"), or
    the listener that "tell" takes for its object ("my sister told our mum, she's
    pregnant"), or comes before a verb with none ("I'm fine, she said")."""
    if clause.i < verb.i and any(c.dep_ in ("ccomp", "dobj") and c.i > verb.i
                                 for c in verb.children):
        # "started eating fish again last month, my doctor said my iron is too low": the
        # verb says its own words after it; the clause before is the user's, spliced on
        return True
    start = clause.left_edge.i
    comma = clause.doc[start].text == "," or (start > 0 and clause.doc[start - 1].text == ",")
    return comma and verb.lemma_.lower() != "tell" and any(
        c.dep_ == "dobj" and c.pos_ != "PRON" and c.i < start for c in verb.children)


def _of_the_user(subject: Token | None) -> bool:
    """Whether a subject is something of the user's: "my A1C", "our offer"."""
    return subject is not None and mine(subject)


def spliced_before(head: Token) -> bool:
    """Whether a clause the parser hung as the complement of the clause after it is a
    sentence of its own, spliced on with a comma: "we're in didsbury so nothing miles away
    pls, i dont drive" says where they live, then that they don't drive. Before a verb of
    speech or thought it is what is said or thought ("we're moving, I think")."""
    verb = head.head
    if head.dep_ != "ccomp" or head.i > verb.i or verb.lemma_.lower() in SAID_OR_THOUGHT \
            or verb.lemma_.lower() in IRREALIS:
        return False
    return subject_of(verb) is not None and any(
        t.text in (",", ";") for t in head.doc[head.right_edge.i + 1: verb.i + 1]
        if t.head.i == verb.i or t.head.i == head.i)
