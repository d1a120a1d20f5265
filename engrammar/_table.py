"""A plain text table, for the command line and the eval report."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def table(rows: Sequence[Sequence[Any]], headers: Sequence[str],
          widths: dict[int, int] | None = None) -> str:
    """A plain text table; long cells are cut to the width given for their column."""
    cut = widths or {}
    cells = [[_cell(v, cut.get(i)) for i, v in enumerate(r)] for r in rows]
    sizes = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    line = "  ".join(h.ljust(s) for h, s in zip(headers, sizes, strict=True)).rstrip()
    body = ["  ".join(c.ljust(s) for c, s in zip(r, sizes, strict=True)).rstrip() for r in cells]
    return "\n".join([line, "  ".join("-" * s for s in sizes), *body])


def _cell(value: Any, width: int | None) -> str:
    text = "" if value is None else str(value)
    if isinstance(value, float):
        text = f"{value:.2f}"
    if width and len(text) > width:
        text = text[: width - 1] + "…"
    return text
