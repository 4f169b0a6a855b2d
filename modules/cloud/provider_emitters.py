"""The emitter side of a provider, as the shared emitter code sees it: its capacity specs and conflicts guard
(`CloudModule`), its Pulumi components and its Terraform resources, each a submodule of the provider's package that
this layer imports by name and whose one typed object it reads (`emitter`); the core provider
(`quartermaster.providers`) names the package.

A provider package `quartermaster/providers/<name>/` (or any package a registered provider is defined in) holds:

- `cloud.py`: the specs, plain frozen dataclasses built from the inventory (no Pulumi or Terraform import), and
  `MODULE`, its `CloudModule`;
- `pulumi_components.py`: its Pulumi components and `COMPONENTS`, a
  `modules.pulumi.provider_components.PulumiComponents` (`declare_capacity(parent, spec)`);
- `terraform_resources.py`: its Terraform provider blocks and resources and `RESOURCES`, a
  `modules.terraform.resources.TerraformResources` (`pins`, `pool_types`, `terraform(spec)`).

Each object is generic in the provider's capacity specs (`CloudModule[GkeCapacity, ...]`,
`PulumiComponents[GkeCapacity]`), so mypy checks the provider's functions against what the shared code calls.

A provider without cloud resources (on-prem, `Provider.cloud_resources` False) has none of them. Building or
checking specs imports only `cloud.py`, so it never loads a cloud SDK or Node.js.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from quartermaster.model import Cluster, Inventory
from quartermaster.providers import Provider, provider_of

if TYPE_CHECKING:
    import datetime as dt

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


CapacityT = TypeVar("CapacityT")
"""A provider's specs of one cluster (`GkeCapacity`, `EksCapacity`, ...)."""
PoolSpecT = TypeVar("PoolSpecT")
"""A provider's spec of one node pool (`GkeNodePoolSpec`, ...)."""


@dataclass(frozen=True)
class ClusterSpec(Generic[CapacityT]):
    """Everything a cluster's cloud stack declares. The cluster itself is referenced, never created."""

    cluster: str
    kind: str
    region: str
    project: str | None
    capacity: CapacityT
    """The provider's own specs (`GkeCapacity`, `EksCapacity`, ...); None for a provider without cloud resources."""
    manual_quota: list[ManualQuota] = field(default_factory=list)


class CloudModule(ABC, Generic[CapacityT, PoolSpecT]):
    """One provider's capacity specs and conflicts guard; subclasses set `provider` and implement the methods."""

    provider: ClassVar[Provider]
    """The core provider this module builds specs for."""

    @abstractmethod
    def capacity(self, inventory: Inventory, cluster: Cluster, now: dt.datetime) -> tuple[CapacityT, list[ManualQuota]]:
        """The cluster's specs as they should be at `now`, and the quota a person must request by hand."""

    @abstractmethod
    def pool_specs(self, capacity: CapacityT) -> Sequence[PoolSpecT]:
        """The specs of the node pools in `capacity` (what `conflicts` checks)."""

    @abstractmethod
    def declared_nodes(self, capacity: CapacityT) -> list[DeclaredNodes]:
        """The labels and taints the node pools in `capacity` declare for their nodes."""

    @abstractmethod
    def conflicts(self, pool_spec: PoolSpecT) -> list[str]:
        """Arguments of one node pool spec that contradict each other, each naming both and the way out."""

    @abstractmethod
    def pool_title(self, pool_spec: PoolSpecT) -> str:
        """How messages name one node pool spec (`node pool h100-0`)."""


CLOUD_PART = "cloud"
"""The submodule of a provider's package that holds its specs: `MODULE`, its `CloudModule`."""


EmitterT = TypeVar("EmitterT")
"""The type of a provider's emitter object (`CloudModule`, `PulumiComponents`, `TerraformResources`)."""


def emitter(provider: Provider, part: str, name: str, kind: type[EmitterT]) -> EmitterT:
    """The object `name` of the submodule `part` of the provider's package (`cloud.MODULE`,
    `pulumi_components.COMPONENTS`, `terraform_resources.RESOURCES`), imported on first use; a TypeError when it is
    not a `kind`. Its capacity type is `Any` (`CloudModule[Any, Any]`): the shared code meets a provider's specs
    only at run time, by a cluster's kind."""
    module = importlib.import_module(f"{provider.package}.{part}")
    found = getattr(module, name, None)
    if not isinstance(found, kind):
        raise TypeError(f"{module.__name__}.{name} must be a {kind.__name__} (got {type(found).__name__})")
    return found


def cloud_module(kind: str) -> CloudModule[Any, Any] | None:
    """The cloud module of a cluster kind; None when its clusters have no cloud resources (on-prem)."""
    provider = provider_of(kind)
    if not provider.cloud_resources:
        return None
    # mypy refuses an abstract class as `type[...]` (python/mypy issue 4717); `emitter` only checks isinstance with it
    return emitter(provider, CLOUD_PART, "MODULE", CloudModule)  # type: ignore[type-abstract]
