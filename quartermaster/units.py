"""Calendar units, declared once: quarters, their bounds and hours. (Money and hours per month: `pricing`.)"""

from __future__ import annotations

import calendar
import datetime as dt

FIRST_DAY, LAST_DAY = dt.date(2000, 1, 1), dt.date(2100, 12, 31)
"""The calendar the inventory may name: dates and hours outside it are mistakes (year 1900, 9999), refused at load."""


def add_months(day: dt.date, months: int) -> dt.date:
    """`day` plus `months` calendar months, clamped to the month's end (2024-02-29 + 36 months = 2027-02-28)."""
    index = day.month - 1 + months
    year, month = day.year + index // 12, index % 12 + 1
    return day.replace(year=year, month=month, day=min(day.day, calendar.monthrange(year, month)[1]))


def utc_hour(moment: dt.datetime) -> dt.datetime:
    """An hour as naive UTC, the one convention of usage records: a time with an offset is converted to UTC, a
    time without one is taken as UTC."""
    return moment.astimezone(dt.UTC).replace(tzinfo=None) if moment.tzinfo is not None else moment


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
