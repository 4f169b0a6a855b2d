"""Charts as inline SVG, written by hand: no network, no plotting dependency, deterministic output.

Layout, top to bottom: the legend (rows of four, above the plot so nothing overlaps it), the plot with its y-axis
title (unit and basis) on the left, then the x labels, horizontal and wrapped onto lines that fit their slot (on a
long series, a label every `label_every` categories, with the room of that many slots)."""

from __future__ import annotations

import re
from html import escape

from quartermaster.reports.finance.table import Chart

PALETTE = ("#1f4e79", "#2e86c1", "#76b7b2", "#f28e2b", "#e15759", "#59a14f", "#b07aa1", "#9c755f", "#bab0ac")
WIDTH, PLOT_HEIGHT = 760, 230
LEFT, RIGHT = 96, 20
LEGEND_ROW, LEGEND_PER_ROW, LEGEND_ITEM = 20, 4, 160
LABEL_LINE = 14
WATERFALL_LEGEND = ("the two ends", "adds cost", "saves")
CHAR_WIDTH = 6.2  # average width of an 11 px sans-serif character, to wrap x labels


def _nice_max(value: float) -> float:
    """A round axis maximum at or above `value` (1, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 times a power of ten)."""
    if value <= 0:
        return 1.0
    magnitude = 10 ** (len(str(int(value))) - 1) if value >= 1 else 1
    for step in (1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10):
        if step * magnitude >= value:
            return step * magnitude
    return 10.0 * magnitude


def _tick(value: float, unit: str) -> str:
    if unit == "%":
        return f"{value * 100:.0f}%"
    if unit == "USD":
        return f"${value / 1e6:g}M" if value >= 1e6 else f"${value / 1e3:g}k" if value >= 1e3 else f"${value:g}"
    return f"{value:,.0f}" if value == int(value) else f"{value:,.1f}"


def wrap(label: str, width: float) -> list[str]:
    """A label broken into lines of at most `width` pixels: at spaces, then after hyphens, then anywhere."""
    most = max(1, int(width / CHAR_WIDTH))
    pieces: list[tuple[str, str]] = []  # (piece, joiner to the piece before it)
    for word in label.split():
        parts = re.findall(r"[^-]+-?|-", word) if len(word) > most else [word]
        for i, part in enumerate(p for whole in parts for p in _chunks(whole, most)):
            pieces.append((part, " " if i == 0 else ""))
    lines: list[str] = []
    for piece, joiner in pieces:
        if lines and len(lines[-1]) + len(joiner) + len(piece) <= most:
            lines[-1] += joiner + piece
        else:
            lines.append(piece)
    return lines or [""]


def _chunks(text: str, most: int) -> list[str]:
    return [text[i : i + most] for i in range(0, len(text), most)] or [""]


def _waterfall(values: tuple[float, ...]) -> list[tuple[float, float]]:
    """(low, high) of each bar of a waterfall: the first and last values from zero, each value between a step from
    the running total (a fall drawn from its new total up to the old one)."""
    out: list[tuple[float, float]] = []
    total = 0.0
    for i, value in enumerate(values):
        if i in (0, len(values) - 1):
            total = value
            out.append((min(0.0, value), max(0.0, value)))
        else:
            out.append((min(total, total + value), max(total, total + value)))
            total += value
    return out


def render_svg(chart: Chart) -> str:
    """One chart as an SVG element."""
    n = max(1, len(chart.categories))
    plot_w = WIDTH - LEFT - RIGHT
    slot = plot_w / n
    every = max(1, chart.label_every)
    labels = [wrap(c, slot * every - 6) if i % every == 0 else [] for i, c in enumerate(chart.categories)]
    legend = (
        list(zip(WATERFALL_LEGEND, (PALETTE[0], PALETTE[4], PALETTE[5]), strict=True))
        if chart.kind == "waterfall"
        else [(s.name, PALETTE[i % len(PALETTE)]) for i, s in enumerate(chart.series)]
    )
    legend_h = LEGEND_ROW * -(-len(legend) // LEGEND_PER_ROW)
    top = legend_h + 14
    bottom = top + PLOT_HEIGHT
    height = bottom + 8 + LABEL_LINE * max((len(lines) for lines in labels), default=1) + 6
    centre = [LEFT + slot * (i + 0.5) for i in range(n)]
    steps = _waterfall(chart.series[0].values) if chart.kind == "waterfall" and chart.series else []
    if chart.kind == "stacked":
        peak = max((sum(s.values[i] for s in chart.series) for i in range(len(chart.categories))), default=0.0)
    elif steps:
        peak = max(max(step) for step in steps)
    else:
        peak = max((v for s in chart.series for v in s.values), default=0.0)
    axis_max = 1.0 if chart.unit == "%" and peak <= 1 else _nice_max(peak)

    def y_of(value: float) -> float:
        return bottom - PLOT_HEIGHT * value / axis_max

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" role="img" '
        f'aria-label="{escape(chart.title)}" class="chart" font-family="sans-serif" font-size="11">'
    ]
    for i, (name, colour) in enumerate(legend):
        lx, ly = LEFT + (i % LEGEND_PER_ROW) * LEGEND_ITEM, 2 + LEGEND_ROW * (i // LEGEND_PER_ROW)
        out.append(
            f'<g class="legend"><rect x="{lx}" y="{ly}" width="12" height="12" '
            f'fill="{colour}"/><text x="{lx + 18}" y="{ly + 10}" fill="#333">'
            f"{escape(name)}</text></g>"
        )
    out.append(f'<rect class="plot" x="{LEFT}" y="{top}" width="{plot_w}" height="{PLOT_HEIGHT}" fill="none"/>')
    for i in range(5):
        value = axis_max * i / 4
        y = y_of(value)
        out.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{WIDTH - RIGHT}" y2="{y:.1f}" stroke="#ddd"/>')
        out.append(
            f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end" fill="#555">{_tick(value, chart.unit)}</text>'
        )
    middle = (top + bottom) / 2
    out.append(
        f'<text class="y-title" x="14" y="{middle:.1f}" text-anchor="middle" fill="#333" '
        f'transform="rotate(-90 14 {middle:.1f})">{escape(chart.y_title)}</text>'
    )
    if chart.kind == "stacked":
        for i in range(len(chart.categories)):
            base = 0.0
            for k, s in enumerate(chart.series):
                value = s.values[i]
                if value > 0:
                    out.append(
                        f'<rect x="{centre[i] - slot * 0.35:.1f}" y="{y_of(base + value):.1f}" '
                        f'width="{slot * 0.7:.1f}" height="{y_of(base) - y_of(base + value):.1f}" '
                        f'fill="{PALETTE[k % len(PALETTE)]}"><title>{escape(s.name)}: '
                        f"{_tick(value, chart.unit)}</title></rect>"
                    )
                base += value
    elif chart.kind == "waterfall":
        names = ("total", "increase", "decrease")
        for i, (low, high) in enumerate(steps):
            value = chart.series[0].values[i]
            kind = 0 if i in (0, len(steps) - 1) else 1 if value > 0 else 2
            colour = (PALETTE[0], PALETTE[4], PALETTE[5])[kind]
            out.append(
                f'<rect class="{names[kind]}" x="{centre[i] - slot * 0.35:.1f}" y="{y_of(high):.1f}" '
                f'width="{slot * 0.7:.1f}" height="{max(y_of(low) - y_of(high), 0.5):.1f}" fill="{colour}">'
                f"<title>{escape(chart.categories[i])}: {'' if kind != 1 else '+'}{_tick(value, chart.unit)}"
                "</title></rect>"
            )
    elif chart.kind == "grouped":
        width = slot * 0.8 / max(1, len(chart.series))
        for i in range(len(chart.categories)):
            for k, s in enumerate(chart.series):
                x = centre[i] - slot * 0.4 + k * width
                out.append(
                    f'<rect x="{x:.1f}" y="{y_of(s.values[i]):.1f}" width="{width:.1f}" '
                    f'height="{y_of(0) - y_of(s.values[i]):.1f}" fill="{PALETTE[k % len(PALETTE)]}">'
                    f"<title>{escape(s.name)}: {_tick(s.values[i], chart.unit)}</title></rect>"
                )
    else:
        if chart.kind == "band" and len(chart.series) > 1:
            edge = [(centre[i], y_of(v)) for i, v in enumerate(chart.series[0].values)]
            edge += [(centre[i], y_of(v)) for i, v in reversed(list(enumerate(chart.series[-1].values)))]
            out.append(
                f'<polygon class="band" points="{" ".join(f"{x:.1f},{y:.1f}" for x, y in edge)}" '
                f'fill="{PALETTE[1]}" fill-opacity="0.18" stroke="none"/>'
            )
        for k, s in enumerate(chart.series):
            points = " ".join(f"{centre[i]:.1f},{y_of(v):.1f}" for i, v in enumerate(s.values))
            out.append(
                f'<polyline points="{points}" fill="none" stroke="{PALETTE[k % len(PALETTE)]}" stroke-width="2.5"/>'
            )
            for i, v in enumerate(s.values):
                out.append(
                    f'<circle cx="{centre[i]:.1f}" cy="{y_of(v):.1f}" r="3.5" fill="{PALETTE[k % len(PALETTE)]}">'
                    f"<title>{escape(s.name)} {escape(chart.categories[i])}: {_tick(v, chart.unit)}</title></circle>"
                )
    out.append(f'<line x1="{LEFT}" y1="{bottom:.1f}" x2="{WIDTH - RIGHT}" y2="{bottom:.1f}" stroke="#333"/>')
    for lines, x in zip(labels, centre, strict=True):
        if not lines:
            continue
        spans = "".join(
            f'<tspan x="{x:.1f}" dy="{0 if j == 0 else LABEL_LINE}">{escape(line)}</tspan>'
            for j, line in enumerate(lines)
        )
        out.append(
            f'<text class="x-label" x="{x:.1f}" y="{bottom + 8 + LABEL_LINE - 3:.1f}" text-anchor="middle" '
            f'fill="#333">{spans}</text>'
        )
    out.append("</svg>")
    return "\n".join(out)
