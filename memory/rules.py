"""The offline rule extractor: deterministic patterns for common first-person statements.

A fallback that keeps the pipeline running end to end without a model. It proposes ops like
the LLM extractor does and leaves every judgement (duplicate, update, which open loop a
resolution closes) to the write gate.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from memory.models import MemoryType, Message, Op, OpKind, Role, Surface

_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_PRONOUNS = {"my": "their", "me": "them", "i": "they", "i'm": "they're", "myself": "themself",
             "mine": "theirs", "i've": "they've", "i'd": "they'd", "am": "are"}
_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_RELATIVES = ("wife|husband|partner|son|daughter|sister|brother|mom|mother|dad|father|"
              "girlfriend|boyfriend|grandma|grandmother|grandpa|grandfather|best friend")
_PAST_VERBS = ("did|called|finished|booked|sent|paid|went|submitted|bought|talked|spoke|"
               "visited|got|made|wrote|fixed|completed|handed|returned|cancelled|canceled|"
               "phoned|rang|scheduled|signed|passed|filed|cleaned|took|met|emailed|texted")
# Names and places: capitalised words, matched case-sensitively inside case-blind rules.
# "I'm a nurse": a closed list, since "I'm a bit tired" has the same shape.
_PROFESSIONS = ("(?:software |web |data |civil |mechanical )?(?:engineer|developer|"
                "programmer|designer|architect|scientist)|nurse|doctor|physician|surgeon|"
                "dentist|pharmacist|teacher|professor|lecturer|student|researcher|lawyer|"
                "accountant|translator|journalist|writer|editor|photographer|musician|artist|"
                "chef|cook|baker|barista|waiter|waitress|electrician|plumber|carpenter|"
                "mechanic|pilot|firefighter|police officer|paramedic|therapist|"
                "psychologist|social worker|consultant|manager|entrepreneur|farmer|"
                "veterinarian|vet|librarian|cashier|driver|retiree|stay-at-home parent")
_VALUE = r"((?-i:[A-Z][\w'-]*(?:\s+(?!I\b)[A-Z][\w'-]*)*))"
# "My name is Dana and I live in Berlin": two statements, read one by one. So is a comma
# before a new subject: "I love coffee, it keeps me going".
_CLAUSE = re.compile(r",?\s+(?:and|but|so|also)\s+(?=(?:i|i'm|i've|my)\b)"
                     r"|,\s+(?=(?:i|i'm|i've|it|it's|she|she's|he|he's|they|they're)\s)",
                     re.IGNORECASE)
# "I love that idea", "I like it, thanks": a reaction to the conversation, no preference.
_DEICTIC = frozenset({"it", "that", "this", "these", "those", "them"})
_ABOUT_YOU = frozenset({"you", "your", "yours"})
_INTENSIFIERS = frozenset({"so", "much", "a", "lot", "too", "very", "all", "though", "thanks",
                           "already", "now", "anyway", "really"})
# "I don't like coffee anymore": the time word is not part of what is (dis)liked.
_NO_LONGER = re.compile(r"\s+(?:any ?more|any longer|these days|nowadays)$", re.IGNORECASE)
# Words that make no plan on their own: "I have to go now", "I need to think about it".
_PLAN_FILLER = frozenset({"it", "that", "this", "now", "later", "then", "more", "about",
                          "something", "anything", "there", "here", "a", "bit", "so", "too",
                          "again", "though", "back", "up", "out", "off", "right", "soon"})


def third_person(text: str) -> str:
    words = text.split()
    out = [_PRONOUNS.get(w.lower(), w) for w in words]
    return " ".join(out).strip(" .,!?;:")


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def resolve_due(text: str, at: datetime) -> datetime | None:
    """A due date from relative words, resolved from the message's own timestamp."""
    t = text.lower()
    day = at.replace(hour=12, minute=0, second=0, microsecond=0)
    if "tonight" in t or "today" in t or "this evening" in t:
        return day
    if "day after tomorrow" in t:
        return day + timedelta(days=2)
    if "tomorrow" in t:
        return day + timedelta(days=1)
    m = re.search(r"\bin (\d+|a|one|two|three) (day|week)s?\b", t)
    if m:
        n = {"a": 1, "one": 1, "two": 2, "three": 3}.get(m.group(1)) or int(m.group(1))
        return day + timedelta(days=n * (7 if m.group(2) == "week" else 1))
    if "next week" in t:
        return day + timedelta(days=7)
    if "this weekend" in t or "at the weekend" in t:
        return day + timedelta(days=(5 - day.weekday()) % 7 or 7)
    m = re.search(r"\b(?:on |this |next )?(" + "|".join(_WEEKDAYS) + r")\b", t)
    if m:
        ahead = (_WEEKDAYS.index(m.group(1)) - day.weekday()) % 7 or 7
        return day + timedelta(days=ahead)
    m = re.search(r"\b(\d{4}-\d{2}-\d{2})\b", t)
    if m:
        return datetime.fromisoformat(m.group(1)).replace(hour=12, tzinfo=at.tzinfo)
    return None


@dataclass(frozen=True)
class Rule:
    name: str
    pattern: re.Pattern[str]
    build: Callable[[re.Match[str], Message], Op | None]


def _op(kind: MemoryType, content: str, msg: Message, *, slot: str | None = None,
        salience: float = 0.6, confidence: float = 0.85, surface: Surface | None = None,
        pinned: bool = False, due: datetime | None = None) -> Op:
    return Op(op=OpKind.add, type=kind, content=content, slot=slot, salience=salience,
              confidence=confidence, surface=surface, pinned=pinned, due=due,
              evidence=[msg.id])


def _rx(p: str) -> re.Pattern[str]:
    return re.compile(p, re.IGNORECASE)


def _value(m: re.Match[str], group: int = 1) -> str:
    return m.group(group).strip(" .,!?")


RULES: list[Rule] = [
    Rule("forget", _rx(r"^(?:please |could you |can you )?forget (?:about )?(.+)"),
         lambda m, msg: Op(op=OpKind.forget, content=third_person(_value(m)),
                           reason="user asked to forget", evidence=[msg.id])),
    Rule("suppress", _rx(r"\b(?:don't|do not|please don't|stop) (?:ever )?(?:bring(?:ing)? up|"
                         r"remind(?:ing)? me (?:of|about)) (.+)"),
         lambda m, msg: _op(MemoryType.protocol,
                            f"Does not want {third_person(_value(m))} brought up", msg,
                            surface=Surface.never, salience=0.9, confidence=0.95)),
    Rule("boundary", _rx(r"\b(?:never|don't ever|do not ever|please never) (?:mention|talk about|"
                         r"ask (?:me )?about|discuss) (.+)"),
         lambda m, msg: _op(MemoryType.protocol,
                            f"Never mention {third_person(_value(m))}", msg,
                            surface=Surface.avoid, salience=0.95, confidence=0.95)),
    Rule("remember", _rx(r"\b(?:always remember|please remember|remember) that (.+)"),
         lambda m, msg: _op(MemoryType.profile, _cap(third_person(_value(m))), msg,
                            pinned=True, salience=0.9, confidence=0.9)),
    Rule("correction", _rx(r"^actually,? (.+)"), lambda m, msg: None),  # re-read below
    Rule("name", _rx(r"\b(?:my name is|my name's|i'm called|i am called) " + _VALUE),
         lambda m, msg: _op(MemoryType.profile, f"Name is {_value(m)}", msg, slot="name",
                            salience=0.9)),
    Rule("nickname", _rx(r"\byou can call me " + _VALUE),
         lambda m, msg: _op(MemoryType.shared_lore, f"Likes to be called {_value(m)}", msg,
                            slot="nickname", salience=0.7)),
    Rule("job", _rx(r"\bi (?:now )?work (as an?|as|in|at) ([\w' -]+?)(?: now)?(?:,|$| not\b)"),
         lambda m, msg: _op(MemoryType.profile,
                            f"Works {m.group(1).lower()} {_value(m, 2)}", msg, slot="job",
                            salience=0.8)),
    Rule("profession", _rx(r"\bi(?:'m| am) (?:now )?(an? (?:" + _PROFESSIONS + r"))\b"),
         lambda m, msg: _op(MemoryType.profile, f"Works as {m.group(1).lower()}", msg,
                            slot="job", salience=0.8)),
    Rule("home", _rx(r"\bi (?:live|am living|'m living|now live) in " + _VALUE),
         lambda m, msg: _op(MemoryType.profile, f"Lives in {_value(m)}", msg, slot="home",
                            salience=0.8)),
    Rule("based", _rx(r"\bi(?:'m| am) (?:now )?based in " + _VALUE),
         lambda m, msg: _op(MemoryType.profile, f"Is based in {_value(m)}", msg, slot="home",
                            salience=0.8)),
    Rule("moved", _rx(r"\bi(?: just| recently|'ve)? moved to " + _VALUE),
         lambda m, msg: _op(MemoryType.profile, f"Lives in {_value(m)}", msg, slot="home",
                            salience=0.8)),
    Rule("origin", _rx(r"\bi(?:'m| am) (?:originally )?from " + _VALUE),
         lambda m, msg: _op(MemoryType.profile, f"Is from {_value(m)}", msg, slot="origin",
                            salience=0.7)),
    Rule("family", _rx(r"\bmy (" + _RELATIVES + r")(?:'s name)? is (?:called |named )?"
                       + _VALUE),
         lambda m, msg: _op(MemoryType.profile,
                            f"Has a {m.group(1).lower()} named {_value(m, 2)}", msg,
                            slot=f"family:{m.group(1).lower()}", salience=0.8)),
    Rule("pet", _rx(r"\bi have an? (dog|cat|puppy|kitten|parrot|rabbit|hamster) "
                    r"(?:named|called) " + _VALUE),
         lambda m, msg: _op(MemoryType.profile,
                            f"Has a {m.group(1).lower()} named {_value(m, 2)}", msg,
                            slot=f"pet:{_value(m, 2).lower()}", salience=0.7)),
    Rule("favorite", _rx(r"\bmy favou?rite ([\w ]+?) is (.+)"),
         lambda m, msg: _op(MemoryType.preference,
                            f"Favorite {m.group(1).lower()} is {third_person(_value(m, 2))}",
                            msg, slot=f"favorite:{m.group(1).lower()}", salience=0.6)),
    Rule("dislike", _rx(r"\bi (?:really |absolutely )?(?:hate|dislike|can't stand|cannot stand|"
                        r"don't like|do not like) (.+)"),
         lambda m, msg: _preference("Dislikes", _value(m), msg, salience=0.6)),
    Rule("like", _rx(r"\bi (?:really |absolutely )?(?:love|like|enjoy|adore) (?!to think)(.+)"),
         lambda m, msg: _preference("Likes", _value(m), msg, salience=0.55)),
    Rule("style", _rx(r"\b(?:please )?(?:keep|make) (?:your )?(?:answers|replies|responses) "
                      r"(short|brief|concise|detailed|formal|casual)"),
         lambda m, msg: _op(MemoryType.protocol,
                            f"Prefers {m.group(1).lower()} answers", msg, slot="style",
                            salience=0.7)),
    Rule("plan", _rx(r"\bi(?:'m| am| will|'ll| have| need| must| promised| plan| want)"
                     r"(?: going| planning| to| gonna| about)* (to )?(.+)"),
         lambda m, msg: _plan(m, msg)),
    Rule("done", _rx(r"\bi (?:finally |just |already |have |'ve )*(" + _PAST_VERBS + r")\b(.*)"),
         lambda m, msg: Op(op=OpKind.close_loop,
                           content=third_person(f"{m.group(1)}{m.group(2)}".strip(" .,!?")),
                           confidence=0.8, evidence=[msg.id])),
    Rule("event", _rx(r"^(?:yesterday|last (?:night|week|weekend|month)|this (?:morning|"
                      r"weekend)|on (?:" + "|".join(_WEEKDAYS) + r")),? i (.+)"),
         lambda m, msg: _op(MemoryType.episodic,
                            f"{_cap(third_person(_value(m)))} ({m.group(0).split()[0].lower()}"
                            f" as of {msg.at.date().isoformat()})", msg, salience=0.5)),
    Rule("mood", _rx(r"\bi(?:'m| am| feel)(?: so| really| very| a bit)? (tired|sad|stressed|"
                     r"exhausted|angry|bored|sick|grumpy|down|anxious|upset)\b(.*)"),
         lambda m, msg: _op(MemoryType.ephemeral, f"Feels {m.group(1).lower()}{m.group(2)}"
                            .strip(" .,!?"), msg, salience=0.3, confidence=0.8)),
]


def _reaction(thing: str) -> bool:
    """Whether the object points back at the conversation ("that idea", "it when you
    remember", "your answers") instead of naming something."""
    words = re.findall(r"[\w']+", thing.split(",")[0].lower())
    if not words or words[0] in _ABOUT_YOU:
        return bool(words)
    if words[0] not in _DEICTIC:
        return False
    rest = [w for w in words[1:] if w not in _INTENSIFIERS]
    return len(rest) <= 1 or rest[0] in ("when", "how", "that")


def _preference(verb: str, thing: str, msg: Message, *, salience: float) -> Op | None:
    thing = _NO_LONGER.sub("", thing).strip(" .,!?")
    if not thing or _reaction(thing):
        return None
    return _op(MemoryType.preference, f"{verb} {third_person(thing)}", msg, salience=salience)


_PLAN_LEADS = re.compile(r"^(?:going to|gonna|planning to|plan to|about to|have to|need to|"
                         r"must|will|'ll|promised to|want to)\s+", re.IGNORECASE)


def _plan(m: re.Match[str], msg: Message) -> Op | None:
    whole = m.group(0)
    lead = re.match(r"i(?:'m| am)?\s*(.*)", whole, re.IGNORECASE)
    rest = lead.group(1) if lead else whole
    if not re.match(r"(?:going to|gonna|planning to|about to|have to|need to|must|will|'ll|"
                    r"promised to|plan to|want to)\b", rest.strip(), re.IGNORECASE):
        return None
    verb = "Promised to" if "promised" in rest.lower() else "Plans to"
    action = third_person(_PLAN_LEADS.sub("", rest.strip()))
    words = [w for w in re.findall(r"[\w']+", action.split(",")[0].lower())
             if w not in _PLAN_FILLER]
    if len(action) < 4 or len(words) < 2:
        return None
    return _op(MemoryType.open_loop, f"{verb} {action}", msg, salience=0.7,
               due=resolve_due(whole, msg.at))


def _sentences(text: str) -> Iterator[str]:
    for sentence in _SENTENCE.split(text):
        for clause in _CLAUSE.split(sentence):
            clause = clause.strip().rstrip(".!?;: ")
            if clause:
                yield clause


# A longer sentence is no single fact; it is passed over (and stays in the log).
MAX_SENTENCE_CHARS = 1000


def extract_rules(messages: Sequence[Message]) -> list[Op]:
    """Ops proposed by the first matching rule of each sentence the user wrote."""
    ops: list[Op] = []
    for msg in messages:
        if msg.role is not Role.user:
            continue
        for sentence in _sentences(msg.content):
            if len(sentence) > MAX_SENTENCE_CHARS:
                continue
            op = _first_match(sentence, msg)
            if op is not None:
                ops.append(op)
            if op is not None and op.op is OpKind.close_loop:
                # "Yesterday I visited the gallery": a dated event, whether or not it also
                # resolves an open loop (the gate rejects the close_loop when none matches).
                event = _EVENT.pattern.search(sentence)
                built = _EVENT.build(event, msg) if event else None
                if built is not None:
                    ops.append(built)
    return ops


_EVENT = next(rule for rule in RULES if rule.name == "event")
_NOT_TO_MENTION = [rule.pattern for rule in RULES if rule.name in ("suppress", "boundary")]


def asks_not_to_mention(text: str) -> bool:
    """Whether ``text`` asks that something never be brought up or mentioned: a protocol
    the extractor stores, not conversation for a summary to repeat."""
    return any(pattern.search(text) for pattern in _NOT_TO_MENTION)


def _first_match(sentence: str, msg: Message) -> Op | None:
    for rule in RULES:
        m = rule.pattern.search(sentence)
        if m is None:
            continue
        if rule.name == "correction":
            # "Actually I work in design now, not engineering": the statement after
            # "actually" is read by the other rules; the gate turns it into an update.
            inner = _first_match(_value(m), msg)
            if inner is not None:
                return inner
            continue
        op = rule.build(m, msg)
        if op is not None:
            return op
    return None



_OBSERVED = re.compile(r"^\s*(?:[-*]\s*)?\**(decision|constraint|open)\**\s*:\s*(.+?)\s*$",
                       re.IGNORECASE | re.MULTILINE)


def observed_ops(assistant_text: str) -> list[Op]:
    """Ops for the lines an assistant marks "Decision:", "Constraint:" or "Open:".

    Decisions are facts not to contradict (factcheck), constraints are how to work with the
    user (protocol), open items are threads to pick up (open loops).
    """
    ops: list[Op] = []
    for m in _OBSERVED.finditer(assistant_text):
        kind, text = m.group(1).lower(), m.group(2).strip()
        if kind == "decision":
            ops.append(Op(op=OpKind.add, type=MemoryType.episodic, surface=Surface.factcheck,
                          content=f"Decided: {text}", salience=0.8, confidence=0.9))
        elif kind == "constraint":
            ops.append(Op(op=OpKind.add, type=MemoryType.protocol, surface=Surface.adapt,
                          content=f"Constraint: {text}", salience=0.8, confidence=0.9))
        else:
            ops.append(Op(op=OpKind.add, type=MemoryType.open_loop, content=f"Open: {text}",
                          salience=0.7, confidence=0.9))
    return ops
