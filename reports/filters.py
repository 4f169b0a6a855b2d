"""Formatting for everything a person reads: money (`pricing.format_usd`), signed deltas, percentages.
Registered as jinja2 filters so templates format but never compute."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

import jinja2

from quartermaster.pricing import UNKNOWN, format_pct, format_usd

money = format_usd
pct = format_pct
"""Money and shares as every view prints them: the core's one formatter of each (`quartermaster.pricing`)."""


def _number(value: Decimal | float | int) -> Decimal:
    return value if isinstance(value, Decimal) else Decimal(str(value))


def delta(value: Decimal | float | int | None, places: int = 2) -> str:
    """A signed change in money: `+$1,234.50`, `-$20.00`, `$0.00`."""
    if value is None:
        return UNKNOWN
    amount = _number(value)
    return ("+" if amount > 0 else "") + money(amount, places)


def signed_pct(value: Decimal | float | int | None, places: int = 1) -> str:
    """A change in a ratio, in percentage points with a sign: `+2.5 pp`."""
    if value is None:
        return UNKNOWN
    points = (_number(value) * 100).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    return f"{'+' if points > 0 else ''}{points:,.{places}f} pp"


def pct_change(value: Decimal | float | int | None, places: int = 1) -> str:
    """A relative change as a signed percentage: `0.072` -> `+7.2%`, `-0.35` -> `-35.0%`."""
    if value is None:
        return UNKNOWN
    return ("+" if _number(value) > 0 else "") + pct(value, places)


def number(value: Decimal | float | int | None, places: int = 0) -> str:
    """A plain quantity with thousands separators: `1234.5` -> `1,235`."""
    if value is None:
        return UNKNOWN
    return f"{_number(value).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP):,.{places}f}"


def rate(value: Decimal | float | int | None) -> str:
    """Money per unit (USD per accelerator-hour) to 4 decimals: `$2.9400`."""
    return money(value, 4)


def cell(value: Decimal | float | int | str | None, kind: str) -> str:
    """A table cell by its column kind: money, rate, delta, pct, pct_change, number (1 decimal), int, text."""
    if kind == "text" or isinstance(value, str):
        return "" if value is None else str(value)
    if kind == "int":
        return number(value, 0)
    if kind == "number":
        return number(value, 1)
    return FORMATS[kind](value)


FORMATS = {"money": money, "rate": rate, "delta": delta, "pct": pct, "pct_change": pct_change, "signed_pct": signed_pct}
FILTERS = {**FORMATS, "number": number, "cell": cell}


def register(env: jinja2.Environment) -> jinja2.Environment:
    """Add the formatting filters to a jinja2 environment."""
    env.filters.update(FILTERS)
    return env
