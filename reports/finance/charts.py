"""Charts as inline SVG, written by hand: no network, no plotting dependency, deterministic output."""

from __future__ import annotations

from html import escape

from quartermaster.reports.finance.data import Chart

PALETTE = ("#1f4e79", "#2e86c1", "#76b7b2", "#f28e2b", "#e15759", "#59a14f", "#b07aa1", "#9c755f", "#bab0ac")
WIDTH, HEIGHT = 760, 300
LEFT, RIGHT, TOP, BOTTOM = 80, 20, 20, 70


def _nice_max(value: float) -> float:
    """A round axis maximum at or above `value`."""
    if value <= 0:
        return 1.0
    magnitude = 10 ** (len(str(int(value))) - 1)
    for step in (1, 2, 2.5, 5, 10):
        if step * magnitude >= value:
            return step * magnitude
    return 10.0 * magnitude


def _tick(value: float, unit: str) -> str:
    if unit == "%":
        return f"{value * 100:.0f}%"
    if unit == "USD":
        return f"${value / 1e6:g}M" if value >= 1e6 else f"${value / 1e3:g}k" if value >= 1e3 else f"${value:g}"
    return f"{value:,.0f}"


def _frame(chart: Chart, top: float) -> list[str]:
    plot_h = HEIGHT - TOP - BOTTOM
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT + 24 * ((len(chart.series) + 3) // 4)}" '
        f'role="img" aria-label="{escape(chart.title)}" class="chart" font-family="sans-serif" font-size="11">'
    ]
    for i in range(5):
        value = top * i / 4
        y = TOP + plot_h - plot_h * i / 4
        out.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{WIDTH - RIGHT}" y2="{y:.1f}" stroke="#ddd"/>')
        out.append(
            f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end" fill="#555">{_tick(value, chart.unit)}</text>'
        )
    return out


def _legend(chart: Chart) -> list[str]:
    out = []
    for i, s in enumerate(chart.series):
        x, y = LEFT + (i % 4) * 170, HEIGHT + 4 + 24 * (i // 4)
        out.append(f'<rect x="{x}" y="{y}" width="12" height="12" fill="{PALETTE[i % len(PALETTE)]}"/>')
        out.append(f'<text x="{x + 18}" y="{y + 10}" fill="#333">{escape(s.name)}</text>')
    return out


def _x_labels(chart: Chart, centre: list[float]) -> list[str]:
    y = HEIGHT - BOTTOM + 14
    rotate = len(chart.categories) > 8 or max((len(c) for c in chart.categories), default=0) > 10
    out = []
    for label, x in zip(chart.categories, centre, strict=True):
        if rotate:
            out.append(
                f'<text x="{x:.1f}" y="{y}" text-anchor="end" transform="rotate(-30 {x:.1f} {y})" '
                f'fill="#333">{escape(label)}</text>'
            )
        else:
            out.append(f'<text x="{x:.1f}" y="{y}" text-anchor="middle" fill="#333">{escape(label)}</text>')
    return out


def render_svg(chart: Chart) -> str:
    """One chart as an SVG element."""
    n = max(1, len(chart.categories))
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    slot = plot_w / n
    centre = [LEFT + slot * (i + 0.5) for i in range(n)]
    if chart.kind == "stacked":
        peak = max((sum(s.values[i] for s in chart.series) for i in range(len(chart.categories))), default=0.0)
    else:
        peak = max((v for s in chart.series for v in s.values), default=0.0)
    top = 1.0 if chart.unit == "%" and peak <= 1 else _nice_max(peak)
    out = _frame(chart, top)

    def y_of(value: float) -> float:
        return TOP + plot_h - plot_h * value / top

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
    out.append(f'<line x1="{LEFT}" y1="{y_of(0):.1f}" x2="{WIDTH - RIGHT}" y2="{y_of(0):.1f}" stroke="#333"/>')
    out += _x_labels(chart, centre)
    out += _legend(chart)
    out.append("</svg>")
    return "\n".join(out)
