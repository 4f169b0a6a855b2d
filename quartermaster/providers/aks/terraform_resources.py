"""AKS's Terraform resources (azurerm): an agent pool per pool (`priority` / `eviction_policy` /
`auto_scaling_enabled` on `azurerm_kubernetes_cluster_node_pool`), mirroring `pulumi_components` argument for
argument in the Terraform spelling."""

from __future__ import annotations

from quartermaster.modules.cloud import ClusterSpec
from quartermaster.modules.cloud.provider_emitters import Body
from quartermaster.modules.terraform.resources import ProviderPin, TerraformResources, TfResource, compact, tf_name
from quartermaster.providers.aks.cloud import AksAgentPoolSpec, AksCapacity

PINS = {"azurerm": ProviderPin("hashicorp/azurerm", "~> 4.40")}
"""The Terraform providers the resources use, by the name they use, and the version their arguments were read at
(`tests/terraform/test_provider_arguments.py` checks every emitted name against the provider's source at its floor
tag):
hashicorp/azurerm `~> 4.40`: `azurerm_kubernetes_cluster_node_pool` (`auto_scaling_enabled`, `priority`,
`eviction_policy`, `zones`; terraform-provider-azurerm `website/docs/r/kubernetes_cluster_node_pool.html.markdown`);
`gpu_driver` arrived in 4.40.0 (Azure/terraform-azurerm-avm-res-containerservice-managedcluster PR #115,
terraform-provider-azurerm PR #29954).
"""
POOL_TYPES = ("azurerm_kubernetes_cluster_node_pool",)
"""The resource types that hold nodes: the Kueue objects wait for them."""


def terraform(spec: ClusterSpec[AksCapacity]) -> tuple[dict[str, Body], list[TfResource]]:
    """The provider block and the agent pools of an AKS cluster."""
    providers: dict[str, Body] = {"azurerm": {"features": {}, "subscription_id": spec.project}}
    return providers, [aks_node_pool(p, spec.project or "") for p in spec.capacity.aks_agent_pools]


def aks_cluster_id(subscription: str, spec: AksAgentPoolSpec) -> str:
    """The ARM id of the existing managed cluster the node pool joins."""
    return (
        f"/subscriptions/{subscription}/resourceGroups/{spec.resource_group_name}"
        f"/providers/Microsoft.ContainerService/managedClusters/{spec.resource_name}"
    )


def aks_node_pool(spec: AksAgentPoolSpec, subscription: str) -> TfResource:
    """`azurerm_kubernetes_cluster_node_pool` (Pulumi: `containerservice.AgentPool`; `gpu_driver` needs
    azurerm >= 4.40)."""
    return TfResource(
        "azurerm_kubernetes_cluster_node_pool",
        tf_name(spec.agent_pool_name),
        "azurerm",
        compact(
            {
                "name": spec.agent_pool_name,
                "kubernetes_cluster_id": aks_cluster_id(subscription, spec),
                "vm_size": spec.vm_size,
                "node_count": spec.count,
                "auto_scaling_enabled": spec.enable_auto_scaling,
                "min_count": spec.min_count,
                "max_count": spec.max_count,
                "zones": list(spec.availability_zones),
                "mode": spec.mode,
                "os_type": spec.os_type,
                "os_sku": spec.os_sku,
                "node_labels": spec.node_labels,
                "node_taints": list(spec.node_taints),
                "priority": spec.scale_set_priority,
                "eviction_policy": spec.scale_set_eviction_policy,
                "spot_max_price": spec.spot_max_price,
                "capacity_reservation_group_id": spec.capacity_reservation_group_id,
                "gpu_driver": spec.gpu_driver,
            }
        ),
        ignore_changes=("node_count",) if spec.enable_auto_scaling else (),
    )  # the autoscaler owns it


RESOURCES = TerraformResources(PINS, POOL_TYPES, terraform)
