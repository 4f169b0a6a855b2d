"""A provider added in the tests alone: "Toy", a made-up cloud, one package as docs/explanation/providers.md says.

This module is its core facts (the cluster model and the `Provider`); `cloud`, `pulumi_components` and
`terraform_resources` are its emitters, which Quartermaster's emitter layer imports by name when a toy cluster is
built. `tests/providers/test_toy_provider.py` registers its `PROVIDER` and uses it end to end.
"""

from __future__ import annotations

from typing import Literal

from quartermaster.issues import Issue
from quartermaster.model import Cluster, Inventory, Strict
from quartermaster.pricing import Provisioning
from quartermaster.providers import Provider


class ToySettings(Strict):
    """What a toy node pool needs that the cluster already has."""

    account: str
    """account: the toy cloud account that owns the cluster."""


class ToyCluster(Cluster):
    """A cluster on the toy cloud."""

    kind: Literal["toy"]
    """kind: `toy`."""
    toy: ToySettings | None = None
    """toy: toy-only settings; required."""


class Toy(Provider):
    kind = "toy"
    cloud = "toycloud"
    title = "Toy"
    order = 50  # after the built-in providers (10 to 40), were it one
    cluster_model = ToyCluster
    provisioning = frozenset({Provisioning.ON_DEMAND, Provisioning.SPOT})
    node_pool_label = "toy.example/pool"
    focus_provider_name = "Toy Cloud"
    focus_service = ("Toy Compute", "Virtual Machines")

    def cluster_issues(self, inventory: Inventory, cluster: Cluster) -> list[Issue]:
        assert isinstance(cluster, ToyCluster)
        if cluster.toy is not None:
            return []
        return [
            Issue("", "a toy cluster needs `toy: {account}`", "Add the `toy` block.", ref=("clusters", cluster.name))
        ]


PROVIDER = Toy()
