"""The provider interface: what every layer asks about GKE, EKS, AKS, on-prem (or any provider added later).

A provider is one package, `quartermaster/providers/<name>/`, on both sides of the layer rule (the core imports
nothing of `modules`, `planner` or `reports`):

- **Core facts** (the package itself, `__init__.py`: a subclass of `Provider` and its one object, `PROVIDER`): the
  cluster model of its kind and its own settings, names and limits, which provisioning modes it offers, its pool
  and cluster checks, the node labels, taints and topology levels Kueue needs, the RBAC group spelling, and the
  metering and FOCUS facts (owned or rented, FOCUS provider and service names). The core (model, loader, checks,
  catalog, pricing) asks only these.
- **Emitters** (its submodules `cloud`, `pulumi_components`, `terraform_resources`, and its fact tables under
  `data/`): the pool specs, quota requests, the conflicts guard, the Pulumi components and the Terraform resources.
  They build on the shared emitter code of `modules/`, which imports them by name (`Provider.package`); nothing in
  the core imports them. A provider without cloud resources (on-prem) has none.

The registry (`quartermaster.providers.register`, `provider_of`) holds the core objects by cluster kind. Every
package under `quartermaster/providers/` is a built-in provider, registered by its `PROVIDER` in `order`, so adding
one means writing its package and nothing else (docs/explanation/providers.md walks through a toy provider, which
the tests register themselves). Nothing outside these packages compares provider names.
"""

from __future__ import annotations

import datetime as dt
from abc import ABC
from collections.abc import Iterable
from typing import ClassVar

from quartermaster.catalog import PlatformTaint, platform_taints, topology_levels
from quartermaster.issues import Issue
from quartermaster.model import Cluster, Commitment, Inventory, Machine, Pool
from quartermaster.names import Provisioning


class Provider(ABC):
    """One provider's core facts and checks; subclasses set the class attributes and override what differs."""

    kind: ClassVar[str]
    """The cluster kind an inventory writes (`gke`); the registry's key."""
    cloud: ClassVar[str]
    """The `provider` of its sites and machines (`gcp`)."""
    title: ClassVar[str]
    """How messages name it (`GKE`)."""
    order: ClassVar[int]
    """Where a built-in provider comes among the others, lowest first: the registry's order, in which messages list
    the kinds (GKE 10, EKS 20, AKS 30, on-prem 40; a new one picks a free number)."""
    cluster_model: ClassVar[type[Cluster]]
    """The model of a cluster of this kind: the shared fields plus the provider's own settings."""
    provisioning: ClassVar[frozenset[Provisioning]]
    """The provisioning modes its pools may use."""
    exclusive_provisioning: ClassVar[dict[Provisioning, tuple[str, str]]] = {}
    """Modes only this provider offers, with what to tell a pool of another provider that asks for one: the
    problem and the fix."""
    cloud_resources: ClassVar[bool] = True
    """Whether its clusters get a stack (node pools, reservations, quota); on-prem pools are inventory-only."""
    needs_project: ClassVar[bool] = True
    """Whether a cluster must name its project, account or subscription."""
    zones_named_after_region: ClassVar[bool] = False
    """Whether every zone's name starts with its region's (`us-central1-a`), so a zone can be checked alone."""
    sizes_pools_per_zone: ClassVar[bool] = False
    """Whether a pool's size is given per zone, so it must split evenly over the pool's zones."""
    node_pool_label: ClassVar[str | None] = None
    """The label the platform puts on each node naming its node pool; None: the pool's own labels select it."""
    rbac_group_pattern: ClassVar[tuple[str, str] | None] = None
    """The regular expression an RBAC Group subject must match to match anybody, and how to describe it; None: any
    name."""
    managed_prometheus_rules: ClassVar[bool] = False
    """Whether its clusters run Google Cloud Managed Service for Prometheus `Rules` objects (`qm observability
    render --gmp`): GMP's managed collection runs on GKE."""
    owned: ClassVar[bool] = False
    """Owned hardware: every node-hour is priced `onprem` (capex amortised plus opex), whatever the pool's mode."""
    focus_provider_name: ClassVar[str]
    """FOCUS ProviderName of the capacity it supplies."""
    focus_service: ClassVar[tuple[str, str]]
    """FOCUS ServiceName of its accelerator machines and that service's one ServiceSubcategory (FOCUS 1.2's list;
    ServiceName-C-008-C)."""
    focus_tpu_service: ClassVar[tuple[str, str] | None] = None
    """FOCUS ServiceName and ServiceSubcategory of its TPU machines, when the bill names them apart."""
    placeholder_machines: ClassVar[dict[str, str]] = {}
    """`qm import kueue`: a catalog machine per accelerator kind (`gpu`, `tpu`) for a pool whose machine the
    manifests do not name."""
    import_settings: ClassVar[dict[str, object]] = {}
    """`qm import kueue`: the provider's own cluster settings in the skeleton, to be filled in."""

    @property
    def package(self) -> str:
        """The package the provider is defined in (`quartermaster.providers.gke`): its emitters are submodules of it
        that the emitter layer imports by name (`quartermaster.modules.cloud.emitter`), never the core."""
        return type(self).__module__

    def refusal(self, provisioning: Provisioning, others: Iterable[Provider]) -> tuple[str, str]:
        """The problem and fix for a pool of this provider asking for a mode it does not offer (`others`: the
        registered providers, whose exclusive modes name where the mode exists)."""
        for other in others:
            if provisioning in other.exclusive_provisioning:
                return other.exclusive_provisioning[provisioning]
        offered = ", ".join(f"`{p}`" for p in sorted(self.provisioning))
        return f"{self.title} pools cannot be `{provisioning}`", f"Use one of {offered}."

    def pool_name_issues(self, pool: Pool) -> list[Issue]:
        """Problems with the pool's name as this provider names node pools (beyond the inventory's own limits)."""
        return []

    def cluster_issues(self, inventory: Inventory, cluster: Cluster) -> list[Issue]:
        """Problems with the cluster's own settings (run by the `cluster-settings` rule)."""
        return []

    def pool_issues(self, cluster: Cluster, pool: Pool) -> list[Issue]:
        """Problems with a pool that only this provider has (run by the `provisioning` rule)."""
        return []

    def flavor_node_labels(self, machine: Machine, pool: Pool) -> dict[str, str]:
        """The node labels, beyond the pool's own, that select exactly the pool's nodes (a ResourceFlavor's
        `nodeLabels`)."""
        return {self.node_pool_label: pool.name} if self.node_pool_label else {}

    def topology_levels(self, machine: str, provisioning: str) -> tuple[str, ...]:
        """The node labels, coarsest first, the platform puts on nodes of this machine and provisioning (Kueue
        Topology levels)."""
        return topology_levels(self.kind, machine, provisioning)

    def platform_taints(self, provisioning: str) -> tuple[PlatformTaint, ...]:
        """Taints the platform puts on nodes of this provisioning by itself."""
        return platform_taints(self.kind, provisioning)

    def capacity_window(self, commitment: Commitment) -> tuple[dt.datetime, dt.datetime | None]:
        """The instants (UTC) between which a pool whose nodes are `commitment`'s capacity has them: from midnight
        of the term's first day to midnight of the first day after it; owned hardware stays after its term (the
        amortisation ends, not the servers), so only its delivery (the start) bounds it."""
        opens = dt.datetime.combine(commitment.start, dt.time(), dt.UTC)
        return opens, None if self.owned else dt.datetime.combine(commitment.end, dt.time(), dt.UTC)

    def import_machine(self, labels: dict[str, str], tpu: bool, machines: tuple[Machine, ...]) -> str | None:
        """`qm import kueue`: the machine, of `machines`, a flavor's node labels name; None when they name none."""
        return None

    def focus_service_of(self, machine: Machine) -> tuple[str, str]:
        """FOCUS ServiceName and ServiceSubcategory of a machine's capacity."""
        if machine.kind == "tpu" and self.focus_tpu_service:
            return self.focus_tpu_service
        return self.focus_service
