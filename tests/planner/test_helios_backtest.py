"""The rolling-origin backtest's pieces (bench/helios_backtest.py, issue 15 point 7): window cost, the hindsight
optimum, the split points, the planner's choice, and no look-ahead."""

from __future__ import annotations

from decimal import Decimal

import pandas as pd
import pytest

from quartermaster.planner.curves import curves_frame
from quartermaster.planner.usage_forecast import fit_trend, without_outages
from tests.planner.backtest import (
    FIRST_ORIGIN,
    ORIGIN_SETS,
    REGIME_TREND,
    TRACE,
    best_level,
    origins,
    planner_curve,
    planner_level,
    read_prices,
    regime_histories,
    team_regimes,
    window_cost,
    window_split,
)


def series(gpus: list[float], start: str = "2020-05-01") -> pd.Series:
    return pd.Series(gpus, index=pd.date_range(start, periods=len(gpus), freq="h"), dtype=float)


def test_window_cost_is_the_commitment_every_hour_plus_the_overflow_on_demand():
    """8, 16 and 24 GPUs against one node of 8: 3 hours x $2 committed, 0 + 1 + 2 node-hours on demand x $5."""
    assert window_cost(series([8, 16, 24]), 1, Decimal(2), Decimal(5)) == 3 * 2 + 3 * 5
    assert window_cost(series([8, 16, 24]), 0, Decimal(2), Decimal(5)) == 6 * 5


def test_window_split_is_used_and_idle_commitment_and_the_overflow_on_demand():
    """8, 16 and 24 GPUs against two nodes of 8 at $2 and $5 on demand: 1 + 2 + 2 node-hours used, 1 idle (the first
    hour), 1 on demand (the last): $10 + $2 + $5, window_cost's $17."""
    assert window_split(series([8, 16, 24]), 2, Decimal(2), Decimal(5)) == (10, 2, 5)
    assert sum(window_split(series([8, 16, 24]), 2, Decimal(2), Decimal(5))) == window_cost(
        series([8, 16, 24]), 2, Decimal(2), Decimal(5)
    )


@pytest.mark.parametrize(("commit", "nodes"), [(6, 1), (4, 2), (11, 0)])
def test_hindsight_optimum_on_a_hand_worked_series(commit, nodes):
    """0, 1, 2 and 2 nodes' worth of GPUs at $10 on demand: a node pays while the share of hours it is used
    exceeds commit / 10. The first node is used 3 hours of 4, the second 2: at $6 one node (44 against 50 for
    none and 48 for two), at $4 two (32 against 36), at $11 none (dearer than on demand)."""
    assert best_level(series([0, 8, 16, 16]), Decimal(commit), Decimal(10)) == nodes


def test_origins_a_week_in_every_two_days_while_a_whole_window_fits():
    """20 days from 1 May (to 21 May): the first origin a week in (8 May), the last with a WINDOW of 7 days after it
    (14 May); the odd days' set starts a day later (9 May) and ends at 13 May (15 + 7 days is past 21 May)."""
    twenty_days = series([1.0] * 24 * 20)
    assert origins(twenty_days) == list(pd.to_datetime(["2020-05-08", "2020-05-10", "2020-05-12", "2020-05-14"]))
    assert origins(twenty_days, ORIGIN_SETS["odd days"]) == list(
        pd.to_datetime(["2020-05-09", "2020-05-11", "2020-05-13"])
    )
    assert ORIGIN_SETS["even days"] == FIRST_ORIGIN


def test_the_planners_input_for_an_origin_ignores_every_later_hour():
    hourly = pd.read_csv(TRACE, parse_dates=["hour"]).groupby("hour")["demand_gpus_mean"].sum()
    origin = pd.Timestamp("2020-05-14")
    changed = hourly.where(hourly.index < origin, hourly * 3 + 100)
    pd.testing.assert_frame_equal(planner_curve(changed, origin), planner_curve(hourly, origin))
    assert not planner_curve(hourly, pd.Timestamp("2020-05-16")).equals(planner_curve(hourly, origin))


def test_the_planner_commits_to_the_critical_fractile_of_its_curve():
    """Half the hours at 10 nodes' worth of GPUs, half at 20: the 10 above the first are used half the time, so
    they pay for a term dearer than half the on-demand price only on demand (1 year, 61.43 / 88.56) and committed
    for a cheaper one (3 years, 38.89 / 88.56); the first 10 are used every hour and always committed."""
    prices = read_prices()
    curve = curves_frame(
        [
            {
                "team": "helios",
                "accelerator": "H100-80GB",
                "site": "",
                "quarter": "2020Q2",
                "scenario": "",
                "weight": 0.5,
                "level": level,
                "preemptible_share": 0.0,
                "bucket": b,
            }
            for b, level in enumerate((80.0, 160.0))
        ]
    )
    for term in (12, 36):
        assert planner_level(curve, term, prices) == (10 if prices[term] > prices[0] / 2 else 20)
    assert prices[12] > prices[0] / 2 > prices[36]


def test_regimes_are_told_by_each_teams_own_trend_and_the_falling_history_is_the_rising_one_reversed():
    """Issue 26, point 8: over 30 days one team grows from 10 to 20 GPUs (+100 % of its mean 15 a month: rising), one
    holds at 10 (flat), one falls from 20 to 10 (falling); REGIME_TREND is 20 % a month."""
    hours = pd.date_range("2020-05-01", periods=30 * 24, freq="h")
    ramp = [10 + 10 * i / len(hours) for i in range(len(hours))]
    trace = pd.concat(
        [
            pd.DataFrame({"hour": hours, "team": "up", "demand_gpus_mean": ramp}),
            pd.DataFrame({"hour": hours, "team": "even", "demand_gpus_mean": 10.0}),
            pd.DataFrame({"hour": hours, "team": "down", "demand_gpus_mean": ramp[::-1]}),
        ]
    )
    assert team_regimes(trace) == {"down": "falling", "even": "flat", "up": "rising"}
    histories = regime_histories(trace)
    assert histories["rising"].tolist() == pytest.approx(ramp)
    assert histories["falling"].tolist() == pytest.approx(ramp[::-1])
    assert list(histories["falling"].index) == list(hours)
    assert histories["flat"].tolist() == [10.0] * len(hours)


def test_each_regimes_history_is_in_its_regime_by_the_same_measure_on_the_real_trace():
    """Issue 26, point 8: the histories are judged as their teams are (Theil-Sen through the daily means, outage
    hours left out, as a share of the mean a month): rising above +REGIME_TREND, flat within it, falling below
    -REGIME_TREND (the falling history is the rising one reversed, so its trend is the rising one's negated)."""
    histories = regime_histories(pd.read_csv(TRACE, parse_dates=["hour"]))

    def monthly(history: pd.Series) -> float:
        hours, _ = without_outages(history.to_frame("x"))
        return fit_trend(hours["x"]).slope * 30 / float(hours["x"].mean())

    assert monthly(histories["rising"]) > REGIME_TREND
    assert -REGIME_TREND <= monthly(histories["flat"]) <= REGIME_TREND
    assert monthly(histories["falling"]) < -REGIME_TREND
