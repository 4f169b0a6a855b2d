"""Builders for planner tests: a one-site inventory with a 1-GPU machine, prices and demand curves."""

from __future__ import annotations

from decimal import Decimal

import pandas as pd

from quartermaster.model import Inventory
from quartermaster.planner import PlanOptions, PlanResult, plan
from quartermaster.planner.curves import curves_frame, load_duration_curve
from tests.builders import InventoryBuilder, make_inventory

SITE = "gcp-us-central1"
MACHINE = "g2-standard-4"  # one L4 per node, so nodes = accelerators
EXACT = dict(gap_rel=1e-9, time_limit_s=60)


def price(machine: str, model: str, usd: str | float, term: int = 0, site: str = SITE) -> dict:
    return {
        "machine": machine,
        "site": site,
        "pricing_model": model,
        "term_months": term,
        "usd_per_node_hour": str(usd),
        "source": "test",
    }


def one_site(**prices: float) -> InventoryBuilder:
    """An inventory whose one site sells MACHINE at the given prices: on_demand, spot, commit_12, commit_36.
    Its team holds quota only in the builder's H100 pool, so it may run on MACHINE under placement `anywhere`."""
    b = make_inventory().policy(placement="anywhere")
    names = {
        "on_demand": ("on-demand", 0),
        "spot": ("spot", 0),
        "flex_start": ("flex-start", 0),
        "commit_12": ("commit", 12),
        "commit_36": ("commit", 36),
        "capacity_block": ("capacity-block", 0),
    }
    for key, usd in prices.items():
        model, term = names[key]
        b.add("prices", **price(MACHINE, model, usd, term))
    return b


def make_tpu_inventory() -> InventoryBuilder:
    """`one_site` (no prices) with a TPU v6e pool: ct6e-standard-4t nodes (4 chips each) in 16-chip 4x4 slices."""
    return one_site().pool(
        "v6e", machine="ct6e-standard-4t", zones=["us-central1-a"], tpu={"topology": "4x4", "slices": 1}
    )


def with_cud(b: InventoryBuilder, count: int, usd_per_node_hour: str, start: str = "2027-01-01") -> InventoryBuilder:
    """`b` with an existing commitment, `old-cud`: a 12-month committed use discount on `count` MACHINE nodes at
    SITE from `start`."""
    return b.add(
        "commitments",
        name="old-cud",
        kind="cud",
        machine=MACHINE,
        site=SITE,
        count=count,
        term_months=12,
        start=start,
        usd_per_node_hour=usd_per_node_hour,
    )


def curves(
    team: str,
    quarters: list[str],
    hourly: list[float] | None = None,
    level: float | None = None,
    accelerator: str = "L4",
    preemptible_share: float = 0.0,
    site: str = "",
) -> pd.DataFrame:
    """Demand curves: the exact load-duration curve of `hourly`, or a constant `level`, in every quarter."""
    steps = load_duration_curve(hourly) if hourly is not None else [(1.0, float(level or 0))]
    return curves_frame(
        [
            {
                "team": team,
                "accelerator": accelerator,
                "site": site,
                "quarter": q,
                "scenario": "",
                "weight": w,
                "level": lv,
                "preemptible_share": preemptible_share,
            }
            for q in quarters
            for w, lv in steps
        ]
    )


def run(inventory: Inventory | InventoryBuilder, demand: pd.DataFrame, **options) -> PlanResult:
    if isinstance(inventory, InventoryBuilder):
        inventory = inventory.build()
    first = min(demand["quarter"])
    horizon = options.pop("horizon", len(set(demand["quarter"])))
    return plan(inventory, PlanOptions(start=first, horizon=horizon, **{**EXACT, **options}), demand_curves=demand)


def usd_of(rows: tuple, **where) -> Decimal:
    """Sum of `usd` over the plan rows whose fields match `where`."""
    return sum((r.usd for r in rows if all(getattr(r, k) == v for k, v in where.items())), Decimal(0))
