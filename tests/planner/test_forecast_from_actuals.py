"""A forecast that starts where the actuals end (issue 34, point 5): the open part of the quarter in progress
continues from the metered level, a trend is carried only as far as it was tried on the history's own days, the
open part has a band the report states, and a commitment is sized on a spread at least as wide as the history's."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from quartermaster.loader import load
from quartermaster.planner import PlanOptions, build_data, plan
from quartermaster.planner.usage_forecast import (
    METHODS,
    choose_method,
    forecast_band,
    forecast_by,
    forecast_hours,
    mean_difference,
    without_outages,
)
from quartermaster.reports.finance import build_report
from tests.paths import INVENTORY
from tests.planner.backtest import best_level, planner_curve, planner_forecast, planner_level, read_prices
from tests.planner.test_quarter_in_progress import OCTOBER, metered_october

NOV_DEC_MIDDLE = pd.Timedelta(days=30.5)
"""From the end of October 2026 to the middle of November and December (61 days): the scale the rest of 2026Q4's
forecast is carried to."""


def falling_late_october():
    """One team metered in October at 6 accelerators (of its pool's 8) for 26 days, then falling 1 a day over its last
    5 days (5, 4, 3, 2, 1), as tpu-research did on the example: a 7-day line through it points to 0 within days."""
    inventory = metered_october()
    levels = [6.0] * 26 + [5.0, 4.0, 3.0, 2.0, 1.0]
    usage = tuple(
        u.model_copy(update={"accelerators_used": levels[i // 24], "accelerators_requested": levels[i // 24]})
        for i, u in enumerate(inventory.usage)
    )
    return inventory.model_copy(update={"usage": usage})


def test_a_late_fall_is_not_carried_to_the_middle_of_the_rest_of_the_quarter():
    """The 7-day trend forecasts the next day best (the fall goes on day by day), but no day of a 31-day history can
    be forecast 30.5 days ahead from three days before it: Nov-Dec continue at October's metered mean,
    (26 x 6 + 5 + 4 + 3 + 2 + 1) / 31 = 5.52 accelerators, not at the line's end near 0."""
    inventory = falling_late_october()
    matrix = pd.DataFrame({"ml": [u.accelerators_requested for u in inventory.usage]}, index=OCTOBER)
    assert choose_method(matrix).method.name == "trend of the last 7 days"
    far = choose_method(matrix, NOV_DEC_MIDDLE)
    assert (far.method, far.held) == (METHODS[0], {})
    assert min(far.losses, key=far.losses.__getitem__) == "trend of the last 7 days"  # the best a day ahead, not held
    data = build_data(inventory, PlanOptions(horizon=2))
    [row] = data.forecast
    want_mean = (26 * 6 + 5 + 4 + 3 + 2 + 1) / 31
    assert (row.quarter, row.team, row.method, row.horizon_days) == ("2026Q4", "ml", "lookback", 30.5)
    assert row.forecast_hours == 61 * 24
    assert row.expected_accelerators == pytest.approx(want_mean)
    assert row.metered_accelerators == pytest.approx(want_mean)
    assert row.crps_accelerators == row.lookback_crps_accelerators == pytest.approx(far.losses["lookback"])
    assert not row.tried_at_horizon
    assert any("no other method can be tried on the history's days 30.5 days ahead" in n for n in data.notes)


def test_the_open_part_has_a_band_of_its_days():
    """Ten days whose means are 10, 20, ..., 100 (flat within each day), read by the lookback: the band is the 10th and
    90th percentile of the days' means, 19 and 91 (numpy's linear interpolation: 10 + 0.9 x 10, 100 - 0.9 x 10),
    around their mean 55."""
    index = pd.date_range("2026-10-01", periods=240, freq="h")
    matrix = pd.DataFrame({"ml": [10.0 * (1 + i // 24) for i in range(240)]}, index=index)
    band = forecast_band(forecast_by(matrix, METHODS[0]), index[-1] + pd.Timedelta(days=30))
    assert band["ml"] == pytest.approx((19.0, 55.0, 91.0))


def flat_with_a_calm_end() -> pd.Series:
    """Two weeks of GPUs around 120 with a daily swing of +-25 and noise of 15 (seeded), the last 3 days calm at 120
    +- 3: flat, but its last days spread far less than its hours do."""
    rng = np.random.default_rng(1)
    index = pd.date_range("2020-05-01", periods=24 * 14, freq="h")
    t = np.arange(len(index))
    gpus = 120 + 25 * np.sin(2 * np.pi * t / 24) + rng.normal(0, 15, len(t))
    gpus[-72:] = 120 + rng.normal(0, 3, 72)
    return pd.Series(gpus, index=index)


def test_a_flat_history_commits_no_more_than_the_lookback_level_of_the_same_hours():
    """Whatever method reads a flat history, the plan's commitment (1 and 3 years, a3-highgpu-8g list prices) is at
    most the lookback method's: the level that would have cost least over the same hours (best_level). The last 3
    days' level alone is spread less than the history (its mean difference), so its forecast takes the history's
    hours at its level instead; on those 3 calm days alone the 1-year commitment would be a node more."""
    hourly = flat_with_a_calm_end()
    origin = hourly.index[-1] + pd.Timedelta(hours=1)
    prices = read_prices()
    lookback = {term: best_level(hourly, prices[term], prices[0]) for term in (12, 36)}
    matrix, _ = without_outages(hourly.to_frame("helios"))
    for method in METHODS:
        curve = planner_curve(hourly, origin, forecast_by(matrix, method))
        for term in (12, 36):
            assert planner_level(curve, term, prices) <= lookback[term], (method.name, term)
    chosen = planner_curve(hourly, origin, planner_forecast(hourly, origin))
    assert all(planner_level(chosen, term, prices) <= lookback[term] for term in (12, 36))
    recent = forecast_by(matrix, METHODS[1])  # the level of the last 3 days
    assert METHODS[1].window_days == 3 and mean_difference(recent.hours["helios"].to_numpy()) < mean_difference(
        matrix["helios"].to_numpy()
    )
    assert len(forecast_hours(recent, origin)) == len(matrix)  # the whole history's hours, at the 3 days' level
    calm_days = best_level(hourly.iloc[-72:], prices[12], prices[0])
    assert calm_days == lookback[12] + 1


def test_on_rising_demand_the_plan_still_commits_to_the_growth():
    """Three weeks rising from 80 to 200 GPUs (+-25 a day, noise 15, seeded), split after two: the plan commits more
    than the lookback of the two weeks for both terms (it follows the rise) and no more than hindsight, the best
    level for the week after."""
    rng = np.random.default_rng(0)
    index = pd.date_range("2020-05-01", periods=24 * 21, freq="h")
    t = np.arange(len(index))
    hourly = pd.Series(80 + 120 * t / len(t) + 25 * np.sin(2 * np.pi * t / 24) + rng.normal(0, 15, len(t)), index)
    origin = index[24 * 14]
    prices = read_prices()
    curve = planner_curve(hourly, origin)
    before, after = hourly[hourly.index < origin], hourly[hourly.index >= origin]
    for term in (12, 36):
        nodes = planner_level(curve, term, prices)
        assert best_level(before, prices[term], prices[0]) < nodes <= best_level(after, prices[term], prices[0])


def test_the_example_reports_the_quarter_in_progress_with_its_method_and_a_band():
    """Done when (issue 34): on the example, 2026Q4's cost band has p10 < p90 although October is metered, and the
    report's source trail names where 2026Q4's demand comes from and the forecast method for its rest."""
    inventory = load(INVENTORY).inventory
    result = plan(inventory, PlanOptions(horizon=2))
    report = build_report(inventory, result, "2027Q1")
    [q4] = [r for r in report.table("cost_band").rows if r["quarter"] == "2026Q4"]
    assert q4["p10"] < q4["expected"] < q4["p90"]
    assert (
        "2026Q4: its metered hours as they were; its p10 and p90 for the rest are those of the forecast from the "
        'usage history (Sources and plan settings, "Forecast, 2026Q4")'
        in " ".join(report.table("cost_band").note.split())
    )
    trail = {r["item"]: r["value"] for r in report.table("source_trail").rows}
    assert trail["Demand"].startswith(
        "2026Q4: usage.csv as metered to 2026-11-01 00:00, forecast from usage.csv for the rest (1,464 hours); "
        "2027Q1: demand.csv"
    )
    assert trail["Forecast, 2026Q4"].startswith("lookback (mean CRPS ")
    assert "no day of the history can be forecast 30.5 days ahead" in trail["Forecast, 2026Q4"]
    # the forecast continues from October's metered level, team by team
    assert all(r.expected_accelerators == pytest.approx(r.metered_accelerators) for r in result.forecast)


def test_on_falling_demand_the_plan_commits_less_than_the_lookback():
    """The rising test's three weeks mirrored, falling from 200 to 80 GPUs: the plan commits less than the lookback
    of the two weeks (the level of the hours they hold) for both terms, and no less than hindsight."""
    rng = np.random.default_rng(0)
    index = pd.date_range("2020-05-01", periods=24 * 21, freq="h")
    t = np.arange(len(index))
    hourly = pd.Series(200 - 120 * t / len(t) + 25 * np.sin(2 * np.pi * t / 24) + rng.normal(0, 15, len(t)), index)
    origin = index[24 * 14]
    prices = read_prices()
    curve = planner_curve(hourly, origin)
    before, after = hourly[hourly.index < origin], hourly[hourly.index >= origin]
    for term in (12, 36):
        nodes = planner_level(curve, term, prices)
        assert best_level(after, prices[term], prices[0]) <= nodes < best_level(before, prices[term], prices[0])
