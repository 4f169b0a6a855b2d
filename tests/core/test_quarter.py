"""The `Quarter` type: a calendar quarter that is its text everywhere it is written, and knows its calendar."""

from __future__ import annotations

import datetime as dt
import json
import pickle

import pytest
from pydantic import BaseModel, ValidationError

from quartermaster.units import (
    QUARTER_PATTERN,
    Quarter,
    QuarterError,
    next_quarters,
    quarter_bounds,
    quarter_hours,
    quarter_of,
)


def test_a_quarter_is_its_text_in_every_output() -> None:
    q = Quarter("2027Q1")
    assert q == "2027Q1" and hash(q) == hash("2027Q1") and {"2027Q1": 1}[q] == 1
    assert f"{q}" == str(q) == "2027Q1" and json.dumps([q]) == '["2027Q1"]'
    assert pickle.loads(pickle.dumps(q)) == q and type(pickle.loads(pickle.dumps(q))) is Quarter
    assert q + "-x" == "2027Q1-x" and type(q + "-x") is str  # text still concatenates


@pytest.mark.parametrize(
    ("quarter", "want_first", "want_last", "want_hours"),
    [
        ("2027Q1", dt.date(2027, 1, 1), dt.date(2027, 3, 31), 90 * 24),  # 31 + 28 + 31 days
        ("2028Q1", dt.date(2028, 1, 1), dt.date(2028, 3, 31), 91 * 24),  # a leap February: 31 + 29 + 31
        ("2026Q4", dt.date(2026, 10, 1), dt.date(2026, 12, 31), 92 * 24),  # 31 + 30 + 31
        ("2100Q4", dt.date(2100, 10, 1), dt.date(2100, 12, 31), 92 * 24),  # the calendar's last quarter
    ],
)
def test_a_quarter_knows_its_days_and_hours(
    quarter: str, want_first: dt.date, want_last: dt.date, want_hours: int
) -> None:
    q = Quarter(quarter)
    assert (q.first_day, q.last_day, q.end) == (want_first, want_last, want_last + dt.timedelta(days=1))
    assert q.hours == quarter_hours(quarter) == want_hours
    assert quarter_bounds(quarter) == (want_first, want_last + dt.timedelta(days=1))
    assert quarter_of(want_first) == quarter_of(want_last) == q and type(quarter_of(want_first)) is Quarter


def test_quarters_add_subtract_and_sort_in_calendar_order() -> None:
    q = Quarter("2026Q3")
    assert (q + 1, q + 2, q + 6, q + -3) == ("2026Q4", "2027Q1", "2028Q1", "2025Q4")
    assert (q.next, q.previous) == ("2026Q4", "2026Q2")
    assert Quarter("2028Q1") - q == 6 and q - Quarter("2028Q1") == -6  # 2 left in 2026, 4 in 2027
    assert next_quarters("2026q3", 3) == ["2026Q3", "2026Q4", "2027Q1"]
    years = [Quarter("2100Q1"), Quarter("2027Q4"), Quarter("2027Q1"), Quarter("2000Q2")]
    assert sorted(years) == ["2000Q2", "2027Q1", "2027Q4", "2100Q1"]


@pytest.mark.parametrize(
    "text",
    [
        "1999Q4",  # before the calendar
        "2101Q1",  # after it
        "2027Q5",  # no fifth quarter
        "2027q1",  # the constructor takes the canonical spelling; `parse` accepts lower case
        "\uff12\uff10\uff12\uff17Q1",  # full-width digits, which int() would read as 2027
        "2027Q1 ",
    ],
)
def test_text_outside_the_calendar_is_refused_with_the_fix(text: str) -> None:
    with pytest.raises(QuarterError, match=r"not a quarter from 2000Q1 to 2100Q4 .* e\.g\. `2027Q1`"):
        Quarter(text)


def test_parse_names_where_the_text_was_read_and_arithmetic_stays_in_the_calendar() -> None:
    assert Quarter.parse("2027q2", "--start") == "2027Q2"
    with pytest.raises(QuarterError, match=r"^demand\.csv row 3: not a quarter .*\(got '2027Q9'\)"):
        Quarter.parse("2027Q9", "demand.csv row 3")
    with pytest.raises(QuarterError, match="got '2101Q1'"):
        Quarter("2100Q4") + 1


def test_a_pydantic_field_is_a_quarter_with_the_inventorys_pattern() -> None:
    class Row(BaseModel):
        quarter: Quarter

    row = Row(quarter="2027Q1")  # type: ignore[arg-type]
    assert type(row.quarter) is Quarter and row.model_dump_json() == '{"quarter":"2027Q1"}'
    assert Row.model_json_schema()["properties"]["quarter"] == {
        "pattern": QUARTER_PATTERN,
        "title": "Quarter",
        "type": "string",
    }
    with pytest.raises(ValidationError) as err:
        Row(quarter="2027Q5")  # type: ignore[arg-type]
    assert err.value.errors()[0]["type"] == "string_pattern_mismatch"  # the loader's message for QUARTER_PATTERN
