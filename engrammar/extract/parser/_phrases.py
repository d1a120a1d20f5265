"""A clause as text: the words of a parse, with the first person turned third.

A memory says what the user said about themself as a third person would ("my passport" ->
"their passport"), in the speaker's own words; these helpers render a clause, a phrase or a
name from the parse, and trim the chat filler that ends a clause without being part of it.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from engrammar.extract.parser._lexicon import HOUSEHOLD, OPENERS, PERFECT, kin
from engrammar.extract.parser._referents import dropped_verb, unsaid_referent

if TYPE_CHECKING:
    from spacy.tokens import Token


# The first person's words in the third: how a memory words what the user said.
THIRD_PERSON = {"i": "they", "me": "them", "my": "their", "mine": "theirs",
                "myself": "themself", "am": "are", "'m": "are", "i'm": "they're", "we": "they",
                "our": "their", "us": "them"}


def is_clause(tok: Token) -> bool:
    return tok.pos_ in ("VERB", "AUX") or any(
        c.dep_ in ("nsubj", "nsubjpass", "cop") for c in tok.children)


def causative(tok: Token) -> bool:
    """Whether a participle is what was had done, with no clause of its own: "he had his
    hip replaced", "I got my hair cut" (the parser makes it a clause with its subject)."""
    return tok.dep_ == "ccomp" and tok.tag_ == "VBN" and tok.head.lemma_.lower() in (
        "have", "get") and tok.i > tok.head.i and not any(
        c.dep_ in ("aux", "auxpass") for c in tok.children)


def as_typed(tokens: Iterable[Token]) -> str:
    """Some words of a message as the user typed them, their spaces kept, the ends
    trimmed: what the models over the embedder's vectors were trained to read."""
    return "".join(t.text_with_ws for t in tokens).strip()


def words(tokens: Sequence[Token]) -> str:
    """The tokens as text, first person turned third: "my passport" -> "their passport"."""
    out: list[str] = []
    rendered = {t.i for t in tokens}
    named_at = -2  # where a pronoun was worded as what it stands for
    for n, tok in enumerate(tokens):
        word = THIRD_PERSON.get(tok.lower_, tok.text) if tok.pos_ in ("PRON", "AUX") and not (
            _clock(tok)) else tok.text
        if (thing := unsaid_referent(tok, rendered)) is not None:
            # "it" for what the message named before these words: the memory names it
            # (the thing named, not another: "a rescue greyhound" -> "the rescue greyhound")
            article = thing[0].lower_ in ("a", "an")
            word = f"the {words(thing[1:])}" if article else words(thing)
            word = (cap(word) if tok.text[:1].isupper() else word) + dropped_verb(tok)
            named_at = n
        elif named_at == n - 1 and (verb := written_out(tok)) is not None:
            word = verb  # "it's next thursday" -> "Their theory test is next thursday"
        elif _my(tok):
            word = "their"
        elif tok.pos_ == "NOUN" and dropped_my(tok):
            word = f"{'Their' if not out else 'their'} {tok.text}"
        elif tok.lower_ == "the" and tok.dep_ == "det" and the_kin(tok.head):
            word = "Their" if tok.text[:1].isupper() else "their"
        if tok.lower_ == "was" and n and tokens[n - 1].lower_ == "i":
            word = "were"  # "I was 19" -> "they were 19" ("was" alone may be anyone's)
        if word != tok.text and tok.text.startswith(("'", "’")) and out:
            word = " " + word  # "I'm" -> "they are", not "theyare"
        # A token left out ("I'll" without its "'ll") must not glue its neighbours.
        gap = n + 1 < len(tokens) and tokens[n + 1].i != tok.i + 1 \
            and not tokens[n + 1].is_punct
        out.append(word + (" " if gap else tok.whitespace_))
    # (nor a joiner or a selector left of an emoji the parse cut in two: "👨\u200d")
    return "".join(out).strip(" .,!?;:-\u200d\ufe0f\n\r\t")


def dropped_my(noun: Token) -> bool:
    """Whether a relation opens its sentence as its subject with no "my": "wife is a vet",
    "partner's got crohn's" say "my wife", "my partner"."""
    return noun.dep_ in ("nsubj", "nsubjpass") and kin(noun.lower_) and _opens(noun) \
        and not any(c.dep_ in ("det", "poss") for c in noun.children)


def the_kin(noun: Token) -> bool:
    """Whether one of the household is said with "the" as a subject, as chat says the
    speaker's own: "the wife's expecting", "the kids start school monday". (Not one the
    words around it tell apart: "the kid next door", "the wife of my boss"; nor one in a
    clause opened by a conjunction, which hangs on another: "once the kids are grown".)"""
    return noun.dep_ in ("nsubj", "nsubjpass") and not any(
        c.dep_ == "mark" for c in noun.head.children) and noun.lower_ in HOUSEHOLD and [
        (c.dep_, c.lower_) for c in noun.children] == [("det", "the")]


def _opens(noun: Token) -> bool:
    """Whether a noun opens its sentence (chat's openers aside): "wife is a vet", "twins
    are 14". A relation said bare there is the speaker's, its "my" dropped; within a
    sentence ("he was a friend") it may be anyone's."""
    first = next((t for t in noun.sent if not (t.is_punct or t.lower_ in OPENERS)), None)
    return first is not None and first.i == noun.i


def _clock(tok: Token) -> bool:
    """Whether an "am" is the hour's, not the verb's: "dentist tomorrow 9am", "at 6 am"
    (the tagger may read it as the verb)."""
    return tok.lower_ == "am" and tok.i > 0 and tok.doc[tok.i - 1].like_num


def _my(tok: Token) -> bool:
    """Whether a "me" says "my", as in Australian, Irish and northern English: "did me
    first half marathon", "after me shoulder op", "me mam is in hospital". Before a noun,
    where the parse cannot make it an object: after a preposition, taken for a subject
    after its verb, or before the subject ("gave me first prize" is an object, and stays
    "them")."""
    doc = tok.doc
    if tok.lower_ != "me" or tok.i + 1 >= len(doc) or doc[tok.i + 1].tag_ not in (
            "JJ", "NN", "NNS", "NNP", "NNPS") or doc[tok.i + 1].dep_ in ("npadvmod", "advmod"):
        return False  # ("sat next to me yesterday")
    nxt = doc[tok.i + 1]
    if nxt.dep_ == "appos" and nxt.head.i == tok.i:
        return True  # "me nans 80th": no appositive follows its noun without a comma
    # (before a subject: "me nan taught me to knit", "me mam is in hospital": no object
    # comes before a subject)
    subject = nxt.dep_ in ("nsubj", "nsubjpass") or (
        nxt.dep_ == "compound" and nxt.head.dep_ in ("nsubj", "nsubjpass"))
    return (tok.i > 0 and doc[tok.i - 1].tag_ == "IN") or (
        tok.dep_ in ("nsubj", "nsubjpass") and tok.i > tok.head.i) or (
        subject and nxt.head.i > tok.i)


def predicate(head: Token) -> str:
    """What follows the copula or verb inside its own clause: "is Spirited Away" ->
    "Spirited Away", however the parser attached the words."""
    nested = [c for c in head.children if c.dep_ in ("conj", "ccomp", "advcl", "parataxis")
              and c.i > head.i and is_clause(c)]
    cut = min((min(t.i for t in n.subtree) for n in nested), default=head.right_edge.i + 1)
    tokens = [t for t in head.subtree if head.i < t.i < cut]
    while tokens and (tokens[-1].dep_ in ("punct", "cc") or tokens[-1].pos_ == "PUNCT"):
        tokens.pop()
    return words(tokens)


def phrase(tok: Token, skip: frozenset[str] = frozenset(), before: int | None = None) -> str:
    """``tok``'s subtree as text, leaving out relative clauses and the deps in ``skip``
    (each with its own subtree), and the words from index ``before`` on."""
    dropped = {"relcl", *skip}
    keep = []
    for t in tok.subtree:
        if before is not None and t.i >= before:
            break
        node, out = t, False
        while node.i != tok.i:
            if node.dep_ in dropped:
                out = True
                break
            node = node.head
        if not out:
            keep.append(t)
    return words(_whole_words(keep))


def _whole_words(tokens: list[Token]) -> list[Token]:
    """``tokens`` with the rest of a hyphenated word the parse hung elsewhere ("my
    ex-husband": "-" and "husband" as objects of the verb beside "ex"): never a word cut
    in two."""
    if not tokens:
        return tokens
    doc = tokens[0].doc
    kept = {t.i for t in tokens}
    for t in tokens:
        if hyphen_after(t) and not {t.i + 1, t.i + 2} & kept:
            kept |= {t.i + 1, t.i + 2}
    return [doc[i] for i in sorted(kept)]


def hyphen_after(tok: Token) -> bool:
    """Whether a hyphen inside a word follows ``tok``, no space on either side and a word
    after it: "ex" of "ex-husband", "Ji" of "Ji-woo"."""
    doc = tok.doc
    return not tok.whitespace_ and tok.i + 2 < len(doc) and doc[tok.i + 1].text == "-" \
        and not doc[tok.i + 1].whitespace_ and doc[tok.i + 2].is_alpha


# A clitic verb in the third person singular, by its lemma: "he's" -> "is", "she'll" ->
# "will".
_CLITIC = {"be": "is", "have": "has", "will": "will", "would": "would"}


def written_out(verb: Token) -> str | None:
    """A verb that leaned on its pronoun ("'s", "'ll"), written out for a named subject;
    None for any other word."""
    if verb.pos_ not in ("AUX", "VERB") or not verb.text.startswith(("'", "’")):
        return None
    short = verb.lower_[1:]
    nxt = verb.doc[verb.i + 1] if verb.i + 1 < len(verb.doc) else None
    # a perfect, which the parser takes for a passive as often as not: "she's got a season
    # ticket", "he's been loving it", "he'd taught chemistry", "she's gone deaf"
    if short in ("s", "d") and nxt is not None and (nxt.lower_ in PERFECT or (
            verb.head.tag_ == "VBN" and any(c.dep_ in ("dobj", "acomp")
                                            for c in verb.head.children))):
        return "has" if short == "s" else "had"
    lemma = verb.lemma_.lower()
    if lemma in ("'", "’") and short == "s":
        lemma = "be"  # (the tagger's lemma of a curly "’s")
    return _CLITIC.get(lemma, lemma)


def named(who: str, rest: Sequence[Token]) -> str:
    """``who`` then the words of a clause without its pronoun subject: the verb that leaned
    on the pronoun stands apart after a name ("she's got a season ticket" -> "Their sister
    Jo has got a season ticket", never "Jo's got")."""
    rest = list(itertools.dropwhile(lambda t: t.is_punct, rest))
    text = words(rest)
    if rest and (verb := written_out(rest[0])) is not None:
        text = verb + text[len(rest[0].text):]
    return f"{who} {text}" if text else who


def cap(text: str) -> str:
    return text[:1].upper() + text[1:]


# The day an event happened, as ``_decisions.propose`` appends it: "(yesterday, 2026-03-03)",
# before any detail after the claim (``_detail``).
DATED = re.compile(r"\s*\([^()]*\d{4}-\d{2}-\d{2}\)")


def joined(claim: str, detail: str) -> str:
    """A fact's claim followed by a detail of it, each said once: a detail whose words hold
    the claim stands alone ("Their dad retired when he turned 65", not "Their dad retired.
    Their dad retired when ..."), and one the claim holds adds nothing ("Has the vet at
    9. The vet at 9." is the claim)."""
    said, more = claim.rstrip(" ."), detail.strip()
    if not more:
        return claim
    if _holds(said, more.rstrip(" .")):
        return claim
    # (an event's day stays after its words: "Moved to Leeds (2019, 2019-01-01)")
    day = "".join(DATED.findall(said))
    bare = DATED.sub("", said)
    # A claim of the user's own ("Is a nurse") is only the detail's when said of them
    # there: "Their mum is a nurse too" holds its words of someone else.
    if _holds(more.rstrip(" ."), bare, _WORD_START if bare.lower().startswith("their ")
              else _THEY):
        return f"{more.rstrip(' .')}{day}" if day else more
    return f"{said}. {more}"


_WORD_START = r"(?<!\w)"
# What may stand before a claim of the user's own in a detail that says it of them.
_THEY = r"(?:^|\bthey(?:'ve|'re|'d| have| had| are| were| will)?\s+)"


def _holds(text: str, part: str, before: str = _WORD_START) -> bool:
    """Whether ``part`` is a run of whole words of ``text``, case aside, after what
    ``before`` matches."""
    return re.search(rf"{before}{re.escape(part.lower())}(?!\w)", text.lower()) is not None


def with_article(noun: str) -> str:
    """``noun`` with its indefinite article: "a sister", "an ex", "an accountant"."""
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


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
    # (what is said of the one named is not the name: "my son Mateo (4th grade)")
    return phrase(tok, frozenset({"punct", "cc", "conj", "appos", "acl"}))


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
