"""What a process holds of the chats it recalled: values by chat, least recently used first
out, within a count of items (memories, messages) and a byte budget. The callers keep
their own locks; this keeps the books."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from typing import Generic, TypeVar

from engrammar.models import Scope

V = TypeVar("V")


class Held(Generic[V]):
    """Values by scope, each with its items and estimated bytes; putting one evicts the
    least recently used others until both budgets hold (the newest always stays)."""

    def __init__(self, max_items: int, max_bytes: int) -> None:
        self.max_items = max_items
        self.max_bytes = max_bytes
        self._values: OrderedDict[Scope, V] = OrderedDict()
        self._costs: dict[Scope, tuple[int, int]] = {}  # (items, bytes)
        self.items = 0
        self.nbytes = 0

    def __len__(self) -> int:
        return len(self._values)

    def __iter__(self) -> Iterator[Scope]:
        return iter(list(self._values))

    def get(self, scope: Scope) -> V | None:
        """The value held for ``scope``, now the most recently used; None if none."""
        value = self._values.get(scope)
        if value is not None:
            self._values.move_to_end(scope)
        return value

    def put(self, scope: Scope, value: V, items: int, nbytes: int) -> None:
        self.discard(scope)
        self._values[scope] = value
        self._costs[scope] = (items, nbytes)
        self.items += items
        self.nbytes += nbytes
        while ((self.items > self.max_items or self.nbytes > self.max_bytes)
               and len(self._values) > 1):
            self.discard(next(iter(self._values)))

    def discard(self, scope: Scope) -> None:
        if self._values.pop(scope, None) is not None:
            items, nbytes = self._costs.pop(scope)
            self.items -= items
            self.nbytes -= nbytes

    def forget(self, user_id: str, chat_id: str | None = None) -> int:
        """Drop a user's chats (or one chat); how many were held."""
        gone = [s for s in self._values
                if s.user_id == user_id and chat_id in (None, s.chat_id)]
        for scope in gone:
            self.discard(scope)
        return len(gone)
