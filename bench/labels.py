"""The offline extractor on labelled messages: of the messages a person labelled worth
keeping (``keep`` 1), how many it stores something of, and how many of those carry at
least half of the labelled fact's content words (``fact``, when the file gives one) and how
many are stored first as the labelled type (``type``, when it gives one); of the
messages labelled not worth keeping, how many it stores something of all the same.

Each message is read alone (with the assistant's message before it, ``asked``, when the
file gives one), at one fixed time, with no memories; what counts as stored is an op with
content the gate would let through on confidence (at least ``min_confidence``): with no
memories, a resolution or a change is kept as the statement it makes. No database: this
measures the extractor's proposals, not the gate's decisions against a chat.

``python -m bench labels [FILE ...]`` (default: the blind labelled files in
``bench/data``); figures go to ``bench/out/labels.json``.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engrammar.extract.parser._extractor import ParserExtractor
from engrammar.models import Message, OpKind, Role, Scope
from engrammar.settings import GateSettings
from engrammar.write._statement import content_words

DATA = Path(__file__).parent / "data"
OUT = Path(__file__).parent / "out" / "labels.json"
DEFAULT = [DATA / "chat_labels.jsonl", DATA / "question_labels.jsonl",
           DATA / "short_fact_labels.jsonl"]
AT = datetime(2026, 11, 2, 12, tzinfo=UTC)
SCOPE = Scope(user_id="u", chat_id="c")


# With no memories to act on, each of these is kept as the statement it makes.
_STATING = frozenset({OpKind.add, OpKind.close_loop, OpKind.update, OpKind.contradict})


def as_chat(row: dict[str, Any], at: datetime) -> list[Message]:
    """A labelled row as chat: the assistant's question (``asked``), if any, then the
    user's message (``text``), both at ``at``."""
    messages = []
    if row.get("asked"):
        messages.append(Message(id=1, user_id="u", chat_id="c", role=Role.assistant,
                                content=row["asked"], at=at))
    messages.append(Message(id=2, user_id="u", chat_id="c", role=Role.user,
                            content=row["text"], at=at))
    return messages


def measure(path: Path, extractor: ParserExtractor, floor: float) -> dict[str, Any]:
    counts: Counter[str] = Counter()
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        ops = [op for op in extractor.extract(SCOPE, as_chat(row, AT), [], AT).ops
               if op.op in _STATING and op.content and op.confidence >= floor]
        label = "keep" if row["keep"] else "drop"
        counts[label] += 1
        counts[f"{label} stored"] += bool(ops)
        if row["keep"] and ops and row.get("type"):
            # the type of the first thing stored, against the labelled one
            counts["keep typed"] += 1
            counts["keep typed right"] += ops[0].type is not None and (
                ops[0].type.value == row["type"])
        fact = row.get("fact")
        if row["keep"] and ops and fact:
            said = content_words(" ".join(op.content for op in ops))
            wanted = content_words(fact)
            counts["keep with fact"] += 1
            counts["keep fact half-said"] += 2 * len(wanted & said) >= len(wanted)
    return dict(counts)


def main(argv: list[str] | None = None) -> None:
    paths = [Path(a) for a in argv] if argv else DEFAULT
    extractor = ParserExtractor()
    floor = GateSettings().min_confidence
    results = {}
    for path in paths:
        c = measure(path, extractor, floor)
        results[path.name] = c
        keep, drop = c.get("keep", 0), c.get("drop", 0)
        print(f"  {path.name}: worth keeping {keep}, something stored for "
              f"{c.get('keep stored', 0)} ({c.get('keep stored', 0) / max(keep, 1):.0%}); "
              f"not worth keeping {drop}, something stored for {c.get('drop stored', 0)} "
              f"({c.get('drop stored', 0) / max(drop, 1):.0%})")
        if c.get("keep typed"):
            print(f"    of the kept with a labelled type, stored first as that type: "
                  f"{c.get('keep typed right', 0)} of {c['keep typed']}")
        if c.get("keep with fact"):
            print(f"    of the kept with a labelled fact, half its words said: "
                  f"{c.get('keep fact half-said', 0)} of {c['keep with fact']}")
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {OUT}")
