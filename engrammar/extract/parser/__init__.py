"""The offline extractor: ops from a dependency parse of what the user said. ``_nlp`` loads
spaCy (hash-checked); ``_clauses`` decides whose fact a clause is and whether it is a fact
at all; ``_extractor`` turns clauses into ops (the type decision lives there and in
``_profile``, ``_events``, ``_requests``, ``_others``, ``_fragments``); ``_dates`` resolves
relative and calendar dates."""
