"""Local embedder: import and load time, throughput at batch 32, and process RSS."""

from __future__ import annotations

import json
import resource
import statistics
import time
from pathlib import Path

OUT = Path(__file__).parent / "out"


def main() -> None:
    started = time.perf_counter()
    from engrammar.runtime._embedder import LocalEmbedder

    embedder = LocalEmbedder()
    load_s = time.perf_counter() - started
    texts = [f"The user mentioned detail number {i} about their week, their plans and family."
             for i in range(32)]
    embedder.embed(texts)  # warm-up
    rates = []
    for _ in range(10):
        t = time.perf_counter()
        embedder.embed(texts)
        rates.append(len(texts) / (time.perf_counter() - t))
    single = []
    for text in texts[:20]:
        t = time.perf_counter()
        embedder.embed([text])
        single.append((time.perf_counter() - t) * 1000)
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result = {
        "load_s": round(load_s, 3),
        "batch32_sentences_per_s": round(statistics.median(rates), 1),
        "single_ms_p50": round(statistics.median(single), 2),
        "rss_mb": round(rss_mb, 1),
    }
    OUT.mkdir(exist_ok=True)
    (OUT / "embed.json").write_text(json.dumps(result, indent=2))
    for key, value in result.items():
        print(f"{key:26} {value}")
