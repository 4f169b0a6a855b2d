"""Cloud capacity specs: inventory -> typed plain specs, one module per provider (`gcp`, `aws`, `azure`).

Pure and fast: no Pulumi or Terraform import. The Pulumi components (`modules.pulumi`) and the Terraform
emitter turn the same specs into resources, so the two outputs cannot drift apart. Field names follow
the provider arguments. `cluster_spec(inventory, name, now)` is the entry point; `conflicts(spec)` lists
arguments that contradict each other (both emitters refuse such a spec). Each provider's module registers a
`CloudModule` under its cluster kind (`modules.cloud.base`); a provider without one (on-prem) has no cloud
resources.
"""

from __future__ import annotations

import datetime as dt

from quartermaster.model import Inventory
from quartermaster.modules.cloud.aws import (
    AwsCapacityReservationSpec,
    AwsServiceQuotaSpec,
    EksCapacity,
    EksModule,
    EksNodeGroupSpec,
)
from quartermaster.modules.cloud.azure import AksAgentPoolSpec, AksCapacity, AksModule
from quartermaster.modules.cloud.base import (
    CloudModule,
    ClusterSpec,
    DeclaredNodes,
    ManualQuota,
    ProviderPin,
    cloud_module,
    cloud_modules,
    register_cloud,
    unregister_cloud,
)
from quartermaster.modules.cloud.common import SpecError, TaintSpec, upper_snake_effect
from quartermaster.modules.cloud.gcp import (
    GcpQuotaPreferenceSpec,
    GcpReservationSpec,
    GkeCapacity,
    GkeModule,
    GkeNodePoolSpec,
)

__all__ = [
    "AksAgentPoolSpec",
    "AksCapacity",
    "AwsCapacityReservationSpec",
    "AwsServiceQuotaSpec",
    "CloudModule",
    "ClusterSpec",
    "DeclaredNodes",
    "EksCapacity",
    "EksNodeGroupSpec",
    "GcpQuotaPreferenceSpec",
    "GcpReservationSpec",
    "GkeCapacity",
    "GkeNodePoolSpec",
    "ManualQuota",
    "ProviderPin",
    "SpecError",
    "TaintSpec",
    "cloud_module",
    "cloud_modules",
    "cluster_spec",
    "conflicts",
    "register_cloud",
    "unregister_cloud",
    "upper_snake_effect",
]

register_cloud(GkeModule(), EksModule(), AksModule())


def cluster_spec(inventory: Inventory, cluster_name: str, now: dt.datetime) -> ClusterSpec:
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
    spec = ClusterSpec(cluster.name, cluster.kind, inventory.site_by_name[cluster.site].region, cluster.project)
    module = cloud_module(cluster.kind)
    if module is None:
        return spec
    capacity, manual = module.capacity(inventory, cluster, now)
    return ClusterSpec(spec.cluster, spec.kind, spec.region, spec.project, capacity, manual)


def conflicts(spec: ClusterSpec) -> list[str]:
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
