"""The toy provider's Pulumi components: one component per pool, without cloud children (the toy cloud has no
Pulumi provider)."""

from __future__ import annotations

import pulumi

from quartermaster.modules.cloud import ClusterSpec
from quartermaster.modules.pulumi.provider_components import PulumiComponents
from tests.providers.toy.cloud import ToyCapacity, ToyPoolSpec


class ToyPool(pulumi.ComponentResource):
    """One toy pool."""

    def __init__(self, spec: ToyPoolSpec, opts: pulumi.ResourceOptions) -> None:
        super().__init__("quartermaster:toy:Pool", spec.name, None, opts)
        self.register_outputs({"size": spec.size})


def declare_capacity(
    parent: pulumi.ComponentResource, spec: ClusterSpec[ToyCapacity]
) -> dict[str, pulumi.ComponentResource]:
    return {p.pool: ToyPool(p, pulumi.ResourceOptions(parent=parent)) for p in spec.capacity.pools}


COMPONENTS = PulumiComponents(declare_capacity)
