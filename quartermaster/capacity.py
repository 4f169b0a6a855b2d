"""Pool sizes in nodes and accelerators: the one place these numbers are derived."""

from __future__ import annotations

from quartermaster.model import Inventory, Machine, Pool


def nodes_per_slice(pool: Pool, machine: Machine) -> int:
    """Hosts in one TPU slice: chips in the topology / chips per host (1 for GPU pools)."""
    if pool.tpu is None:
        return 1
    return max(1, pool.tpu.chips_per_slice // machine.accelerators_per_node)


def pool_max_nodes(pool: Pool, machine: Machine) -> int:
    """The most nodes the pool can have: its fixed size, its autoscaling maximum, or all its slices."""
    if pool.tpu is not None:
        return pool.tpu.slices * nodes_per_slice(pool, machine)
    if pool.nodes is not None:
        return pool.nodes
    assert pool.autoscaling is not None  # Pool's validator guarantees one of the three
    return pool.autoscaling.max_nodes


def pool_min_nodes(pool: Pool, machine: Machine) -> int:
    """The fewest nodes the pool keeps."""
    if pool.autoscaling is not None:
        return pool.autoscaling.min_nodes
    return pool_max_nodes(pool, machine)


def pool_accelerators(inventory: Inventory, pool: Pool) -> int:
    """The pool's capacity in accelerators (GPUs or TPU chips); 0 if its machine is unknown."""
    machine = inventory.machine_by_name.get(pool.machine)
    if machine is None:
        return 0
    return pool_max_nodes(pool, machine) * machine.accelerators_per_node


def flavor_capacity(inventory: Inventory) -> dict[str, int]:
    """Accelerators per flavor (pool name)."""
    return {p.name: pool_accelerators(inventory, p) for p in inventory.pools}


def nominal_by_flavor(inventory: Inventory) -> dict[str, int]:
    """Sum of the teams' nominal quotas per flavor."""
    totals: dict[str, int] = {}
    for team in inventory.teams:
        for quota in team.quotas:
            totals[quota.flavor] = totals.get(quota.flavor, 0) + quota.nominal
    return totals
