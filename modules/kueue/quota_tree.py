"""The quota tree of one cluster, built from its rendered ClusterQueues and Cohorts: the one place that reads quotas
out of Kueue objects, for the offline admission check (`admission.py`) and the quota-diff replay
(`reports/quota_diff/impact.py`).

Its arithmetic is Kueue's hierarchical resource nodes (`pkg/cache/scheduler/resource_node.go`, kubernetes-sigs/kueue
v0.19.2, https://github.com/kubernetes-sigs/kueue/blob/v0.19.2/pkg/cache/scheduler/resource_node.go) with no usage:
a node's subtree quota is its nominal quota plus what each child lends up (its subtree quota less what its lending
limit keeps local); a ClusterQueue can hold its local quota plus what its parent can, capped by each borrowing limit
on the way up (`potentialAvailable`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

from quartermaster.modules.kueue import api
from quartermaster.modules.kueue.k8s import parse_quantity

NodeKind = Literal["ClusterQueue", "Cohort"]
FlavorResource = tuple[str, str]


@dataclass(frozen=True)
class QuotaNode:
    """A ClusterQueue or Cohort in one (flavor, resource): its parent and its quota entry as written."""

    kind: NodeKind
    name: str
    parent: str | None
    """parent: the Cohort above it (`cohortName`, `parentName`), None at a root."""
    nominal: Decimal
    """nominal: `nominalQuota` (0 where the node does not list the flavor and resource)."""
    borrowing_limit: Decimal | None
    """borrowing_limit: `borrowingLimit`, None when unset (unlimited)."""
    lending_limit: Decimal | None
    """lending_limit: `lendingLimit`, None when unset (all of it may be lent)."""
    weight: Decimal
    """weight: `fairSharing.weight` (1 when unset)."""


def _amount(value: int | str | None) -> Decimal | None:
    return None if value is None else parse_quantity(value) or Decimal(0)


class QuotaTree:
    """The ClusterQueues and Cohorts of a cluster as Kueue's resource nodes (see the module docstring)."""

    def __init__(self, queues: Iterable[api.ClusterQueue], cohorts: Iterable[api.Cohort]) -> None:
        self.queues = {q.metadata.name: q for q in queues}
        self.cohorts = {c.metadata.name: c for c in cohorts}
        self._entries: dict[tuple[NodeKind, str], dict[FlavorResource, api.ResourceQuota]] = {}
        self._parents: dict[tuple[NodeKind, str], str | None] = {}
        self._weights: dict[tuple[NodeKind, str], Decimal] = {}
        for name, q in self.queues.items():
            spec = q.spec or api.ClusterQueueSpec()
            self._add("ClusterQueue", name, spec.cohort_name, spec.resource_groups, spec.fair_sharing)
        for name, c in self.cohorts.items():
            cspec = c.spec or api.CohortSpec()
            self._add("Cohort", name, cspec.parent_name, cspec.resource_groups, cspec.fair_sharing)
        self._children: dict[str, list[tuple[NodeKind, str]]] = {}
        for node, parent in self._parents.items():
            if parent is not None:
                self._children.setdefault(parent, []).append(node)
        self._subtree_cache: dict[tuple[NodeKind, str, str, str], Decimal] = {}

    @classmethod
    def of(cls, objects: Iterable[object]) -> QuotaTree:
        """The tree of the ClusterQueues and Cohorts among `objects` (a cluster's typed objects)."""
        objects = list(objects)
        return cls(
            [o for o in objects if isinstance(o, api.ClusterQueue)], [o for o in objects if isinstance(o, api.Cohort)]
        )

    def _add(
        self,
        kind: NodeKind,
        name: str,
        parent: str | None,
        groups: list[api.ResourceGroup] | None,
        fair_sharing: api.FairSharing | api.CohortFairSharing | None,
    ) -> None:
        self._parents[(kind, name)] = parent
        self._entries[(kind, name)] = {
            (f.name, r.name): r for g in groups or [] for f in g.flavors for r in f.resources
        }
        weight = _amount(fair_sharing.weight if fair_sharing else None)
        self._weights[(kind, name)] = Decimal(1) if weight is None else weight

    def parent(self, kind: NodeKind, name: str) -> str | None:
        return self._parents.get((kind, name))

    def lists(self, kind: NodeKind, name: str, flavor: str, resource: str) -> bool:
        """Whether the node has a quota entry for (flavor, resource)."""
        return (flavor, resource) in self._entries.get((kind, name), {})

    def node(self, kind: NodeKind, name: str, flavor: str, resource: str) -> QuotaNode:
        entry = self._entries.get((kind, name), {}).get((flavor, resource))
        return QuotaNode(
            kind,
            name,
            self.parent(kind, name),
            (_amount(entry.nominal_quota) if entry else None) or Decimal(0),
            _amount(entry.borrowing_limit) if entry else None,
            _amount(entry.lending_limit) if entry else None,
            self._weights.get((kind, name), Decimal(1)),
        )

    def nodes(self, flavor: str, resource: str) -> list[QuotaNode]:
        """The tree of one (flavor, resource): every ClusterQueue and Cohort that lists it, and the Cohorts above
        them (a Cohort a ClusterQueue names but that is not emitted is a root without quota, as in Kueue)."""
        out: dict[tuple[NodeKind, str], QuotaNode] = {}
        pending = [key for key, entries in self._entries.items() if (flavor, resource) in entries]
        while pending:
            kind, name = pending.pop()
            if (kind, name) in out:
                continue
            out[(kind, name)] = self.node(kind, name, flavor, resource)
            parent = self.parent(kind, name)
            if parent is not None:
                pending.append(("Cohort", parent))
        return [out[key] for key in sorted(out)]

    def subtree(self, kind: NodeKind, name: str, fr: FlavorResource, seen: frozenset[str] = frozenset()) -> Decimal:
        """`SubtreeQuota`: the node's nominal quota plus, from each child, its subtree quota less its local quota."""
        key = (kind, name, *fr)
        if key not in self._subtree_cache:
            total = self.node(kind, name, *fr).nominal
            if kind == "Cohort" and name not in seen:  # a cycle stops here (Kueue refuses cyclic cohorts)
                for child in self._children.get(name, []):
                    total += self.subtree(*child, fr, seen | {name}) - self.local(*child, fr)
            self._subtree_cache[key] = total
        return self._subtree_cache[key]

    def local(self, kind: NodeKind, name: str, fr: FlavorResource) -> Decimal:
        """`localQuota`: what a lending limit keeps from the parent (0 without one)."""
        lending = self.node(kind, name, *fr).lending_limit
        return Decimal(0) if lending is None else max(Decimal(0), self.subtree(kind, name, fr) - lending)

    def potential(self, kind: NodeKind, name: str, fr: FlavorResource, seen: frozenset[str] = frozenset()) -> Decimal:
        """`potentialAvailable`: the most the node can hold with nothing else admitted."""
        parent = self.parent(kind, name)
        if parent is None or parent in seen:
            return self.subtree(kind, name, fr)
        held = self.local(kind, name, fr) + self.potential("Cohort", parent, fr, seen | {name})
        borrowing = self.node(kind, name, *fr).borrowing_limit
        return held if borrowing is None else min(held, self.subtree(kind, name, fr) + borrowing)

    def nominal(self, queue: str, flavor: str, resource: str) -> Decimal:
        """The queue's own nominal quota in (flavor, resource): what it holds without borrowing."""
        return self.node("ClusterQueue", queue, flavor, resource).nominal

    def available(self, queue: str, flavor: str, resource: str) -> Decimal:
        """What the queue can hold in (flavor, resource) with nothing else admitted: its nominal quota plus what
        its cohort tree lends it, within the borrowing limits of the queue and of every cohort on the way up, and
        the lending limits of the lenders (0 where the queue does not list the flavor)."""
        if not self.lists("ClusterQueue", queue, flavor, resource):
            return Decimal(0)
        return self.potential("ClusterQueue", queue, (flavor, resource))
