"""The offline extractor: ops from a dependency parse of what the user said. ``_nlp`` loads
spaCy (hash-checked); ``_clauses`` cuts a sentence into clauses, ``_owners`` decides whose
fact each is and ``_mood`` whether it is a fact at all (``_phrases`` words it);
``_candidates`` makes every stated clause about the speaker or their people a candidate, in
their own words; ``_turns`` makes what a message states that no reading kept (a short answer
with its question, a list, chat without a subject) one more candidate; ``_decisions`` holds
the learned models that keep candidates and turns and give their type (weights in ``data/``,
sha256-checked); ``_intent`` the learned decision whether a message is a request about the
memory or the assistant's manner, and which (``_requests`` reads what it is about);
``_extractor`` runs it all over a chat's messages; ``_readings`` turns a clause into ops by
its predicate, with the readings of ``_profile``, ``_events`` (plans, events, a plan moved
to another day), ``_cessation`` (a thing stopped, sold or retired from: a change of the
memory it ends), ``_requests``, ``_others`` and ``_fragments``; ``_asked`` parts a statement
from the question after it; ``_dates`` resolves relative and calendar dates.
"""
