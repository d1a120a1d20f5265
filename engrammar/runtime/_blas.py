"""BLAS threads. The library's matrix products (recall's query against a chat's vectors,
the gate's ops against a chat's pool) are small and many, and run beside other requests:
BLAS's own threads only fight for the cores. Measured on 2 busy cores, recall's product at
20,000 memories took 7 ms p50 (15 ms p95) on OpenBLAS's default 2 threads against 1 ms on
one; the gate's, 7 ms against 1 ms. So each runs on one thread; the results are the same.

threadpoolctl finds the BLAS library once; limiting it costs ~10 us a call. The limit is
process-wide while it lasts, so concurrent calls only ever lower it, never change a result.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from threadpoolctl import ThreadpoolController

_CONTROLLER = ThreadpoolController()


@contextmanager
def one_thread() -> Iterator[None]:
    """Run the block's BLAS calls on one thread."""
    with _CONTROLLER.limit(limits=1, user_api="blas"):
        yield
