"""Where a team may run: the offers (site and machine) its demand may be served at under `policy.placement`.

- `quota` (default): the pools where the team holds quota today: a nominal above 0, or a flavor it may borrow in
  (it is in a cohort and its borrowing limit is not 0);
- `cohort`: also the pools where another member of its cohort tree (a team or a cohort) holds nominal quota it
  may lend (lending limit not 0): Kueue lets a ClusterQueue borrow there once it lists the flavor;
- `anywhere`: any offer of the price book.

A team that holds no quota anywhere has no placement today, so it may run anywhere under every policy. Residency
(`teams[].sites`) and pinned sites are applied by the planner's routes on top of this.
"""

from __future__ import annotations

from collections.abc import Iterable

from quartermaster.model import Inventory, Quota, Team

PLACEMENTS = ("quota", "cohort", "anywhere")


def offer_key(site: str, machine: str) -> str:
    """An offer's key: `site/machine`."""
    return f"{site}/{machine}"


def flavor_offer(inventory: Inventory, flavor: str) -> str | None:
    """The offer a flavor (pool) is at, or None for an unknown pool."""
    pool = inventory.pool_by_name.get(flavor)
    if pool is None:
        return None
    return offer_key(inventory.cluster_of_pool[flavor].site, pool.machine)


def _root(inventory: Inventory, cohort: str | None) -> str | None:
    parents = {c.name: c.parent for c in inventory.cohorts}
    seen: set[str] = set()
    while cohort is not None and parents.get(cohort) is not None and cohort not in seen:
        seen.add(cohort)
        cohort = parents[cohort]
    return cohort


def _held(team: Team, quota: Quota) -> bool:
    return quota.nominal > 0 or (team.cohort is not None and quota.borrowing_limit != 0)


def quota_offers(inventory: Inventory, team: Team) -> set[str]:
    """The offers where `team` holds quota today (see the module docstring)."""
    return {o for q in team.quotas if _held(team, q) and (o := flavor_offer(inventory, q.flavor)) is not None}


def _lent(quotas: Iterable[Quota]) -> set[str]:
    return {q.flavor for q in quotas if q.nominal > 0 and q.lending_limit != 0}


def cohort_offers(inventory: Inventory, team: Team) -> set[str]:
    """The offers where another member of `team`'s cohort tree holds quota it may lend."""
    root = _root(inventory, team.cohort)
    if root is None:
        return set()
    flavors: set[str] = set()
    for other in inventory.teams:
        if other.name != team.name and _root(inventory, other.cohort) == root:
            flavors |= _lent(other.quotas)
    for cohort in inventory.cohorts:
        if _root(inventory, cohort.name) == root:
            flavors |= _lent(cohort.quotas)
    return {o for f in flavors if (o := flavor_offer(inventory, f)) is not None}


def allowed_offers(inventory: Inventory, placement: str) -> dict[str, frozenset[str] | None]:
    """team -> the offers its demand may be served at under `placement`; None = any (no limit)."""
    out: dict[str, frozenset[str] | None] = {}
    for team in inventory.teams:
        own = quota_offers(inventory, team)
        if placement == "anywhere" or not own:
            out[team.name] = None
        elif placement == "cohort":
            out[team.name] = frozenset(own | cohort_offers(inventory, team))
        else:
            out[team.name] = frozenset(own)
    return out
