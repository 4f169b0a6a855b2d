"""Cloud capacity specs: inventory -> typed plain specs, one builder per provider resource.

Pure and fast: no Pulumi or Terraform import. The Pulumi components (`modules.pulumi`) and the Terraform
emitter turn the same specs into resources, so the two outputs cannot drift apart. Field names follow
the provider arguments. `cluster_spec(inventory, name, now)` is the entry point; `conflicts(spec)` lists
arguments that contradict each other (the components refuse such a spec).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field, replace

from quartermaster.model import Inventory
from quartermaster.modules.cloud.aws import (
    AwsCapacityReservationSpec,
    AwsServiceQuotaSpec,
    EksNodeGroupSpec,
    aws_capacity_reservations,
    aws_service_quotas,
    eks_node_groups,
)
from quartermaster.modules.cloud.azure import AksAgentPoolSpec, aks_agent_pools
from quartermaster.modules.cloud.common import SpecError, TaintSpec, upper_snake_effect
from quartermaster.modules.cloud.gcp import (
    GcpQuotaPreferenceSpec,
    GcpReservationSpec,
    GkeNodePoolSpec,
    ManualQuota,
    gcp_quota_preferences,
    gcp_reservations,
    gke_node_pools,
)
from quartermaster.providers.aks import AksCluster
from quartermaster.providers.eks import EksCluster

__all__ = [
    "AksAgentPoolSpec",
    "AwsCapacityReservationSpec",
    "AwsServiceQuotaSpec",
    "ClusterSpec",
    "EksNodeGroupSpec",
    "GcpQuotaPreferenceSpec",
    "GcpReservationSpec",
    "GkeNodePoolSpec",
    "ManualQuota",
    "SpecError",
    "TaintSpec",
    "cluster_spec",
    "conflicts",
    "upper_snake_effect",
]


@dataclass(frozen=True)
class ClusterSpec:
    """Everything a cluster's cloud stack declares. The cluster itself is referenced, never created."""

    cluster: str
    kind: str
    region: str
    project: str | None
    gke_node_pools: list[GkeNodePoolSpec] = field(default_factory=list)
    gcp_reservations: list[GcpReservationSpec] = field(default_factory=list)
    gcp_quota_preferences: list[GcpQuotaPreferenceSpec] = field(default_factory=list)
    eks_node_groups: list[EksNodeGroupSpec] = field(default_factory=list)
    aws_capacity_reservations: list[AwsCapacityReservationSpec] = field(default_factory=list)
    aws_service_quotas: list[AwsServiceQuotaSpec] = field(default_factory=list)
    aks_agent_pools: list[AksAgentPoolSpec] = field(default_factory=list)
    manual_quota: list[ManualQuota] = field(default_factory=list)


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
    base = ClusterSpec(cluster.name, cluster.kind, inventory.site_by_name[cluster.site].region, cluster.project)
    if cluster.kind == "gke":
        preferences, manual = gcp_quota_preferences(inventory, cluster)
        return replace(
            base,
            gke_node_pools=gke_node_pools(inventory, cluster),
            gcp_reservations=gcp_reservations(inventory, cluster),
            gcp_quota_preferences=preferences,
            manual_quota=manual,
        )
    if isinstance(cluster, EksCluster):
        return replace(
            base,
            eks_node_groups=eks_node_groups(inventory, cluster, now),
            aws_capacity_reservations=aws_capacity_reservations(inventory, cluster),
            aws_service_quotas=aws_service_quotas(inventory, cluster),
        )
    if isinstance(cluster, AksCluster):
        return replace(base, aks_agent_pools=aks_agent_pools(inventory, cluster))
    return base


def conflicts(spec: GkeNodePoolSpec | EksNodeGroupSpec | AksAgentPoolSpec) -> list[str]:
    """Arguments of one spec that contradict each other, each naming both and the way out."""
    out: list[str] = []
    if isinstance(spec, GkeNodePoolSpec):
        if (spec.node_count is None) == (spec.autoscaling is None):
            out.append("set exactly one of `node_count` (fixed size) and `autoscaling`")
        if spec.spot and spec.flex_start:
            out.append("`spot` and `flex_start` exclude each other; keep one")
        if (spec.spot or spec.flex_start) and spec.reservation_affinity.consume_reservation_type != "NO_RESERVATION":
            out.append("`spot`/`flex_start` need reservation_affinity NO_RESERVATION; drop the reservation")
        if spec.queued_provisioning and not spec.flex_start:
            out.append("`queued_provisioning` needs `flex_start`; set flex_start or drop queued provisioning")
        if spec.flex_start and spec.node_count is not None:
            out.append("`flex_start` pools autoscale from 0; replace `node_count` with `autoscaling`")
        if spec.flex_start and spec.auto_repair:
            out.append("`flex_start` needs `auto_repair` off; set auto_repair=False")
        if spec.placement_type == "COMPACT" and len(spec.node_locations) != 1:
            out.append("COMPACT `placement_type` needs exactly one zone in `node_locations`")
        if spec.tpu_topology and spec.guest_accelerator is not None:
            out.append("`tpu_topology` (TPU) and `guest_accelerator` (GPU) exclude each other")
    elif isinstance(spec, EksNodeGroupSpec):
        block = spec.capacity_type == "CAPACITY_BLOCK"
        if block and spec.instance_types:
            out.append(
                "CAPACITY_BLOCK `capacity_type` needs empty `instance_types` (the type is in the launch template)"
            )
        if block != (spec.launch_template.market_type == "capacity-block"):
            out.append("`capacity_type` CAPACITY_BLOCK and launch template `market_type` capacity-block go together")
        if block and not (spec.launch_template.capacity_reservation_id or spec.launch_template.capacity_reservation):
            out.append("CAPACITY_BLOCK `capacity_type` needs the block's `capacity_reservation_id`")
        if spec.launch_template.placement_group and len(spec.subnet_ids) != 1:
            out.append("a cluster `placement_group` needs exactly one subnet (one zone)")
        if not spec.min_size <= spec.desired_size <= spec.max_size:
            out.append("`desired_size` must lie within `min_size` and `max_size`")
    else:
        if spec.enable_auto_scaling != (spec.min_count is not None and spec.max_count is not None):
            out.append("`enable_auto_scaling` needs `min_count` and `max_count`, and they need it")
        if spec.scale_set_priority == "Spot" and spec.capacity_reservation_group_id:
            out.append("Spot `scale_set_priority` cannot use a `capacity_reservation_group_id`")
    return out
