"""Out-of-sample backtest on the real Helios trace: the planner against the cloud recommenders' method.

    .venv/bin/python -m bench.helios_backtest

Data: `data/helios/earth_vc_hourly.csv` (SenseTime Helios "Earth", May 2020, 16 teams, MIT licence; see
data/helios/README.md). Hourly demand = sum over teams of `demand_gpus_mean` (running + pending GPUs).
Train on 2020-05-01..15 (360 hours), cost on 2020-05-16..31 (384 hours), out of sample.

Prices: GCP a3-highgpu-8g in us-east4 from inventory/prices.csv (Cyclenerd pricing.yml fd66b26, 2026-07-30):
on-demand $88.5558, 1-year CUD $61.4251, 3-year CUD $38.894 per node-hour of 8 H100s. Commitments are whole
nodes; every GPU-hour above the commitment runs on demand.

- Recommender (AWS Savings Plans / Azure reservations / GCP "optimal savings", PLANNING.md 2.1): for each
  term, simulate every commitment level over the lookback window and keep the one that would have saved
  the most; recommend the term with the larger saving.
- Planner: `planner.plan` on the same window, its demand curve being the window's load-duration curve
  scaled by the usage forecast's linear trend (planner.usage_forecast.trend_per_quarter, clamped at
  +-25 % a quarter) to the middle of the costing window.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from quartermaster.model import Inventory
from quartermaster.planner import PlanOptions, plan
from quartermaster.planner.curves import curves_frame, load_duration_curve
from quartermaster.planner.usage_forecast import DAYS_PER_QUARTER, trend_per_quarter

TRACE = Path(__file__).resolve().parent.parent / "data" / "helios" / "earth_vc_hourly.csv"
SPLIT = pd.Timestamp("2020-05-16")
GPUS_PER_NODE = 8
PRICES = {"on-demand": 88.5558, 12: 61.4251, 36: 38.894}  # USD per node-hour (see module docstring)
SITE, MACHINE = "gcp-us-east4", "a3-highgpu-8g"


def window_cost(hourly: pd.Series, nodes: int, commit_price: float) -> float:
    """Cost of a commitment of `nodes` over the hours of `hourly` (GPUs), the rest on demand."""
    committed = nodes * commit_price * len(hourly)
    overflow = (hourly - nodes * GPUS_PER_NODE).clip(lower=0).sum() / GPUS_PER_NODE
    return committed + overflow * PRICES["on-demand"]


def recommender(train: pd.Series) -> tuple[int, int]:
    """(term months, nodes) that would have saved most over the lookback window."""
    best = None
    for term in (12, 36):
        for nodes in range(0, math.ceil(train.max() / GPUS_PER_NODE) + 1):
            cost = window_cost(train, nodes, PRICES[term])
            if best is None or cost < best[0]:
                best = (cost, term, nodes)
    return best[1], best[2]


def planner_choice(train: pd.Series, test_mid: pd.Timestamp) -> tuple[int, int]:
    """(term months, nodes) from the planner, with the trend carried to the costing window."""
    growth = trend_per_quarter(train)
    factor = max(0.0, 1 + growth * (test_mid - train.index.mean()).days / DAYS_PER_QUARTER)
    curve = curves_frame([{"team": "helios", "accelerator": "H100-80GB", "site": "", "quarter": "2020Q2",
                           "scenario": "", "weight": w, "level": level * factor, "preemptible_share": 0.0}
                          for w, level in load_duration_curve(train.round(2))])
    inventory = Inventory.model_validate({
        "sites": [{"name": SITE, "provider": "gcp", "region": "us-east4"}],
        "teams": [{"name": "helios", "cost_center": "CC-1", "owners": ["@helios"], "namespaces": ["helios"]}],
        "prices": [{"machine": MACHINE, "site": SITE, "pricing_model": "on-demand", "usd_per_node_hour":
                    str(PRICES["on-demand"]), "source": "inventory/prices.csv"}]
        + [{"machine": MACHINE, "site": SITE, "pricing_model": "commit", "term_months": t,
            "usd_per_node_hour": str(PRICES[t]), "source": "inventory/prices.csv"} for t in (12, 36)]})
    result = plan(inventory, PlanOptions(start="2020Q2", horizon=1, gap_rel=1e-9), demand_curves=curve)
    bought = result.frame("purchase_schedule")
    if bought.empty:
        return 36, 0
    return int(bought["term_months"].iloc[0]), int(bought["nodes"].sum())


def main() -> None:
    trace = pd.read_csv(TRACE, parse_dates=["hour"])
    hourly = trace.groupby("hour")["demand_gpus_mean"].sum()
    train, test = hourly[hourly.index < SPLIT], hourly[hourly.index >= SPLIT]
    on_demand = window_cost(test, 0, 0.0)
    print(f"Helios Earth, {len(train)} training hours (mean {train.mean():.0f} GPUs), {len(test)} costing hours "
          f"(mean {test.mean():.0f} GPUs); all on-demand in the costing window: ${on_demand:,.0f}")
    rows = []
    for label, (term, nodes) in (("recommender (best level over lookback)", recommender(train)),
                                 ("planner (LDC + trend, MILP)", planner_choice(train, test.index.mean()))):
        cost = window_cost(test, nodes, PRICES[term])
        rows.append((label, term, nodes, cost))
        print(f"{label:40s} {term:>2} mo x {nodes:>3} nodes ({nodes * GPUS_PER_NODE:>4} GPUs): "
              f"${cost:,.0f} out of sample, {1 - cost / on_demand:.1%} below on-demand")
    (_, _, _, rec), (_, _, _, plan_cost) = rows
    print(f"planner vs recommender: {plan_cost - rec:+,.0f} USD ({plan_cost / rec - 1:+.2%})")


if __name__ == "__main__":
    main()
