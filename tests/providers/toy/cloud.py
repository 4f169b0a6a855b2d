"""The toy provider's capacity specs: one toy pool per inventory pool."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field

from quartermaster.model import Cluster, Inventory
from quartermaster.modules.cloud import CloudModule, DeclaredNodes, ManualQuota
from tests.providers.toy import PROVIDER, ToyCluster


@dataclass(frozen=True)
class ToyPoolSpec:
    name: str
    pool: str
    account: str
    machine_type: str
    size: int
    labels: dict[str, str]


@dataclass(frozen=True)
class ToyCapacity:
    pools: list[ToyPoolSpec] = field(default_factory=list)


class ToyModule(CloudModule[ToyCapacity, ToyPoolSpec]):
    provider = PROVIDER

    def capacity(
        self, inventory: Inventory, cluster: Cluster, now: dt.datetime
    ) -> tuple[ToyCapacity, list[ManualQuota]]:
        assert isinstance(cluster, ToyCluster) and cluster.toy is not None
        pools = [
            ToyPoolSpec(p.name, p.name, cluster.toy.account, p.machine, p.nodes or 0, {**p.labels})
            for p in cluster.pools
        ]
        return ToyCapacity(pools), []

    def pool_specs(self, capacity: ToyCapacity) -> Sequence[ToyPoolSpec]:
        return capacity.pools

    def declared_nodes(self, capacity: ToyCapacity) -> list[DeclaredNodes]:
        return [DeclaredNodes(p.pool, p.name, p.labels, ()) for p in capacity.pools]

    def conflicts(self, pool_spec: ToyPoolSpec) -> list[str]:
        return ["`size` must be at least 1"] if pool_spec.size < 1 else []

    def pool_title(self, pool_spec: ToyPoolSpec) -> str:
        return f"toy pool {pool_spec.name}"


MODULE = ToyModule()
