"""Time the Pulumi program for a generated 1,000-pool inventory under Pulumi's mocks.

    .venv/bin/python bench/pulumi_bench.py [--pools 1000]

The inventory has four clusters (GKE GPU, GKE TPU with 2 slices per pool, EKS, AKS) sharing the pools
with every provisioning mode, and 50 teams with quotas. For each cluster it times the pure specs
(`modules.cloud.cluster_spec`) and the whole stack (`declare_cluster`: components, cloud resources, Kueue
objects) under `pulumi.runtime.set_mocks` with the test suite's mocks (tests/pulumi/harness.py); the first stack
also pays the provider SDK imports. CPU time is printed next to wall time because the machine may be shared.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from quartermaster.model import Inventory
from quartermaster.modules.cloud import cluster_spec
from quartermaster.providers import validate_inventory
from tests.pulumi.harness import run_cluster  # the test suite's mocks: outputs echo inputs, as the engine's would

SHARE = {"gke-gpu": 0.4, "gke-tpu": 0.2, "eks": 0.25, "aks": 0.15}  # of the pools


def generate(pools: int) -> Inventory:
    """A valid-shaped inventory with `pools` pools over four clusters and 50 teams."""
    n = {k: int(pools * v) for k, v in SHARE.items()}
    n["gke-gpu"] += pools - sum(n.values())
    commitments: list[dict[str, Any]] = []
    gpu, tpu, eks, aks = [], [], [], []
    for i in range(n["gke-gpu"]):
        mode = ("reservation", "spot", "flex-start", "on-demand")[i % 4]
        pool: dict[str, Any] = {
            "name": f"gpu-{i}",
            "machine": "a3-megagpu-8g",
            "zones": ["us-east4-a"],
            "provisioning": mode,
            "gpudirect": i % 8 == 0,
        }
        if mode == "reservation":
            pool |= {"nodes": 4, "commitment": f"resv-{i}"}
            commitments.append(
                {
                    "name": f"resv-{i}",
                    "kind": "cud",
                    "machine": "a3-megagpu-8g",
                    "site": "gcp-us-east4",
                    "zone": "us-east4-a",
                    "count": 4,
                    "term_months": 36,
                    "start": dt.date(2026, 1, 1),
                    "usd_per_node_hour": Decimal("40"),
                    "reservation_name": f"resv-{i}",
                }
            )
        elif mode == "flex-start":
            pool |= {"autoscaling": {"max_nodes": 4}, "max_run_duration_hours": 24}
        else:
            pool |= {"autoscaling": {"max_nodes": 8}}
        gpu.append(pool)
    for i in range(n["gke-tpu"]):
        tpu.append(
            {
                "name": f"tpu-{i}",
                "machine": "ct5p-hightpu-4t",
                "zones": ["us-east5-a"],
                "tpu": {"topology": "2x2x4", "slices": 2},
            }
        )
    for i in range(n["eks"]):
        mode = ("capacity-block", "spot", "on-demand")[i % 3]
        pool = {
            "name": f"p5-{i}",
            "machine": "p5.48xlarge",
            "zones": ["us-east-1a"],
            "provisioning": mode,
            "gpudirect": mode == "capacity-block",
        }
        if mode == "capacity-block":
            pool |= {"nodes": 2, "commitment": f"cb-{i}"}
            commitments.append(
                {
                    "name": f"cb-{i}",
                    "kind": "capacity-block",
                    "machine": "p5.48xlarge",
                    "site": "aws-us-east-1",
                    "zone": "us-east-1a",
                    "count": 2,
                    "term_months": 0,
                    "term_days": 14,
                    "start": dt.date(2026, 10, 1),
                    "usd_per_node_hour": Decimal("39"),
                    "capacity_reservation_id": f"cr-{i:017x}",
                }
            )
        else:
            pool |= {"autoscaling": {"max_nodes": 4}}
        eks.append(pool)
    for i in range(n["aks"]):
        aks.append(
            {
                "name": f"nd{i}",
                "machine": "Standard_ND96isr_H100_v5",
                "zones": ["1"],
                "autoscaling": {"max_nodes": 4},
                "provisioning": "spot" if i % 2 else "on-demand",
            }
        )
    clusters = [
        {"name": "gke-gpu", "kind": "gke", "site": "gcp-us-east4", "project": "p", "pools": gpu},
        {"name": "gke-tpu", "kind": "gke", "site": "gcp-us-east5", "project": "p", "pools": tpu},
        {
            "name": "eks",
            "kind": "eks",
            "site": "aws-us-east-1",
            "project": "1",
            "pools": eks,
            "eks": {"node_role_arn": "arn:aws:iam::1:role/n", "subnets": {"us-east-1a": "subnet-1"}},
        },
        {
            "name": "aks",
            "kind": "aks",
            "site": "azure-eastus",
            "project": "s",
            "pools": aks,
            "aks": {"resource_group": "rg"},
        },
    ]
    every_pool = [p["name"] for c in clusters for p in c["pools"]]
    teams = [
        {
            "name": f"team-{t}",
            "cost_center": f"CC-{t}",
            "owners": ["@o"],
            "namespaces": [f"team-{t}"],
            "cohort": "org",
            "quotas": [{"flavor": every_pool[(t * 7 + k) % len(every_pool)], "nominal": 8} for k in range(20)],
        }
        for t in range(50)
    ]
    return validate_inventory(
        {
            "sites": [
                {"name": "gcp-us-east4", "provider": "gcp", "region": "us-east4", "zones": ["us-east4-a"]},
                {"name": "gcp-us-east5", "provider": "gcp", "region": "us-east5", "zones": ["us-east5-a"]},
                {"name": "aws-us-east-1", "provider": "aws", "region": "us-east-1", "zones": ["us-east-1a"]},
                {"name": "azure-eastus", "provider": "azure", "region": "eastus", "zones": ["1"]},
            ],
            "clusters": clusters,
            "commitments": commitments,
            "teams": teams,
            "cohorts": [{"name": "org"}],
            "policy": {"quota_contact_email": "capacity@example.com"},  # GKE quota requests name a contact
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pools", type=int, default=1000)
    pools = parser.parse_args().pools
    inventory = generate(pools)
    print(f"inventory: {len(inventory.pools)} pools, {len(inventory.clusters)} clusters, {len(inventory.teams)} teams")
    wall = cpu = 0.0
    for cluster in inventory.clusters:
        t0 = time.perf_counter()
        cluster_spec(inventory, cluster.name, dt.datetime.now(dt.UTC))
        t1, c1 = time.perf_counter(), time.process_time()
        resources = len(run_cluster(inventory, cluster.name, now=dt.datetime.now(dt.UTC)).resources)
        t2, c2 = time.perf_counter(), time.process_time()
        wall, cpu = wall + t2 - t1, cpu + c2 - c1
        print(
            f"{cluster.name:8} {len(cluster.pools):4} pools  specs {t1 - t0:6.3f} s  "
            f"stack {t2 - t1:6.2f} s wall, {c2 - c1:6.2f} s CPU  {resources:5} resources"
        )
    print(
        f"all stacks under mocks: {wall:.1f} s wall, {cpu:.1f} s CPU for {len(inventory.pools)} pools "
        f"(load average {os.getloadavg()[0]:.1f})"
    )


if __name__ == "__main__":
    main()
