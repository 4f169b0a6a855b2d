"""Rolling-origin backtest on the real Helios trace: the planner against the cloud recommenders' method and hindsight.

    .venv/bin/python -m bench.helios_backtest

Data: `data/helios/earth_vc_hourly.csv` (SenseTime Helios "Earth", May 2020, 16 teams, MIT licence; see
data/helios/README.md). Hourly demand = sum over teams of `demand_gpus_mean` (running + pending GPUs).

Split points (origins): every ORIGIN_STEP from a week after the trace's start (a week being the shortest
lookback the recommenders offer) while a whole costing window of WINDOW still fits: 8, 10, ..., 24 May; and the
same from a day later, 9, 11, ..., 25 May (ORIGIN_SETS). Every figure is printed for both sets, so a rule cannot
be fitted to one set of dates. Each method sees only the hours before the origin and is costed on the WINDOW after
it, out of sample. These constants are the same for every origin. The forecast's method (planner/usage_forecast.py,
choose_method) is chosen at each origin from the hours before it only, among the methods that hold at the window's
middle (3.5 days ahead); the set of methods and the holdout that chooses were settled after variants were run on this
backtest's even days (docs/explanation/placement-and-forecast.md lists them and their figures).

Prices: a3-highgpu-8g in gcp-us-east4 from inventory/prices.csv (on-demand, 1-year and 3-year commit, per node-hour
of 8 H100s; the rows cite Cyclenerd pricing.yml fd66b26, 2026-07-30). Commitments are whole nodes, paid every hour
of the window; every GPU-hour above them runs on demand. Each term is evaluated on its own:

- Recommender (the method of AWS Savings Plans, Azure reservations and GCP's CUD recommender: simulate every
  level over a lookback; e.g. learn.microsoft.com/azure/cost-management-billing/reservations/
  reserved-instance-purchase-recommendations, cloud.google.com/docs/cuds-recommender): the level that would have
  cost least over the lookback (every hour before the origin, as billed: outage hours count as zero use).
- Planner: `planner.plan` on the usage forecast a user gets from `qm plan --from-usage` (outage hours left out,
  read by the method that forecast the history's own days best, carried to the costing window's middle, cut into
  the planner's default bands).
- Hindsight: the level that costs least over the costing window itself (knowing it).

Share of the gap: (recommender's cost - planner's) / (recommender's - hindsight's), summed over the rows.

The method's pieces (split points, window cost, hindsight optimum, the planner's input and choice) are in
tests/planner/backtest.py, where the tests check each one; this script runs them over the trace and prints the rows.

Regimes (issue 26): the same backtest on the whole cluster, on two real sub-fleets of it (the teams whose own
demand rises or holds over the month: team_regimes, REGIME_TREND) and on the rising teams' hours reversed (a
decline), so the forecast is judged on growth, a plateau and a decline. Each row names the method the plan's
forecast chose; each history ends with where each method's cost went (committed hours left idle, on demand). The
last table gives, per regime and set of split points, the gap closed and the rows in which the planner costs more
than the recommender (the lookback method), and the least share over regimes and both sets.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal

import pandas as pd

from quartermaster.planner.usage_forecast import fit_trend, without_outages
from tests.planner.backtest import (
    ORIGIN_SETS,
    ORIGIN_STEP,
    TRACE,
    WINDOW,
    best_level,
    origins,
    planner_curve,
    planner_forecast,
    planner_level,
    read_prices,
    regime_histories,
    team_regimes,
    window_cost,
    window_split,
)

TERMS = (12, 36)


@dataclass(frozen=True)
class Row:
    """One origin and term: whole nodes and out-of-sample cost (USD) of each method, and all on demand."""

    origin: pd.Timestamp
    term: int
    on_demand: Decimal
    nodes: dict[str, int]
    cost: dict[str, Decimal]
    split: dict[str, tuple[Decimal, Decimal, Decimal]]
    """Per method: committed node-hours used, committed left idle, on demand (window_split)."""
    method: str
    """The forecast method the plan from usage chose from the hours before the origin."""

    def saving(self, method: str) -> float:
        return float(1 - self.cost[method] / self.on_demand)


METHODS = ("recommender", "planner", "hindsight")


def evaluate(hourly: pd.Series, prices: dict[int, Decimal], first: pd.Timedelta) -> list[Row]:
    """Every origin (from `first` after the start) and term, each method fed as its docstring says and costed on the
    window after the origin."""
    rows = []
    for origin in origins(hourly, first):
        train = hourly[hourly.index < origin]
        test = hourly[(hourly.index >= origin) & (hourly.index < origin + WINDOW)]
        forecast = planner_forecast(hourly, origin)
        curve = planner_curve(hourly, origin, forecast)
        for term in TERMS:
            nodes = {
                "recommender": best_level(train, prices[term], prices[0]),
                "planner": planner_level(curve, term, prices),
                "hindsight": best_level(test, prices[term], prices[0]),
            }
            rows.append(
                Row(
                    origin,
                    term,
                    window_cost(test, 0, prices[term], prices[0]),
                    nodes,
                    {m: window_cost(test, n, prices[term], prices[0]) for m, n in nodes.items()},
                    {m: window_split(test, n, prices[term], prices[0]) for m, n in nodes.items()},
                    forecast.method.name,
                )
            )
    return rows


def gap_share(rows: list[Row]) -> float:
    """Share of the recommender -> hindsight cost gap the planner closes, summed over `rows`."""
    gap = sum((r.cost["recommender"] - r.cost["hindsight"] for r in rows), Decimal(0))
    won = sum((r.cost["recommender"] - r.cost["planner"] for r in rows), Decimal(0))
    return float(won / gap) if gap else math.nan


def print_rows(rows: list[Row]) -> None:
    """Each row's nodes, saving and cost per method, the averages, and where each method's cost went."""
    print(
        f"{'origin':<10} {'term':>4} {'on-demand $':>12} | {'recommender':>18} | {'planner':>18} | "
        f"{'hindsight':>18} | gap closed | the plan's forecast method"
    )
    for r in rows:
        cells = " | ".join(f"{r.nodes[m]:>3} n {r.saving(m):>6.1%} ${float(r.cost[m]) / 1e3:>5,.0f}k" for m in METHODS)
        print(
            f"{r.origin:%Y-%m-%d} {r.term:>3}m {float(r.on_demand):>12,.0f} | {cells} | {gap_share([r]):>10.0%} | "
            f"{r.method}"
        )
    for label, subset in [(f"{t}-month", [r for r in rows if r.term == t]) for t in TERMS] + [("all", rows)]:
        means = "  ".join(f"{m} {sum(r.saving(m) for r in subset) / len(subset):.2%}" for m in METHODS)
        print(f"average, {label:<8}: {means}; planner closes {gap_share(subset):.1%} of the gap")
    parts = "; ".join(
        f"{m} ${sum(float(r.split[m][1]) for r in rows) / 1e3:,.0f}k idle, "
        f"${sum(float(r.split[m][2]) for r in rows) / 1e3:,.0f}k on demand"
        for m in METHODS
    )
    print(f"where the cost goes, over the rows: {parts}")


def main() -> None:
    trace = pd.read_csv(TRACE, parse_dates=["hour"])
    prices = read_prices()
    regimes = team_regimes(trace)
    print(
        f"Helios Earth, every {ORIGIN_STEP.days} days from a week in (even days) and from 8 days in (odd days), each "
        f"costing the {WINDOW.days} days after it out of sample at list prices; per method: nodes of 8 H100s "
        "committed, saving against all on-demand in the window, cost in the window (USD)"
    )
    summary: dict[tuple[str, str], list[Row]] = {}
    for name, hourly in regime_histories(trace).items():
        members = {"all": set(regimes.values()), "falling": {"rising"}}.get(name, {name})
        teams = sorted(t for t, r in regimes.items() if r in members)
        matrix, _ = without_outages(hourly.to_frame("x"))
        trend = fit_trend(matrix["x"])
        for dates, first in ORIGIN_SETS.items():
            print(
                f"\n{name}{' (reversed)' if name == 'falling' else ''}, {dates}: {len(teams)} teams "
                f"({', '.join(teams)}); mean {float(matrix['x'].mean()):.0f} GPUs, trend "
                f"{trend.slope * 30 / float(matrix['x'].mean()):+.0%} a month"
            )
            summary[name, dates] = evaluate(hourly, prices, first)
            print_rows(summary[name, dates])
    print(
        "\nregime    origins    saving: recommender   planner  hindsight | gap closed | rows the planner costs more "
        "than the recommender (lookback)"
    )
    for (name, dates), rows in summary.items():
        means = [sum(r.saving(m) for r in rows) / len(rows) for m in METHODS]
        worse = sum(r.cost["planner"] > r.cost["recommender"] for r in rows)
        print(
            f"{name:<9} {dates:<9} {means[0]:>19.2%} {means[1]:>9.2%} {means[2]:>10.2%} | "
            f"{gap_share(rows):>10.1%} | {worse} of {len(rows)}"
        )
    (name, dates), rows = min(summary.items(), key=lambda item: gap_share(item[1]))
    print(f"least share over regimes and both sets of origins: {gap_share(rows):.1%} ({name}, {dates})")


if __name__ == "__main__":
    main()
