"""A small hand-checkable fleet for metering, FOCUS and report tests.

One GCP site with a3-megagpu-8g (8 GPUs per node) at on-demand $80/node-h ($10/GPU-h) and spot $24/node-h
($3/GPU-h); three pools:
- `h100-resv`: 1 to 2 nodes, the first (8 GPUs) on reservation `c1`, committed at $16/node-h = $2/GPU-h for 2026,
  the second paid on demand when used (overflow);
- `h100` (the builder's pool): autoscaling 0-2 nodes, on-demand;
- `h100-spot`: autoscaling 0-2 nodes, spot.
Teams `a` (CC-A), `b` (CC-B) and `c` (CC-C).
"""

from __future__ import annotations

import datetime as dt

import pandas as pd

from quartermaster.model import Inventory
from tests.builders import make_inventory

SITE = "gcp-us-central1"
SOURCE = "hand-made test price"


def small_fleet(on_demand_min_nodes: int = 0) -> Inventory:
    """The fleet above; `on_demand_min_nodes`: nodes the on-demand pool `h100` keeps however little it is used."""
    return (
        make_inventory()
        .edit_pool("h100", nodes=None, autoscaling={"min_nodes": on_demand_min_nodes, "max_nodes": 2})
        .pool("h100-resv", autoscaling={"min_nodes": 1, "max_nodes": 2}, provisioning="reservation", commitment="c1")
        .pool("h100-spot", autoscaling={"max_nodes": 2}, provisioning="spot")
        .add(
            "commitments",
            name="c1",
            kind="cud",
            machine="a3-megagpu-8g",
            site=SITE,
            count=1,
            term_months=12,
            start="2026-01-01",
            usd_per_node_hour="16",
        )
        .add(
            "prices",
            machine="a3-megagpu-8g",
            site=SITE,
            pricing_model="on-demand",
            usd_per_node_hour="80",
            source=SOURCE,
        )
        .add("prices", machine="a3-megagpu-8g", site=SITE, pricing_model="spot", usd_per_node_hour="24", source=SOURCE)
        .team("a", cost_center="CC-A")
        .team("b", cost_center="CC-B")
        .team("c", cost_center="CC-C")
        .build()
    )


FEBRUARY_DAYS = 28
IDLE_HOUR = 12
"""The hour of a day without other records at which `usage` writes its row of 0 accelerators."""


def usage(rows: list[tuple[int, str, str, float, float]], days: int = FEBRUARY_DAYS) -> pd.DataFrame:
    """Records in February 2026 from (hour of the month, team, flavor, used, requested), plus a row of 0
    accelerators (team c, pool h100, at IDLE_HOUR) on each of the first `days` days of February without any (the
    days the history covers): a day with no record is missing records, not an idle fleet, and is refused
    (issue 37)."""
    start = dt.datetime(2026, 2, 1)
    busy = {h // 24 for h, *_ in rows}
    rows = [*rows, *((24 * d + IDLE_HOUR, "c", "h100", 0.0, 0.0) for d in range(days) if d not in busy)]
    return pd.DataFrame(
        {
            "hour": [start + dt.timedelta(hours=h) for h, *_ in rows],
            "cluster": "gke-a",
            "team": [r[1] for r in rows],
            "flavor": [r[2] for r in rows],
            "accelerators_used": [r[3] for r in rows],
            "accelerators_requested": [r[4] for r in rows],
        }
    )


# Hour 0: the reservation holds a (requested 4, used 2) and b (3, 3): 7 of 8 GPUs, all covered.
# Hour 1: a uses 6 (requested 5) and b 4: 10 GPUs on 8 committed; each is covered 8/10 and the rest
#         overflows at on-demand. Hour 2: a on on-demand (used 1, requested 2); b on spot (4).
FEBRUARY = [
    (0, "a", "h100-resv", 2, 4),
    (0, "b", "h100-resv", 3, 3),
    (1, "a", "h100-resv", 6, 5),
    (1, "b", "h100-resv", 4, 4),
    (2, "a", "h100", 1, 2),
    (2, "b", "h100-spot", 4, 4),
]
