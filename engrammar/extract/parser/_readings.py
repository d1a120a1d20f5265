"""The readings of one clause: what a stated clause about the user, a relative or a thing
of theirs proposes, by its predicate (the head's lemma and the grammatical roles around it)
rather than by its words. "I relocated to Porto", "we moved to Porto last month" and "I live
in Porto now" all reach "Lives in Porto". Requests (forget, never mention, keep answers
short) are the request model's to find (``parser._intent``) and ``parser._requests``' to
read; a few forms with a canonical content are read here too. ``parser._extractor`` runs
these over each sentence; what they leave unsaid is for the learned candidates."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING

from engrammar.extract.parser._cessation import ceased, changed_over, ended
from engrammar.extract.parser._clauses import Clause
from engrammar.extract.parser._dates import calendar_word
from engrammar.extract.parser._events import (
    day_ahead,
    feeling,
    feeling_when,
    happened,
    ongoing,
    plan,
    plan_due,
    rescheduled,
)
from engrammar.extract.parser._jobs import is_profession
from engrammar.extract.parser._lexicon import (
    DIET,
    DISLIKE,
    HABITS,
    HOME_IN,
    HOME_TO,
    LIKE,
    MOODS,
    POLITENESS,
    STATIVE,
)
from engrammar.extract.parser._mood import promising, quote_mark
from engrammar.extract.parser._others import (
    lore,
    offered,
    relative_fact,
    resolved_thing,
)
from engrammar.extract.parser._owners import Owner, mine
from engrammar.extract.parser._phrases import child, phrase, predicate, prep_object, trim, words
from engrammar.extract.parser._profile import (
    OWNED,
    being,
    having,
    hired,
    job,
    lasting_state,
    years_long,
)
from engrammar.extract.parser._requests import proposal, request
from engrammar.models import MemoryType, Op

if TYPE_CHECKING:
    from spacy.tokens import Span, Token

# Requests inside these take their clause along: "remember that I'm allergic to peanuts".
# "I love the thought", "I like that idea": about what was just said, no preference.

_REACTIONS = frozenset({"idea", "thought", "sound", "plan", "suggestion", "one", "advice",
                        "message", "answer", "pic", "picture", "photo"})
_CONSUMING = frozenset({"remember", "forget", "mention"})
# Longer than this, a sentence is no single fact: it is passed over and stays in the log.

def read(c: Clause, at: datetime) -> list[Op]:
    """The ops one clause proposes, possibly none."""
    if c.head.dep_ in ("ccomp", "xcomp") and c.head.head.lemma_.lower() in _CONSUMING:
        return []
    if c.owner in (Owner.command, Owner.assistant):
        asked = request(c)
        # (a "please" bids the assistant, and a date in quotation marks is the quote's:
        # "so please correct it: 'I would like two days off, the 3 and 4 of April'")
        bid = any(t.lower_ in POLITENESS for t in c.head.children)
        due = plan_due(_unquoted(c.sentence), at) if c.owner is Owner.command else None
        if not asked and not bid and due is not None and due.when.date() > at.date() \
                and c.factual and c.head.dep_ in ("ROOT", "conj"):
            return plan(c, at)  # "and send Ruth her bday card by the 20th": a note to self
        return asked
    wish = lore(c)
    if wish or not c.factual:
        return wish
    if moved := rescheduled(c, at):
        return moved  # (whoever moved it: "the check-up has been moved to Thursday")
    if c.owner is Owner.user:
        ops = user_fact(c, at)
        if c.subject is not None and c.subject.pos_ in ("NOUN", "PROPN") and c.lemma != "be" \
                and mine(c.subject) and any(op.slot in _OWN_SLOTS for op in ops) and not any(
                    t.lower_ in ("i", "me") for t in c.subject.conjuncts):  # ("my X and I")
            # "my nanna lives in Gozo", "my ma works as a cleaner": a thing of theirs that
            # lives or works somewhere is someone of theirs, whatever the word
            return relative_fact(replace(c, owner=Owner.relative,
                                         relation=c.subject.lower_), at)
        return ops
    if c.owner is Owner.relative:
        return relative_fact(c, at)
    return my_thing(c) or offered(c) or resolved_thing(c, at)


def _how_felt(word: Token) -> bool:
    """Whether a word after "feel" says how: an adjective, or a word the tagger does not
    know taken for its object ("feeling meh"), not a thing ("feeling the heat", "pain in
    my knee", "nothing")."""
    return (word.dep_ in ("acomp", "oprd") and word.pos_ == "ADJ") or (
        word.dep_ == "dobj" and word.pos_ != "PRON" and not any(
            k.dep_ in ("prep", "det", "poss") for k in (*word.children, *word.head.children)))


# The slots of the user's own person, which a clause of another subject does not fill.
_OWN_SLOTS = frozenset({"home", "job", "age", "name"})


def _unquoted(sentence: Span) -> str:
    """The sentence's words outside quotation marks."""
    inside, kept = False, []
    for t in sentence:
        if quote_mark(t):
            inside = not inside
        elif not inside:
            kept.append(t.text)
    return " ".join(kept)


# Times of day whose dislike says when the user is awake: "mornings aren't my thing".
_MORNINGS = frozenset({"morning", "mornings", "early"})


def my_thing(c: Clause) -> list[Op]:
    """"mornings just aren't my thing", "cooking is my thing": a taste, said of the thing."""
    attr = child(c.head, "attr")
    if c.lemma != "be" or c.subject is None or c.subject.pos_ != "NOUN" or attr is None \
            or attr.lemma_ != "thing" or not any(
            t.dep_ == "poss" and t.lower_ == "my" for t in attr.children):
        return []
    if c.negated and c.subject.lower_ in _MORNINGS:
        return [proposal(MemoryType.profile, "Is a night owl", salience=0.6)]
    what = phrase(c.subject)
    verb = "Dislikes" if c.negated else "Likes"
    return [proposal(MemoryType.preference, f"{verb} {what}", salience=0.55)]


def user_fact(c: Clause, at: datetime) -> list[Op]:
    """What the user says of themselves: a taste or a negation first, then the rest. A
    thing they stopped doing ("gave up coffee") is a change of what the chat holds, unless
    a taste or a slot says it already ("don't eat meat anymore": the diet)."""
    told = _taste_or_negation(c)
    if told:
        return told  # ("don't like coffee anymore": a taste turned, which the gate knows)
    if stopped := ceased(c) or changed_over(c):
        return stopped
    if told is not None:
        return told
    # ("sold the Fiesta": a thing done, which may close a plan first; and the having ends)
    return [*_stated(c, at), *ended(c)]


def _favorite(c: Clause) -> list[Op] | None:
    """"fave film is Coming to America": a favourite, said of the thing."""
    fav = c.subject is not None and any(
        t.lower_ in ("favorite", "favourite") for t in c.subject.children)
    if fav and c.subject is not None and c.lemma != "be":
        # "fave film is Coming to America": the parser may take the title for the verb.
        copula = next((t for t in c.sentence if t.i > c.subject.i and t.lemma_ == "be"), None)
        if copula is not None:
            topic = words([t for t in c.subject.subtree if t.i > c.subject.i - 1
                           and t.lower_ not in ("favorite", "favourite", "my")])
            value = trim(c.sentence.doc[copula.i + 1: c.sentence.end].text.strip(" .!,"))
            return [proposal(MemoryType.preference, f"Favorite {topic} is {value}",
                             slot=f"favorite:{topic.lower()}", salience=0.6)]
    return None


def _promised(c: Clause, at: datetime) -> list[Op] | None:
    """"told my nan I'd pop round sunday": a promise to that person."""
    told = c.head.head if c.head.dep_ == "ccomp" else None
    if told is not None and promising(told) and not c.negated and any(
            a.lower_ in ("'d", "would", "will", "'ll") for a in c.head.children):
        # "told my nan I'd pop round sunday": a promise to that person
        whom = child(told, "dobj", "dative")
        due = plan_due(c.sentence.text, at)
        rest = words([t for t in c.head.subtree if t.i >= c.head.i])
        to = f" {phrase(whom)}" if whom is not None else ""
        return [proposal(MemoryType.open_loop, f"Promised{to} to {rest}", salience=0.7,
                         due=due.when if due else None)]
    return None


def _taste_or_negation(c: Clause) -> list[Op] | None:
    """Favourites, games, likes and dislikes, and what the user does not do or have;
    None when the clause is none of these (a negated clause is always settled here)."""
    head, lemma = c.head, c.lemma
    if (fav := _favorite(c)) is not None:
        return fav
    if lemma == "play" and c.tense == "present" and not c.negated and (
            game := child(head, "dobj")) is not None and game.pos_ != "PRON":
        return [proposal(MemoryType.preference, f"Plays {trim(predicate(head))}",
                         salience=0.6)]
    if lemma in LIKE | DISLIKE or (lemma == "stand" and c.negated):
        return preference(c)
    what = child(head, "dobj")
    if c.negated and lemma in ("drink", "smoke", "drive", "gamble", "vape") and (
            what is None or what.lower_ in ("nothing", "anything")):
        return [proposal(MemoryType.profile, f"Does not {lemma}", slot=f"habit:{lemma}",
                         salience=0.7)]
    if c.negated and lemma == "have" and (obj := child(head, "dobj")) is not None \
            and obj.lemma_.lower() in OWNED:
        return [proposal(MemoryType.profile, f"Does not have {phrase(obj)}",
                         slot=f"has:{obj.lemma_.lower()}", salience=0.7)]
    if c.negated and lemma == "be" and (on := prep_object(head, "on")) is not None:
        return [proposal(MemoryType.profile, f"Is not on {trim(phrase(on))}",
                         salience=0.6)]  # "not on social media either"
    person = child(head, "attr") if lemma == "be" else None
    if person is not None and person.lemma_ == "person" and (
            kind := child(person, "compound")) is not None:
        verb = "Dislikes" if c.negated else "Likes"  # "not a beer person"
        ops = [proposal(MemoryType.preference, f"{verb} {kind.lower_}", salience=0.6)]
        after = next((t for t in c.sentence if t.i > person.right_edge.i
                      and not t.is_punct and t.dep_ != "cc"), None)
        if c.negated and after is not None and after.pos_ == "NOUN" \
                and after.dep_ in ("ROOT", "conj", "appos", "parataxis"):
            # "not a beer person, cider all day": the other thing, said against it, is liked
            ops.append(proposal(MemoryType.preference, f"Likes {after.lower_}", salience=0.55))
        return ops
    if c.negated:
        food = trim(predicate(head).split(",")[0])
        can = any(a.lower_ in ("ca", "can", "cannot") for a in head.children)
        if food and lemma == "eat" and any(w in ("animal", "animals") for w in
                                           food.lower().split()):
            # "I don't eat anything that comes from animals": the diet, by its name
            return [proposal(MemoryType.preference, "Is vegan", slot="diet", salience=0.8)]
        if food and lemma == "do" and can:
            # "can't do coriander": a taste, not a diet ("can't eat gluten" is one)
            return [proposal(MemoryType.preference, f"Dislikes {food}", salience=0.6)]
        if food and (lemma in ("eat", "drink") or (lemma == "have" and can)):
            verb = f"Cannot {lemma}" if can else f"Does not {lemma}"
            return [proposal(MemoryType.preference, f"{verb} {food}", slot="diet",
                             salience=0.7)]
        return []
    return None


def _stated(c: Clause, at: datetime) -> list[Op]:
    """Plans, promises, diets, identity, moods, work, home, possessions, events."""
    head, lemma = c.head, c.lemma
    if c.action is not None and (c.tense != "past" or "promise" in c.modals):
        return plan(c, at)
    if (promised := _promised(c, at)) is not None:
        return promised
    if lemma == "plan" and c.tense != "past" and (
            planned := child(head, "dobj")) is not None and planned.pos_ in ("NOUN", "PROPN"):
        # "I'm planning my son's 7th at the climbing wall": what is planned is ahead, as
        # much as a plan to do something ("plan to", the modal chain, above)
        rest = [t for t in head.subtree if t.i > head.i]
        return [proposal(MemoryType.open_loop, f"Plans {words(rest)}", salience=0.7,
                         due=day_ahead(c.sentence.text, at))]
    if lemma in ("become", "go", "turn") and (
            diet := next((t for t in head.children if t.lower_ in DIET), None)) is not None:
        return [proposal(MemoryType.preference, f"Is {diet.lower_}", slot="diet",
                         salience=0.8)]
    if lemma in ("be", "become") and head.lower_ not in MOODS:
        if head.tag_ == "VBD" and lemma == "be":
            # "I was a chef for ten years": work done once, said as done (not "I've been a
            # nurse for 20 years", nor "became a nurse"); in the job's slot still, as the
            # latest word on their work: the job it ended ("Is a chef at an Italian
            # restaurant") gives way
            return [_former(op) for op in being(c)]
        return being(c)
    if head.tag_ == "VBN" and (state := lasting_state(c)):
        return state  # "I'm immunocompromised", parsed as a passive
    if head.lower_ in MOODS:
        return feeling(c.head, head)
    if lemma == "feel":
        # (how they feel today is a mood, whatever the word: "feeling a bit flat today";
        # not what a thing makes them feel, nor how it felt: "I feel great after yoga")
        today = c.tense == "present" and bool(feeling_when(head))
        mood = next((t for t in head.children
                     if t.lower_ in MOODS or (today and _how_felt(t))), None)
        if mood is not None:
            return feeling(c.head, mood)
        return []
    if lemma in ("work", "teach", "study") and (c.tense != "past" or (
            lemma != "study" and years_long(c))):
        # (a job held for years and left is still who they were: "taught the infants in
        # Aberystwyth for 38 years before I retired")
        return job(c)
    if (lemma in HOME_IN and c.tense == "future") or (lemma in HOME_TO and (
            c.tense == "future" or head.tag_ == "VBG")):
        # "I'm moving to Lyon in September", "I'll be living in Galway from March": a home
        # ahead is a plan, not where they live ("I'm living in Leeds" is)
        return ongoing(c, at)
    if lemma in HOME_IN and not (head.tag_ == "VBD" and lemma != "settle") and not (
            lemma == "stay" and head.tag_ == "VBG") and (
            place := prep_object(head, "in")) is not None:
        # (not "I lived in Berlin for ten years", "we stayed in Rome": a stay in the simple
        # past is over. "I've lived in Leeds for 12 years" still holds, and "settled" says
        # the move, not the stay; nor "staying in a yurt for the weekend": "I stay in
        # Rongai" says where they live, the progressive a stay for now)
        with_ = [t.text for t in (c.subject.conjuncts if c.subject is not None else ())
                 if t.pos_ == "PROPN"]  # "me and Marta live in Easton"
        also = f" with {' and '.join(with_)}" if with_ else ""
        return [proposal(MemoryType.profile, f"Lives in {phrase(place)}{also}", slot="home",
                         salience=0.8)]
    if lemma in HOME_TO and (place := destination(head)) is not None and not any(
            t.dep_ == "dobj" and t.lemma_.lower() not in ("house", "home")
            for t in head.children):
        # (what they moved is something else: "we've moved the dog to raw feeding")
        where = phrase(place) if place.dep_ == "pobj" else _bare(place)
        return [proposal(MemoryType.profile, f"Lives in {where}", slot="home",
                         salience=0.8)]
    if (lemma == "hire" or (lemma in ("get", "land", "start", "accept")
                            and (obj := child(head, "dobj")) is not None
                            and obj.lemma_ in ("job", "position", "role", "offer"))):
        return hired(c)
    if lemma in ("start", "begin") and not c.negated and c.tense != "future" and (
            work := next((t for t in head.children if t.dep_ == "xcomp"
                          and t.lemma_.lower() == "work"), None)) is not None and (
            found := job(replace(c, head=work, tense="present"))):
        # "I've started working at Tesco": the work begun is the work they do; the start,
        # dated, stays the event it is
        return found + [op for op in happened(c, at) if op.type is MemoryType.episodic]
    if lemma in ("start", "begin", "join") and not c.negated and c.tense != "future" \
            and (role := prep_object(head, "as")) is not None and role.pos_ == "NOUN" and (
                is_profession(role) or any(
                    o is not None and o.pos_ == "PROPN" for o in (
                        child(head, "dobj"),
                        *(prep_object(head, p) for p in ("at", "with", "for"))))):
        # "started at Tesco as a shelf stacker", "joined Arup as a graduate engineer": what
        # one started as at a named employer, or as a trade, is the work one does now (not
        # "started as a joke", "joined the choir as an alto"); the start, dated, stays the
        # event it is
        return hired(c) + [op for op in happened(c, at) if op.type is MemoryType.episodic]
    if lemma in ("have", "get", "adopt", "own") and (
            c.tense != "past" or head.lower_ == "got" or lemma == "adopt") and not (
            lemma == "get" and head.tag_ == "VBG") and (owned := having(c, at)):
        # ("we're getting a puppy" is had once got: what is under way, below)
        return owned
    if lemma in ("do", "try") and c.tense == "present" and any(
            t.lower_ in ("dry", "sober") for t in head.rights for t in t.subtree):
        # "doing dry january", "trying sober october": not drinking for now
        challenge = trim(predicate(head))
        return [proposal(MemoryType.profile, f"Is not drinking alcohol: doing {challenge}",
                         slot="habit:drink", salience=0.7)]
    if c.tense == "present" and head.tag_ == "VBG" and lemma not in STATIVE:
        return ongoing(c, at)
    if lemma == "turn" and (num := child(head, "dobj", "attr", "npadvmod")) is not None \
            and num.like_num:
        return [proposal(MemoryType.profile, f"Is {num.text} years old", slot="age",
                         salience=0.7)]
    if c.tense == "future" and lemma not in STATIVE:
        return plan(c, at)
    if c.tense == "past" and lemma not in STATIVE:
        return happened(c, at)
    if head.tag_ == "VBP" and lemma in HABITS:
        # "I cycle to work now, 8 miles each way": what the user does, as a habit
        return [proposal(MemoryType.profile, f"{_third(lemma)} {trim(predicate(head))}",
                         salience=0.6)]
    return []


def destination(head: Token) -> Token | None:
    """Where a move went: "to Porto", also through an adverb of the verb when it is a name
    ("moved back to Leeds", "to the uk"). A place chat writes in lower case may be parsed
    as the noun of a "to" clause ("i moved to cork"). One tagged a verb is left alone:
    most of those are what the move was for ("moved here to study", "moved to
    downsize"), and "we moved to porto" cannot be told from them by its tags."""
    place = prep_object(head, "to")
    for t in head.children:
        if place is not None:
            break
        if t.dep_ == "advmod" and not any(a.dep_ == "auxpass" or a.lower_ in ("get", "got")
                                          for a in head.children):
            # (not a particle: "moved over to the Mater" is as often a job as a home; nor
            # one moved by others: "got moved back to the warehouse"; and a name: one
            # moves back to nights, to part time, to windows, to square one)
            back = prep_object(t, "to")
            if back is not None and (back.pos_ == "PROPN" or back.text[:1].isupper()):
                place = back
        elif t.dep_ == "xcomp" and t.tag_ in ("NN", "NNP") and any(
                a.dep_ == "aux" and a.lower_ == "to" for a in t.children) and all(
                a.dep_ in ("aux", "compound") or _a_date(a) for a in t.children):
            place = t
    return place


def _a_date(prep: Token) -> bool:
    """Whether ``prep`` says when: "in january", "in 2019", "last year"."""
    when = child(prep, "pobj") if prep.dep_ == "prep" else prep
    return when is not None and (calendar_word(when.text) or when.like_num
                                 or when.lower_ in ("year", "month", "week"))


def _bare(place: Token) -> str:
    """A place the tagger took for a verb, with the words compounded to it."""
    return " ".join([*(t.text for t in place.lefts if t.dep_ == "compound"), place.text])


def _former(op: Op) -> Op:
    """A job said in the past tense as the work it was."""
    if op.slot != "job" or not op.content.startswith("Works "):
        return op
    return op.model_copy(update={"content": f"Worked {op.content.removeprefix('Works ')}"})


def _third(verb: str) -> str:
    """The third person singular: "cycle" -> "Cycles", "go" -> "Goes"."""
    if verb.endswith(("s", "sh", "ch", "x", "o")):
        return f"{verb.capitalize()}es"
    if verb.endswith("y") and verb[-2:-1] not in "aeiou":
        return f"{verb[:-1].capitalize()}ies"
    return f"{verb.capitalize()}s"


def preference(c: Clause) -> list[Op]:
    """"I love spicy Sichuan food", "honestly I can't stand cilantro", "I hate when people
    are late". What is liked is everything after the verb inside its clause, since the small
    model attaches unknown nouns oddly ("cilantro" as an adverb)."""
    head, lemma = c.head, c.lemma
    thing = next((t for t in head.rights if t.dep_ not in ("punct", "neg", "prt")), None)
    before = [t for t in c.sentence if t.i < head.i and t.pos_ == "NOUN"]
    if thing is not None and thing.lower_ in ("em", "them") and before \
            and c.subject is None:
        # "mushrooms tho, love em": the thing said first, then the verb
        return [proposal(MemoryType.preference, f"Likes {before[0].text}", salience=0.55)]
    if thing is None or thing.pos_ == "PRON" or any(
            t.lemma_.lower() in _REACTIONS for t in thing.subtree):
        return []
    if thing.dep_ == "det" and thing.lower_ in ("that", "this") and len(list(head.rights)) < 3:
        return []  # "I love that idea": a reaction to the conversation
    text = trim(predicate(head))
    if not text or any(w in ("you", "your", "yours") for w in text.lower().split()):
        return []  # "I love your answers": about the assistant, no preference
    dislikes = lemma in DISLIKE or c.negated or lemma == "stand"
    return [proposal(MemoryType.preference, f"{'Dislikes' if dislikes else 'Likes'} {text}",
                     salience=0.6 if dislikes else 0.55)]


