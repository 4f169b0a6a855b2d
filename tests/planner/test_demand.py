"""Demand for the planner (issue 15, point 6): usage history of any length from a day, outages as missing data,
and skewed quantile curves."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from quartermaster.cli import app
from quartermaster.demand_quantiles import quantile_at, quantile_curve
from quartermaster.model import DemandRow
from quartermaster.planner import PlanInputError, PlanOptions, plan
from quartermaster.planner.options import BANDS
from quartermaster.planner.usage_forecast import (
    DAYS_PER_QUARTER,
    MAX_TREND,
    METHODS,
    MIN_HISTORY_HOURS,
    Forecast,
    carried,
    choose_method,
    crps,
    demand_from_usage,
    fit_trend,
    forecast_by,
    window_levels,
)
from quartermaster.units import quarter_hours
from tests.builders import make_inventory
from tests.planner.planning import EXACT, one_site


def levels_at(forecast: Forecast, when: pd.Timestamp) -> dict:
    """Band levels of `forecast`'s hours carried to `when`: window_levels over the two hours around it, none metered
    (the way --from-usage reads the forecast part of a quarter)."""
    start = when - pd.Timedelta(hours=1)
    return window_levels(forecast.hours, forecast, start, when + pd.Timedelta(hours=1), start, BANDS)


def trend_forecast(history: pd.DataFrame) -> Forecast:
    """`history` read by the whole history's trend (METHODS' "trend")."""
    return forecast_by(history, next(m for m in METHODS if m.trend and m.window_days is None))


def with_usage(hourly: list[float], start: str = "2026-10-01T00:00:00"):
    """The builder's inventory (team ml, pool h100 of H100s) with one usage row per hour."""
    b = make_inventory()
    for hour, x in zip(pd.date_range(start, periods=len(hourly), freq="h"), hourly, strict=True):
        b.add(
            "usage",
            hour=hour.isoformat(),
            cluster="gke-a",
            team="ml",
            flavor="h100",
            accelerators_used=x,
            accelerators_requested=x,
        )
    return b


def curve(inventory, quarter: str = "2027Q1") -> list[float]:
    curves, *_ = demand_from_usage(inventory, PlanOptions(start=quarter, horizon=1))
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
    assert f"--from-usage needs at least {MIN_HISTORY_HOURS} hours of usage history with some use (a whole" in " ".join(
        result.output.split()
    )
    assert "got 10" in result.output and "Traceback" not in result.output


def test_hours_when_every_team_is_at_zero_are_missing_data_with_a_note():
    """Issue 15: hours of outage (every team at zero) after two busy days change nothing but the note; counted as
    demand they would pull the curve and the trend down. An outage day between them is named the same way."""
    day1, day2 = [float(8 + h % 5) for h in range(24)], [float(12 + h % 3) for h in range(24)]
    plain = with_usage(day1 + day2).build()
    curves, notes, _ = demand_from_usage(
        with_usage(day1 + day2 + [0.0] * 5).build(), PlanOptions(start="2027Q1", horizon=1)
    )
    assert curves.sort_values("bucket")["level"].tolist() == curve(plain)
    assert notes == (
        "usage history: 5 hours in which every team's usage is zero (2026-10-03 00:00 to "
        "2026-10-03 05:00) are treated as missing data (a cluster outage), not as zero demand",
        # two days of use: no day has HOLDOUT_FIRST_DAY (3) days before it to try a method on
        "2027Q1: forecast method: lookback (the usage history is too short to try the methods on its own days: each "
        "needs 3 calendar days before it)",
    )
    _, notes, _ = demand_from_usage(
        with_usage(day1 + [0.0] * 24 + day2).build(), PlanOptions(start="2027Q1", horizon=1)
    )
    assert "24 hours" in notes[0] and "(2026-10-02 00:00 to 2026-10-03 00:00)" in notes[0]


def test_a_history_of_outages_only_is_refused():
    with pytest.raises(PlanInputError, match="got 0 after leaving out hours in which every team is at zero"):
        demand_from_usage(with_usage([0.0] * 48).build(), PlanOptions(start="2027Q1", horizon=1))


def hours_of(values_per_hour, days: int, start: str = "2026-10-01") -> pd.Series:
    """`days` of hours from `start`, each hour's value a function of its middle, in days after `start`."""
    index = pd.date_range(start, periods=24 * days, freq="h")
    return pd.Series([values_per_hour((i + 0.5) / 24) for i in range(len(index))], index=index)


def test_the_trend_is_theil_sen_so_one_odd_day_does_not_move_it():
    """Days at 10, 12, 14, 100, 18 (flat within the day): of the ten slopes between two days, the six that leave
    out day 4 are 2 and the other four are 30, 44, 86 and -82, so the median is 2 (least squares would give
    10.4); the line is 10 + 2i at the middle of day i, so 10 + 2 x 4.5 = 19 where the history ends."""
    days = [10.0, 12.0, 14.0, 100.0, 18.0]
    trend = fit_trend(hours_of(lambda t: days[int(t)], len(days)))
    assert trend.slope == pytest.approx(2.0)
    assert trend.level == pytest.approx(19.0)
    assert trend.growth == MAX_TREND  # 2 a day on 19 is 9.6 a quarter, clamped


def test_history_carried_by_its_trend_inside_and_past_the_history():
    """A ramp of 0.1 a day from 100, hour by hour: every hour carried to a time lands on the line there. 30 days past
    the end the growth (0.1 x 91.3125 / 101 a quarter, under MAX_TREND) continues the line; a ramp of 10 a day is
    held to MAX_TREND a quarter past the end."""
    slow = hours_of(lambda t: 100 + 0.1 * t, 10)
    end = slow.index[-1] + pd.Timedelta(hours=1)  # the line is 100 + 0.1 x 10 = 101 there
    for when, level in (
        (slow.index[0] + pd.Timedelta(days=5), 100.5),
        (end, 101.0),
        (end + pd.Timedelta(days=30), 101 + 0.1 * 30),
    ):
        assert carried(slow, fit_trend(slow), when).tolist() == pytest.approx([level] * len(slow))
    fast = hours_of(lambda t: 100 + 10 * t, 10)
    later = carried(fast, fit_trend(fast), end + pd.Timedelta(days=DAYS_PER_QUARTER))
    assert later.tolist() == pytest.approx([(100 + 10 * 10) * (1 + MAX_TREND)] * len(fast))


def test_the_buckets_keep_each_hours_shape_around_the_trend():
    """A flat week alternating 8 and 12 by the hour has no trend: its bands are the hours as they were."""
    week = hours_of(lambda t: 8.0 if int(t * 24) % 2 == 0 else 12.0, 7).to_frame("ml")
    levels = levels_at(trend_forecast(week), week.index[-1] + pd.Timedelta(days=60))
    assert levels["ml"] == pytest.approx([8.0] * 3 + [12.0] * 4)  # bands below half the hours at 8, above it 12


def test_crps_is_the_mean_distance_to_the_actual_less_half_the_samples_spread():
    """Sample {0, 2} against 1: E|X - 1| = 1, E|X - X'| = (0 + 2 + 2 + 0) / 4 = 1, so 1 - 1/2; a point at 3 against
    1 and 5 is 2 away from each."""
    assert crps(np.array([0.0, 2.0]), np.array([1.0])) == pytest.approx(0.5)
    assert crps(np.array([3.0]), np.array([1.0, 5.0])) == pytest.approx(2.0)


def test_a_history_whose_days_are_noise_around_a_level_is_read_at_its_level():
    """Issue 26, point 8: days alternating 90 and 110 (each flat within the day), starting low, so the line through
    them rises a little: carried by a trend the next days would be forecast higher than they come; the lookback
    forecasts every day as the same 90/110 mix and does best."""
    week = hours_of(lambda t: 90.0 if int(t) % 2 == 0 else 110.0, 14).to_frame("ml")
    choice = choose_method(week)
    method, losses = choice.method, choice.losses
    assert method == METHODS[0] and method.name == "lookback"
    assert losses["lookback"] == min(losses.values())


def test_methods_are_tried_from_the_fourth_calendar_day_even_when_the_history_starts_within_a_day():
    """Review of issue 26: three whole days give no day to try a method on; an hour of a fourth day gives one. A
    history from noon of its first day is tried on its fourth calendar day too (two and a half days before it)."""
    ramp = hours_of(lambda t: 100 + 10 * t, 4)
    assert choose_method(ramp.iloc[:72].to_frame("ml")).losses == {}
    assert len(choose_method(ramp.iloc[:73].to_frame("ml")).losses) == len(METHODS)
    from_noon = ramp.iloc[12:].to_frame("ml")  # 1 October 12:00 to the end of 4 October
    assert len(choose_method(from_noon).losses) == len(METHODS)


def test_a_steady_ramp_is_followed_by_its_trend():
    """A ramp of 10 a day from 100: the trend carries every earlier hour onto the line at the forecast's time, so
    its forecasts of each day are the closest (the lookback and the last days' level lag by days)."""
    ramp = hours_of(lambda t: 100 + 10 * t, 10).to_frame("ml")
    choice = choose_method(ramp)
    method, losses = choice.method, choice.losses
    assert method.trend
    assert losses["lookback"] > losses["level of the last 3 days"] > losses[method.name]


def test_a_decline_after_a_rise_is_followed_down_by_the_recent_trend():
    """Issue 26, point 8 (a forecast that knew only growth): 12 days rising 10 a day from 100, then 8 days falling 10
    a day. The whole history's line still rises; the last 7 days' line falls, forecasts the falling days best, and
    the week after the history is forecast below its last day on average (where a rising line would put it above;
    its hours are spread as the history's, so its busiest band is above it)."""
    days = [100 + 10 * d for d in range(12)] + [210 - 10 * d for d in range(1, 9)]
    history = hours_of(lambda t: days[int(t)], len(days)).to_frame("ml")
    method = choose_method(history).method
    assert method.name == "trend of the last 7 days"
    forecast = forecast_by(history, method)
    end = history.index[-1] + pd.Timedelta(hours=1)
    levels = levels_at(forecast, end + pd.Timedelta(days=7))["ml"]
    assert sum((hi - lo) * level for (lo, hi), level in zip(BANDS, levels, strict=True)) < days[-1]
    assert fit_trend(history["ml"]).slope > 0


P = NormalDist()
SIGMA = math.log(3) / P.inv_cdf(0.9)  # p50 = 10, p90 = 30: the lognormal's sigma


def test_p50_and_p90_are_fitted_with_a_lognormal():
    """Issue 15: median 10 and p90 30 is right-skewed demand. The lognormal through them has mean
    10 exp(sigma^2 / 2) = 14.44 (a normal with mean p50 said 10), and its halves have the means
    2 x 14.44 x Phi(-sigma) and 2 x 14.44 x Phi(sigma) (the partial expectation of a lognormal)."""
    mean = 10 * math.exp(SIGMA**2 / 2)
    assert sum(w * lv for w, lv in quantile_curve({0.5: 10, 0.9: 30}, BANDS)) == pytest.approx(mean, rel=1e-12)
    assert quantile_curve({0.5: 10, 0.9: 30}, ((0, 0.5), (0.5, 1))) == [
        (0.5, pytest.approx(2 * mean * P.cdf(-SIGMA), rel=1e-12)),
        (0.5, pytest.approx(2 * mean * P.cdf(SIGMA))),
    ]


NARROW = 1e-6


def at(quantiles: dict[float, float], p: float) -> float:
    """The fitted curve's level in a band of width 2e-6 around share p: Q(p)."""
    bands = ((0.0, p - NARROW), (p - NARROW, p + NARROW), (p + NARROW, 1.0))
    return quantile_curve(quantiles, bands)[1][1]


@pytest.mark.parametrize(
    "quantiles",
    [
        {0.5: 10, 0.9: 30},  # the lognormal
        {0.1: 2, 0.5: 10, 0.9: 30, 0.99: 45},  # p10 and p99 given: a thinner upper tail than the lognormal's
        {0.1: 0, 0.5: 0, 0.9: 8},  # idle half the time: zero below p50, linear in z up to p90
    ],
)
def test_the_curve_passes_through_every_given_quantile(quantiles):
    for p, want in quantiles.items():
        assert at(quantiles, p) == pytest.approx(want, rel=1e-5, abs=1e-5)


@pytest.mark.parametrize(
    "quantiles", [{0.5: 10, 0.9: 30}, {0.1: 2, 0.5: 10, 0.9: 30, 0.99: 45}, {0.1: 0, 0.5: 0, 0.9: 8}, {0.5: 8, 0.9: 8}]
)
@pytest.mark.parametrize("p", [0.02, 0.1, 0.3, 0.5, 0.75, 0.95, 0.995])
def test_quantile_at_is_the_curve_quantile_curve_fits(quantiles, p):
    """quantile_at reads the same fitted Q as the bands' means: a narrow band around p has Q(p) for its level."""
    assert quantile_at(quantiles, p) == pytest.approx(at(quantiles, p), rel=1e-5, abs=1e-5)


def test_quantile_at_p10_of_a_lognormal_and_of_a_given_p10():
    """p50 8 and p90 16: ln Q is symmetric about ln 8 in z, so Q(0.1) = 8 / (16 / 8) = 4; a given p10 is returned
    as written."""
    assert quantile_at({0.5: 8, 0.9: 16}, 0.1) == pytest.approx(8 * 8 / 16, rel=1e-12)
    assert quantile_at({0.1: 5, 0.5: 8, 0.9: 16}, 0.1) == 5.0


def test_p99_bends_the_upper_tail():
    """Above p90 the lognormal's Q(0.99) is 10 exp(sigma z_0.99) = 71.7; a given p99 of 45 holds the top there."""
    assert at({0.5: 10, 0.9: 30}, 0.99) == pytest.approx(10 * math.exp(SIGMA * P.inv_cdf(0.99)), rel=1e-5)
    assert quantile_curve({0.5: 10, 0.9: 30, 0.99: 45}, BANDS)[-1][1] < quantile_curve({0.5: 10, 0.9: 30}, BANDS)[-1][1]


def test_quantiles_out_of_order_are_refused_with_both_names():
    with pytest.raises(ValueError, match=r"p99 \(20.0\) is below p90 \(30.0\); p99 must be at least p90"):
        DemandRow(period="2027Q1", team="ml", accelerator="H100-80GB", p50=10, p90=30, p99=20)


def test_a_plan_prices_skewed_demand_at_the_lognormal_mean():
    """All on demand at $10 per L4-hour: expected cost = 10 x H x 10 exp(sigma^2 / 2) for p50 10, p90 30."""
    inventory = one_site(on_demand=10).add("demand", period="2027Q1", team="ml", accelerator="L4", p50=10, p90=30)
    result = plan(inventory.build(), PlanOptions(start="2027Q1", horizon=1, **EXACT))
    want = 10 * quarter_hours("2027Q1") * 10 * math.exp(SIGMA**2 / 2)
    assert float(result.expected_cost_usd) == pytest.approx(want, abs=0.01)
