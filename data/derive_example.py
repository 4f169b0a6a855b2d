"""Derive the example inventory's usage history and demand forecast from the Helios trace.

    python data/derive_example.py     # rewrites inventory/usage.csv and inventory/demand.csv

Each of the 16 Helios virtual clusters (VCs) stands for one team's work in one flavor. A VC's GPU
counts are scaled by (the team's nominal quota in that flavor / the VC's Helios quota), and May 2020
is moved to October 2026 (both have 31 days). See data/helios/README.md.
"""

from __future__ import annotations

import csv
import datetime as dt
from collections import defaultdict
from pathlib import Path

import pandas as pd

from quartermaster.loader import load

ROOT = Path(__file__).resolve().parent.parent
TRACE = ROOT / "data" / "helios" / "earth_vc_hourly.csv"
INVENTORY = ROOT / "inventory"
SHIFT = dt.datetime(2026, 10, 1) - dt.datetime(2020, 5, 1)
FIRST_QUARTER, QUARTERS = (2027, 1), 8

# VC -> (team, flavor). Chosen so that each team's busiest VCs land on its largest quotas.
VC_TO_TEAM_FLAVOR = {
    "vc6YE": ("llm-pretrain", "h100-mega-resv"),
    "vcvlY": ("multimodal", "h100-mega-resv"),
    "vcpDC": ("rl-research", "h100-mega-spot"),
    "vcLJZ": ("inference", "h100-mega-resv"),
    "vc3sl": ("llm-pretrain", "dgx-h100-a"),
    "vcTJs": ("tpu-research", "v5p-2x2x4"),
    "vcMod": ("ml-platform", "dgx-h100-a"),
    "vc8Sj": ("speech", "p5-od"),
    "vchbv": ("search-ranking", "ndh100"),
    "vcSoL": ("multimodal", "dgx-h100-a"),
    "vccaA": ("llm-pretrain", "v6e-4x4-resv"),
    "vcJLV": ("inference", "p5-od"),
    "vcgkz": ("rl-research", "dgx-b200-a"),
    "vcdI0": ("llm-pretrain", "p5-cb"),
    "vcira": ("tpu-research", "v6e-4x4-resv"),
    "vcJkd": ("speech", "ndh100"),
}
# Quarterly growth of demand and the share that tolerates preemption, per team (the example's assumptions).
GROWTH = {
    "llm-pretrain": 0.10,
    "multimodal": 0.08,
    "rl-research": 0.06,
    "tpu-research": 0.08,
    "inference": 0.05,
    "search-ranking": 0.04,
    "speech": 0.03,
    "ml-platform": 0.02,
}
PREEMPTIBLE = {
    "llm-pretrain": 0.1,
    "multimodal": 0.3,
    "rl-research": 0.6,
    "tpu-research": 0.2,
    "inference": 0.0,
    "search-ranking": 0.4,
    "speech": 0.2,
    "ml-platform": 0.0,
}


def main() -> None:
    inventory = load(INVENTORY, run_checks=False).inventory
    trace = pd.read_csv(TRACE)
    nominal = {(t.name, q.flavor): q.nominal for t in inventory.teams for q in t.quotas}
    cluster_of = {p: c.name for p, c in inventory.cluster_of_pool.items()}
    accelerator_of = {p.name: inventory.machine_by_name[p.machine].accelerator for p in inventory.pools}

    usage_rows = []
    demand_hourly: dict[tuple[str, str], dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for row in trace.itertuples(index=False):
        team, flavor = VC_TO_TEAM_FLAVOR[row.team]
        scale = nominal[(team, flavor)] / row.quota_gpus
        hour = dt.datetime.fromisoformat(row.hour) + SHIFT
        usage_rows.append(
            [
                hour.isoformat(),
                cluster_of[flavor],
                team,
                flavor,
                round(row.running_gpus_mean * scale, 2),
                round(row.running_gpus_max * scale, 2),
            ]
        )
        demand_hourly[(team, accelerator_of[flavor])][row.hour] += row.demand_gpus_mean * scale

    with open(INVENTORY / "usage.csv", "w", newline="") as f:
        out = csv.writer(f, lineterminator="\n")
        out.writerow(["hour", "cluster", "team", "flavor", "accelerators_used", "accelerators_requested"])
        out.writerows(sorted(usage_rows))

    with open(INVENTORY / "demand.csv", "w", newline="") as f:
        out = csv.writer(f, lineterminator="\n")
        out.writerow(["period", "team", "accelerator", "site", "p50", "p90", "preemptible_share"])
        for (team, accelerator), by_hour in sorted(demand_hourly.items()):
            series = pd.Series(list(by_hour.values()))
            p50, p90 = series.quantile(0.5), series.quantile(0.9)
            year, quarter = FIRST_QUARTER
            for step in range(1, QUARTERS + 1):
                growth = (1 + GROWTH[team]) ** step
                out.writerow(
                    [
                        f"{year}Q{quarter}",
                        team,
                        accelerator,
                        "",
                        round(p50 * growth, 1),
                        round(p90 * growth, 1),
                        PREEMPTIBLE[team],
                    ]
                )
                year, quarter = (year + 1, 1) if quarter == 4 else (year, quarter + 1)


if __name__ == "__main__":
    main()
