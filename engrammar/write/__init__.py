"""The write path. ``_gate``: the thresholds and per-type rules every proposed op must pass
(change a threshold in ``settings.GateSettings``); ``_target``: which memory an op is about,
for the gate; ``_pool``: the chat's active memories with their vectors, for dedup and
targets; ``_writer``: applies what the gate accepts in one transaction under the chat's
lock, with an event per change."""
