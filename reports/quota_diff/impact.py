"""What a quota change does to the teams: the last N days of hourly demand replayed through the cohort tree
with the old quotas and with the new ones, following Kueue's admission rules at the level of accelerators
per hour (semantics from docs/kueue-admission.md, Kueue v0.19.2).

Per flavor and hour, with each team's requested accelerators d_t (max of requested and used, as metering
charges) as its demand:

1. **Quota tree** (Kueue's resource nodes, KEP-79), as the offline admission check reads it from the ClusterQueues
   and Cohorts rendered at the last replayed hour (`flavor_trees`, `modules/kueue/quota_tree.py`): a team's
   ClusterQueue has S_t = nominal and a private reserve g_t = nominal - lending_limit (0 without a lending limit);
   a cohort has S_C = its own nominal plus sum over children of (S_c - g_c), and g_C likewise. Usage that passes
   up from a node is max(0, U - g).
2. **Nominal first**: every team is admitted min(d_t, nominal_t). This is always within quota; it stands for
   Kueue's reclaim (demand within nominal preempts borrowers, `reclaimWithinCohort`), taken as instant.
3. **Borrowing**: the rest of each team's demand borrows, highest priority class first; within a priority
   the free pool is water-filled in proportion to the teams' fair-sharing weights (1 when unset; with no
   weight set anywhere Kueue's order among equal borrowers is first-come-first-served, which hourly data
   cannot see, so the pool is split evenly), under every limit on the team's path: usage <= nominal +
   borrowing_limit at the ClusterQueue, and at each cohort the usage it passes on <= S_C + borrowing_limit
   (S at the root).
4. **Waiting** = demand - admitted. **Borrowed** = admitted above nominal. Kueue does not record who lends to
   whom, so what a team **lent** is its share of all borrowed accelerators in proportion to the unused
   nominal it could lend.

Simplifications (each optimistic for the waiting figures, see the reference's section 5): demand is
divisible (whole workloads and gang sizes are not in hourly data); preemption is free and instant; hours are
independent (no carried-over borrowers, no requeue delay); only accelerators are modelled; cohort
fair-sharing weights are not applied (team weights are).
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from quartermaster.model import Inventory

EPSILON = 1e-9
IMPACT_DAYS = 30
"""Days of usage history replayed by default."""


@dataclass(frozen=True)
class Node:
    """One ClusterQueue (a team's quota in a flavor) or cohort of the quota tree, for one flavor."""

    name: str
    parent: str | None
    nominal: float
    borrowing_limit: float | None
    lending_limit: float | None
    is_team: bool
    priority: int = 0
    weight: float = 1.0


@dataclass(frozen=True)
class TeamImpact:
    """One team's replayed hours in one flavor (accelerator-hours unless named otherwise)."""

    team: str
    flavor: str
    demand: float
    admitted: float
    waiting: float
    hours_waiting: int
    """hours_waiting: hours with any demand left waiting."""
    peak_waiting: float
    """peak_waiting: the most accelerators left waiting in one hour."""
    borrowed: float
    lent: float


def replay_instant(demand_rows: Iterable[tuple[dt.datetime, str, str, float]]) -> dt.datetime | None:
    """The instant whose quotas the replay applies: the last replayed hour (None without demand)."""
    last = max((row[0] for row in demand_rows), default=None)
    return None if last is None else last if last.tzinfo else last.replace(tzinfo=dt.UTC)


def flavor_trees(inventory: Inventory, flavors: Iterable[str], at: dt.datetime) -> dict[str, list[Node]]:
    """The quota tree of each flavor at `at`: the tree the offline admission check reads (`modules/kueue/quota_tree.py`,
    built from the ClusterQueues and Cohorts rendered for the flavor's cluster), in the flavor's accelerator
    resource: each team's ClusterQueue that lists the flavor, under its cohort chain, and every cohort that lists
    it. A flavor that is no pool of the inventory has an empty tree."""
    from quartermaster.modules.kueue.builders import quota_objects
    from quartermaster.modules.kueue.quota_tree import QuotaTree as RenderedQuotas

    priority = {p.name: p.value for p in inventory.priority_classes}
    rendered: dict[str, RenderedQuotas] = {}
    out: dict[str, list[Node]] = {}
    for flavor in flavors:
        cluster = inventory.cluster_of_pool.get(flavor)
        if cluster is None:
            out[flavor] = []
            continue
        if cluster.name not in rendered:
            rendered[cluster.name] = RenderedQuotas.of(quota_objects(inventory, cluster.name, at))
        pool = next(p for p in cluster.pools if p.name == flavor)
        resource = inventory.machine_by_name[pool.machine].resource_name
        out[flavor] = []
        for n in rendered[cluster.name].nodes(flavor, resource):
            team = inventory.team_by_name.get(n.name) if n.kind == "ClusterQueue" else None
            out[flavor].append(
                Node(
                    f"team:{n.name}" if n.kind == "ClusterQueue" else f"cohort:{n.name}",
                    None if n.parent is None else f"cohort:{n.parent}",
                    float(n.nominal),
                    None if n.borrowing_limit is None else float(n.borrowing_limit),
                    None if n.lending_limit is None else float(n.lending_limit),
                    n.kind == "ClusterQueue",
                    priority.get(team.priority_class or "", 0) if team else 0,
                    float(n.weight) if n.kind == "ClusterQueue" else 1.0,
                )
            )
    return out


@dataclass(frozen=True)
class QuotaTree:
    """A flavor's quota tree with what admission needs of it precomputed once: children, each node's quota S and
    reserve g, the teams and each team's path of cohorts to the root."""

    nodes: tuple[Node, ...]
    children: Mapping[str | None, list[Node]]
    by_name: Mapping[str, Node]
    quota: Mapping[str, float]
    reserve: Mapping[str, float]
    teams: tuple[Node, ...]
    paths: Mapping[str, list[Node]]

    @classmethod
    def of(cls, tree: Iterable[Node]) -> QuotaTree:
        nodes = tuple(tree)
        children: dict[str | None, list[Node]] = defaultdict(list)
        for node in nodes:
            children[node.parent].append(node)
        quota: dict[str, float] = {}
        reserve: dict[str, float] = {}

        def size(node: Node) -> float:  # S(x), with g(x) on the way
            s = node.nominal + sum(size(c) - reserve[c.name] for c in children[node.name])
            quota[node.name] = s
            reserve[node.name] = max(0.0, s - node.lending_limit) if node.lending_limit is not None else 0.0
            return s

        for root in children[None]:
            size(root)
        by_name = {n.name: n for n in nodes}

        def path(node: Node) -> list[Node]:
            out = []
            while node.parent is not None:
                node = by_name[node.parent]
                out.append(node)
            return out

        teams = tuple(n for n in nodes if n.is_team)
        return cls(nodes, children, by_name, quota, reserve, teams, {t.name: path(t) for t in teams})


def admit(tree: list[Node] | QuotaTree, demand: Mapping[str, float]) -> dict[str, float]:
    """Accelerators admitted per node name (teams only) for one hour's demand (keyed by node name)."""
    qt = tree if isinstance(tree, QuotaTree) else QuotaTree.of(tree)
    usage = {t.name: min(demand.get(t.name, 0.0), t.nominal) for t in qt.teams}
    # a ClusterQueue outside any cohort never exceeds its nominal
    borrowers = [t for t in qt.teams if t.parent is not None and demand.get(t.name, 0.0) > usage[t.name] + EPSILON]
    for level in sorted({t.priority for t in borrowers}, reverse=True):
        active = {t.name for t in borrowers if t.priority == level}
        for _ in range(4 * len(qt.nodes) + 4 * len(qt.teams) + 1):  # each event serves, caps or binds something
            if not active:
                break
            used = _cohort_usage(qt, usage)
            step, binding = _next_event(qt, active, usage, used, demand)
            for name in active:
                usage[name] += qt.by_name[name].weight * step
            for name in list(active):
                node = qt.by_name[name]
                cap = node.nominal + node.borrowing_limit if node.borrowing_limit is not None else float("inf")
                if usage[name] >= min(demand[name], cap) - EPSILON or any(c.name in binding for c in qt.paths[name]):
                    active.discard(name)
    return usage


def _cohort_usage(qt: QuotaTree, usage: Mapping[str, float]) -> dict[str, float]:
    """U(C) for every cohort: the usage its children pass up, max(0, U(c) - g(c))."""
    used: dict[str, float] = {}

    def up(node: Node) -> float:
        if node.is_team:
            return usage[node.name]
        used[node.name] = sum(max(0.0, up(c) - qt.reserve[c.name]) for c in qt.children[node.name])
        return used[node.name]

    for root in qt.children[None]:
        up(root)
    return used


def _next_event(
    qt: QuotaTree, active: set[str], usage: Mapping[str, float], used: Mapping[str, float], demand: Mapping[str, float]
) -> tuple[float, set[str]]:
    """How far the active borrowers can grow together (in weight units) before a team is served or capped, a
    cohort's reserve runs out, or a cohort's limit binds; and the cohorts whose limit binds there."""
    rate_in: dict[str, float] = defaultdict(float)
    for name in active:
        rate = qt.by_name[name].weight
        for ancestor in qt.paths[name]:
            rate_in[ancestor.name] += rate
            if qt.reserve[ancestor.name] - used[ancestor.name] > EPSILON:
                break  # absorbed by this cohort's reserve for now
    candidates: list[tuple[float, str | None]] = []
    for name in active:
        node = qt.by_name[name]
        cap = node.nominal + node.borrowing_limit if node.borrowing_limit is not None else float("inf")
        candidates.append(((min(demand[name], cap) - usage[name]) / node.weight, None))
    for cohort, rate in rate_in.items():
        if rate <= 0:
            continue
        node = qt.by_name[cohort]
        room = qt.reserve[cohort] - used[cohort]
        if room > EPSILON:
            candidates.append((room / rate, None))
            continue
        limit = (
            qt.quota[cohort] + (node.borrowing_limit if node.borrowing_limit is not None else float("inf"))
            if node.parent is not None
            else qt.quota[cohort]
        )
        candidates.append((max(0.0, limit - used[cohort]) / rate, cohort))
    step = min(c for c, _ in candidates)
    binding = {cohort for c, cohort in candidates if cohort is not None and c <= step + EPSILON}
    return max(0.0, step), binding


def replay(
    inventory: Inventory,
    demand_rows: Iterable[tuple[dt.datetime, str, str, float]],
    nodes: Mapping[str, list[Node]] | None = None,
) -> dict[tuple[str, str], TeamImpact]:
    """Replay hourly demand (hour, team, flavor, accelerators) through the inventory's quotas at the last replayed
    hour (`flavor_trees`, or `nodes` when given); per (team, flavor)."""
    rows = list(demand_rows)
    by_hour: dict[tuple[str, dt.datetime], dict[str, float]] = defaultdict(dict)
    for hour, team, flavor, accelerators in rows:
        cell = by_hour[(flavor, hour)]
        cell[f"team:{team}"] = cell.get(f"team:{team}", 0.0) + accelerators
    at = replay_instant(rows)
    if nodes is None:
        nodes = flavor_trees(inventory, {row[2] for row in rows}, at) if at else {}
    trees = {flavor: QuotaTree.of(tree) for flavor, tree in nodes.items()}
    totals: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    for (flavor, _hour), demand in sorted(by_hour.items()):
        tree = trees[flavor]
        teams = {n.name: n for n in tree.teams}
        admitted = admit(tree, demand) if tree.nodes else {}
        borrowed = {name: max(0.0, admitted[name] - teams[name].nominal) for name in teams}
        lendable = {name: max(0.0, min(t.nominal - admitted[name], _lending_cap(t))) for name, t in teams.items()}
        pool, taken = sum(lendable.values()), sum(borrowed.values())
        for name in set(demand) | set(teams):
            want = demand.get(name, 0.0)
            got = admitted.get(name, 0.0)
            waiting = max(0.0, want - got)
            row = totals[(name.removeprefix("team:"), flavor)]
            row[0] += want
            row[1] += got
            row[2] += waiting
            row[3] += waiting > EPSILON
            row[4] = max(row[4], waiting)
            row[5] += borrowed.get(name, 0.0)
            row[6] += taken * lendable.get(name, 0.0) / pool if pool > EPSILON else 0.0
    return {
        key: TeamImpact(
            team=key[0],
            flavor=key[1],
            demand=round(v[0], 6),
            admitted=round(v[1], 6),
            waiting=round(v[2], 6),
            hours_waiting=int(v[3]),
            peak_waiting=round(v[4], 6),
            borrowed=round(v[5], 6),
            lent=round(v[6], 6),
        )
        for key, v in sorted(totals.items())
    }


def _lending_cap(team: Node) -> float:
    """How much of a team's nominal others may use: all of it, or its lending limit."""
    return team.nominal if team.lending_limit is None else min(team.lending_limit, team.nominal)


def recent_demand(inventory: Inventory, days: int = IMPACT_DAYS) -> list[tuple[dt.datetime, str, str, float]]:
    """The usage history's last `days` days as demand rows: max of requested and used per team, flavor and hour."""
    if not inventory.usage:
        return []
    end = max(u.hour for u in inventory.usage)
    start = end - dt.timedelta(days=days) + dt.timedelta(hours=1)
    return [
        (u.hour, u.team, u.flavor, max(u.accelerators_requested, u.accelerators_used))
        for u in inventory.usage
        if u.hour >= start
    ]
