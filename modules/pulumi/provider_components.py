"""A cluster's cloud resources in Pulumi: what a provider's `pulumi_components` module offers the shared code
(`PulumiComponents`, named `COMPONENTS` there) and the call that declares them (`declare_capacity`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic

import pulumi

from quartermaster.modules.cloud import ClusterSpec, emitter
from quartermaster.modules.cloud.provider_emitters import CapacityT
from quartermaster.providers import provider_of

PULUMI_PART = "pulumi_components"
"""The submodule of a provider's package that holds its Pulumi components and their `COMPONENTS`."""


@dataclass(frozen=True)
class PulumiComponents(Generic[CapacityT]):
    """A provider's Pulumi components as `ClusterCapacity` calls them: `COMPONENTS = PulumiComponents(declare_capacity)`
    in its `pulumi_components` module, whose `declare_capacity` mypy checks against this signature."""

    declare_capacity: Callable[[pulumi.ComponentResource, ClusterSpec[CapacityT]], dict[str, pulumi.ComponentResource]]
    """Declares a cluster's cloud resources from its specs, as children of the component `parent`; returns the
    component of each inventory pool, by pool name."""


def declare_capacity(parent: pulumi.ComponentResource, spec: ClusterSpec[Any]) -> dict[str, pulumi.ComponentResource]:
    """The cluster's cloud resources, declared by its provider's components as children of `parent`: the component
    of each inventory pool (none for a provider without cloud resources, on-prem)."""
    provider = provider_of(spec.kind)
    if not provider.cloud_resources:
        return {}
    return emitter(provider, PULUMI_PART, "COMPONENTS", PulumiComponents).declare_capacity(parent, spec)
