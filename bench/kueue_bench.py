"""Time to render and validate the Kueue objects of a large fleet: 1,000 teams x 20 flavors (goal: < 2 s).

    .venv/bin/python bench/kueue_bench.py [--teams N] [--flavors M]

One GKE cluster with M pools (reservation, on-demand, flex-start and spot in turn, topology-aware); N teams in
10 cohorts under one root, each with one namespace and a different quota in every flavor (so no two
ClusterQueues are alike). Prints the object counts and the seconds spent building, rendering to YAML and
validating (schema + CEL + webhook + runtime rules).
"""

from __future__ import annotations

import argparse
import datetime as dt
import time

from quartermaster.model import Inventory
from quartermaster.modules.kueue import objects_for_cluster, validate_manifests
from quartermaster.providers import validate_inventory
from quartermaster.yamlwriter import dump_documents

PROVISIONING = ("reservation", "on-demand", "flex-start", "spot")


def fleet(teams: int, flavors: int) -> Inventory:
    pools = []
    for i in range(flavors):
        provisioning = PROVISIONING[i % len(PROVISIONING)]
        pool = {
            "name": f"h100-{i:02d}",
            "machine": "a3-megagpu-8g",
            "zones": ["us-central1-a"],
            "provisioning": provisioning,
        }
        if provisioning == "flex-start":
            pool |= {"autoscaling": {"min_nodes": 0, "max_nodes": 4 * teams}, "max_run_duration_hours": 24}
        else:
            pool["nodes"] = 4 * teams
        pools.append(pool)
    return validate_inventory(
        {
            "sites": [
                {"name": "gcp-us-central1", "provider": "gcp", "region": "us-central1", "zones": ["us-central1-a"]}
            ],
            "clusters": [
                {
                    "name": "big",
                    "kind": "gke",
                    "site": "gcp-us-central1",
                    "project": "p",
                    "topology_aware": True,
                    "pools": pools,
                }
            ],
            "cohorts": [{"name": "org"}] + [{"name": f"div-{d}", "parent": "org"} for d in range(10)],
            "priority_classes": [{"name": "training", "value": 100}],
            "teams": [
                {
                    "name": f"team-{t:04d}",
                    "cost_center": f"CC-{t % 50}",
                    "owners": ["@o"],
                    "namespaces": [f"team-{t:04d}"],
                    "cohort": f"div-{t % 10}",
                    "priority_class": "training",
                    "quotas": [
                        {"flavor": p["name"], "nominal": t + 1 if i == 0 else 1 + (t + i) % 16, "borrowing_limit": 8}
                        for i, p in enumerate(pools)
                    ],
                }
                for t in range(teams)
            ],
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--teams", type=int, default=1000)
    parser.add_argument("--flavors", type=int, default=20)
    args = parser.parse_args()
    inventory = fleet(args.teams, args.flavors)

    clock = Clock()
    objects = objects_for_cluster(inventory, "big", dt.datetime.now(dt.UTC))
    clock.lap("build")
    text = dump_documents(objects)
    clock.lap("render")
    issues = validate_manifests(objects, "bench")
    clock.lap("validate")

    kueue = sum(1 for o in objects if o["apiVersion"].startswith("kueue.x-k8s.io/"))
    print(
        f"{args.teams} teams x {args.flavors} flavors: {len(objects)} objects ({kueue} Kueue), "
        f"{len(text) / 1e6:.1f} MB of YAML, {len(issues)} issues"
    )
    print("stage      wall s   CPU s")
    for name, wall, cpu in clock.laps:
        print(f"{name:8s} {wall:8.2f} {cpu:7.2f}")
    print(f"{'total':8s} {sum(w for _, w, _ in clock.laps):8.2f} {sum(c for _, _, c in clock.laps):7.2f}  (goal < 2 s)")


class Clock:
    """Wall and CPU seconds per stage (CPU time is the steadier figure on a shared machine)."""

    def __init__(self) -> None:
        self.laps: list[tuple[str, float, float]] = []
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def lap(self, name: str) -> None:
        wall, cpu = time.perf_counter(), time.process_time()
        self.laps.append((name, wall - self.wall, cpu - self.cpu))
        self.wall, self.cpu = wall, cpu


if __name__ == "__main__":
    main()
