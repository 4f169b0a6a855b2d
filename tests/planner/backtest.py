"""The rolling-origin backtest's method (bench/helios_backtest.py runs it on the Helios trace; its docstring says why
each choice): the split points, the cost of a commitment over a window, the hindsight optimum, and the planner's
input and choice for an origin. Here so that the tests check each piece and the bench imports it."""

from __future__ import annotations

import csv
import math
from decimal import Decimal
from pathlib import Path

import pandas as pd

from quartermaster.planner import PlanOptions, plan
from quartermaster.planner.curves import curves_frame
from quartermaster.planner.options import BANDS
from quartermaster.planner.usage_forecast import (
    Forecast,
    fit_trend,
    window_forecast,
    window_levels,
    without_outages,
)
from quartermaster.providers import validate_inventory
from tests.paths import REPO

TRACE = REPO / "data" / "helios" / "earth_vc_hourly.csv"
GPUS_PER_NODE = 8
SITE, MACHINE = "gcp-us-east4", "a3-highgpu-8g"
FIRST_ORIGIN = pd.Timedelta(days=7)
ORIGIN_STEP = pd.Timedelta(days=2)
WINDOW = pd.Timedelta(days=7)
ORIGIN_SETS = {"even days": FIRST_ORIGIN, "odd days": FIRST_ORIGIN + pd.Timedelta(days=1)}
"""The two sets of split points, every ORIGIN_STEP from a week in and from a day later (8, 10, ... and 9, 11, ...
May on the Helios trace): a figure is read on both, so a rule cannot be fitted to one set of dates."""


def read_prices(path: Path = REPO / "inventory" / "prices.csv") -> dict[int, Decimal]:
    """USD per node-hour of MACHINE at SITE: on-demand under 0, each commit term under its months."""
    with path.open(newline="") as f:
        return {
            0 if r["pricing_model"] == "on-demand" else int(r["term_months"]): Decimal(r["usd_per_node_hour"])
            for r in csv.DictReader(f)
            if (r["machine"], r["site"]) == (MACHINE, SITE) and r["pricing_model"] in ("on-demand", "commit")
        }


def window_cost(hourly: pd.Series, nodes: int, commit_price: Decimal, on_demand: Decimal) -> Decimal:
    """Cost of `nodes` committed over the hours of `hourly` (GPUs), every node-hour above them on demand."""
    return sum(window_split(hourly, nodes, commit_price, on_demand), Decimal(0))


def window_split(
    hourly: pd.Series, nodes: int, commit_price: Decimal, on_demand: Decimal
) -> tuple[Decimal, Decimal, Decimal]:
    """window_cost in three parts: the committed node-hours used, those left idle (both at the commit price), and
    the node-hours above the commitment on demand: where a method's cost goes."""
    overflow = float((hourly - nodes * GPUS_PER_NODE).clip(lower=0).sum()) / GPUS_PER_NODE
    idle = float((nodes * GPUS_PER_NODE - hourly).clip(lower=0).sum()) / GPUS_PER_NODE
    idle_usd = Decimal(f"{idle:.6f}") * commit_price
    return nodes * commit_price * len(hourly) - idle_usd, idle_usd, Decimal(f"{overflow:.6f}") * on_demand


def best_level(hourly: pd.Series, commit_price: Decimal, on_demand: Decimal) -> int:
    """The whole-node commitment that costs least over `hourly` (the fewest nodes among equals)."""
    levels = range(math.ceil(float(hourly.max()) / GPUS_PER_NODE) + 1)
    return min(levels, key=lambda n: (window_cost(hourly, n, commit_price, on_demand), n))


def origins(hourly: pd.Series, first: pd.Timedelta = FIRST_ORIGIN) -> list[pd.Timestamp]:
    """The split points: every ORIGIN_STEP from `first` after the start while a whole WINDOW fits."""
    start, end = hourly.index[0], hourly.index[-1] + pd.Timedelta(hours=1)
    return list(pd.date_range(start + first, end - WINDOW, freq=ORIGIN_STEP))


def planner_forecast(hourly: pd.Series, origin: pd.Timestamp) -> Forecast:
    """The usage forecast from the hours before `origin` only, read by the method it chooses at the window's middle
    (as --from-usage chooses at the middle of a quarter's forecast part)."""
    matrix, _ = without_outages(hourly[hourly.index < origin].to_frame("helios"))
    return window_forecast(matrix, WINDOW / 2)[0]


def planner_curve(hourly: pd.Series, origin: pd.Timestamp, forecast: Forecast | None = None) -> pd.DataFrame:
    """The planner's demand for the window after `origin`, from the hours before it only (planner_forecast, unless
    given), read as `qm plan --from-usage` reads a quarter (window_levels: carried to the window's middle and cut into
    the default bands)."""
    forecast = forecast or planner_forecast(hourly, origin)
    history = hourly[hourly.index < origin].to_frame("helios")
    levels = window_levels(history, forecast, origin, origin + WINDOW, origin, BANDS)["helios"]
    return curves_frame(
        [
            {
                "team": "helios",
                "accelerator": "H100-80GB",
                "site": "",
                "quarter": "2020Q2",
                "scenario": "",
                "weight": hi - lo,
                "level": level,
                "preemptible_share": 0.0,
                "bucket": b,
            }
            for b, ((lo, hi), level) in enumerate(zip(BANDS, levels, strict=True))
        ]
    )


def planner_level(curve: pd.DataFrame, term: int, prices: dict[int, Decimal]) -> int:
    """Nodes of `term` months the planner commits for `curve`, offered on-demand and that term only."""
    inventory = validate_inventory(
        {
            "sites": [{"name": SITE, "provider": "gcp", "region": "us-east4"}],
            "teams": [{"name": "helios", "cost_center": "CC-1", "owners": ["@helios"], "namespaces": ["helios"]}],
            "prices": [
                {
                    "machine": MACHINE,
                    "site": SITE,
                    "pricing_model": "on-demand",
                    "usd_per_node_hour": str(prices[0]),
                    "source": "inventory/prices.csv",
                },
                {
                    "machine": MACHINE,
                    "site": SITE,
                    "pricing_model": "commit",
                    "term_months": term,
                    "usd_per_node_hour": str(prices[term]),
                    "source": "inventory/prices.csv",
                },
            ],
        }
    )
    result = plan(inventory, PlanOptions(start="2020Q2", horizon=1, gap_rel=1e-9), demand_curves=curve)
    return int(result.frame("purchase_schedule")["nodes"].sum()) if result.purchase_schedule else 0


REGIME_TREND = 0.20
"""A team's regime: its own trend over the whole month (Theil-Sen through its daily means, outage hours left out) as
a share of its mean demand: above +REGIME_TREND rising, below -REGIME_TREND falling, else flat. Fixed before any
regime was costed."""
REGIMES = ("rising", "flat", "falling")


def team_regimes(trace: pd.DataFrame) -> dict[str, str]:
    """Each Helios team (VC) -> its regime (REGIME_TREND)."""
    matrix, _ = without_outages(trace.pivot_table(index="hour", columns="team", values="demand_gpus_mean"))
    out = {}
    for team, series in matrix.items():
        trend, mean = fit_trend(series), float(series.mean())
        monthly = trend.slope * 30 / mean if mean > 0 else 0.0
        out[str(team)] = "rising" if monthly > REGIME_TREND else "falling" if monthly < -REGIME_TREND else "flat"
    return out


def regime_histories(trace: pd.DataFrame) -> dict[str, pd.Series]:
    """Hourly demand per regime, all real Helios Earth hours: the whole cluster (`all`, the backtest's first
    history); the teams whose own demand rises over the month (`rising`) and those whose demand holds (`flat`); and
    the rising teams' hours in reverse order (`falling`: a decline as steady as their growth, with the same daily
    and weekly swings, mirrored). The teams whose own month falls (team_regimes) fall only in its last week, after a
    rise: no history before it shows the decline, so they are a trend reversal, not a falling history."""
    regimes = team_regimes(trace)

    def teams(regime: str) -> pd.Series:
        chosen = [t for t, r in regimes.items() if r == regime]
        return trace[trace["team"].isin(chosen)].groupby("hour")["demand_gpus_mean"].sum()

    rising = teams("rising")
    return {
        "all": trace.groupby("hour")["demand_gpus_mean"].sum(),
        "rising": rising,
        "flat": teams("flat"),
        "falling": pd.Series(rising.to_numpy()[::-1], index=rising.index),
    }
