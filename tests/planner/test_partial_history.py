"""A usage history that begins inside a month (issue 37): the quarter in progress is metered from the history's
first hour, the part before it is neither metered nor planned (never billed as idle), and every view says so."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

import pandas as pd
import pytest

from quartermaster.metering import (
    check_usage,
    coverage_label,
    covered_month,
    inventory_records,
    meter,
    parse_period,
)
from quartermaster.planner import PlanOptions, plan
from quartermaster.reports.finance import build_report
from quartermaster.reports.metering.source import meter_source
from quartermaster.units import quarter_hours
from tests.planner.test_quarter_in_progress import metered_october

FROM_15TH = pd.date_range("2026-10-15", periods=17 * 24, freq="h")  # 2026-10-15 00:00 to the end of October
OPEN_Q4 = quarter_hours("2026Q4") - 31 * 24  # November and December: 1,464 hours
PART = "2026-10-15 00:00..2026-11-01 00:00"


def test_a_history_from_the_15th_meters_that_part_and_says_the_rest_is_not_counted(tmp_path: Path) -> None:
    """408 hours metered (17 days): 204 at 2 accelerators and 204 at 6 = 1,632 accelerator-hours on demand at $10 =
    $16,320.00. The 14 days before hold nothing: the pools keep no minimum, so nothing is idle there either, and the
    quarter costs the closed part plus the open part planned at the forecast mean of 4: 4 x $10 x 1,464 =
    $58,560.00, $74,880.00 in all."""
    inventory = metered_october(hours=FROM_15TH)
    result = plan(inventory, PlanOptions(horizon=2, gap_rel=1e-9))
    [closed] = result.closed_costs
    assert (closed.period, closed.start, closed.usd) == (PART, "2026-10-15T00:00:00", Decimal("16320"))
    assert closed.accelerator_hours == 204 * 2 + 204 * 6
    q4 = result.kpis[0]
    assert q4.cost_usd == pytest.approx(Decimal(16_320 + 4 * 10 * OPEN_Q4), abs=Decimal("0.01"))
    assert any(
        n.startswith(
            "2026Q4: the usage history begins 2026-10-15 00:00 UTC, so 2026-10-01 00:00..2026-10-15 00:00 "
            "(14 days) is neither metered nor planned"
        )
        for n in result.notes
    )
    # qm meter without --period (the records as a file): the same part, the same charge, named as a part
    inventory_records(inventory).to_csv(tmp_path / "usage.csv", index=False)
    metered, issues = meter_source(str(tmp_path / "usage.csv"), inventory, None)
    assert issues == [] and metered is not None
    assert (metered.period.label, metered.total_cost) == (f"2026-10, {PART} only (no usage records before)", 16320)
    # plan vs actual: the covered part, named as a part, planned (closed when planned) equal to metered
    [row] = build_report(inventory, result).table("plan_vs_actual").rows
    assert row.months == f"2026-10, {PART} only (no usage records before)"
    assert (row.planned, row.metered) == (Decimal("16320.00"), Decimal("16320.00"))


@pytest.mark.parametrize(
    ("first", "last", "want"),
    [
        ("2026-10-01 00:00", "2026-10-31 23:00", "2026-10"),  # the whole month
        ("2026-10-15 00:00", "2026-10-31 23:00", f"2026-10, {PART} only (no usage records before)"),
        # a history that begins at 05:00 covers its first day from midnight (a day with a record is covered)
        ("2026-10-15 05:00", "2026-10-31 23:00", f"2026-10, {PART} only (no usage records before)"),
        (
            "2026-10-01 00:00",
            "2026-10-19 23:00",
            "2026-10, 2026-10-01 00:00..2026-10-20 00:00 only (no usage records after)",
        ),
        (
            "2026-10-15 00:00",
            "2026-10-19 23:00",
            "2026-10, 2026-10-15 00:00..2026-10-20 00:00 only (no usage records before or after)",
        ),
    ],
)
def test_a_month_the_history_covers_in_part_is_named_as_that_part(first: str, last: str, want: str) -> None:
    records = pd.DataFrame({"hour": pd.to_datetime([first, last])})
    month = parse_period("2026-10")
    assert coverage_label(month, covered_month(records, month)) == want


def test_a_history_of_one_hour_meters_its_day() -> None:
    """One record, 2026-10-15 05:00 (2 accelerators at $10): the covered part is 2026-10-15 00:00..05:00's hour end,
    one day touched and recorded, so nothing is refused and the charge is 2 x $10 = $20.00 (the pools keep no
    minimum, so no idle). It was a SQL syntax error: a part of a day had no day to check."""
    inventory = metered_october(hours=pd.date_range("2026-10-15 05:00", periods=1, freq="h"))
    records, issues = check_usage(inventory_records(inventory), inventory)
    assert issues == []
    part = covered_month(records, parse_period("2026-10"))
    assert (part.start, part.end, len(part.days())) == (dt.datetime(2026, 10, 15), dt.datetime(2026, 10, 15, 6), 1)
    result, problems = meter(inventory, records, part)
    assert problems == [] and result is not None and result.total_cost == 20
