"""Terraform stacks from the cloud specs and Kueue manifests: pure, no cdktf import.

A cluster's stack holds its provider's resources, which that provider's `terraform_resources` module builds
(`quartermaster/providers/<name>/terraform_resources.py`, its `RESOURCES`: `pins`, `pool_types` and
`terraform(spec)`, each body mirroring the provider's Pulumi components argument for argument, in the Terraform
spelling), and the Kueue objects as `kubernetes_manifest` resources. Argument names were checked against the
provider docs of the versions pinned in `provider_pins()` (sources in `modules/terraform/__init__.py`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Generic

from quartermaster.model import Inventory
from quartermaster.modules.cloud import ClusterSpec, SpecError, cloud_module, conflicts, emitter
from quartermaster.modules.cloud.provider_emitters import Body, CapacityT
from quartermaster.providers import Provider, provider_of, providers

Manifest = dict[str, Any]

KUBECONFIG_VARIABLE = "kubeconfig_path"
TERRAFORM_PART = "terraform_resources"
"""The submodule of a provider's package that builds its Terraform resources (`RESOURCES`, `TerraformResources`)."""


@dataclass(frozen=True)
class ProviderPin:
    """A Terraform provider the stacks use: registry source and the version constraint its schema was read at."""

    source: str
    version: str


KUBERNETES_PIN = ProviderPin("hashicorp/kubernetes", "~> 2.38")


@dataclass(frozen=True)
class TerraformResources(Generic[CapacityT]):
    """A provider's Terraform resources as the stacks read them: `RESOURCES = TerraformResources(PINS, POOL_TYPES,
    terraform)` in its `terraform_resources` module, whose `terraform` mypy checks against this signature."""

    pins: dict[str, ProviderPin]
    """The Terraform providers its resources need, by the name the resources use."""
    pool_types: tuple[str, ...]
    """Terraform resource types that hold nodes: the Kueue objects wait for them."""
    terraform: Callable[[ClusterSpec[CapacityT]], tuple[dict[str, Body], list[TfResource]]]
    """The Terraform provider blocks and resources of a cluster's cloud capacity."""


def terraform_resources(provider: Provider) -> TerraformResources[Any] | None:
    """The provider's Terraform resources; None when its clusters have no cloud resources (on-prem)."""
    if not provider.cloud_resources:
        return None
    return emitter(provider, TERRAFORM_PART, "RESOURCES", TerraformResources)


def provider_pins() -> dict[str, ProviderPin]:
    """Every Terraform provider the stacks may use and the version its argument names were read at (see the module
    docstring of modules.terraform): the registered providers' and `kubernetes` for the Kueue objects."""
    pins = {name: pin for p in providers() if (module := terraform_resources(p)) for name, pin in module.pins.items()}
    return {**pins, "kubernetes": KUBERNETES_PIN}


@dataclass(frozen=True)
class TfResource:
    """One Terraform resource: `resource.<type>.<name>` with its arguments and meta-arguments."""

    type: str
    name: str
    provider: str
    """Key of the stack's provider; empty for Terraform's built-in `terraform_data`."""
    body: Body
    depends_on: tuple[str, ...] = ()
    """Addresses `<type>.<name>` of resources in the same stack this one waits for."""
    prevent_destroy: bool = False
    ignore_changes: tuple[str, ...] = ()
    data: bool = False
    """A data source (read, never created): addressed `data.<type>.<name>`."""
    count: str | None = None
    """The `count` meta-argument, a Terraform expression (`${...}`); None: one instance."""

    @property
    def address(self) -> str:
        return f"data.{self.type}.{self.name}" if self.data else f"{self.type}.{self.name}"


@dataclass(frozen=True)
class TfStackSpec:
    """Everything one cluster's Terraform stack declares."""

    cluster: str
    providers: dict[str, Body]
    """Provider name -> its configuration block."""
    resources: list[TfResource] = field(default_factory=list)
    variables: dict[str, Body] = field(default_factory=dict)


def stack_clusters(inventory: Inventory) -> list[str]:
    """The clusters that get a stack: every cluster whose provider has cloud resources (on-prem pools are
    inventory-only, as in Pulumi)."""
    return [c.name for c in inventory.clusters if cloud_module(c.kind) is not None]


def tf_name(value: str) -> str:
    """A Terraform resource name for `value`: letters, digits, `_` and `-`, not starting with a digit or `-`."""
    name = re.sub(r"[^A-Za-z0-9_-]", "_", value)
    return name if re.match(r"[A-Za-z_]", name) else f"_{name}"


class Ref(str):
    """A Terraform expression this module writes (`${aws_launch_template.x.id}`), kept as it is by `literal`."""


def literal(value: Any) -> Any:
    """`value` with `${` and `%{` escaped in every string but a `Ref`, so Terraform reads inventory text as text,
    never as a template (a project named `${file("~/.ssh/id_rsa")}` would otherwise be evaluated)."""
    if isinstance(value, Ref):
        return value
    if isinstance(value, str):
        return value.replace("${", "$${").replace("%{", "%%{")
    if isinstance(value, dict):
        return {k: literal(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [literal(v) for v in value]
    return value


def compact(value: Any) -> Any:
    """`value` without None entries (an absent argument), recursively; tuples become lists."""
    if isinstance(value, dict):
        return {k: compact(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [compact(v) for v in value]
    return value


def stack_spec(spec: ClusterSpec[Any], manifests: Sequence[Manifest]) -> TfStackSpec:
    """The providers, variables and resources of one cluster's stack; a SpecError when the cluster's node pool specs
    contradict themselves (the `conflicts` guard the Pulumi components apply too)."""
    problems = conflicts(spec)
    if problems:
        raise SpecError(f"cluster {spec.cluster}: " + "; ".join(problems) + ".")
    module = terraform_resources(provider_of(spec.kind))
    blocks, resources = module.terraform(spec) if module else ({}, [])
    pool_types = module.pool_types if module else ()
    variables: dict[str, Body] = {}
    if manifests:
        blocks["kubernetes"] = {"config_path": Ref(f"${{var.{KUBECONFIG_VARIABLE}}}")}
        variables[KUBECONFIG_VARIABLE] = {
            "type": "string",
            "description": f"Path of a kubeconfig whose current context is cluster {spec.cluster} "
            "(for the Kueue objects).",
        }
        pools = tuple(r.address for r in resources if r.type in pool_types)
        barrier = TfResource("terraform_data", "node_pools", "", {}, depends_on=pools) if pools else None
        resources += [barrier] if barrier else []
        resources += kueue_manifests(manifests, (barrier.address,) if barrier else ())
    _check_unique(resources)
    return TfStackSpec(spec.cluster, literal(blocks), [replace(r, body=literal(r.body)) for r in resources], variables)


def _check_unique(resources: list[TfResource]) -> None:
    seen: set[str] = set()
    for r in resources:
        if r.address in seen:
            raise ValueError(f"two Terraform resources are named {r.address}; rename one of the objects behind it")
        seen.add(r.address)


# --- Kueue ---------------------------------------------------------------------------------------------


def manifest_name(m: Manifest) -> str:
    """`<kind>_<namespace>_<name>` (cluster-scoped: `<kind>_<name>`), as a Terraform name."""
    meta = m["metadata"]
    return tf_name("_".join(p for p in (m["kind"].lower(), meta.get("namespace"), meta["name"]) if p))


def kueue_manifests(manifests: Sequence[Manifest], pools: tuple[str, ...]) -> list[TfResource]:
    """A `kubernetes_manifest` per object; namespaced objects wait for their Namespace, Kueue objects for
    the node pools their flavors select (as in the Pulumi component) through `pools`: the built-in
    `terraform_data.node_pools`, which waits for every pool (M + P dependency edges instead of M x P).
    Namespaces are protected from destroy: deleting one deletes every workload in it (Pulumi retains them)."""
    namespaces = {m["metadata"]["name"]: manifest_name(m) for m in manifests if m["kind"] == "Namespace"}
    out = []
    for m in manifests:
        namespace = m["metadata"].get("namespace")
        after = (f"kubernetes_manifest.{namespaces[namespace]}",) if namespace in namespaces else ()
        if m["apiVersion"].startswith("kueue.x-k8s.io/"):
            after = (*after, *pools)
        out.append(
            TfResource(
                "kubernetes_manifest",
                manifest_name(m),
                "kubernetes",
                {"manifest": m},
                depends_on=after,
                prevent_destroy=m["kind"] == "Namespace",
            )
        )
    return out
