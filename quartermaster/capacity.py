"""Pool sizes in nodes and accelerators, and the instants a pool's nodes can exist: the one place these are
derived."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass

from quartermaster.model import Inventory, Machine, Pool, Quota
from quartermaster.names import Provisioning
from quartermaster.providers import provider_of

DATED_PROVISIONING = (Provisioning.RESERVATION, Provisioning.CAPACITY_BLOCK)
"""Provisioning whose nodes are the pool's commitment's capacity, so they exist only within its dates."""


@dataclass(frozen=True)
class PoolWindow:
    """When a pool's nodes can exist: from `opens` (None: always did) until `closes` (None: no end), UTC, with
    the commitment that dates them."""

    pool: str
    opens: dt.datetime | None
    closes: dt.datetime | None
    commitment: str | None

    def holds(self, at: dt.datetime) -> bool:
        """Whether the pool's nodes can exist at `at`."""
        return (self.opens is None or self.opens <= at) and (self.closes is None or at < self.closes)


def pool_window(inventory: Inventory, pool: Pool) -> PoolWindow:
    """A `reservation` or `capacity-block` pool's nodes are its commitment's capacity: they exist within the
    commitment's dates as its provider counts them (a capacity block from 11:30 UTC of its first day to the node
    group's scale-down; a cloud reservation over the term; owned hardware from its delivery on). Every other pool
    is undated."""
    commitment = inventory.commitment_by_name.get(pool.commitment or "")
    if commitment is None or pool.provisioning not in DATED_PROVISIONING:
        return PoolWindow(pool.name, None, None, None)
    opens, closes = provider_of(inventory.cluster_of_pool[pool.name].kind).capacity_window(commitment)
    return PoolWindow(pool.name, opens, closes, commitment.name)


def open_pools(inventory: Inventory, at: dt.datetime) -> frozenset[str]:
    """The pools whose nodes can exist at `at` (an aware datetime): a quota is offered only in these."""
    return frozenset(p.name for p in inventory.pools if pool_window(inventory, p).holds(at))


def capacity_boundaries(inventory: Inventory) -> list[dt.datetime]:
    """Every instant at which some pool's nodes start or stop existing, in order."""
    instants = {
        moment
        for p in inventory.pools
        for moment in (pool_window(inventory, p).opens, pool_window(inventory, p).closes)
    }
    return sorted(m for m in instants if m is not None)


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


def lendable(quota: Quota) -> int:
    """What a quota entry can lend: its lending limit, or all of its nominal quota."""
    return quota.nominal if quota.lending_limit is None else quota.lending_limit


def cohort_root(inventory: Inventory, cohort: str | None) -> str | None:
    """The root of a cohort's tree (the cohort itself when it has no parent)."""
    seen = set()
    while cohort is not None and cohort not in seen:
        seen.add(cohort)
        parent = inventory.cohort_by_name.get(cohort)
        if parent is None or parent.parent is None:
            return cohort
        cohort = parent.parent
    return cohort


def borrowable(inventory: Inventory) -> dict[tuple[str, str], int]:
    """(team, flavor) -> the most the team can borrow there: what the rest of its cohort tree can lend (the other
    teams' lending limits, or nominal, and the tree's cohort quotas); teams without a cohort borrow nothing.
    One pass over the inventory, so checking every team stays linear."""
    totals: dict[tuple[str | None, str], int] = defaultdict(int)
    for team in inventory.teams:
        if team.cohort is not None:
            for q in team.quotas:
                totals[(cohort_root(inventory, team.cohort), q.flavor)] += lendable(q)
    for cohort in inventory.cohorts:
        for q in cohort.quotas:
            totals[(cohort_root(inventory, cohort.name), q.flavor)] += lendable(q)
    out = {}
    for team in inventory.teams:
        if team.cohort is not None:
            root = cohort_root(inventory, team.cohort)
            own: dict[str, int] = defaultdict(int)
            for q in team.quotas:
                own[q.flavor] += lendable(q)
            for (r, flavor), total in totals.items():
                if r == root:
                    out[(team.name, flavor)] = total - own[flavor]
    return out
