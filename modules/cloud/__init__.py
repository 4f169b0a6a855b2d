"""Cloud capacity specs: inventory -> typed plain specs, built by each provider's `cloud` module
(`quartermaster/providers/<name>/cloud.py`).

Pure and fast: no Pulumi or Terraform import. The Pulumi components and the Terraform emitter turn the same specs
into resources, so the two outputs cannot drift apart. `cluster_spec(inventory, name, now)` is the entry point;
`conflicts(spec)` lists arguments that contradict each other (both emitters refuse such a spec). This package knows
no provider: it asks the provider of a cluster's kind (`modules.cloud.provider_emitters`).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from quartermaster.model import Inventory
from quartermaster.modules.cloud.provider_emitters import (
    CloudModule,
    ClusterSpec,
    DeclaredNodes,
    ManualQuota,
    cloud_module,
    emitter,
)
from quartermaster.modules.cloud.spec_support import SpecError, TaintSpec, upper_snake_effect

__all__ = [
    "CloudModule",
    "ClusterSpec",
    "DeclaredNodes",
    "ManualQuota",
    "SpecError",
    "TaintSpec",
    "cloud_module",
    "cluster_spec",
    "conflicts",
    "emitter",
    "upper_snake_effect",
]


def cluster_spec(inventory: Inventory, cluster_name: str, now: dt.datetime) -> ClusterSpec[Any]:
    """The cloud specs of one cluster (on-prem clusters have none: their pools are inventory-only), as they should
    be at `now` (an aware datetime): a capacity block's node group is sized and scheduled for where its dates
    stand."""
    cluster = inventory.cluster_by_name.get(cluster_name)
    if cluster is None:
        known = ", ".join(sorted(inventory.cluster_by_name))
        raise SpecError(
            f"no cluster `{cluster_name}` in the inventory (clusters: {known}). "
            "Set `quartermaster:cluster` to one of them."
        )
    region = inventory.site_by_name[cluster.site].region
    module = cloud_module(cluster.kind)
    if module is None:
        return ClusterSpec(cluster.name, cluster.kind, region, cluster.project, None)
    capacity, manual = module.capacity(inventory, cluster, now)
    return ClusterSpec(cluster.name, cluster.kind, region, cluster.project, capacity, manual)


def conflicts(spec: ClusterSpec[Any]) -> list[str]:
    """Arguments of the cluster's node pool specs that contradict each other, each naming the pool, both arguments
    and the way out (the Pulumi components refuse such a pool, the Terraform emitter such a stack)."""
    module = cloud_module(spec.kind)
    if module is None:
        return []
    return [
        f"{module.pool_title(pool)}: {problem}"
        for pool in module.pool_specs(spec.capacity)
        for problem in module.conflicts(pool)
    ]
