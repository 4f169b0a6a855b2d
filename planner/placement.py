"""Where a team may run: the flavors (a pool and the pricing model its nodes are bought at: one Kueue ResourceFlavor)
its demand may be served on under `policy.placement`.

A flavor serves a tier (program.py) at its offer (site and machine), `flavors()`:
- `existing` (the inventory's commitments): the pools that consume one of the offer's commitments (`commitment:`);
  where a commitment is consumed by no pool (a discount on what runs there, e.g. a CUD or a savings plan), also the
  offer's pools priced on demand;
- `new-commitment`: the offer's pools priced on demand beyond any commitment (`reservation` and `on-demand` pools,
  pricing.PRICING_MODEL_OF_PROVISIONING): a new commitment covers their nodes;
- a pay-per-use model: the pools whose nodes are bought at it (a reservation pool's nodes beyond its commitment are
  on demand).
A tier no pool serves has no flavor yet: `new:<site>/<machine>/<tier>`.

- `quota` (default): the flavors where the team holds quota today: a nominal above 0, or a flavor it may borrow in
  (it is in a cohort and its borrowing limit is not 0);
- `cohort`: also the flavors where another member of its cohort tree (a team or a cohort) holds nominal quota it
  may lend (lending limit not 0): Kueue lets a ClusterQueue borrow there once it lists the flavor;
- `anywhere`: any offer and tier of the price book.

A team that holds no quota anywhere has no placement today, so it may run anywhere under every policy. Residency
(`teams[].sites`) and pinned sites are applied by the planner's routes on top of this. How much a team may use of
a flavor in the quarter in progress (its nominal quota, and what it may borrow within Kueue's borrowing and lending
limits) is a rule of the model (model.add_quota_within_kueue_limits), from `quota_holders()`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from quartermaster.capacity import cohort_root, lendable
from quartermaster.model import Inventory, Quota, Team
from quartermaster.plan_contract import EXISTING, NEW
from quartermaster.pricing import PRICING_MODEL_OF_PROVISIONING, PricingModel

PLACEMENTS = ("quota", "cohort", "anywhere")

Tier = tuple[str, str]
"""(offer, tier): what a flavor serves."""


def offer_key(site: str, machine: str) -> str:
    """An offer's key: `site/machine`."""
    return f"{site}/{machine}"


def new_flavor(offer: str, tier: str) -> str:
    """The name of a flavor no pool has yet: `new:<site>/<machine>/<tier>`."""
    return f"new:{offer}/{tier}"


def flavors(inventory: Inventory) -> dict[Tier, tuple[str, ...]]:
    """(offer, tier) -> the pools that serve it, by name (see the module docstring); tiers no pool serves left out."""
    out: dict[Tier, set[str]] = defaultdict(set)
    on_demand: dict[str, set[str]] = defaultdict(set)
    consumed: set[str] = set()
    for cluster in inventory.clusters:
        for pool in cluster.pools:
            j = offer_key(cluster.site, pool.machine)
            model = PRICING_MODEL_OF_PROVISIONING[pool.provisioning]
            out[(j, str(model))].add(pool.name)
            if model == PricingModel.ON_DEMAND:
                on_demand[j].add(pool.name)
                out[(j, NEW)].add(pool.name)
            if pool.commitment is not None:
                consumed.add(pool.commitment)
                out[(j, EXISTING)].add(pool.name)
    for c in inventory.commitments:
        if c.name not in consumed:
            out[(offer_key(c.site, c.machine), EXISTING)] |= on_demand[offer_key(c.site, c.machine)]
    return {key: tuple(sorted(pools)) for key, pools in sorted(out.items()) if pools}


def _held(team: Team, quota: Quota) -> bool:
    return quota.nominal > 0 or (team.cohort is not None and quota.borrowing_limit != 0)


def held_pools(team: Team) -> set[str]:
    """The pools where `team` holds quota today (see the module docstring)."""
    return {q.flavor for q in team.quotas if _held(team, q)}


def _lent(quotas: Iterable[Quota]) -> set[str]:
    return {q.flavor for q in quotas if q.nominal > 0 and q.lending_limit != 0}


def lent_pools(inventory: Inventory, team: Team) -> set[str]:
    """The pools where another member of `team`'s cohort tree holds quota it may lend."""
    root = cohort_root(inventory, team.cohort)
    if root is None:
        return set()
    pools: set[str] = set()
    for other in inventory.teams:
        if other.name != team.name and cohort_root(inventory, other.cohort) == root:
            pools |= _lent(other.quotas)
    for cohort in inventory.cohorts:
        if cohort_root(inventory, cohort.name) == root:
            pools |= _lent(cohort.quotas)
    return pools


def placed_pools(inventory: Inventory, placement: str) -> dict[str, frozenset[str] | None]:
    """team -> the pools its demand may be served on under `placement`; None = anywhere (no limit)."""
    out: dict[str, frozenset[str] | None] = {}
    for team in inventory.teams:
        own = held_pools(team)
        if placement == "anywhere" or not own:
            out[team.name] = None
        elif placement == "cohort":
            out[team.name] = frozenset(own | lent_pools(inventory, team))
        else:
            out[team.name] = frozenset(own)
    return out


def tiers_of(served: dict[Tier, tuple[str, ...]], pools: frozenset[str]) -> frozenset[Tier]:
    """The (offer, tier) pairs some of `pools` serve (`served`: flavors())."""
    return frozenset(k for k, ps in served.items() if pools.intersection(ps))


def placed_tiers(inventory: Inventory, placement: str) -> dict[str, frozenset[Tier] | None]:
    """team -> the (offer, tier) pairs its demand may be served at under `placement`: those of the pools it may run
    on (placed_pools); None = any."""
    served = flavors(inventory)
    return {
        team: None if pools is None else tiers_of(served, pools)
        for team, pools in placed_pools(inventory, placement).items()
    }


def served_on(served: dict[Tier, tuple[str, ...]], held: frozenset[str], offer: str, tier: str) -> str:
    """The flavor a team's hours of `tier` at `offer` run on: the first pool serving it where the team holds quota
    (`held`), else the first pool serving it, else a new flavor."""
    pools = served.get((offer, tier), ())
    return next((p for p in pools if p in held), pools[0] if pools else new_flavor(offer, tier))


def allowed_offers(inventory: Inventory, placement: str) -> dict[str, frozenset[str] | None]:
    """team -> the offers its demand may be served at under `placement` (those of placed_tiers); None = any."""
    return {
        team: None if tiers is None else frozenset(j for j, _ in tiers)
        for team, tiers in placed_tiers(inventory, placement).items()
    }


@dataclass(frozen=True)
class QuotaHolder:
    """A team's or cohort's quota in one pool, as Kueue admits against it: nominal, the most it borrows beyond it
    (None = no limit; 0 outside a cohort) and the most of it others may borrow (0 outside a cohort)."""

    member: str
    is_team: bool
    root: str
    """root: its cohort tree's root; empty outside a cohort."""
    pool: str
    nominal: int
    borrowing_limit: int | None
    lending_limit: int


def quota_holders(inventory: Inventory) -> list[QuotaHolder]:
    """Every team's and cohort's quota rows (model.add_quota_within_kueue_limits)."""
    out = []
    for team in inventory.teams:
        root = cohort_root(inventory, team.cohort) or ""
        for q in team.quotas:
            borrowing = (q.borrowing_limit if root else 0, min(lendable(q), q.nominal) if root else 0)
            out.append(QuotaHolder(team.name, True, root, q.flavor, q.nominal, *borrowing))
    for cohort in inventory.cohorts:
        root = cohort_root(inventory, cohort.name) or cohort.name
        for q in cohort.quotas:
            out.append(QuotaHolder(cohort.name, False, root, q.flavor, q.nominal, 0, min(lendable(q), q.nominal)))
    return sorted(out, key=lambda h: (h.pool, h.member))
