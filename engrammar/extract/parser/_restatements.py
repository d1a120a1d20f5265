"""Short answers to the assistant's questions, said back as the user's own sentences.

"god no" to "Do you eat tofu?" and "pork" to "Any foods you avoid?" state a fact only
beside their question; read alone they are a word or two, typed as whatever the type
model guesses ("God no. (asked ...)", a profile fact). Said back as the one asked would
say it in full ("I don't eat tofu.", "I avoid pork."), they are sentences the readings
know: "Does not eat tofu" and "Avoids pork", preferences, "Lives in Lyon" with its slot.
Only questions put to "you" (or about "your" things) are said back, and only answers that
are a bare yes or no, or a few words with no verb or pronoun of their own: an answer that
says its own sentence ("yep, chicken's my go-to") is read as it is. Offers ("Would you
like ...", "Do you want ...") and what one knows or thinks ("Do you know ...") are not
said back: a yes to them is no fact.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from engrammar.extract.parser._mood import SAID_OR_THOUGHT, WH_TAGS
from engrammar.extract.parser._referents import points_back

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token

# Penn tags of a finite verb: an answer with one says a sentence of its own.
_FINITE = frozenset({"VBD", "VBZ", "VBP", "MD"})
# A question that may be put to the one asked, or of a thing of theirs.
_TO_YOU = re.compile(r"\b(?:you|your|u|ur|any)\b", re.IGNORECASE)
# An answer longer than this many words is no fragment to fill in a question.
_FRAGMENT_WORDS = 8


def restated(pairs: Sequence[tuple[str | None, str]]) -> list[str | None]:
    """For each (question, answer), the answer said as the user's own sentence when it is
    a bare yes or no to a question put to "you" ("Do you eat tofu?" / "god no" -> "I don't
    eat tofu."), with the rest of the answer after it in the same sentence ("yes, since
    2019" says since when), or a few words that fill in what the question asks ("Where
    are you based?" / "lyon" -> "I am based in lyon."); else None."""
    from engrammar.extract.parser._nlp import parse
    from engrammar.extract.parser._turns import last_sentence

    # (only what may be put to "you" is parsed, and an answer only when its question can
    # be said back with it: most messages answer nothing, and the extractor's speed is
    # what they cost)
    asked = [(n, last, answer.strip()) for n, (question, answer) in enumerate(pairs)
             if question is not None and 0 < len(answer.split()) <= _FRAGMENT_WORDS
             and _TO_YOU.search(last := last_sentence(question))]
    out: list[str | None] = [None] * len(pairs)
    filled: list[tuple[int, str]] = []  # (pair, the sentence), when the answer names a thing
    for (n, _, answer), question in zip(asked, parse([q for _, q, _ in asked]), strict=True):
        if not _askable(question):
            continue
        if (reply := _yes_or_no(answer)) is not None:
            yes, rest = reply
            back = _said_back(question, yes)
            if back is not None:
                out[n] = f"{back}, {rest}" if rest else f"{back}."
        elif not _STOP.search(text := _EMOTICON.sub("", answer).strip().rstrip(".!")) and (
                back := _wh_said_back(question, text)) is not None:
            # (an answer of one part: in "five a side footy. goalie" the second part says
            # more than the question asked, which the sentence said back would drop)
            filled.append((n, f"{back}."))
    answers = parse([pairs[n][1].strip() for n, _ in filled])
    for (n, back_), said in zip(filled, answers, strict=True):
        if _named_thing(said):
            out[n] = back_
    return out


def _askable(question: Doc) -> bool:
    """Whether a question asks of the one asked alone: it names neither the asker ("Have
    you tried the stretches I suggested?") nor anyone or anything the talk named before
    ("How long have you lived there?", "Do you like it?"), which the answer could not
    carry said back; it asks one thing, and offers or asks what one knows nothing."""
    words_ = [t for t in question if not t.is_punct]
    # (what follows its first wh-word asks a second thing with a second one)
    first = next((n for n, t in enumerate(words_) if t.tag_ in WH_TAGS), -1)
    return not _two_asked(words_[first + 1:]) and not any(
        t.lower_ in _ASKER or points_back(t)
        or (t.pos_ == "VERB" and t.lemma_.lower() in _OFFERING | SAID_OR_THOUGHT)
        for t in words_)


def _two_asked(rest: Sequence[Token]) -> bool:
    """Whether the words after a question's opening go on to ask a second thing ("How many
    dogs do you have, and how big are they?", "Do you drive, or cycle?"): which one an
    answer fills is not known. ("Do you eat fish or meat?" asks one thing.)"""
    return any(t.tag_ in WH_TAGS or (
        t.pos_ == "CCONJ" and t.i + 1 < len(t.doc) and t.doc[t.i + 1].pos_ in ("AUX", "VERB"))
        for t in rest)


def _named_thing(answer: Doc) -> bool:
    """Whether ``answer`` is a few words that name a thing and say nothing by themselves:
    no subject, no finite verb, no pronoun, no negation, not opened by a preposition or an
    adverb ("shoegaze mostly", "lyon", "2 flat whites", "climbing"; not "cant stand them",
    "in leeds", "since uni", "alone", "rather not say"), and not a word that declines to
    answer ("idk", "no idea")."""
    from engrammar.extract.parser._turns import noncommittal

    words_ = [t for t in answer if not (t.is_punct or _EMOTICON.fullmatch(t.text))]
    return bool(words_) and words_[0].pos_ not in ("ADP", "ADV", "PART", "INTJ", "SCONJ") \
        and " ".join(t.lower_ for t in words_) not in _DECLINING \
        and not any(noncommittal(s) for s in answer.sents) \
        and any(t.pos_ in ("NOUN", "PROPN", "NUM", "ADJ") or t.tag_ in ("VB", "VBG")
                for t in words_) \
        and not any(t.dep_ in ("nsubj", "nsubjpass", "expl", "neg") or t.tag_ in _FINITE
                    or t.pos_ == "PRON" or t.lower_ in ("no", "not", "never", "?")
                    for t in answer)


def _yes_or_no(answer: str) -> tuple[bool, str] | None:
    """Whether ``answer`` opens with a bare yes or no (True for yes), and what follows it;
    None when it opens with anything else."""
    text = answer.strip()
    stop = _STOP.search(text)
    head, rest = (text[:stop.start()], text[stop.end():]) if stop else (text, "")
    words_ = [w for w in re.findall(r"[\w']+", _EMOTICON.sub(" ", head).lower())
              if w not in _LAUGHS]
    said = " ".join(words_)
    # (what follows, without a smiley or the dots it trails: "yes :)", "yes... kind of")
    rest = _EMOTICON.sub("", rest).strip(" .!,;")
    rest = rest if any(ch.isalnum() for ch in rest) else ""
    if said in _YES:
        return True, rest
    if said in _NO:
        return False, rest
    return None


def _said_back(question: Doc, yes: bool) -> str | None:
    """The question ``question`` put to "you", said back by the one asked: "Do you eat
    tofu?" -> "I eat tofu" (yes) or "I don't eat tofu" (no); None for any other question:
    one that bids ("Can you paste the traceback?", "Will you send it?") or checks in."""
    tokens = [t for t in question if not t.is_space]
    start = next((i for i, t in enumerate(tokens) if t.pos_ == "AUX"), None)
    if start is None or start + 2 >= len(tokens) or tokens[start + 1].lower_ not in ("you", "u"):
        return None
    if any(t.pos_ not in ("INTJ", "PUNCT") for t in tokens[:start]):
        return None  # ("Noted. Is chicken OK?" is cut to its question already)
    aux = tokens[start].lower_
    rest = [t for t in tokens[start + 2:] if not (t.is_punct and t.i == tokens[-1].i)]
    if aux not in _SAID_BACK or not rest or any(t.lower_ in _CHECK_IN for t in rest) or (
            yes and any(t.lower_ == "or" for t in rest)):
        # ("Are you ready?" asks how the talk goes; a yes to "tea or coffee?" says neither)
        return None
    words_ = "".join(_mine(t) + t.whitespace_ for t in rest).strip()
    return f"{_SAID_BACK[aux][0 if yes else 1]} {words_}"


# A bare yes and a bare no, as chat types them; and laughs that pad them.
_YES = frozenset({"yes", "yeah", "yep", "yup", "ya", "yea", "yeh", "aye", "sure", "definitely",
                  "absolutely", "of course", "course", "totally", "yes please", "oh yes",
                  "oh yeah", "yes definitely", "yeah definitely", "always", "yes always"})
_NO = frozenset({"no", "nope", "nah", "naw", "never", "not really", "god no", "hell no",
                 "no way", "not at all", "oh no", "no never", "nah never", "definitely not",
                 "absolutely not", "not me", "never ever"})
_LAUGHS = frozenset({"lol", "haha", "hahaha", "lmao", "ha", "tbh", "honestly"})
_STOP = re.compile(r"[.,!;]\s*|\s+-\s+")
# A smiley typed in letters and marks (":)", ":D", ";-(", "xD"), which says nothing.
_EMOTICON = re.compile(r"(?<!\w)(?:[:;=8][-']?[()\[\]dDpPoO/\\|*3]+|xD+|<3)(?!\w)")
# Words that decline to answer, or do not know.
# (not knowing, "idk", "no idea", is ``_turns.noncommittal``'s)
_DECLINING = frozenset({"hmm", "hm", "lol", "haha", "nothing", "none", "nobody", "nowhere",
                        "whatever", "depends", "it depends", "pass", "secret",
                        "rather not say", "not telling"})
# A question that names the asker asks about the talk, not the one asked.
_ASKER = frozenset({"i", "me", "my", "mine", "we", "us", "our"})
# Words of a question that checks in on the talk ("Are you sure?", "Are you still there?").
_CHECK_IN = frozenset({"sure", "ready", "there", "ok", "okay", "alright", "around", "done",
                       "questions"})
# The auxiliary of a question to "you", said back by the one asked, yes and no.
_SAID_BACK = {"do": ("I", "I don't"), "did": ("I did", "I didn't"), "are": ("I am", "I'm not"),
              "were": ("I was", "I wasn't"), "have": ("I have", "I haven't")}
# Verbs by which a question offers, or asks what one knows or thinks: no fact said back.
_OFFERING = frozenset({"want", "need", "mind"})
# The auxiliary of a wh-question to "you", said back by the one asked ("did" and its past
# would need the verb's past form, which the parse does not give).
_ASKED_BACK = {aux: yes for aux, (yes, _) in _SAID_BACK.items() if aux != "did"}
# The verbs a place is asked of ("where do you live?", "where are you based?"): not where
# one is going ("where are you headed?"), which "in" would not say.
_PLACED = frozenset({"live", "work", "study", "stay", "base", "locate", "bear", "grow"})
# The asker's words for the one asked, in the mouth of the one asked.
_MINE = {"your": "my", "yours": "mine", "yourself": "myself", "you": "me", "u": "me",
         "ur": "my"}


def _wh_said_back(question: Doc, answer: str) -> str | None:
    """The wh-question ``question`` put to "you" (or about "your" things), said back with
    ``answer`` where the question asks: "Where are you based?" -> "I am based in lyon",
    "What kind of music do you listen to?" -> "I listen to shoegaze", "What's your cat
    called?" -> "My cat is called Miso", "Any foods you avoid?" -> "I avoid pork"; None for
    any other question."""
    tokens = [t for t in question if not t.is_space]
    # (the question opens where its wh-word does, after what leads up to it: "To tailor
    # things a bit, where are you based?")
    opens = next((n for n, t in enumerate(tokens) if (t.tag_ in WH_TAGS or t.lower_ == "any")
                  and (n == 0 or tokens[n - 1].is_punct or tokens[n - 1].pos_ == "CCONJ")),
                 None)
    if opens is None:
        return None
    tokens = tokens[opens:]
    while tokens and tokens[-1].is_punct:
        tokens = tokens[:-1]
    if len(tokens) < 3:
        return None
    wh = tokens[0]
    if wh.lower_ == "any":
        return _any_said_back(tokens, answer)
    if wh.tag_ not in WH_TAGS:
        return None
    end = _wh_phrase_end(tokens)
    if end is None:
        return None
    phrase = [t for t in tokens if t.i <= end]
    rest = [t for t in tokens if t.i > end]
    if len(rest) < 2 or rest[0].pos_ != "AUX":
        return None
    aux, subject = rest[0], rest[1]
    if subject.lower_ in ("you", "u"):
        return _you_said_back(phrase, aux, rest[2:], answer)
    if aux.lemma_ == "be" and subject.lower_ in ("your", "ur"):
        return _yours_said_back(wh, aux, rest[1:], answer)
    return None


def _wh_phrase_end(tokens: Sequence[Token]) -> int | None:
    """The index of the last word of the wh-phrase that opens ``tokens``: "what", "what kind
    of music", "how old", "how many kids"; None for a "how" that asks how it went."""
    wh = tokens[0]
    if wh.lower_ == "how":
        degree = tokens[1]
        if degree.lower_ not in ("old", "long", "many", "much"):
            return None  # ("how was your day?": how it went, no fact)
        counted = degree.lower_ in ("many", "much") and tokens[2].pos_ == "NOUN"
        return degree.i + (1 if counted else 0)
    if wh.dep_ == "det" and wh.head.i > wh.i:
        head = wh.head
        return max([head.i, *(t.i for t in head.subtree if t.i > head.i
                              and t.dep_ in ("prep", "pobj", "compound", "amod"))])
    return wh.i


def _you_said_back(phrase: Sequence[Token], aux: Token, said: Sequence[Token],
                   answer: str) -> str | None:
    """A wh-question to "you" said back: the answer as the object after its verb, after a
    preposition the question left at its end, or as the place, time or length asked."""
    back = _ASKED_BACK.get(aux.lower_)
    if back is None or any(t.lemma_ == "do" and t.pos_ == "VERB" for t in said):
        return None  # ("what do you do?": a job, which the fragment reading knows)
    what = " ".join(t.lower_ for t in phrase)
    words = [_mine(t) for t in said]
    number = answer.isdigit() or (len(answer.split()) == 1 and phrase[0].doc.vocab[
        answer.lower()].like_num)
    if what.startswith(("how old", "how many", "how much")) and not number:
        return None  # ("34 next week", "two boys", "none": no count to fill in)
    if what == "how old":
        return f"{back} {answer} years old"
    if what == "what time":
        return " ".join([back, *words, "at", answer])
    if said and said[-1].pos_ == "ADP":  # ("which school do you teach at?")
        return " ".join([back, *words, answer])
    inside = {t.i for t in phrase}
    role = next((t for t in phrase if t.head.i not in inside), phrase[0])
    verb = role.head
    if role.dep_ in ("dobj", "attr") and verb.pos_ == "VERB" and verb.i > phrase[-1].i \
            and not any(c.dep_ in ("dobj", "dative", "oprd", "ccomp", "xcomp")
                        for c in verb.children if c.i != role.i):
        # ("what do you usually have for dinner?": the object after the verb)
        after = max([verb.i, *(c.i for c in verb.children if c.dep_ == "prt")])
        cut = next((n + 1 for n, t in enumerate(said) if t.i == after), len(said))
        counted = [t.text for t in phrase[2:]] if what.startswith("how m") else []
        return " ".join([back, *words[:cut], answer, *counted, *words[cut:]])
    if phrase[0].lower_ == "where" and any(t.lemma_.lower() in _PLACED for t in said):
        return " ".join([back, *words, "in", answer])
    if what == "how long":
        return " ".join([back, *words, "for", answer])
    return None


def _yours_said_back(wh: Token, aux: Token, rest: Sequence[Token], answer: str
                     ) -> str | None:
    """A question about "your" thing said back: "What's your partner's name?" -> "My
    partner's name is Dana", "When's your exam?" -> "My exam is june 3rd"."""
    owner = rest[0].head
    if owner.dep_ == "poss":
        owner = owner.head
    span = [t for t in rest if owner.left_edge.i <= t.i <= owner.right_edge.i]
    after = [t for t in rest if t.i > owner.right_edge.i]
    if not span or span[0].i != rest[0].i or (
            after and after[0].pos_ == "VERB" and after[0].tag_ != "VBN"):
        return None  # ("what does your son like?": asked of him, not of a thing of yours)
    verb = "is" if aux.lower_ in ("'s", "is") else aux.lower_
    owned = "".join(_mine(t) + t.whitespace_ for t in span[1:]).strip()
    words = ["My", owned, verb, *(t.text for t in after)]
    if wh.lower_ == "where" and not (after and after[-1].pos_ == "ADP"):
        words.append("in")
    return " ".join([*words, answer])


def _any_said_back(tokens: Sequence[Token], answer: str) -> str | None:
    """"Any foods you avoid?" said back: "I avoid pork"."""
    inside = {t.i for t in tokens}
    verb = next((t for t in tokens if t.dep_ == "relcl" and t.head.i in inside), None)
    if verb is None or tokens[-1].i != verb.right_edge.i or not any(
            c.dep_ == "nsubj" and c.lower_ in ("you", "u") for c in verb.children):
        return None
    return " ".join(["I", *(_mine(t) for t in tokens if t.i >= verb.i), answer])


def _mine(tok: Token) -> str:
    """A word of the asker's, in the mouth of the one asked: "your" -> "my", "you" ->
    "me", or "I" as a subject ("Are you sure you'll be ok?")."""
    if tok.lower_ in ("you", "u") and tok.dep_ in ("nsubj", "nsubjpass"):
        return "I"
    return _MINE.get(tok.lower_, tok.text)
