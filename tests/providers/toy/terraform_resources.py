"""The toy provider's Terraform resources: a `toycloud_node_pool` per pool, from a made-up `example/toycloud`."""

from __future__ import annotations

from typing import Any

from quartermaster.modules.cloud import ClusterSpec
from quartermaster.modules.terraform.resources import ProviderPin, TerraformResources, TfResource
from tests.providers.toy.cloud import ToyCapacity

PINS = {"toycloud": ProviderPin("example/toycloud", "~> 1.0")}
POOL_TYPES = ("toycloud_node_pool",)


def terraform(spec: ClusterSpec[ToyCapacity]) -> tuple[dict[str, Any], list[TfResource]]:
    resources = [
        TfResource(
            "toycloud_node_pool",
            p.name,
            "toycloud",
            {"name": p.name, "account": p.account, "machine_type": p.machine_type, "size": p.size},
        )
        for p in spec.capacity.pools
    ]
    return {"toycloud": {"region": spec.region}}, resources


RESOURCES = TerraformResources(PINS, POOL_TYPES, terraform)
