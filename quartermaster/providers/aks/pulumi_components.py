"""AKS component: an accelerator agent pool with its GPU profile and capacity reservation group; and
`declare_capacity`, which declares an AKS cluster's pools with it (`cloud.AksModule`'s specs)."""

from __future__ import annotations

import pulumi
import pulumi_azure_native as azure_native

from quartermaster.modules.cloud import ClusterSpec
from quartermaster.modules.pulumi.provider_components import PulumiComponents
from quartermaster.modules.pulumi.resource_error import ResourceError
from quartermaster.providers.aks.cloud import AksAgentPoolSpec, AksCapacity, conflicts


class AksAcceleratorPool(pulumi.ComponentResource):
    """One inventory pool on AKS: a `containerservice.AgentPool` in the existing managed cluster."""

    def __init__(self, name: str, spec: AksAgentPoolSpec, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("quartermaster:aks:AcceleratorPool", name, None, opts)
        problems = conflicts(spec)
        if problems:
            raise ResourceError(f"agent pool {spec.agent_pool_name}: " + "; ".join(problems), self)
        # keyword arguments, not AgentPoolArgs: the SDK's args path collides the cluster's `resource_name`
        # with the Pulumi resource name (pulumi_azure_native 3.29); the keyword for the cluster is `resource_name_`
        self.agent_pool = azure_native.containerservice.AgentPool(
            spec.agent_pool_name,
            resource_group_name=spec.resource_group_name,
            resource_name_=spec.resource_name,
            agent_pool_name=spec.agent_pool_name,
            vm_size=spec.vm_size,
            count=spec.count,
            enable_auto_scaling=spec.enable_auto_scaling,
            min_count=spec.min_count,
            max_count=spec.max_count,
            availability_zones=list(spec.availability_zones),
            mode=spec.mode,
            os_type=spec.os_type,
            os_sku=spec.os_sku,
            type=spec.type,
            node_labels=spec.node_labels,
            node_taints=list(spec.node_taints),
            scale_set_priority=spec.scale_set_priority,
            scale_set_eviction_policy=spec.scale_set_eviction_policy,
            spot_max_price=spec.spot_max_price,
            capacity_reservation_group_id=spec.capacity_reservation_group_id,
            gpu_profile=azure_native.containerservice.GPUProfileArgs(driver=spec.gpu_driver),
            # the cluster autoscaler owns the node count of an autoscaled pool
            opts=pulumi.ResourceOptions(parent=self, ignore_changes=["count"] if spec.enable_auto_scaling else None),
        )
        self.register_outputs({"agent_pool": self.agent_pool.name})


def declare_capacity(
    parent: pulumi.ComponentResource, spec: ClusterSpec[AksCapacity]
) -> dict[str, pulumi.ComponentResource]:
    """The AKS cluster's agent pools through a provider of its subscription, as children of `parent`."""
    capacity = spec.capacity
    provider = azure_native.Provider(
        f"azure-{spec.region}", subscription_id=spec.project, opts=pulumi.ResourceOptions(parent=parent)
    )
    return {
        pool.pool: AksAcceleratorPool(
            pool.pool, pool, opts=pulumi.ResourceOptions(parent=parent, providers={"azure-native": provider})
        )
        for pool in capacity.aks_agent_pools
    }


COMPONENTS = PulumiComponents(declare_capacity)
