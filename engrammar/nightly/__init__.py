"""The logic of every batch job, over explicit parts (database, extractor, writer, LLM):
``_extract`` (one transaction per chat, claimed with SKIP LOCKED) and ``_batch`` (the same
through the OpenAI Batch API), ``_index`` (embedding the log), ``_lifecycle`` (active,
stale, archived; change a rule in ``settings.LifecycleSettings``), ``_reflect``, ``_blocks``
(the window's block summaries, cut and activated one after another)."""
