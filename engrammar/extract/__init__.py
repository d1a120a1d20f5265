"""Reading messages into proposed ops. ``_extractor``: the extractor protocol and the LLM
extractor; ``_prompts``: every prompt (extraction, summaries, reflection), each a typed
function that takes ``now``, beside its response model; ``_summarizer``: the extractive and
LLM summarizers. ``parser/``: the offline extractor (a dependency parse, no model calls)."""
