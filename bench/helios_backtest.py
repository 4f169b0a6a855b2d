"""Rolling-origin backtest on the real Helios trace: the planner against the cloud recommenders' method and hindsight.

    .venv/bin/python -m bench.helios_backtest

Data: `data/helios/earth_vc_hourly.csv` (SenseTime Helios "Earth", May 2020, 16 teams, MIT licence; see
data/helios/README.md). Hourly demand = sum over teams of `demand_gpus_mean` (running + pending GPUs).

Split points (origins): every ORIGIN_STEP from a week after the trace's start (a week being the shortest
lookback the recommenders offer) while a whole costing window of WINDOW still fits: 8, 10, ..., 24 May. Each
method sees only the hours before the origin and is costed on the WINDOW after it, out of sample. These
constants and the forecast's (planner/usage_forecast.py) were fixed before any costing window was looked at,
and are the same for every origin.

Prices: a3-highgpu-8g in gcp-us-east4 from inventory/prices.csv (on-demand, 1-year and 3-year commit, per node-hour
of 8 H100s; the rows cite Cyclenerd pricing.yml fd66b26, 2026-07-30). Commitments are whole nodes, paid every hour
of the window; every GPU-hour above them runs on demand. Each term is evaluated on its own:

- Recommender (the method of AWS Savings Plans, Azure reservations and GCP's CUD recommender: simulate every
  level over a lookback; e.g. learn.microsoft.com/azure/cost-management-billing/reservations/
  reserved-instance-purchase-recommendations, cloud.google.com/docs/cuds-recommender): the level that would have
  cost least over the lookback (every hour before the origin, as billed: outage hours count as zero use).
- Planner: `planner.plan` on the usage forecast a user gets from `qm plan --from-usage` (outage hours left out,
  the hours carried to the costing window's middle by the robust trend, cut into the planner's default bands).
- Hindsight: the level that costs least over the costing window itself (knowing it).

Share of the gap: (recommender's cost - planner's) / (recommender's - hindsight's), summed over the rows.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import pandas as pd

from quartermaster.model import Inventory
from quartermaster.planner import PlanOptions, plan
from quartermaster.planner.curves import curves_frame
from quartermaster.planner.options import BANDS
from quartermaster.planner.usage_forecast import fit_trend, forecast_levels, without_outages

ROOT = Path(__file__).resolve().parent.parent
TRACE = ROOT / "data" / "helios" / "earth_vc_hourly.csv"
GPUS_PER_NODE = 8
SITE, MACHINE = "gcp-us-east4", "a3-highgpu-8g"
TERMS = (12, 36)
FIRST_ORIGIN = pd.Timedelta(days=7)
ORIGIN_STEP = pd.Timedelta(days=2)
WINDOW = pd.Timedelta(days=7)


def read_prices(path: Path = ROOT / "inventory" / "prices.csv") -> dict[int, Decimal]:
    """USD per node-hour of MACHINE at SITE: on-demand under 0, each commit term under its months."""
    with path.open(newline="") as f:
        return {
            0 if r["pricing_model"] == "on-demand" else int(r["term_months"]): Decimal(r["usd_per_node_hour"])
            for r in csv.DictReader(f)
            if (r["machine"], r["site"]) == (MACHINE, SITE) and r["pricing_model"] in ("on-demand", "commit")
        }


def window_cost(hourly: pd.Series, nodes: int, commit_price: Decimal, on_demand: Decimal) -> Decimal:
    """Cost of `nodes` committed over the hours of `hourly` (GPUs), every GPU-hour above them on demand."""
    overflow = float((hourly - nodes * GPUS_PER_NODE).clip(lower=0).sum()) / GPUS_PER_NODE
    return nodes * commit_price * len(hourly) + Decimal(f"{overflow:.6f}") * on_demand


def best_level(hourly: pd.Series, commit_price: Decimal, on_demand: Decimal) -> int:
    """The whole-node commitment that costs least over `hourly` (the fewest nodes among equals)."""
    levels = range(math.ceil(float(hourly.max()) / GPUS_PER_NODE) + 1)
    return min(levels, key=lambda n: (window_cost(hourly, n, commit_price, on_demand), n))


def origins(hourly: pd.Series) -> list[pd.Timestamp]:
    """The split points: every ORIGIN_STEP from FIRST_ORIGIN after the start while a whole WINDOW fits."""
    start, end = hourly.index[0], hourly.index[-1] + pd.Timedelta(hours=1)
    return list(pd.date_range(start + FIRST_ORIGIN, end - WINDOW, freq=ORIGIN_STEP))


def planner_curve(hourly: pd.Series, origin: pd.Timestamp) -> pd.DataFrame:
    """The planner's demand for the window after `origin`, from the hours before it only (as --from-usage)."""
    matrix, _ = without_outages(hourly[hourly.index < origin].to_frame("helios"))
    middle = origin + WINDOW / 2
    levels = forecast_levels(matrix, {"helios": fit_trend(matrix["helios"])}, middle, BANDS)["helios"]
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
    inventory = Inventory.model_validate(
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


@dataclass(frozen=True)
class Row:
    """One origin and term: whole nodes and out-of-sample cost (USD) of each method, and all on demand."""

    origin: pd.Timestamp
    term: int
    on_demand: Decimal
    nodes: dict[str, int]
    cost: dict[str, Decimal]

    def saving(self, method: str) -> float:
        return float(1 - self.cost[method] / self.on_demand)


METHODS = ("recommender", "planner", "hindsight")


def evaluate(hourly: pd.Series, prices: dict[int, Decimal]) -> list[Row]:
    """Every origin and term, each method fed as its docstring says and costed on the window after the origin."""
    rows = []
    for origin in origins(hourly):
        train = hourly[hourly.index < origin]
        test = hourly[(hourly.index >= origin) & (hourly.index < origin + WINDOW)]
        curve = planner_curve(hourly, origin)
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
                )
            )
    return rows


def gap_share(rows: list[Row]) -> float:
    """Share of the recommender -> hindsight cost gap the planner closes, summed over `rows`."""
    gap = sum((r.cost["recommender"] - r.cost["hindsight"] for r in rows), Decimal(0))
    won = sum((r.cost["recommender"] - r.cost["planner"] for r in rows), Decimal(0))
    return float(won / gap) if gap else math.nan


def main() -> None:
    trace = pd.read_csv(TRACE, parse_dates=["hour"])
    hourly = trace.groupby("hour")["demand_gpus_mean"].sum()
    rows = evaluate(hourly, read_prices())
    print(
        f"Helios Earth, {len(rows) // len(TERMS)} origins, each costing the {WINDOW.days} days after it out of "
        "sample at list prices; per method: nodes of 8 H100s committed, saving against all on-demand in the "
        "window, cost in the window (USD)"
    )
    print(
        f"{'origin':<10} {'term':>4} {'on-demand $':>12} | {'recommender':>18} | {'planner':>18} | "
        f"{'hindsight':>18} | gap closed"
    )
    for r in rows:
        cells = " | ".join(f"{r.nodes[m]:>3} n {r.saving(m):>6.1%} ${float(r.cost[m]) / 1e3:>5,.0f}k" for m in METHODS)
        print(f"{r.origin:%Y-%m-%d} {r.term:>3}m {float(r.on_demand):>12,.0f} | {cells} | {gap_share([r]):>7.0%}")
    for label, subset in [(f"{t}-month", [r for r in rows if r.term == t]) for t in TERMS] + [("all", rows)]:
        means = "  ".join(f"{m} {sum(r.saving(m) for r in subset) / len(subset):.2%}" for m in METHODS)
        print(f"average, {label:<8}: {means}; planner closes {gap_share(subset):.0%} of the gap")


if __name__ == "__main__":
    main()
