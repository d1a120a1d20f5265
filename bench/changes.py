"""Changes said in other words, end to end: ``python -m bench changes [FILE ...]``.

``bench/data/change_pairs.jsonl``, ``change_pairs2.jsonl`` and ``change_pairs3.jsonl``
(each written and labelled by a session that read no code; the third is held out: no rule
was looked for in it) pair a stored memory ("User works as a barista at a cafe in
Cardiff Bay.") with a later message and say whether the message ends what the memory says
(``change`` 1: "finally jacked in the café job, starting at the bakery monday") or not (0:
the same job elaborated, someone else's, a change only planned). Here each pair is a chat
of its own, as a night would see it:

- night 1: the memory said by the user in the first person ("I work as a barista at a cafe
  in Cardiff Bay."), recorded and extracted, so it is stored the way the pipeline stores
  it (its type, its slot);
- night 2, a day later: the message, recorded and extracted against that chat's memories.

A pair counts when night 1 stored a lasting memory (a profile fact or a preference) for
it; the memory is *retired* when after night 2 it is no longer active (updated, contradicted
or archived). Reported: of the changes, how many retired their memory; of the rest, how
many retired it wrongly; both per file and per kind. The extractor is the one the client
opens with (the offline parser unless an LLM is configured). Figures go to
``bench/out/changes.json``.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.locomo import reset
from engrammar import Client, Settings
from engrammar.models import Status
from engrammar.write._gate import LASTING

DATA = Path(__file__).parent / "data"
FILES = [DATA / "change_pairs.jsonl", DATA / "change_pairs2.jsonl",
         DATA / "change_pairs3.jsonl"]
OUT = Path(__file__).parent / "out" / "changes.json"
DATABASE = "memory_changes"
USER = "changes"
NIGHT1 = datetime(2026, 11, 2, 12, tzinfo=UTC)
# A memory's verb and its owner words as the user says them of themself.
_VERBS = {"is": "am", "has": "have", "was": "was", "does": "do", "doesn't": "don't",
          "isn't": "am not", "hasn't": "haven't", "works": "work"}
_OBJECTS = {"their": "my", "them": "me", "themselves": "myself", "themself": "myself",
            "theirs": "mine", "Their": "My"}
# Words that open a memory and end in "s" but are no verb.
_NOUNS = frozenset({"parents", "kids", "twins", "favourites", "always"})


def first_person(memory: str) -> str:
    """A stored memory as the user would say it: "User drives a 2011 Honda Jazz." and
    "Drives a 2011 Honda Jazz." -> "I drive a 2011 Honda Jazz."; "User's book club meets
    on Mondays" -> "My book club meets on Mondays"; "their" -> "my"."""
    words = memory.split()
    if not words:
        return memory
    first, rest = words[0], words[1:]
    if first in ("User's", "user's"):
        head = ["My"]
    elif first in ("User", "user") and rest:
        head, rest = ["I", _verb(rest[0])], rest[1:]
    elif first.lower() in _VERBS or (first.endswith("s") and not first.endswith("ss")
                                     and first[0].isupper() and first.lower() not in _NOUNS):
        head = ["I", _verb(first)]
    else:
        head = ["My", first.lower()]  # "Favourite band is Arctic Monkeys."
    return " ".join([*head, *(_OBJECTS.get(w, w) for w in rest)])


def _verb(word: str) -> str:
    """A verb in the third person singular, as "I" says it: "drives" -> "drive",
    "watches" -> "watch", "studies" -> "study", "is" -> "am"."""
    lower = word.lower()
    if lower in _VERBS:
        return _VERBS[lower]
    if lower.endswith("ies"):
        return lower[:-3] + "y"
    if lower.endswith(("ches", "shes", "sses", "xes", "zes", "oes")):
        return lower[:-2]
    return lower[:-1] if lower.endswith("s") else lower


def main(argv: list[str] | None = None) -> None:
    from engrammar.scheduler import _extract as extract

    paths = [Path(a) for a in argv] if argv else FILES
    rows = [{**json.loads(line), "file": path.stem} for path in paths
            for line in path.read_text().splitlines() if line.strip()]
    started = time.perf_counter()
    with Client.open(Settings(), database=DATABASE) as client:
        reset(client)
        for n, row in enumerate(rows):
            client.record(USER, f"pair-{n}", "user", first_person(row["old"]), at=NIGHT1)
        extract.run(client, now=NIGHT1 + timedelta(hours=12))
        seeded: dict[int, set[int]] = {}
        for n in range(len(rows)):
            lasting = {m.id for m in client.memories(USER, f"pair-{n}") if m.type in LASTING
                       and m.status is Status.active}
            if lasting:
                seeded[n] = lasting
        for n in seeded:
            client.record(USER, f"pair-{n}", "user", rows[n]["new"],
                          at=NIGHT1 + timedelta(days=1))
        extract.run(client, now=NIGHT1 + timedelta(days=1, hours=12))
        counts: Counter[str] = Counter()
        kinds: dict[str, Counter[str]] = {}
        outcomes: list[dict[str, Any]] = []
        for n, ids in seeded.items():
            row = rows[n]
            after = {m.id: m.status for m in client.memories(USER, f"pair-{n}")}
            retired = any(after.get(i) is not Status.active for i in ids)
            side = "change" if row["change"] else "no change"
            counts[side] += 1
            counts[f"{side} retired"] += retired
            kind = kinds.setdefault(f"{side}: {row['kind']}", Counter())
            kind["pairs"] += 1
            kind["retired"] += retired
            counts[f"{row['file']} {side}"] += 1
            counts[f"{row['file']} {side} retired"] += retired
            outcomes.append({"pair": n, "group": row["group"], "kind": row["kind"],
                             "change": row["change"], "retired": retired})
    result: dict[str, Any] = {
        "pairs": len(rows), "seeded": len(seeded),
        "changes": counts["change"], "changes_retired": counts["change retired"],
        "no_changes": counts["no change"], "no_changes_retired": counts["no change retired"],
        "per_kind": {k: dict(v) for k, v in sorted(kinds.items())}, "outcomes": outcomes,
        "seconds": round(time.perf_counter() - started, 1)}
    print(f"  {len(rows)} pairs, {len(seeded)} with a lasting memory stored on night 1")
    print(f"  changes: {result['changes_retired']} of {result['changes']} retired their "
          f"memory; not changes: {result['no_changes_retired']} of {result['no_changes']} "
          f"retired it wrongly")
    result["per_file"] = {}
    for path in paths:
        f = path.stem
        result["per_file"][f] = {k: counts[f"{f} {k}"] for k in (
            "change", "change retired", "no change", "no change retired")}
        print(f"    {f}: changes {counts[f'{f} change retired']} of {counts[f'{f} change']}, "
              f"not changes {counts[f'{f} no change retired']} of {counts[f'{f} no change']}")
    for kind, c in result["per_kind"].items():
        print(f"    {kind}: {c.get('retired', 0)} of {c['pairs']}")
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {OUT}")
