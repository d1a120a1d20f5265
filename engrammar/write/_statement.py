"""A statement's text, as the write gate compares two: its values (names, places, numbers),
its polarity, its template (the statement with its values taken out and its predicate in a
canonical word), and its content words. Pure and cached: each is asked for again and again,
every proposed op against every memory of its chat, and computed once per distinct text.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from functools import lru_cache

import snowballstemmer
from rapidfuzz import fuzz
from spacy.lang.en.stop_words import STOP_WORDS

_WORD = re.compile(r"[A-Za-z0-9][\w'’-]*")
# Each flips the polarity of a statement once. "anymore" and "longer" are not here: they only
# go with a negation ("doesn't like it anymore", "no longer"), which they would flip back.
_NEGATIONS = {"not", "no", "never", "don't", "doesn't", "didn't", "isn't", "wasn't", "won't",
              "can't", "cannot", "hates", "hate", "dislikes", "dislike", "stopped", "quit"}
# Predicates that say the same thing, for comparing templates.
_CANON = {w: canon for canon, words in {
    "lives": ("lives", "live", "living", "based", "resides", "reside", "located", "stays"),
    "works": ("works", "work", "working", "employed", "job"),
    "likes": ("likes", "like", "loves", "love", "enjoys", "enjoy", "adores", "fan"),
    "dislikes": ("dislikes", "dislike", "hates", "hate"),
    "named": ("named", "called", "name"),
    "has": ("has", "have", "got", "owns"),
}.items() for w in words}
_FILLER = {"user", "user's", "the", "a", "an", "they", "they're", "he", "she", "is", "are", "was",
           "i", "i'm", "my", "their", "his", "her", "of", "to", "in", "at", "and", "currently",
           "now", "really"}


# The words that name the memory's subject, the user, or the speaker: never a value.
_SUBJECT = frozenset({"i", "user", "user's"})

# Relations a person has one of at a time: a new name for one is a correction or a change
# ("Has a wife named Niamh" after "User's wife is called Roisin"), where a friend, a child or
# a dog with a new name is another one.
ONE_AT_A_TIME = frozenset({"wife", "husband", "partner", "spouse", "boyfriend", "girlfriend",
                           "fiance", "fiancee", "fiancé", "fiancée", "mum", "mom", "mother",
                           "dad", "father"})

# Predicates that hold one value at a time (by the first word of a template). With no explicit
# slot, only these make a new value an update: "has a friend named Omar" does not replace "has
# a friend named Lena", nor "likes Thai food" "likes Italian food".
SINGLE_VALUED = frozenset({"lives", "works", "named", "from", "age", "born", "married",
                           "favorite", "favourite"})

# Words a template keeps that relate its value to something else ("Lives with their
# partner", "Works as a nurse", "Lives near the sea"): a template with one of them beside
# another's says another thing, not the same thing in more words.
RELATIONAL = frozenset({"with", "as", "for", "near", "by", "on", "from", "without", "alone",
                        "together", "next", "opposite", "above", "below", "behind", "under",
                        "outside", "off", "part", "since", "until"})


def _words(text: str) -> list[str]:
    return _WORD.findall(text.replace("’", "'"))


# The text features below are pure and asked for again and again (every proposed op against
# every memory of its chat): each is computed once per distinct text.
_CACHE = 1 << 16


@lru_cache(maxsize=_CACHE)
def values(text: str) -> frozenset[str]:
    """Value-like words: capitalised after the first word, or containing a digit. A first
    word is capitalised anyway, so it counts only as a possessive ("Jon's favorite...")."""
    out = set()
    for i, w in enumerate(_words(text)):
        # ("User's wife is called Roisin": whose it is, the memory's subject, no value)
        if any(ch.isdigit() for ch in w) or (w[0].isupper() and w.lower() not in _SUBJECT and (
                i > 0 or w.lower().endswith("'s"))):
            out.add(w.lower().strip("'"))
    return frozenset(out)


def _denies(word: str) -> bool:
    """Whether a lower-case word flips the polarity of its statement."""
    return word in _NEGATIONS or word.endswith("n't")


@lru_cache(maxsize=_CACHE)
def negative(text: str) -> bool:
    return sum(_denies(w.lower()) for w in _words(text)) % 2 == 1


@lru_cache(maxsize=_CACHE)
def template(text: str) -> str:
    """The statement with values and fillers taken out and its predicate put in a canonical
    word: "They're based in Berlin" -> "lives", like "User lives in Berlin"."""
    vals = values(text)
    kept = [_CANON.get(w.lower(), w.lower()) for w in _words(text)
            if w.lower() not in vals and w.lower() not in _FILLER]
    if len(kept) == 3 and kept[0] == "has" and kept[2] == "named":
        # Having one named so is its name: "Has a dog named Rolo" -> "dog named", like
        # "Their dog is called Rolo" and "Dog's name is Rolo".
        kept = kept[1:]
    if len(kept) == 2 and kept[1] == "named":
        kept[0] = kept[0].removesuffix("'s")
    return " ".join(kept)


def single_valued(text: str) -> bool:
    """Whether a statement's template holds one value at a time: its predicate is one of
    SINGLE_VALUED ("Lives in Hobart"), or it names a relation a person has one of ("Has a
    wife named Niamh")."""
    shape = template(text).split()
    return bool(shape) and (shape[0] in SINGLE_VALUED or names_one(text))


def names_one(text: str) -> bool:
    """Whether a statement gives the name of the user's relation one has one of at a time
    ("Has a wife named Niamh", "User's wife is called Roisin"); not another person's ("Jo's
    husband is called Mark")."""
    shape = template(text).split()
    return len(shape) == 2 and shape[1] == "named" and shape[0] in ONE_AT_A_TIME \
        and not _someone_elses(text)


def _someone_elses(text: str) -> bool:
    """Whether a statement opens with another person's possessive: "Jo's husband is
    called Mark", "Mum's partner is Dave" (not "User's", nor the relation's own "Wife's
    name is Niamh")."""
    words = _words(text)
    first = words[0].lower() if words else ""
    return first.endswith("'s") and first != "user's" \
        and first.removesuffix("'s") not in ONE_AT_A_TIME


def unsigned(text: str) -> str:
    """The template without its polarity: "Doesn't like coffee" and "Dislikes coffee" both
    give "likes coffee", like "Likes coffee"."""
    words = ["likes" if w == "dislikes" else w for w in template(text).split()]
    return " ".join(w for w in words if not _denies(w) and w not in ("anymore", "longer"))


def same_claim(a: str, b: str) -> bool:
    """Same predicate about the same, non-empty values: a paraphrase MiniLM scores too low
    to trust on cosine alone (0.66 for "lives in Berlin" / "they're based in Berlin")."""
    va = values(a)
    return bool(va) and va == values(b) and template(a) == template(b)


def lexical(a: str, b: str) -> float:
    return float(fuzz.token_set_ratio(a.lower(), b.lower()))


def conflict(a: str, b: str) -> bool:
    # (the polarity is the claim's: a detail after it, "Is a night owl. Never asleep
    # before 2am.", does not deny it)
    va, vb = values(a), values(b)
    return bool(va - vb and vb - va) or negative(claim(a)) != negative(claim(b))


def within(a: str, b: str) -> bool:
    """Every word of ``a`` is in ``b``, whatever the case: "Lives in easton" says part of
    "Lives in Easton, Bristol with Marta", the same slot's value restated, not a new one."""
    words_a = {w.lower() for w in _words(a)} - _FILLER
    return bool(words_a) and words_a <= {w.lower() for w in _words(b)}


def said_within(a: str, b: str) -> bool:
    """Whether ``a``, its asides in brackets aside, is a run of ``b``'s words in the same
    order: "Grand, asleep on the radiator as per usual" inside "Has a cat called Mairéad.
    Grand, asleep on the radiator as per usual. (asked ...)" says nothing ``b`` does not.
    (The asides are the extractor's context, "(asked ...)", "(last year, 2025-01-01)",
    which the same words read another night may carry or not.)"""
    said, held = _run(a), _run(b)
    if len(said) < _RUN or len(said) > len(held):
        return False
    starts = range(len(held) - len(said) + 1)
    return any(held[i] == said[0] and held[i:i + len(said)] == said for i in starts)


@lru_cache(maxsize=_CACHE)
def _run(text: str) -> tuple[str, ...]:
    """The words of ``text`` outside its brackets, lower case (each memory's, once)."""
    return tuple(w.lower() for w in _words(_ASIDE.sub(" ", text)))


# An aside in brackets, with the quotes it may hold (one level of nesting is enough).
_ASIDE = re.compile(r"\((?:[^()]|\([^()]*\))*\)")
# Words a run must have to restate anything: "Has a cat" is too few to tell.
_RUN = 4


def same_text(a: str, b: str) -> bool:
    """The same words in the same order, whatever the case, spacing and punctuation."""
    return [w.lower() for w in _words(a)] == [w.lower() for w in _words(b)]


@lru_cache(maxsize=_CACHE)
def place_of(text: str) -> str | None:
    """What a living or working statement gives the place of, by the word that follows
    its verb: "lives/in", "works/at", "works/as"; None for any other statement, or one that
    says first whom or what else it is with ("Lives with their partner in Leeds")."""
    words = [w.lower() for w in _words(claim(text))]
    for i, w in enumerate(words[:-1]):
        canon = _CANON.get(w)
        if canon in ("lives", "works"):
            following = words[i + 1]
            if following in _PLACES.get(canon, ()):
                return f"{canon}/{following}"
            return None
    return None


# The word after the verb that makes a statement one of where one lives or works, or as what.
_PLACES = {"lives": ("in", "at", "on"), "works": ("in", "at", "for", "as")}


@lru_cache(maxsize=_CACHE)
def content_words(text: str) -> frozenset[str]:
    """The words of more than three letters that are no filler, lower case and without
    their accents: "café" and "cafe" are one word, as are "José" and "Jose"."""
    return frozenset({_plain(w.lower()) for w in _words(text) if len(w) > 3} - _FILLER)


def _plain(word: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", word)
                   if not unicodedata.combining(c))


def shares_content_word(a: str, b: str) -> bool:
    return bool(content_words(a) & content_words(b))


@lru_cache(maxsize=_CACHE)
def _predicate_words(text: str) -> frozenset[str]:
    """The content words after the first word: what a statement says of its subject. "Dana
    renewed her passport" and "Dana promised to call her mom" share only their subject."""
    first = _words(text)[:1]
    return content_words(text) - {w.lower().strip("'") for w in first} - {
        w.lower() for w in first}


def shares_beyond_subject(a: str, b: str) -> bool:
    return bool(_predicate_words(a) & _predicate_words(b))


def shares_name(a: str, b: str) -> bool:
    """Whether ``a`` says a name ``b`` writes with a capital inside a sentence ("Amazon" of
    "Works nights at the Amazon warehouse"), however ``a`` writes it ("packed in amazon")."""
    return bool(_names(b) & _lowered(a))


def does_by_name(said: str, plan: str) -> bool:
    """Whether a report's first sentence does the thing a plan names, by the name the plan
    writes: "so I did the ielts" of "Is sitting the IELTS"; not a thing done about it or
    beside it ("talked to Priya about the IELTS", "helped my sister with her IELTS prep")."""
    names = _names(plan)
    said_words = [w.lower() for w in _words(said)]
    at = next((i for i, w in enumerate(said_words) if w in names), None)
    return at is not None and not any(w in _AROUND for w in said_words[:at])


# Prepositions that put a name beside the thing done rather than make it the thing done.
_AROUND = frozenset({"about", "with", "for", "to", "on", "at", "from", "of", "after",
                     "before", "like", "than", "into", "over"})


@lru_cache(maxsize=_CACHE)
def _lowered(text: str) -> frozenset[str]:
    return frozenset(w.lower() for w in _words(text))


@lru_cache(maxsize=_CACHE)
def _names(text: str) -> frozenset[str]:
    """The words ``text`` capitalises inside its sentences: names, but a day's or a
    month's, and the "I"s."""
    return frozenset(w.lower() for sentence in _SENTENCE_END.split(text)
                     for w in _words(sentence)[1:]
                     if w[:1].isupper() and w.lower() not in _NOT_NAMES)


# Words written with a capital that name nobody and nothing of one's own.
_NOT_NAMES = frozenset({"i", "i'm", "i've", "i'd", "i'll", "monday", "tuesday", "wednesday",
                        "thursday", "friday", "saturday", "sunday", "january", "february",
                        "march", "april", "may", "june", "july", "august", "september",
                        "october", "november", "december"})


# Snowball's English stemmer (Porter's second): "coffee" and "coffees", "smoking" and "smokes"
# are one stem. A stemmer holds the word it works on: one per thread (the service's gate
# runs in a pool of threads).
_LOCAL = threading.local()
# The one who does a thing, on a stem long enough not to be a word of its own: "teacher"
# (not "mother", "corner", "later"). Snowball keeps the agent noun whole.
_AGENT = re.compile(r"(?<=\w{5})ers?$")


@lru_cache(maxsize=_CACHE)
def _stems(text: str) -> frozenset[str]:
    """The content words, the first one too, stemmed: "smoking", "smokes" and "smoke" are
    one stem, and so are "teaching" and "teacher" (the doing and the one who does it). A
    word of three letters that is no function word counts too: what a habit or a thing had
    is often one ("gym", "car", "van", "job")."""
    short = {_plain(w.lower()) for w in _words(text) if len(w) == 3 and w.isalpha()}
    return frozenset(_stem(w) for w in content_words(text)) | (short - STOP_WORDS - _FILLER)


# The marks of a doing ended (English has these few): "anymore", "no longer", "no more" (not
# "no more than"), and the past habit that opens a statement with its bare verb ("Used to
# smoke"; not "Is used to night shifts", "Used to the night shifts now", "Used to working
# from home"). "Any more" in two words is as often a quantity ("Cannot eat any more").
_ENDED = re.compile(r"\b(?:anymore|no longer|no more(?! than))\b"
                    r"|^(?:they |I )?used to (?!(?:the|a|an|my|their|it|this|that|these|"
                    r"those)\b|\w+ing\b)", re.IGNORECASE)
_CLAUSE_END = re.compile(r"[,;:()]|\s[-–—]\s")
# What may follow a closing "anymore" without narrowing the claim: why, or since when
# ("Cannot eat spicy anymore since their ulcer"); not when ("anymore tonight", "during
# lent", "until my knee heals"), which makes it a pause.
_SINCE = re.compile(r"\s+(?:since|because|cos|coz|cause|as|after|now)\b.*$", re.IGNORECASE)
# Words that limit a claim in time, company or extent, stop words though they are: "no more
# piano for a while" is a pause, "no longer doing the school run on their own" a change
# of company, neither an end.
_LIMITS = frozenset({"now", "while", "alone", "own", "again", "yet", "still", "until",
                     "till", "during", "before", "except", "unless", "only", "just",
                     "sometimes", "often", "mostly", "mainly", "instead"})
# A memory of several things ("Likes cats and dogs") ends only as a whole; a name with an
# "and" in it is one ("the Kennet and Avon canal").
_SEVERAL = re.compile(r"\b(?:and|or)\s+(?![A-Z])")


def _first_clause(text: str) -> str:
    """A claim's words up to its first comma, colon, bracket or dash."""
    return _CLAUSE_END.split(claim(text), maxsplit=1)[0]


def says_ended(text: str) -> bool:
    """Whether a statement's first clause has a mark of an end: ``ended`` may hold of it."""
    return _ENDED.search(_first_clause(text)) is not None


def ended(new: str, old: str) -> bool:
    """Whether ``new`` says the doing ``old`` states is over, and no narrower: its first
    clause is negated with a mark of an end, and every word it says beside the negation is
    one ``old`` says ("Does not do the school run anymore" of "Does the school run every
    morning", "Not living on the canal anymore" of "Lives on a narrowboat on the canal").
    A word of its own makes it another claim: "Does not smoke indoors anymore" leaves
    "Smokes about ten a day" standing, "No more coffee after 3pm" a coffee drinker, and
    "Their sister doesn't work there anymore" is the sister's. A negation without the mark
    may be for now ("not driving this weekend"), and so may one with a word of limit
    (``_LIMITS``); one of several things the memory names ends none ("Does not like dogs
    anymore" of "Likes cats and dogs")."""
    said = _first_clause(new)
    mark = _ENDED.search(said)
    if mark is None or negative(old):
        return False
    said_mark = mark.group(0).lower()
    if said_mark == "anymore":
        said = said[:mark.end()] + _SINCE.sub("", said[mark.end():])
    bare = _ENDED.sub(" ", said)
    if said_mark.startswith("used to"):
        denied = negative(bare)  # ("Used to hate coffee" ends no liking of it)
    else:
        # "anymore" goes with a denial of the claim: "Does not cycle anymore" (or, in
        # negative concord, "Is not at the garage no more"); "no longer" is one itself
        denied = not (said_mark.startswith("no") or negative(bare))
    if denied or any(w.lower() in _LIMITS for w in _words(claim(new))):
        return False  # (and "No more baking for now", "no more swimming, shut till june")
    stems = _unsigned_stems(bare)
    held = _every_stem(claim(old))
    if _SEVERAL.search(claim(old)) and not held <= stems | {_stem(_words(old)[0])}:
        return False
    return bool(stems) and stems <= held


def turns_over(new: str, old: str) -> bool:
    """Whether a rule of reply says the opposite of an older one about everything the
    older one names: "Asked: you can use emojis again" of "Asked: no emojis", "you can
    mention my ex again" of "never mention my ex" (not "you can mention my sister")."""
    first = _first_clause(_ASKED_MARK.sub("", new))
    if negative(new) == negative(old) or any(
            w.lower() in _SCOPES and w.lower() not in _lowered(old) for w in _words(first)):
        # (an exception is no turn: "use bullet points for recipes tho", "you can use
        # emojis when we're joking" leave "no bullet points", "no emojis" standing)
        return False
    said = _unsigned_stems(first) - _ASKED
    if _KEPT_OUT.search(old):
        # a boundary is lifted by a word for what it keeps out and a verb of raising it,
        # nothing more: "you can talk about my ex now" of "Never mention their ex"; not
        # "you can bring up my dad's side of the family"
        held = _unsigned_stems(_KEPT_OUT.sub(" ", old)) - _ASKED
        return bool(held) and held <= said and len(said - held) <= 1
    held = _unsigned_stems(old) - _ASKED
    return bool(held) and held <= said


def _unsigned_stems(text: str) -> frozenset[str]:
    """``_every_stem`` of the words that do not deny: what a statement says, whichever
    way round."""
    return _every_stem(" ".join(w for w in _words(text) if not _denies(w.lower())))


# The words of the boundaries the extractor writes ("Never mention their ex", "Does not
# want their dad brought up"): what is kept out is the rest.
_KEPT_OUT = re.compile(r"^(?:never mention|does not want)\b|\bbrought up\.?$",
                       re.IGNORECASE)
# Words that put a rule of reply to a case: a rule said with one is an exception to an
# older rule, not its turn ("for recipes", "when we're joking", "in emails", "only").
_SCOPES = frozenset({"for", "in", "on", "at", "when", "whenever", "if", "with", "without",
                     "where", "unless", "only", "except", "during", "while", "until", "till"})
# The word a rule the user asked for opens with ("Asked: no emojis"): no part of it.
_ASKED = frozenset({"ask"})
_ASKED_MARK = re.compile(r"^Asked:\s*")


@lru_cache(maxsize=_CACHE)
def _every_stem(text: str) -> frozenset[str]:
    """The stem of every word that is no stop word, numbers and short words too ("3pm")."""
    return frozenset(_stem(w) for w in _words(text) if w.lower() not in STOP_WORDS)


def _stem(word: str) -> str:
    stemmer = getattr(_LOCAL, "stemmer", None)
    if stemmer is None:
        stemmer = _LOCAL.stemmer = snowballstemmer.stemmer("english")
    return str(stemmer.stemWord(_AGENT.sub("", _plain(word.lower()))))


def shares_stem(a: str, b: str) -> bool:
    """Whether two statements share a word's stem, their first words too: a thing stopped
    ("Quit smoking last month") and the habit it ends ("Smokes about ten a day") name the
    doing in two forms, and the habit's verb opens its memory."""
    return bool({w for w in _stems(a) if len(w) > 2} & _stems(b))


_SENTENCE_END = re.compile(r"[.!?]+\s+(?=\S)")


def thing_done(text: str) -> str:
    """What a report says it did: its first sentence of more than one word, past a word
    of greeting or joy before it ("Ejja!! Passed their driving test this morning ...",
    "Howzit. That Home Affairs mission is finally done")."""
    for sentence in _SENTENCE_END.split(text.strip()):
        if len(_words(sentence)) > 1:
            return sentence
    return claim(text)


def sentence_count(text: str) -> int:
    """The sentences a statement holds: a stop followed by more words starts another."""
    return 1 + len(_SENTENCE_END.findall(text.strip()))


def claim(text: str) -> str:
    """A statement's first sentence: the claim a detail after it ("Lives in Hobart.
    Bloody freezing mate.") elaborates."""
    return _SENTENCE_END.split(text.strip(), maxsplit=1)[0]
