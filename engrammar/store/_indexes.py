"""Rules that SQL and Python must agree on, defined once.

- The always-candidate rule: memories recall considers whatever the query (pinned, identity,
  open threads, how-to-behave rules, and what is under an avoid or never policy, whose
  topics are kept out of every layer). The scan's SQL is built from it, and
  ``candidates.Columns.always`` evaluates the same sets in numpy.
- The predicates of recall's partial covering indexes (sql/005, sql/008): the scan must
  repeat them word for word for PostgreSQL to use those indexes.
- The columns a change to which puts a memory in the chat's change log (sql/008's trigger):
  every column recall reads.

tests/test_indexes.py checks each against what the migrations created (``pg_indexes``,
``pg_trigger``), so a migration and the code cannot drift apart unnoticed.
"""

from __future__ import annotations

from engrammar.models import MemoryType, Surface

ALWAYS_TYPES: tuple[MemoryType, ...] = (MemoryType.profile, MemoryType.open_loop,
                                        MemoryType.protocol)
ALWAYS_SURFACES: tuple[Surface, ...] = (Surface.avoid, Surface.never)


def _quoted(values: tuple[MemoryType, ...] | tuple[Surface, ...]) -> str:
    return ", ".join(f"'{v.value}'" for v in values)


# The memory is a candidate whatever the query (memories_recall_always's predicate).
ALWAYS = (f"(pinned OR type IN ({_quoted(ALWAYS_TYPES)})"
          f" OR surface IN ({_quoted(ALWAYS_SURFACES)}))")
# Its vector fits the covering index memories_recall_vectors (else _wide holds it).
VECTOR_FITS = ("octet_length(user_id) + octet_length(chat_id) + 4 * vector_dims(embedding)"
               " <= 2400")
# Its tsvector fits the covering index memories_recall_text (else _long holds it).
TEXT_FITS = ("octet_length(user_id) + octet_length(chat_id) + 5 * octet_length(content)"
             " <= 2400")

# Index name -> its predicate, as the scan writes it.
PARTIAL_INDEXES: dict[str, str] = {
    "memories_recall_always": f"status = 'active' AND {ALWAYS}",
    "memories_recall_vectors": f"status = 'active' AND {VECTOR_FITS}",
    "memories_recall_vectors_wide": f"status = 'active' AND NOT ({VECTOR_FITS})",
    "memories_recall_text": f"status = 'active' AND {TEXT_FITS}",
    "memories_recall_text_long": f"status = 'active' AND NOT ({TEXT_FITS})",
}

# What ranking and rendering read of a candidate (see candidates.Recalled): nothing more
# crosses the wire on the hot path, and a change to any of these (or to status or the
# vector) is a change recall must see.
RECALL_COLUMNS = ("id", "type", "surface", "content", "pinned", "salience", "confidence",
                  "due_at", "created_at", "updated_at", "last_reinforced_at",
                  "source_message_ids", "app_metadata")
CHANGE_COLUMNS = ("status", "embedding", *RECALL_COLUMNS[1:])

# BM25's term-frequency saturation and length normalisation (recall._candidates.bm25; the
# scan orders its text candidates by the same formula): the usual defaults (Robertson and
# Zaragoza; Lucene's), not fitted to any data set.
K1 = 1.2
B = 0.75
