"""AKS on Azure: the core facts (the cluster's `aks` settings, agent pool names, Kueue labels, FOCUS names).
Emitters: `cloud`, `pulumi_components`, `terraform_resources`."""

from __future__ import annotations

import re
from typing import ClassVar, Literal

from quartermaster.issues import Issue
from quartermaster.model import Cluster, Inventory, Pool, Strict
from quartermaster.names import Provisioning
from quartermaster.providers.base import Provider

# AKS Linux agent pool names: lowercase letters and digits, starting with a letter, at most 12 characters.
AGENT_POOL_NAME = re.compile(r"^[a-z][a-z0-9]{0,11}$")


class AksSettings(Strict):
    """What an AKS agent pool needs that the cluster already has."""

    resource_group: str
    """resource_group: Azure resource group of the managed cluster."""
    capacity_reservation_group_id: str | None = None
    """capacity_reservation_group_id: ARM id of a capacity reservation group; null = none."""


class AksCluster(Cluster):
    """An AKS cluster at an Azure site."""

    kind: Literal["aks"]
    """kind: `aks`: an AKS cluster; `project` is its Azure subscription id."""
    aks: AksSettings | None = None
    """aks: AKS-only settings (resource group); required."""


class Aks(Provider):
    kind = "aks"
    order = 30
    cloud = "azure"
    title = "AKS"
    cluster_model = AksCluster
    provisioning = frozenset({Provisioning.ON_DEMAND, Provisioning.SPOT, Provisioning.RESERVATION})
    node_pool_label = "kubernetes.azure.com/agentpool"
    # AKS with Entra ID matches RBAC Group subjects by the group's object id, a GUID
    # (learn.microsoft.com/azure/aks/azure-ad-rbac, read 2026-11-24).
    rbac_group_pattern = (
        r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
        "an Entra ID group object id, e.g. `3f2504e0-4f89-41d3-9a0c-0305e82c3301`",
    )
    focus_provider_name = "Microsoft"
    focus_service = ("Virtual Machines", "Virtual Machines")
    placeholder_machines: ClassVar[dict[str, str]] = {"gpu": "Standard_ND96isr_H100_v5"}
    import_settings: ClassVar[dict[str, object]] = {"aks": {"resource_group": "todo"}}

    def pool_name_issues(self, pool: Pool) -> list[Issue]:
        if AGENT_POOL_NAME.match(pool.name):
            return []
        return [
            Issue(
                "",
                f"AKS agent pool names are 1-12 lower-case letters and digits, starting with a letter; "
                f"`{pool.name}` is not",
                f"Rename the pool, e.g. `{''.join(c for c in pool.name if c.isalnum())[:12] or 'gpupool'}`.",
                ref=("pools", pool.name, "name"),
            )
        ]

    def cluster_issues(self, inventory: Inventory, cluster: Cluster) -> list[Issue]:
        assert isinstance(cluster, AksCluster)
        if cluster.aks is not None:
            return []
        return [
            Issue(
                "",
                "an AKS cluster needs `aks: {resource_group}`",
                "Add the `aks` block.",
                ref=("clusters", cluster.name, "kind"),
            )
        ]


PROVIDER = Aks()
