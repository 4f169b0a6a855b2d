"""The inventory summary `qm validate` prints: plain rows, rendered by the CLI."""

from __future__ import annotations

from dataclasses import dataclass

from quartermaster.capacity import flavor_capacity, nominal_by_flavor, pool_max_nodes
from quartermaster.model import Inventory


@dataclass(frozen=True)
class FlavorRow:
    """Quota against capacity for one flavor (pool)."""

    cluster: str
    flavor: str
    machine: str
    accelerator: str
    provisioning: str
    nodes: int
    capacity: int
    nominal: int

    @property
    def free(self) -> int:
        return self.capacity - self.nominal


@dataclass(frozen=True)
class Summary:
    """Counts and per-site, per-flavor figures of an inventory."""

    clusters: int
    pools: int
    teams: int
    cohorts: int
    commitments: int
    accelerators_by_site: dict[str, dict[str, int]]
    flavors: list[FlavorRow]


def summarise(inv: Inventory) -> Summary:
    """Build the summary of an inventory."""
    capacity = flavor_capacity(inv)
    nominal = nominal_by_flavor(inv)
    by_site: dict[str, dict[str, int]] = {}
    rows = []
    for cluster in inv.clusters:
        for pool in cluster.pools:
            machine = inv.machine_by_name.get(pool.machine)
            accelerator = machine.accelerator if machine else "?"
            site = by_site.setdefault(cluster.site, {})
            site[accelerator] = site.get(accelerator, 0) + capacity[pool.name]
            rows.append(
                FlavorRow(
                    cluster.name,
                    pool.name,
                    pool.machine,
                    accelerator,
                    pool.provisioning,
                    pool_max_nodes(pool, machine) if machine else 0,
                    capacity[pool.name],
                    nominal.get(pool.name, 0),
                )
            )
    return Summary(
        len(inv.clusters), len(inv.pools), len(inv.teams), len(inv.cohorts), len(inv.commitments), by_site, rows
    )
