"""What every stage runs on: the database and its embedded server (``_database``), the
sentence embedder (``_embedder``), the LLM client that logs every call (``_llm``), token
counting (``_tokens``), telemetry spans and metrics (``_telemetry``), token prices
(``_usage``) and the BLAS thread cap (``_blas``)."""
