"""AKS agent pools from the inventory (`pulumi_azure_native` 3.29, ARM API 2025-09-01).

Azure GPU quota has no request resource in azure-native 3.x or azurerm (azurerm #13165, open since 2021),
so it stays manual.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field

from quartermaster.capacity import pool_accelerators, pool_max_nodes, pool_min_nodes
from quartermaster.model import Cluster, Inventory, Pool
from quartermaster.modules.cloud.provider_emitters import CloudModule, DeclaredNodes, ManualQuota
from quartermaster.modules.cloud.spec_support import SpecError, pool_taints, sorted_labels
from quartermaster.providers.aks import AGENT_POOL_NAME, PROVIDER, AksCluster


@dataclass(frozen=True)
class AksAgentPoolSpec:
    """A `containerservice.AgentPool` in an existing managed cluster."""

    agent_pool_name: str
    pool: str
    resource_group_name: str
    resource_name: str
    vm_size: str
    count: int
    enable_auto_scaling: bool
    min_count: int | None
    max_count: int | None
    availability_zones: tuple[str, ...]
    node_labels: dict[str, str]
    node_taints: tuple[str, ...]
    scale_set_priority: str
    scale_set_eviction_policy: str | None
    spot_max_price: float | None
    capacity_reservation_group_id: str | None
    gpu_driver: str
    accelerators: int
    """Most GPUs the agent pool can hold; not a provider argument."""
    mode: str = "User"
    os_type: str = "Linux"
    os_sku: str = "Ubuntu"
    type: str = "VirtualMachineScaleSets"


@dataclass(frozen=True)
class AksCapacity:
    """What an AKS cluster's stack declares: agent pools (Azure GPU quota has no request resource in azure-native
    3.x or azurerm, so it stays manual)."""

    aks_agent_pools: list[AksAgentPoolSpec] = field(default_factory=list)


def aks_agent_pools(inventory: Inventory, cluster: AksCluster) -> list[AksAgentPoolSpec]:
    """An agent pool per pool of an AKS cluster."""
    if cluster.aks is None or not cluster.project:
        raise SpecError(
            f"cluster {cluster.name}: an AKS cluster needs `project` (the subscription id) "
            "and `aks: {resource_group}`."
        )
    return [_agent_pool(inventory, cluster, pool) for pool in cluster.pools]


def _node_labels(pool: Pool) -> dict[str, str]:
    """The pool's labels plus the label AKS puts beside each taint it adds (a Spot pool's
    `kubernetes.azure.com/scalesetpriority=spot`), declared so that azurerm shows no drift."""
    return {**pool.labels, **{t.key: t.value for t in PROVIDER.platform_taints(pool.provisioning) if t.declared}}


def _agent_pool(inventory: Inventory, cluster: AksCluster, pool: Pool) -> AksAgentPoolSpec:
    assert cluster.aks is not None
    if not AGENT_POOL_NAME.match(pool.name):
        raise SpecError(
            f"pool {pool.name}: AKS agent pool names are 1-12 lowercase letters and digits, "
            "starting with a letter. Rename the pool, e.g. `ndh100a`."
        )
    machine = inventory.machine_by_name[pool.machine]
    spot = pool.provisioning == "spot"
    reserved = pool.provisioning == "reservation"
    if reserved and not cluster.aks.capacity_reservation_group_id:
        raise SpecError(
            f"pool {pool.name}: a reservation pool on AKS needs the cluster's "
            "`aks.capacity_reservation_group_id`. Set it or use `provisioning: on-demand`."
        )
    autoscaled = pool.autoscaling is not None
    return AksAgentPoolSpec(
        agent_pool_name=pool.name,
        pool=pool.name,
        resource_group_name=cluster.aks.resource_group,
        resource_name=cluster.name,
        vm_size=pool.machine,
        count=pool_min_nodes(pool, machine),
        enable_auto_scaling=autoscaled,
        min_count=pool_min_nodes(pool, machine) if autoscaled else None,
        max_count=pool_max_nodes(pool, machine) if autoscaled else None,
        availability_zones=pool.zones,
        node_labels=sorted_labels(_node_labels(pool)),
        node_taints=tuple(f"{t.key}={t.value}:{t.effect}" for t in pool_taints(pool, machine, PROVIDER)),
        scale_set_priority="Spot" if spot else "Regular",
        scale_set_eviction_policy="Delete" if spot else None,
        spot_max_price=-1.0 if spot else None,  # -1: pay up to the on-demand price, never evicted for price
        capacity_reservation_group_id=cluster.aks.capacity_reservation_group_id if reserved else None,
        # GPUDirect over InfiniBand runs the NVIDIA GPU and Network Operators, which bring their own driver
        gpu_driver="None" if pool.gpudirect else "Install",
        accelerators=pool_accelerators(inventory, pool),
    )


def _parse_taint(text: str) -> tuple[str, str, str]:
    """`key=value:Effect` (AKS's spelling) as (key, value, effect)."""
    pair, _, effect = text.rpartition(":")
    key, _, value = pair.partition("=")
    return key, value, effect


def conflicts(spec: AksAgentPoolSpec) -> list[str]:
    """Arguments of an agent pool spec that contradict each other, each naming both and the way out."""
    out: list[str] = []
    if spec.enable_auto_scaling != (spec.min_count is not None and spec.max_count is not None):
        out.append("`enable_auto_scaling` needs `min_count` and `max_count`, and they need it")
    if spec.scale_set_priority == "Spot" and spec.capacity_reservation_group_id:
        out.append("Spot `scale_set_priority` cannot use a `capacity_reservation_group_id`")
    return out


class AksModule(CloudModule[AksCapacity, AksAgentPoolSpec]):
    """AKS's capacity specs: agent pools (Pulumi: `pulumi_components`; Terraform: azurerm, `terraform_resources`)."""

    provider = PROVIDER

    def capacity(
        self, inventory: Inventory, cluster: Cluster, now: dt.datetime
    ) -> tuple[AksCapacity, list[ManualQuota]]:
        assert isinstance(cluster, AksCluster)
        return AksCapacity(aks_agent_pools(inventory, cluster)), []

    def pool_specs(self, capacity: AksCapacity) -> Sequence[AksAgentPoolSpec]:
        return capacity.aks_agent_pools

    def declared_nodes(self, capacity: AksCapacity) -> list[DeclaredNodes]:
        return [
            DeclaredNodes(a.pool, a.agent_pool_name, a.node_labels, tuple(_parse_taint(t) for t in a.node_taints))
            for a in capacity.aks_agent_pools
        ]

    def conflicts(self, pool_spec: AksAgentPoolSpec) -> list[str]:
        return conflicts(pool_spec)

    def pool_title(self, pool_spec: AksAgentPoolSpec) -> str:
        return f"agent pool {pool_spec.agent_pool_name}"


MODULE = AksModule()
