"""``AsyncClient``: the :class:`~client.Client` for asyncio apps, one thin layer.

There is no second implementation: every method runs the same method of a sync
:class:`Client` in a bounded thread pool (one thread per pooled database connection by
default, so a burst of requests queues in the pool rather than on the connections) and
awaits it. The caller's context variables go along into the thread, so a trace span open
around an ``await`` is the parent of the spans the call makes.

Cancel-safe: a call cannot be interrupted halfway, because the sync call runs in a thread
and each write is one transaction. A cancelled ``await`` (``task.cancel()``,
``asyncio.timeout``, a client that hung up) whose call has not started yet runs nothing;
one whose call has started waits for it to end (committed, or rolled back on its own
error) and then raises ``CancelledError``. So when the cancellation reaches the caller,
no chat is half-written and no thread still writes behind its back.

    async with await AsyncClient.open() as client:
        block = await client.recall("u1", "chat1", "any plans?", budget_tokens=400)
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Callable, Coroutine
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Concatenate, ParamSpec, TypeVar

from engrammar.client import Client
from engrammar.errors import Error

P = ParamSpec("P")
R = TypeVar("R")


def _awaitable(method: Callable[Concatenate[Client, P], R]
               ) -> Callable[Concatenate[AsyncClient, P], Coroutine[Any, Any, R]]:
    """``Client.method`` as an ``async`` method of AsyncClient, same signature and doc."""

    async def call(self: AsyncClient, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return await self.run(functools.partial(method, self.sync, *args, **kwargs))

    functools.update_wrapper(call, method)
    call.__qualname__ = f"AsyncClient.{method.__name__}"
    return call


class AsyncClient:
    """The public methods of :class:`Client`, awaitable; ``sync`` is the client underneath.

    ``workers`` bounds the threads that run calls (default: the database pool's size)."""

    def __init__(self, client: Client, *, workers: int | None = None) -> None:
        self.sync = client
        size = workers or client.settings.pool_max
        if size < 1:
            raise Error(f"an AsyncClient needs at least one worker, not {size}")
        self._executor = ThreadPoolExecutor(max_workers=size, thread_name_prefix="memory")
        self.workers = size

    @classmethod
    async def open(cls, *args: Any, workers: int | None = None, **kwargs: Any
                   ) -> AsyncClient:
        """:meth:`Client.open` (which may start the embedded server and load the embedder)
        off the event loop; the same arguments."""
        client = await asyncio.to_thread(Client.open, *args, **kwargs)
        return cls(client, workers=workers)

    async def run(self, call: Callable[[], R]) -> R:
        """Run ``call`` (which may use ``self.sync``) in the pool and await its result.

        The methods below are this over the sync client's; use it for anything else, a job
        included: ``await client.run(lambda: scheduler.run_nightly(client.sync))``."""
        context = contextvars.copy_context()
        future: Future[R] = self._executor.submit(context.run, call)
        waited = asyncio.wrap_future(future)
        try:
            return await asyncio.shield(waited)
        except asyncio.CancelledError:
            if future.cancel():
                raise  # it had not started: nothing ran
            # It runs: the thread cannot be stopped halfway, so let it end whole (its
            # transaction commits, or rolls back on its own error), then pass the
            # cancellation on. Further cancellations while waiting change nothing.
            while not waited.done():
                try:
                    await asyncio.shield(waited)
                except asyncio.CancelledError:
                    continue
                except BaseException:
                    break
            raise

    async def aclose(self) -> None:
        """Wait for the calls under way, then close the client (and its pool)."""
        await asyncio.to_thread(self._executor.shutdown, wait=True)
        self.sync.close()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # The methods of Client, each one line, typed (tests/test_aio.py checks none is missing).
    record = _awaitable(Client.record)
    post = _awaitable(Client.post)
    open_chat = _awaitable(Client.open_chat)
    chat_created_at = _awaitable(Client.chat_created_at)
    has_user = _awaitable(Client.has_user)
    chat_settings = _awaitable(Client.chat_settings)
    set_chat_settings = _awaitable(Client.set_chat_settings)
    diagnostics = _awaitable(Client.diagnostics)
    pin = _awaitable(Client.pin)
    log = _awaitable(Client.log)
    memories = _awaitable(Client.memories)
    get = _awaitable(Client.get)
    history = _awaitable(Client.history)
    apply = _awaitable(Client.apply)
    recall = _awaitable(Client.recall)
    compile = _awaitable(Client.compile)
    observe = _awaitable(Client.observe)
    count_memories = _awaitable(Client.count_memories)
    reembed = _awaitable(Client.reembed)
    erase_user = _awaitable(Client.erase_user)
    erase_chat = _awaitable(Client.erase_chat)
    export_user = _awaitable(Client.export_user)
    import_file = _awaitable(Client.import_file)


# A public method of Client not declared above (a new one) is awaitable all the same, though
# a type checker sees it only once it has its line there.
for _name, _method in list(vars(Client).items()):
    if (not _name.startswith("_") and _name != "close" and callable(_method)
            and not isinstance(_method, classmethod | staticmethod | property)
            and not hasattr(AsyncClient, _name)):
        setattr(AsyncClient, _name, _awaitable(_method))
