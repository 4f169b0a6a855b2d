"""On-prem clusters: owned servers whose pools live in the inventory only (no stack); their pools' own labels
select their nodes and every node-hour is priced as owned hardware."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar, Literal

from quartermaster.issues import Issue
from quartermaster.model import Cluster, Pool
from quartermaster.names import Provisioning
from quartermaster.providers.base import Provider


class OnpremCluster(Cluster):
    """A cluster of owned servers in a data centre."""

    kind: Literal["onprem"]
    """kind: `onprem`: owned servers; the pools live in the inventory only."""


class Onprem(Provider):
    kind = "onprem"
    order = 40
    cloud = "onprem"
    title = "on-prem"
    cluster_model = OnpremCluster
    provisioning = frozenset({Provisioning.ON_DEMAND, Provisioning.RESERVATION})
    cloud_resources = False
    needs_project = False
    owned = True
    focus_provider_name = "On-premises"
    focus_service = ("On-premises accelerator servers", "Other (Compute)")
    placeholder_machines: ClassVar[dict[str, str]] = {"gpu": "dgx-h100"}

    def refusal(self, provisioning: Provisioning, others: Iterable[Provider]) -> tuple[str, str]:
        return (
            f"on-prem pools cannot be `{provisioning}`",
            "On-prem pools are `reservation` against an on-prem-purchase commitment.",
        )

    def pool_issues(self, cluster: Cluster, pool: Pool) -> list[Issue]:
        if pool.labels:
            return []
        return [
            Issue(
                "",
                "an on-prem pool needs `labels` that select its nodes",
                "Add the node labels of the pool's servers, e.g. `{pool: dgx-a}`.",
                ref=("pools", pool.name, "labels"),
            )
        ]


PROVIDER = Onprem()
