"""Chart geometry for inline SVG: numbers in, pixel coordinates and tick labels out.

The SVG markup itself lives in templates/dashboard/charts.html.j2; nothing is fetched from a CDN.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timezone

PALETTE = ("#2563eb", "#dc2626", "#16a34a", "#d97706", "#7c3aed", "#0891b2", "#db2777", "#4b5563",
           "#65a30d", "#9333ea", "#ea580c", "#0d9488")
WIDTH, HEIGHT = 640, 180
LEFT, RIGHT, TOP, BOTTOM = 56, 28, 10, 24
MAX_DOTS = 40  # dots (with a tooltip each) on one line


def color(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


@dataclass
class Tick:
    pos: float
    label: str


@dataclass
class Line:
    name: str
    color: str
    points: str  # SVG polyline points
    dots: list[tuple[float, float, str]]  # x, y, tooltip


@dataclass
class Bar:
    x: float
    y: float
    w: float
    h: float
    color: str
    tip: str


@dataclass
class Mark:
    x: float
    y: float
    color: str
    tip: str


@dataclass
class Chart:
    """Everything a template needs to draw one chart."""

    title: str
    width: int = WIDTH
    height: int = HEIGHT
    lines: list[Line] = field(default_factory=list)
    bars: list[Bar] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)
    x_ticks: list[Tick] = field(default_factory=list)
    y_ticks: list[Tick] = field(default_factory=list)
    lanes: list[Tick] = field(default_factory=list)
    legend: list[tuple[str, str]] = field(default_factory=list)
    empty: bool = True

    @property
    def plot(self) -> tuple[int, int, int, int]:
        return LEFT, TOP, self.width - RIGHT, self.height - BOTTOM


def fmt_num(v: float) -> str:
    """A number on an axis or in a tooltip: three significant digits and a suffix (12.3k, 1.1G,
    4.5P); never an exponent glued to a suffix (1e+08G), never 1e+03k for 999,999."""
    if v == 0:
        return "0"
    if not math.isfinite(v):
        return str(v)
    a = abs(float(f"{v:.3g}"))  # rounded first: 999,999 is 1M, not 1000k
    for at, scale, suffix in ((1e15, 1e15, "P"), (1e12, 1e12, "T"), (1e9, 1e9, "G"), (1e6, 1e6, "M"), (1e4, 1e3, "k")):
        if a >= at:
            if a >= 1e18:  # past the largest suffix
                return f"{v:.2e}".replace("e+", "e")
            return _plain(v / scale) + suffix
    if a >= 1:
        return _plain(v, 4)
    if a < 1e-3:
        return f"{v:.2e}".replace("e-0", "e-")
    return _plain(v)


def _plain(v: float, digits: int = 3) -> str:
    """`v` with `digits` significant digits, without an exponent."""
    if v == 0:
        return "0"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(v))))
    text = f"{v:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def fmt_time(ms: float, span_ms: float) -> str:
    """A UTC time as precise as a range of `span_ms` needs."""
    t = datetime.fromtimestamp(ms / 1000, tz=timezone.utc)
    if span_ms >= 300 * 86_400_000:
        return t.strftime("%Y-%m-%d")
    if span_ms >= 2 * 86_400_000:
        return t.strftime("%m-%d %H:%M")
    if span_ms >= 60_000:
        return t.strftime("%H:%M")
    return t.strftime("%H:%M:%S")


def fmt_tick_time(ms: float, step_ms: float, span_ms: float) -> str:
    """A tick's label: no more than the tick step tells (whole days: the date alone)."""
    t = datetime.fromtimestamp(ms / 1000, tz=timezone.utc)
    if step_ms >= 86_400_000:
        return t.strftime("%Y-%m-%d" if span_ms >= 300 * 86_400_000 else "%m-%d")
    if span_ms >= 86_400_000:
        return t.strftime("%m-%d %H:%M")
    return t.strftime("%H:%M:%S" if step_ms < 60_000 else "%H:%M")


def _nice_ticks(lo: float, hi: float, n: int = 4) -> list[float]:
    if hi <= lo:
        return [lo]
    raw = (hi - lo) / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.ceil(lo / step) * step
    out = []
    v = start
    while v <= hi + step * 1e-9:
        out.append(round(v, 12))
        v += step
    return out


class _Scale:
    def __init__(self, lo: float, hi: float, a: float, b: float):
        if hi <= lo:
            lo, hi = lo - 1, hi + 1
        self.lo, self.hi, self.a, self.b = lo, hi, a, b

    def __call__(self, v: float) -> float:
        return round(self.a + (v - self.lo) / (self.hi - self.lo) * (self.b - self.a), 1)


_TIME_STEPS_MS = [1000 * s for s in (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800,
                                      21600, 43200, 86400, 172800, 604800, 1209600, 2592000, 7776000, 15552000,
                                      31536000)]
TICK_CHAR_PX = 6.5  # a tick label's character at 10 px, with room between labels
TICK_GAP_PX = 14


def _time_ticks(chart: Chart, xs: _Scale, lo: float, hi: float, count: int = 6) -> None:
    """Ticks on round times (every 15 s, 5 min, 1 h, 1 day, 30 days, ...): about `count`, and
    never more than fit the plot's width side by side (labels never overlap)."""
    span = hi - lo
    if span <= 0:
        chart.x_ticks.append(Tick(xs(lo), fmt_time(lo, 0)))
        return
    x0, _, x1, _ = chart.plot
    for step in _TIME_STEPS_MS:
        label = fmt_tick_time(lo, step, span)
        fit = max(2, int((x1 - x0) / (len(label) * TICK_CHAR_PX + TICK_GAP_PX)))
        if span / step <= min(count, fit):
            break
    t = math.ceil(lo / step) * step
    while t <= hi:
        chart.x_ticks.append(Tick(xs(t), fmt_tick_time(t, step, span)))
        t += step


def _y_axis(chart: Chart, lo: float, hi: float) -> _Scale:
    x0, y0, x1, y1 = chart.plot
    ys = _Scale(lo, hi, y1, y0)
    chart.y_ticks = [Tick(ys(v), fmt_num(v)) for v in _nice_ticks(ys.lo, ys.hi)]
    return ys


def _y_range(lo: float, hi: float) -> tuple[float, float]:
    """Axis bounds: from 0 for positive data near it, a margin above, sane for constant series."""
    span = hi - lo
    if span <= max(abs(hi), 1e-12) * 1e-9:  # constant, up to float noise
        span = 0.0
    top = hi + (span * 0.05 if span else abs(hi) * 0.1 or 1.0)
    if lo >= 0 and (span == 0 or lo <= span):
        return 0.0, top
    return lo - (span * 0.05 if span else abs(lo) * 0.1 or 1.0), top


def line_chart(title: str, series: dict[str, list[tuple[float, float]]], unit: str = "", x: str = "time") -> Chart:
    """One polyline per series. `x`: "time" (epoch ms, ticks on round times) or "step" (the
    optimizer step, ticks on round numbers)."""
    chart = Chart(title)
    points = [p for pts in series.values() for p in pts if p[1] is not None]
    if not points:
        return chart
    chart.empty = False
    xlo, xhi = min(p[0] for p in points), max(p[0] for p in points)
    ylo, yhi = min(p[1] for p in points), max(p[1] for p in points)
    x0, y0, x1, y1 = chart.plot
    xs = _Scale(xlo, xhi, x0, x1) if xhi > xlo else _Scale(xlo - 1, xlo + 1, x0, x1)
    ys = _y_axis(chart, *_y_range(ylo, yhi))
    if x == "step":
        chart.x_ticks = [Tick(xs(v), fmt_num(v)) for v in _nice_ticks(xs.lo, xs.hi, 5) if v == int(v)]
        where = lambda v: f"step {int(v)}"  # noqa: E731
    else:
        _time_ticks(chart, xs, xlo, xhi)
        where = lambda v: fmt_time(v, xhi - xlo)  # noqa: E731
    for i, (name, pts) in enumerate(series.items()):
        pts = [p for p in pts if p[1] is not None]
        if not pts:
            continue
        c = color(i)
        coords = [(xs(x_), ys(y)) for x_, y in pts]
        every = math.ceil(len(pts) / MAX_DOTS)  # a dot with its tooltip every few points of a long series
        dots = [(cx, cy, f"{name} {where(x_)}: {fmt_num(y)}{unit}")
                for (cx, cy), (x_, y) in list(zip(coords, pts))[::every]]
        chart.lines.append(Line(name, c, " ".join(f"{cx},{cy}" for cx, cy in coords), dots))
        chart.legend.append((name, c))
    return chart


def bar_chart(title: str, bars: list[tuple[str, float, bool]], unit: str = "") -> Chart:
    """Vertical bars by label; highlighted bars (stragglers) in red."""
    chart = Chart(title)
    bars = [b for b in bars if b[1] is not None]
    if not bars:
        return chart
    chart.empty = False
    x0, y0, x1, y1 = chart.plot
    ys = _y_axis(chart, 0, max(b[1] for b in bars) * 1.08 or 1)
    slot = (x1 - x0) / len(bars)
    w = max(1.0, slot * 0.8)
    every = max(1, math.ceil(len(bars) / 16))
    for i, (label, v, hot) in enumerate(bars):
        x = x0 + i * slot + (slot - w) / 2
        top = ys(v)
        chart.bars.append(Bar(round(x, 1), top, round(w, 1), round(y1 - top, 1),
                              "#dc2626" if hot else "#2563eb", f"{label}: {fmt_num(v)}{unit}"))
        if i % every == 0:
            chart.x_ticks.append(Tick(round(x + w / 2, 1), label))
    return chart


def stacked_bars(title: str, buckets: list[tuple[float, dict[str, int]]], width_ms: float,
                 width: int = WIDTH) -> Chart:
    """Counts per category over time, stacked (x in epoch ms)."""
    chart = Chart(title, width=width)
    if not buckets:
        return chart
    chart.empty = False
    cats = sorted({c for _, counts in buckets for c in counts})
    colors = {c: color(i) for i, c in enumerate(cats)}
    chart.legend = [(c, colors[c]) for c in cats]
    x0, y0, x1, y1 = chart.plot
    lo, hi = buckets[0][0], buckets[-1][0] + width_ms
    xs = _Scale(lo, hi, x0, x1)
    ys = _y_axis(chart, 0, max(sum(c.values()) for _, c in buckets) * 1.1)
    _time_ticks(chart, xs, lo, hi)
    w = max(1.0, (xs(lo + width_ms) - xs(lo)) * 0.85)
    for t, counts in buckets:
        base = 0
        for c in cats:
            n = counts.get(c, 0)
            if not n:
                continue
            top, bottom = ys(base + n), ys(base)
            chart.bars.append(Bar(xs(t), top, round(w, 1), round(bottom - top, 1), colors[c],
                                  f"{fmt_time(t, hi - lo)} {c}: {n}"))
            base += n
    return chart


def timeline(title: str, events: list[tuple[float, str, str]], lanes: list[str], lane_colors: dict[str, str]) -> Chart:
    """One row per lane, one mark per event (x in epoch ms): (time, lane, tooltip)."""
    chart = Chart(title, height=max(90, 28 * len(lanes) + TOP + BOTTOM))
    if not events:
        return chart
    chart.empty = False
    x0, y0, x1, y1 = chart.plot
    lo, hi = min(e[0] for e in events), max(e[0] for e in events)
    xs = _Scale(lo, hi, x0 + 6, x1 - 6) if hi > lo else _Scale(lo - 1, lo + 1, x0, x1)
    _time_ticks(chart, xs, lo, hi)
    row = (y1 - y0) / max(1, len(lanes))
    lane_y = {lane: round(y0 + row * (i + 0.5), 1) for i, lane in enumerate(lanes)}
    chart.lanes = [Tick(lane_y[lane], lane) for lane in lanes]
    for t, lane, tip in events:
        chart.marks.append(Mark(xs(t), lane_y[lane], lane_colors.get(lane, "#4b5563"), tip))
    return chart
