"""The emitter side of a provider: its cloud capacity specs, conflicts guard, Pulumi component and Terraform
resources, registered by cluster kind beside the core provider (`quartermaster.providers`) it extends.

Specs are pure (no Pulumi or Terraform import here): `declare_pulumi` and `terraform` import their emitters when
called, so building or checking specs never loads a cloud SDK or Node.js.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from quartermaster.model import Cluster, Inventory
from quartermaster.providers import Provider

if TYPE_CHECKING:
    import datetime as dt

    import pulumi

    from quartermaster.modules.terraform.resources import TfResource

Body = dict[str, Any]


@dataclass(frozen=True)
class ManualQuota:
    """Quota the pools need but no verified quota id exists for: a person files it (see gcp_gpu_quota.csv)."""

    region: str
    accelerator: str
    quota_class: str
    accelerators: int
    pools: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class ProviderPin:
    """A Terraform provider the stacks use: registry source and the version constraint its schema was read at."""

    source: str
    version: str


@dataclass(frozen=True)
class DeclaredNodes:
    """The nodes of one provider node pool (a GKE node pool or TPU slice, an EKS node group, an AKS agent pool) as
    its spec declares them: what the offline admission check (`modules.kueue.admission`) reads."""

    pool: str
    name: str
    labels: dict[str, str]
    taints: tuple[tuple[str, str, str], ...]
    """(key, value, effect) in Kubernetes spelling."""
    queued: bool = False
    """Nodes come only through a ProvisioningRequest (GKE queued provisioning)."""


@dataclass(frozen=True)
class ClusterSpec:
    """Everything a cluster's cloud stack declares. The cluster itself is referenced, never created."""

    cluster: str
    kind: str
    region: str
    project: str | None
    capacity: Any = None
    """The provider's own specs (`GkeCapacity`, `EksCapacity`, ...); None for a provider without cloud resources."""
    manual_quota: list[ManualQuota] = field(default_factory=list)


class CloudModule(ABC):
    """One provider's emitters; subclasses set `provider` and the Terraform facts and implement the methods."""

    provider: ClassVar[Provider]
    """The core provider this module emits for (its `kind` is the registry key)."""
    terraform_pins: ClassVar[dict[str, ProviderPin]]
    """The Terraform providers its resources need, by the name the resources use."""
    terraform_pool_types: ClassVar[tuple[str, ...]]
    """Terraform resource types that hold nodes: the Kueue objects wait for them."""

    @abstractmethod
    def capacity(self, inventory: Inventory, cluster: Cluster, now: dt.datetime) -> tuple[Any, list[ManualQuota]]:
        """The cluster's specs as they should be at `now`, and the quota a person must request by hand."""

    @abstractmethod
    def pool_specs(self, capacity: Any) -> Sequence[Any]:
        """The specs of the node pools in `capacity` (what `conflicts` checks)."""

    @abstractmethod
    def declared_nodes(self, capacity: Any) -> list[DeclaredNodes]:
        """The labels and taints the node pools in `capacity` declare for their nodes."""

    @abstractmethod
    def conflicts(self, pool_spec: Any) -> list[str]:
        """Arguments of one node pool spec that contradict each other, each naming both and the way out."""

    @abstractmethod
    def pool_title(self, pool_spec: Any) -> str:
        """How messages name one node pool spec (`node pool h100-0`)."""

    @abstractmethod
    def declare_pulumi(
        self, parent: pulumi.ComponentResource, spec: ClusterSpec
    ) -> dict[str, pulumi.ComponentResource]:
        """Declare the cluster's cloud resources as children of `parent`; the component of each inventory pool."""

    @abstractmethod
    def terraform(self, spec: ClusterSpec) -> tuple[dict[str, Body], list[TfResource]]:
        """The Terraform provider blocks and resources of the cluster's cloud capacity."""


_MODULES: dict[str, CloudModule] = {}


def register_cloud(*modules: CloudModule) -> None:
    """Add cloud modules, each under its provider's kind (replacing one of the same kind)."""
    for module in modules:
        _MODULES[module.provider.kind] = module


def unregister_cloud(kind: str) -> None:
    """Remove the cloud module of `kind` (tests that register a provider of their own undo it this way)."""
    del _MODULES[kind]


def cloud_module(kind: str) -> CloudModule | None:
    """The cloud module of a cluster kind; None when its clusters have no cloud resources (on-prem)."""
    return _MODULES.get(kind)


def cloud_modules() -> tuple[CloudModule, ...]:
    """Every registered cloud module, in the order registered."""
    return tuple(_MODULES.values())
