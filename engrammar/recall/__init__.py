"""The read path, before each turn. ``_candidates``: who may be recalled (pinned, open
loops, hybrid nearest); ``_ranking``: the score (relevance first, then priors) and the
surface policy; ``_decay``: the one decay model; ``_block``: the memory block, rendered
within its budget; ``_logsearch``: excerpts of the log for what memories miss;
``_snapshot``: each process's copy of a chat's memories; ``_window``: the short-term window
as a turn reads it (its block summaries are written by nightly._blocks); ``_assembler``: the
whole prompt under one budget (``compile``)."""
