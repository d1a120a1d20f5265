-- Strength R = exp(-t/S) is derived from the last reference, the reinforcement count and
-- the clock (memory.lifecycle.strength_of). Storing it meant rewriting most of the table
-- every night: ~29 s and 1.4 GB of WAL per million memories (bench/lifecycle.py) for a
-- number any reader can compute.
ALTER TABLE memories DROP COLUMN strength;
