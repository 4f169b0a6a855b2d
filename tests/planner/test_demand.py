"""Demand for the planner (issue 15, point 6): usage history of any length from a day, outages as missing data,
and skewed quantile curves."""

from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

from quartermaster.cli import app
from quartermaster.planner import PlanInputError, PlanOptions
from quartermaster.planner.options import BANDS
from quartermaster.planner.usage_forecast import MIN_HISTORY_HOURS, demand_from_usage
from tests.builders import make_inventory


def with_usage(hourly: list[float], start: str = "2026-10-01T00:00:00"):
    """The builder's inventory (team ml, pool h100 of H100s) with one usage row per hour."""
    b = make_inventory()
    for hour, x in zip(pd.date_range(start, periods=len(hourly), freq="h"), hourly, strict=True):
        b.add("usage", hour=hour.isoformat(), cluster="gke-a", team="ml", flavor="h100", accelerators_used=x,
              accelerators_requested=x)
    return b


def curve(inventory, quarter: str = "2027Q1") -> list[float]:
    curves, _ = demand_from_usage(inventory, PlanOptions(start=quarter, horizon=1))
    return curves.sort_values("bucket")["level"].tolist()


def test_a_day_of_history_gives_a_curve_through_every_band():
    """Issue 15: 1..24 accelerators, one hour each. With 24 hours the bottom band (10 % = 2.4 hours) holds the
    hours of 1 and 2 and 0.4 of the hour of 3: (1 + 2 + 0.4 x 3) / 2.4 = 1.75; the top band (3 % = 0.72 hours)
    lies inside the hour of 24. One day has no trend, so the curve's mean is the history's, 12.5."""
    levels = curve(with_usage(list(range(1, 25))).build())
    assert levels[0] == pytest.approx(1.75)
    assert levels[-1] == pytest.approx(24.0)
    assert sum((hi - lo) * lv for (lo, hi), lv in zip(BANDS, levels, strict=True)) == pytest.approx(12.5)


def test_less_than_a_day_of_history_is_refused_with_what_it_needs(tmp_path):
    """Issue 15: 10 hours used to crash with `PulpError: Cannot set constraint RHS to NaN/inf`; now exit 2."""
    root = with_usage([4.0] * 10).write(tmp_path / "inv")
    (root / "usage.yaml").unlink()
    rows = with_usage([4.0] * 10).data["usage"]
    pd.DataFrame(rows).to_csv(root / "usage.csv", index=False)
    result = CliRunner().invoke(app, ["plan", str(root), "--from-usage", "--out", str(tmp_path / "plan")])
    assert result.exit_code == 2, result.output
    assert f"--from-usage needs at least {MIN_HISTORY_HOURS} hours of usage history with some use (a whole" \
        in " ".join(result.output.split())
    assert "got 10" in result.output and "Traceback" not in result.output


def test_hours_when_every_team_is_at_zero_are_missing_data_with_a_note():
    """Issue 15: hours of outage (every team at zero) after two busy days change nothing but the note; counted as
    demand they would pull the curve and the trend down. An outage day between them is named the same way."""
    day1, day2 = [float(8 + h % 5) for h in range(24)], [float(12 + h % 3) for h in range(24)]
    plain = with_usage(day1 + day2).build()
    curves, notes = demand_from_usage(with_usage(day1 + day2 + [0.0] * 5).build(), PlanOptions(start="2027Q1",
                                                                                              horizon=1))
    assert curves.sort_values("bucket")["level"].tolist() == curve(plain)
    assert notes == ("--from-usage: 5 hours in which every team's usage is zero (2026-10-03 00:00 to "
                     "2026-10-03 05:00) are treated as missing data (a cluster outage), not as zero demand",)
    _, notes = demand_from_usage(with_usage(day1 + [0.0] * 24 + day2).build(), PlanOptions(start="2027Q1", horizon=1))
    assert "24 hours" in notes[0] and "(2026-10-02 00:00 to 2026-10-03 00:00)" in notes[0]


def test_a_history_of_outages_only_is_refused():
    with pytest.raises(PlanInputError, match="got 0 after leaving out hours in which every team is at zero"):
        demand_from_usage(with_usage([0.0] * 48).build(), PlanOptions(start="2027Q1", horizon=1))
