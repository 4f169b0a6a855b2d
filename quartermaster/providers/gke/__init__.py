"""GKE on Google Cloud: the core facts (names, limits, Kueue labels, FOCUS names). Emitters: `cloud`,
`pulumi_components`, `terraform_resources`."""

from __future__ import annotations

from typing import ClassVar, Literal

from quartermaster.model import Cluster, Machine, Pool
from quartermaster.names import EMAIL_PATTERN, POOL_LABEL, Provisioning
from quartermaster.providers.base import Provider

TPU_ACCELERATOR_LABEL = "cloud.google.com/gke-tpu-accelerator"
TPU_TOPOLOGY_LABEL = "cloud.google.com/gke-tpu-topology"
ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"


class GkeCluster(Cluster):
    """A GKE cluster at a Google Cloud site."""

    kind: Literal["gke"]
    """kind: `gke`: a GKE cluster; `project` is its GCP project id."""


class Gke(Provider):
    kind = "gke"
    order = 10
    cloud = "gcp"
    title = "GKE"
    cluster_model = GkeCluster
    provisioning = frozenset(
        {Provisioning.ON_DEMAND, Provisioning.SPOT, Provisioning.RESERVATION, Provisioning.FLEX_START}
    )
    exclusive_provisioning: ClassVar[dict[Provisioning, tuple[str, str]]] = {
        Provisioning.FLEX_START: ("flex-start (DWS) is a GKE provisioning mode", "Use `on-demand` or `spot` here.")
    }
    zones_named_after_region = True
    sizes_pools_per_zone = True
    node_pool_label = "cloud.google.com/gke-nodepool"
    managed_prometheus_rules = True
    # GKE matches RBAC Group subjects against Google Groups by e-mail (Google Groups for RBAC, read 2026-11-24).
    rbac_group_pattern = (EMAIL_PATTERN, "a Google Group e-mail, e.g. `ml-team@example.com`")
    focus_provider_name = "Google Cloud"
    focus_service = ("Compute Engine", "Virtual Machines")
    focus_tpu_service = ("Cloud TPU", "Machine Learning")
    placeholder_machines: ClassVar[dict[str, str]] = {"gpu": "a3-highgpu-8g", "tpu": "ct5p-hightpu-4t"}

    def flavor_node_labels(self, machine: Machine, pool: Pool) -> dict[str, str]:
        """A TPU pool is one node pool per slice (`<pool>-<i>`): its flavor selects the TPU labels and POOL_LABEL,
        which the slices' node pools set; a GPU pool is one node pool, selected by GKE's node-pool label."""
        if pool.tpu is None:
            return super().flavor_node_labels(machine, pool)
        return {
            TPU_ACCELERATOR_LABEL: machine.accelerator_label,
            TPU_TOPOLOGY_LABEL: pool.tpu.topology,
            POOL_LABEL: pool.name,
        }

    def import_machine(self, labels: dict[str, str], tpu: bool, machines: tuple[Machine, ...]) -> str | None:
        """The catalog machine GKE's accelerator label names, if exactly one matches."""
        value = labels.get(TPU_ACCELERATOR_LABEL if tpu else ACCELERATOR_LABEL)
        matches = [m.name for m in machines if m.provider == self.cloud and m.accelerator_label == value]
        return matches[0] if value is not None and len(matches) == 1 else None


PROVIDER = Gke()
