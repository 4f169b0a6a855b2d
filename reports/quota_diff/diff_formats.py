"""Renderers of a `QuotaDiff`: one per format, one signature, `render_<format>(data, options) -> str`.

Formatting lives in Jinja filters: the shared `money`, `delta` (money) and `pct` of `reports.filters`,
plus `signed` (counts), `change_pct` (relative change in percent), `limit` and `icon` registered here.
The templates under `reports/templates/` do no arithmetic.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import jinja2

from quartermaster.pricing import UNKNOWN
from quartermaster.reports.filters import register
from quartermaster.reports.quota_diff.types import MARKER, Change, KueueDiff, QuotaDiff
from quartermaster.textsafety import code_block, visible_text

TEMPLATES = Path(__file__).resolve().parents[1] / "templates"
ICONS = {"pass": "✅", "warn": "⚠️", "fail": "❌"}
TEXT_ICONS = {"pass": "PASS", "warn": "WARN", "fail": "FAIL"}


@dataclass(frozen=True)
class RenderOptions:
    """How to render: the hidden marker the CI finds its comment by, and how much Kueue diff to show."""

    marker: bool = True
    max_diff_lines: int = 600
    """max_diff_lines: Kueue diff lines shown, over all clusters (a comment holds 65,536 characters)."""


def signed(value: int | None) -> str:
    """A change of a count: `+128`, `-16`, `0`."""
    if value is None:
        return UNKNOWN
    return f"+{value}" if value > 0 else str(value)


def change_pct(value: Decimal | None) -> str:
    """A relative change given in percent: `+152.4 %`, `-3.0 %`; None (no baseline) -> `new`."""
    if value is None:
        return "new"
    shown = Decimal(value).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP)
    return f"+{shown} %" if shown > 0 else f"{shown} %"


def room(left: int, capacity: int) -> str:
    """Capacity left in a flavor after every team's nominal quota: `24 free of 32`, or `over by 24`."""
    return f"{left} free of {capacity}" if left >= 0 else f"over by {-left}"


def limit(value: Change) -> str:
    """An optional value before and after: `32`, `32 → 64`, `none → 16`, or `-` when absent on both sides."""

    def one(v: Any) -> str:
        return "none" if v is None else str(v)

    if not value.changed:
        return "-" if value.current is None else one(value.current)
    return f"{one(value.past)} → {one(value.current)}"


def environment() -> jinja2.Environment:
    """The Jinja environment with the report filters; undefined names are errors."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    register(env)  # money, delta, pct, number: shared by every report
    env.filters.update(
        signed=signed,
        room=room,
        change_pct=change_pct,
        limit=limit,
        icon=ICONS.__getitem__,
        text_icon=TEXT_ICONS.__getitem__,
        code_block=code_block,
    )
    return env


def _cut(diffs: tuple[KueueDiff, ...], max_lines: int) -> list[KueueDiff]:
    """The diffs within a budget of lines shared by all clusters, each cut one saying how much is left out."""
    out, left = [], max_lines
    for d in diffs:
        lines = d.diff.splitlines(keepends=True)
        if len(lines) > left:
            lines = [*lines[:left], f"... {len(lines) - left} more lines: run `qm diff` locally\n"]
        left = max(0, left - len(lines))
        out.append(replace(d, diff="".join(lines)))
    return out


def _context(data: QuotaDiff, options: RenderOptions) -> dict[str, Any]:
    return {
        "d": data,
        "o": options,
        "marker": MARKER,
        "kueue": _cut(data.kueue, options.max_diff_lines),
        "other_flavors": [f for f in data.flavors if f.other_usd is None or f.other_usd != 0],
    }


def render_markdown(data: QuotaDiff, options: RenderOptions = RenderOptions()) -> str:
    """The PR comment."""
    return visible_text(environment().get_template("quota_diff.md.j2").render(_context(data, options)))


def render_text(data: QuotaDiff, options: RenderOptions = RenderOptions()) -> str:
    """Plain text for a terminal."""
    return visible_text(environment().get_template("quota_diff.txt.j2").render(_context(data, options)))


def render_json(data: QuotaDiff, options: RenderOptions = RenderOptions()) -> str:
    """The data itself, past / current / delta, money in cents as strings, sorted keys."""
    return json.dumps(data.to_json(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


RENDERERS: dict[str, Callable[[QuotaDiff, RenderOptions], str]] = {
    "markdown": render_markdown,
    "json": render_json,
    "text": render_text,
}


def render_invalid(fmt: str, problems: list[tuple[str, str]], options: RenderOptions = RenderOptions()) -> str:
    """What `qm diff` prints when either side does not validate: the located messages, as (kind, message) pairs
    (the kind is the rule an `Issue` names). Text and JSON list them all; the comment groups them by kind with
    counts and shows what fits a pull-request comment (`comment_errors`)."""
    if fmt == "json":
        counts = {k: len(v) for k, v in _by_kind(problems).items()}
        return (
            json.dumps(
                {"blocking": True, "errors": [m for _, m in problems], "error_counts": counts}, indent=2, sort_keys=True
            )
            + "\n"
        )
    if fmt == "text":
        return "".join(f"{m}\n" for _, m in problems)
    head = f"{MARKER}\n" if options.marker else ""
    return visible_text(
        f"{head}## Quartermaster quota diff\n\n{ICONS['fail']} The inventory does not validate; fix these "
        f"and push again:\n\n{code_block(comment_errors(problems))}"
    )


COMMENT_BUDGET = 60_000
"""Characters of located messages a comment shows: GitHub refuses a pull-request comment over 65,536 characters
(2,000 bad rows printed 296 KB, so nothing was posted); the rest are counted."""
PER_KIND = 5
"""Messages a comment shows of each kind when all of them do not fit."""
MESSAGE_CHARS = 2_000
"""A message longer than this is cut in a comment (it stays whole in the log)."""


def _by_kind(problems: list[tuple[str, str]]) -> dict[str, list[str]]:
    """The messages per kind, kinds in the order they first appear."""
    groups: dict[str, list[str]] = {}
    for kind, message in problems:
        groups.setdefault(kind, []).append(message)
    return groups


def comment_errors(problems: list[tuple[str, str]]) -> str:
    """The errors of a comment grouped by kind with counts (`duplicate-key: 2,400 errors (first 5 shown)`): every
    message when they all fit COMMENT_BUDGET, else the first PER_KIND of each kind; kinds in order of first
    appearance while they fit, the rest counted."""
    groups = _by_kind(problems)
    whole = sum(min(len(m), MESSAGE_CHARS) + 3 for _, m in problems) + sum(len(k) + 40 for k in groups)
    per_kind = len(problems) if whole <= COMMENT_BUDGET else PER_KIND
    out: list[str] = []
    size = 0
    for i, (kind, messages) in enumerate(groups.items()):
        shown = [m if len(m) <= MESSAGE_CHARS else m[:MESSAGE_CHARS] + "..." for m in messages[:per_kind]]
        cut = f" (first {len(shown)} shown)" if len(shown) < len(messages) else ""
        block = [f"{kind}: {len(messages):,} error{'s' if len(messages) > 1 else ''}{cut}", *(f"  {m}" for m in shown)]
        cost = sum(len(line) + 1 for line in block)
        if size + cost > COMMENT_BUDGET:
            rest = list(groups.values())[i:]
            out.append(
                f"... and {sum(map(len, rest)):,} more errors of {len(rest):,} more kinds (a pull-request comment "
                "holds at most 65,536 characters): run qm validate"
            )
            break
        out += block
        size += cost
    return "".join(f"{line}\n" for line in out)
