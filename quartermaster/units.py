"""Time and money units, declared once: hours per month, quarters and their hours, money rounding."""

from __future__ import annotations

import datetime as dt
from decimal import ROUND_HALF_UP, Decimal

HOURS_PER_MONTH = 730  # the FinOps / Infracost convention: 8,760 hours / 12
HOURS_PER_WEEK = 168  # capacity blocks are sold in whole weeks
CENT = Decimal("0.01")


def cents(amount: Decimal) -> Decimal:
    """Round money to the cent (half up), for display and for reconciled totals."""
    return amount.quantize(CENT, rounding=ROUND_HALF_UP)


def parse_quarter(quarter: str) -> tuple[int, int]:
    """`2027Q1` -> (2027, 1)."""
    year, q = quarter.upper().split("Q")
    return int(year), int(q)


def quarter_of(day: dt.date) -> str:
    """The quarter a date falls in, e.g. `2026Q4`."""
    return f"{day.year}Q{(day.month - 1) // 3 + 1}"


def quarter_bounds(quarter: str) -> tuple[dt.date, dt.date]:
    """First day of the quarter and first day after it."""
    year, q = parse_quarter(quarter)
    start = dt.date(year, 3 * (q - 1) + 1, 1)
    end = dt.date(year + 1, 1, 1) if q == 4 else dt.date(year, 3 * q + 1, 1)
    return start, end


def quarter_hours(quarter: str) -> int:
    """Hours in a calendar quarter (2,160 to 2,208)."""
    start, end = quarter_bounds(quarter)
    return (end - start).days * 24


def next_quarters(first: str, count: int) -> list[str]:
    """`count` consecutive quarters starting at `first`."""
    year, q = parse_quarter(first)
    out = []
    for _ in range(count):
        out.append(f"{year}Q{q}")
        year, q = (year + 1, 1) if q == 4 else (year, q + 1)
    return out


def overlap_hours(start: dt.date, end: dt.date, quarter: str) -> int:
    """Hours of [start, end) that fall inside a quarter."""
    q_start, q_end = quarter_bounds(quarter)
    days = (min(end, q_end) - max(start, q_start)).days
    return max(0, days) * 24
