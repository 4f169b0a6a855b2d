"""Synthetic usage records on the example inventory, for the metering tests and `bench/meter_bench.py`."""

from __future__ import annotations

import numpy as np
import pandas as pd

from quartermaster.capacity import flavor_capacity
from quartermaster.loader import load
from tests.paths import INVENTORY


def records(rows: int, seed: int = 7) -> pd.DataFrame:
    """`rows` synthetic usage records on the example inventory's pools in October 2026: random team and pool,
    requests that fill about 85 % of the fleet's accelerator-hours, used up to the request."""
    inventory = load(INVENTORY).inventory
    rng = np.random.default_rng(seed)
    pools = [p.name for p in inventory.pools]
    cluster_of = np.array([inventory.cluster_of_pool[p].name for p in pools], dtype=object)
    teams = sorted(inventory.team_by_name)
    pool = rng.integers(0, len(pools), rows)
    # Mean request sized so that the records fill about 85 % of the fleet's accelerator-hours.
    capacity = sum(flavor_capacity(inventory).values())
    top = max(1, round(2 * 0.85 * capacity * 744 / rows * 100))
    requested = rng.integers(0, top + 1, rows) / 100
    hours = pd.Timestamp("2026-10-01") + pd.to_timedelta(rng.integers(0, 744, rows), unit="h")
    return pd.DataFrame(
        {
            "hour": hours,
            "cluster": pd.array(cluster_of[pool], dtype="str"),
            "team": pd.array(np.array(teams, dtype=object)[rng.integers(0, len(teams), rows)], dtype="str"),
            "flavor": pd.array(np.array(pools, dtype=object)[pool], dtype="str"),
            "accelerators_used": np.round(requested * rng.random(rows), 2),
            "accelerators_requested": requested,
        }
    )
