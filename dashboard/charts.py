"""Server-rendered SVG charts: geometry only; templates/dashboard/_charts.html draws it.

Coordinates are computed here (not in templates) so the SVG needs no script and no inline style,
which the Content-Security-Policy forbids; colours come from CSS classes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field


def nice_max(value: float) -> int:
    """A round axis maximum ≥ value: 1, 2, 5, 10, 20, 50, …"""
    if value <= 0:
        return 1
    magnitude = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 5, 10):
        if value <= step * magnitude:
            return int(step * magnitude)
    return int(10 * magnitude)


@dataclass
class Segment:
    name: str
    value: int
    x: float
    y: float
    width: float
    height: float


@dataclass
class Column:
    label: str
    total: int
    segments: list[Segment]
    label_x: float
    show_label: bool


@dataclass
class Tick:
    value: int
    y: float


@dataclass
class ColumnChart:
    width: int
    height: int
    plot_left: int
    plot_bottom: float
    plot_right: int
    columns: list[Column]
    ticks: list[Tick]
    series: list[str]
    empty: bool
    rows: list[tuple[str, list[int]]] = field(default_factory=list)  # the data, for the table view

    @property
    def tick_x(self) -> int:
        return self.plot_left - 6

    @property
    def label_y(self) -> int:
        return self.height - 6


def stacked_columns(
    labels: list[str],
    series: dict[str, list[int]],
    *,
    width: int = 420,
    height: int = 210,
    max_labels: int = 5,
) -> ColumnChart:
    """Stacked columns, one per label; ``series`` maps a name to one value per label."""
    left, right, top, bottom = 32, 20, 10, 24  # room for the last date label
    plot_w, plot_h = width - left - right, height - top - bottom
    totals = [sum(values[i] for values in series.values()) for i in range(len(labels))]
    axis_max = nice_max(max(totals, default=0))
    slot = plot_w / max(len(labels), 1)
    bar_w = max(2.0, slot * 0.7)
    every = max(1, math.ceil(len(labels) / max_labels))
    columns = []
    for i, label in enumerate(labels):
        x = left + i * slot + (slot - bar_w) / 2
        y = top + plot_h
        segments = []
        for name, values in series.items():
            h = plot_h * values[i] / axis_max
            y -= h
            if values[i]:
                segments.append(
                    Segment(name, values[i], round(x, 2), round(y, 2), round(bar_w, 2), round(h, 2))
                )
        columns.append(
            Column(
                label,
                totals[i],
                segments,
                round(x + bar_w / 2, 2),
                show_label=(len(labels) - 1 - i) % every == 0,
            )
        )
    values = (0, axis_max // 2, axis_max) if axis_max % 2 == 0 else (0, axis_max)
    ticks = [Tick(v, round(top + plot_h - plot_h * v / axis_max, 2)) for v in values]
    return ColumnChart(
        width=width,
        height=height,
        plot_left=left,
        plot_bottom=top + plot_h,
        plot_right=width - right,
        columns=columns,
        ticks=ticks,
        series=list(series),
        empty=not any(totals),
        rows=[(label, [values[i] for values in series.values()]) for i, label in enumerate(labels)],
    )


@dataclass
class Bar:
    label: str
    value: int
    y: float
    width: float
    text_x: float
    text_y: float


@dataclass
class BarChart:
    width: int
    height: int
    label_width: int
    bar_height: int
    bars: list[Bar]
    empty: bool

    @property
    def label_x(self) -> int:
        return self.label_width - 8


def horizontal_bars(items: list[tuple[str, int]], *, width: int = 420, bar_height: int = 22) -> BarChart:
    label_w, gap, value_room = 96, 8, 34
    plot_w = width - label_w - value_room
    top = max((value for _, value in items), default=0) or 1
    bars = []
    for i, (label, value) in enumerate(items):
        w = plot_w * value / top
        y = i * (bar_height + gap)
        bars.append(Bar(label, value, y, round(w, 2), round(label_w + w + 6, 2), y + bar_height / 2))
    return BarChart(
        width=width,
        height=max(1, len(items)) * (bar_height + gap),
        label_width=label_w,
        bar_height=bar_height,
        bars=bars,
        empty=not any(value for _, value in items),
    )
