"""Charts drawn by the server as SVG: a memory's decay over time, a ranked item's score
components as bars, a layer's tokens against its budget.

Only numbers the server computed and labels passed through ``escape`` go into the markup;
styling is by presentation attributes and classes (the page's CSP allows no inline style).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta

from markupsafe import Markup, escape

from engrammar.models import Memory
from engrammar.recall._decay import DECAYING, half_life, last_reference, weight
from engrammar.settings import DecaySettings

_W, _H = 420, 150  # the decay chart's box
_PAD_L, _PAD_B, _PAD_T, _PAD_R = 34, 22, 10, 10


def decay_curve(memory: Memory, now: datetime, settings: DecaySettings) -> Markup:
    """R = 0.5 ** (t / half_life) from the memory's last reference, over three half-lives
    or until a half-life past now, whichever is longer; ``now`` marked, and for the types
    lifecycle moves, the line at R = 0.5 where the memory goes stale."""
    origin = last_reference(memory)
    hl = half_life(settings, memory.type)
    elapsed = max(0.0, (now - origin).total_seconds() / 86400)
    span = max(3 * hl, elapsed + hl)
    plot_w, plot_h = _W - _PAD_L - _PAD_R, _H - _PAD_T - _PAD_B

    def x(days: float) -> float:
        return _PAD_L + plot_w * days / span

    def y(r: float) -> float:
        return _PAD_T + plot_h * (1 - r)

    points = " ".join(f"{x(span * i / 80):.1f},{y(weight(span * i / 80, hl)):.1f}"
                      for i in range(81))
    r_now = weight(elapsed, hl)
    parts = [
        f'<svg class="chart decay" viewBox="0 0 {_W} {_H}" width="{_W}" height="{_H}"'
        ' role="img" aria-label="decay curve">',
        f"<title>R = 0.5^(t / {hl:g} days) since {escape(origin.date().isoformat())}</title>",
        f'<line class="axis" x1="{_PAD_L}" y1="{y(0):.1f}" x2="{_W - _PAD_R}" y2="{y(0):.1f}"/>',
        f'<line class="axis" x1="{_PAD_L}" y1="{y(1):.1f}" x2="{_PAD_L}" y2="{y(0):.1f}"/>',
        f'<text class="label" x="2" y="{y(1) + 4:.1f}">1.0</text>',
        f'<text class="label" x="2" y="{y(0.5) + 4:.1f}">0.5</text>',
        f'<text class="label" x="2" y="{y(0) + 4:.1f}">0</text>',
    ]
    if memory.type in DECAYING and not memory.pinned:
        parts.append(f'<line class="threshold" x1="{_PAD_L}" y1="{y(0.5):.1f}"'
                     f' x2="{_W - _PAD_R}" y2="{y(0.5):.1f}"/>')
        parts.append(f'<text class="label" x="{x(hl) + 3:.1f}" y="{y(0.5) - 4:.1f}">'
                     "stale here</text>")
    for days in _ticks(span):
        parts.append(f'<text class="label" x="{min(x(days) - 8, _W - 30):.1f}" y="{_H - 5}">'
                     f"{days:g}d</text>")
    parts.append(f'<polyline class="curve" points="{points}"/>')
    parts.append(f'<line class="now" x1="{x(elapsed):.1f}" y1="{y(1):.1f}"'
                 f' x2="{x(elapsed):.1f}" y2="{y(0):.1f}"/>')
    parts.append(f'<circle class="dot" cx="{x(elapsed):.1f}" cy="{y(r_now):.1f}" r="4"/>')
    parts.append(f'<text class="label now-label" x="{min(x(elapsed) + 5, _W - 90):.1f}"'
                 f' y="{_PAD_T + 12}">now R={r_now:.2f}</text>')
    parts.append("</svg>")
    return Markup("".join(parts))


def _ticks(span: float) -> list[float]:
    step = next(s for s in (1, 2, 5, 7, 10, 14, 30, 60, 90, 180, 365, 730, 1825, 3650)
                if span / s <= 6) if span <= 3650 * 6 else span / 5
    return [step * i for i in range(1, int(span // step) + 1)]


def stale_on(memory: Memory, settings: DecaySettings) -> datetime | None:
    """When lifecycle moves the memory for want of reference, if its type decays."""
    if memory.type not in DECAYING or memory.pinned:
        return None
    return last_reference(memory) + timedelta(days=half_life(settings, memory.type))


def bars(components: Mapping[str, float]) -> Markup:
    """One bar per score component, on one scale from 0 to the largest (at least 1)."""
    if not components:
        return Markup("")
    top = max(1.0, *(abs(v) for v in components.values()))
    row, label_w, bar_w = 14, 78, 150
    height = row * len(components)
    parts = [f'<svg class="chart bars" viewBox="0 0 {label_w + bar_w + 48} {height}"'
             f' width="{label_w + bar_w + 48}" height="{height}" role="img"'
             ' aria-label="score components">']
    for i, (name, value) in enumerate(components.items()):
        top_y = i * row
        width = bar_w * min(1.0, abs(value) / top)
        parts.append(f'<text class="label" x="0" y="{top_y + 11}">{escape(name)}</text>')
        parts.append(f'<rect class="track" x="{label_w}" y="{top_y + 3}" width="{bar_w}"'
                     ' height="9"/>')
        parts.append(f'<rect class="bar{" negative" if value < 0 else ""}" x="{label_w}"'
                     f' y="{top_y + 3}" width="{width:.1f}" height="9"/>')
        parts.append(f'<text class="label" x="{label_w + bar_w + 4}" y="{top_y + 11}">'
                     f"{value:.3f}</text>")
    parts.append("</svg>")
    return Markup("".join(parts))


def gauge(tokens: int, budget: int) -> Markup:
    """Tokens used against the budget: a bar, red past it."""
    width = 260
    used = width * min(1.0, tokens / budget) if budget > 0 else 0.0
    over = " over" if budget and tokens > budget else ""
    return Markup(
        f'<svg class="chart gauge" viewBox="0 0 {width} 12" width="{width}" height="12"'
        f' role="img" aria-label="{tokens} of {budget} tokens">'
        f'<rect class="track" x="0" y="1" width="{width}" height="10"/>'
        f'<rect class="bar{over}" x="0" y="1" width="{used:.1f}" height="10"/></svg>')
