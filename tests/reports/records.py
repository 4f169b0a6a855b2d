"""Synthetic usage records on the example inventory, for the metering tests and `bench/meter_bench.py`."""

from __future__ import annotations

import numpy as np
import pandas as pd

from quartermaster.capacity import flavor_capacity
from quartermaster.loader import load
from tests.paths import INVENTORY


def records(
    rows: int, seed: int = 7, *, start: str = "2026-10-01", end: str = "2026-11-01", per: str = "hour"
) -> pd.DataFrame:
    """`rows` synthetic usage records on the example inventory's pools from `start` to `end`, one per team, pool
    and `per` slot ("hour" or "minute"; its column is named so), drawn without repeats, as `qm meter` requires:
    requests of up to a pool's capacity shared by the teams (so a slot never holds more than the pool), used up
    to the request."""
    inventory = load(INVENTORY).inventory
    rng = np.random.default_rng(seed)
    capacity = flavor_capacity(inventory)
    pools = sorted(capacity)
    teams = sorted(inventory.team_by_name)
    step = pd.Timedelta(1, unit="h" if per == "hour" else "min")
    slots = int((pd.Timestamp(end) - pd.Timestamp(start)) / step)
    keys = len(teams) * len(pools) * slots
    if rows > keys:
        raise ValueError(f"{rows:,} records exceed the {keys:,} team, pool and {per} slots from {start} to {end}")
    key = rng.choice(keys, rows, replace=False)
    slot, pair = np.divmod(key, len(teams) * len(pools))
    team, pool = np.divmod(pair, len(pools))
    share = np.array([capacity[p] for p in pools]) / len(teams)
    requested = np.floor(rng.random(rows) * share[pool] * 100) / 100
    cluster_of = np.array([inventory.cluster_of_pool[p].name for p in pools], dtype=object)
    return pd.DataFrame(
        {
            per: pd.Timestamp(start) + slot * step,
            "cluster": pd.array(cluster_of[pool], dtype="str"),
            "team": pd.array(np.array(teams, dtype=object)[team], dtype="str"),
            "flavor": pd.array(np.array(pools, dtype=object)[pool], dtype="str"),
            "accelerators_used": np.floor(requested * rng.random(rows) * 100) / 100,
            "accelerators_requested": requested,
        }
    )
