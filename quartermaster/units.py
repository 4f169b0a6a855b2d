"""Calendar units, declared once: quarters, their bounds and hours. (Money and hours per month: `pricing`.)"""

from __future__ import annotations

import calendar
import datetime as dt
import functools
import re
from typing import TYPE_CHECKING, Any, overload

if TYPE_CHECKING:
    from pydantic import GetCoreSchemaHandler
    from pydantic_core import CoreSchema

FIRST_DAY, LAST_DAY = dt.date(2000, 1, 1), dt.date(2100, 12, 31)
"""The calendar the inventory may name: dates and hours outside it are mistakes (year 1900, 9999), refused at load."""
QUARTER_PATTERN = r"^(20[0-9][0-9]|2100)Q[1-4]$"
"""A calendar quarter inside the calendar (FIRST_DAY to LAST_DAY), e.g. 2027Q1. ASCII digits only: `\\d` also takes
other scripts' digits, which `int` reads as a different year than the diff shows."""
QUARTER_FIX = "Write a year from 2000 to 2100 and Q1 to Q4 in ASCII digits, e.g. `2027Q1`."


class QuarterError(ValueError):
    """Text that is not a quarter of the calendar; the message names where it was read and the fix."""


class Quarter(str):
    """A calendar quarter, `2027Q1`, from 2000Q1 to 2100Q4.

    A `str` (it compares, hashes, sorts and prints as its text, so every CSV, JSON and YAML output is the same as
    with the plain string) that knows its calendar: `year`, `number`, `first_day`, `end` (the first day after it),
    `last_day`, `hours`; `q + n` is n quarters later (`q + "x"` still concatenates text), `q - p` the quarters from
    p to q, `next` and `previous`. Quarters of four-digit years sort as text in calendar order. Constructing one from
    text outside the calendar raises `QuarterError`; `Quarter.parse(text, where)` names where the text was read.
    In a pydantic model a field typed `Quarter` is a string with QUARTER_PATTERN in the JSON Schema."""

    __slots__ = ()

    def __new__(cls, text: str) -> Quarter:
        if isinstance(text, Quarter):
            return text
        if not isinstance(text, str) or not re.fullmatch(QUARTER_PATTERN, text):
            raise QuarterError(f"not a quarter from 2000Q1 to 2100Q4 (got {text!r}). {QUARTER_FIX}")
        return super().__new__(cls, text)

    @classmethod
    def parse(cls, text: str, where: str) -> Quarter:
        """`text` as a quarter (upper or lower case `q`); else a `QuarterError` that starts with `where` (a file and
        YAML path, a CSV row, an option)."""
        try:
            return cls(text.upper() if isinstance(text, str) else text)
        except QuarterError as exc:
            raise QuarterError(f"{where}: {exc}") from None

    @classmethod
    def _from_index(cls, index: int) -> Quarter:
        return cls(f"{index // 4}Q{index % 4 + 1}")

    @property
    def year(self) -> int:
        return int(self[:4])

    @property
    def number(self) -> int:
        """1 to 4."""
        return int(self[5])

    @property
    def _index(self) -> int:
        return self.year * 4 + self.number - 1

    @property
    def first_day(self) -> dt.date:
        return quarter_bounds(self)[0]

    @property
    def end(self) -> dt.date:
        """The first day after the quarter (the exclusive end of [first_day, end))."""
        return quarter_bounds(self)[1]

    @property
    def last_day(self) -> dt.date:
        return self.end - dt.timedelta(days=1)

    @property
    def hours(self) -> int:
        """Hours in the quarter (2,160 to 2,208)."""
        return quarter_hours(self)

    @property
    def next(self) -> Quarter:
        return self + 1

    @property
    def previous(self) -> Quarter:
        return self + -1

    @overload  # type: ignore[override]
    def __add__(self, other: int) -> Quarter: ...
    @overload
    def __add__(self, other: str) -> str: ...
    def __add__(self, other: int | str) -> Quarter | str:
        """`n` quarters later (earlier for a negative `n`); with text, the concatenated text. A quarter outside the
        calendar raises `QuarterError`."""
        if isinstance(other, str):
            return str(self) + other
        return Quarter._from_index(self._index + other)

    def __sub__(self, other: str) -> int:
        """The number of quarters from `other` to this one (2027Q1 - 2026Q3 = 2)."""
        return self._index - Quarter(other)._index

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        from pydantic_core import core_schema

        # the pattern check is pydantic's own (its error and the loader's message for QUARTER_PATTERN unchanged)
        return core_schema.no_info_after_validator_function(
            cls,
            core_schema.str_schema(pattern=QUARTER_PATTERN),
            serialization=core_schema.to_string_ser_schema(),
        )


def add_months(day: dt.date, months: int) -> dt.date:
    """`day` plus `months` calendar months, clamped to the month's end (2024-02-29 + 36 months = 2027-02-28)."""
    index = day.month - 1 + months
    year, month = day.year + index // 12, index % 12 + 1
    return day.replace(year=year, month=month, day=min(day.day, calendar.monthrange(year, month)[1]))


def utc_hour(moment: dt.datetime) -> dt.datetime:
    """An hour as naive UTC, the one convention of usage records: a time with an offset is converted to UTC, a
    time without one is taken as UTC."""
    return moment.astimezone(dt.UTC).replace(tzinfo=None) if moment.tzinfo is not None else moment


@functools.lru_cache(maxsize=4096)
def cached_quarter(text: str) -> Quarter:
    """`Quarter(text)`, each distinct text parsed once: tables repeat a few quarters over many rows."""
    return Quarter(text)


LAST_QUARTER = Quarter("2100Q4")
"""The calendar's last quarter (that of LAST_DAY)."""


def quarter_of(day: dt.date) -> Quarter:
    """The quarter a date of the calendar falls in, e.g. `2026Q4`."""
    return Quarter._from_index(day.year * 4 + (day.month - 1) // 3)


def quarter_bounds(quarter: str) -> tuple[dt.date, dt.date]:
    """First day of the quarter and first day after it. Text of any year: promtool's clock starts at the epoch,
    so the alert rules' tests place a budget in 1970Q1 (tests/observability/test_rules.py)."""
    year, q = int(quarter[:-2]), int(quarter[-1])
    start = dt.date(year, 3 * (q - 1) + 1, 1)
    end = dt.date(year + 1, 1, 1) if q == 4 else dt.date(year, 3 * q + 1, 1)
    return start, end


def quarter_hours(quarter: str) -> int:
    """Hours in a calendar quarter (2,160 to 2,208); text of any year, as quarter_bounds (the alert rules' tests)."""
    start, end = quarter_bounds(quarter)
    return (end - start).days * 24


def next_quarters(first: str, count: int) -> list[Quarter]:
    """`count` consecutive quarters starting at `first` (upper or lower case `q`); `QuarterError` past 2100Q4."""
    start = Quarter(first.upper())
    return [start + n for n in range(count)]


def overlap_hours(start: dt.date, end: dt.date, quarter: Quarter) -> int:
    """Hours of [start, end) that fall inside a quarter."""
    q_start, q_end = quarter_bounds(quarter)
    days = (min(end, q_end) - max(start, q_start)).days
    return max(0, days) * 24
