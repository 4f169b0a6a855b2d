"""Quotas over time: the instants at which a pool's nodes start or stop existing, what each changes in the
rendered quotas, and the offline admission check of every window between them (`qm render --schedule`).

A window is the time between two boundaries; the objects valid in it are `objects_for_cluster(inventory, cluster,
at)` for any `at` inside it. The objects themselves stay from window to window: only quota amounts change.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass

from quartermaster.capacity import PoolWindow, capacity_boundaries, pool_window
from quartermaster.model import Inventory
from quartermaster.modules.kueue import api
from quartermaster.modules.kueue.admission import Refusal, admission_refusals
from quartermaster.modules.kueue.builders import kueue_objects, objects_for_cluster

JUST_BEFORE = dt.timedelta(seconds=1)
"""How far before a boundary the previous window is read."""


@dataclass(frozen=True)
class QuotaChange:
    """One quota entry of a ClusterQueue or Cohort that differs across a boundary: `nominal/borrowing/lending`."""

    cluster: str
    kind: str
    name: str
    flavor: str
    resource: str
    before: str
    after: str

    def format(self) -> str:
        return f"{self.cluster}: {self.kind} {self.name} {self.flavor} {self.resource}: {self.before} -> {self.after}"


@dataclass(frozen=True)
class Boundary:
    """An instant at which pools open or close, what changes in the quotas there, and the admission check of the
    window it starts (`refusals`; `unchecked`: clusters whose cloud specs could not be built, and why)."""

    at: dt.datetime
    opens: tuple[PoolWindow, ...]
    closes: tuple[PoolWindow, ...]
    changes: tuple[QuotaChange, ...]
    refusals: tuple[Refusal, ...]
    unchecked: tuple[str, ...]


def quota_entries(objects: Iterable[object]) -> dict[tuple[str, str, str, str], str]:
    """(kind, name, flavor, resource) -> `nominal/borrowing/lending` (`-` for unset) of every ClusterQueue and
    Cohort quota entry of a cluster's typed objects."""
    out = {}
    for obj in objects:
        if not isinstance(obj, api.ClusterQueue | api.Cohort) or obj.spec is None:
            continue
        for group in obj.spec.resource_groups or []:
            for flavor in group.flavors:
                for r in flavor.resources:
                    limits = ("-" if v is None else v for v in (r.borrowing_limit, r.lending_limit))
                    amounts = (r.nominal_quota, *limits)
                    out[(obj.KIND, obj.metadata.name, flavor.name, r.name)] = "/".join(map(str, amounts))
    return out


def window_refusals(inventory: Inventory, at: dt.datetime) -> tuple[list[Refusal], list[str]]:
    """The offline admission check of every cluster's objects valid at `at`: (refusals, clusters not checked)."""
    from quartermaster.modules.cloud import SpecError

    refusals, unchecked = [], []
    for cluster in inventory.clusters:
        try:
            refusals += admission_refusals(
                inventory, cluster.name, objects_for_cluster(inventory, cluster.name, at), at
            )
        except SpecError as e:  # the cloud specs, whose node labels the check reads, cannot be built
            unchecked.append(f"{cluster.name}: {e}")
    return refusals, unchecked


def quota_schedule(inventory: Inventory) -> list[Boundary]:
    """Every boundary of the inventory's dated capacity, in order, with its quota changes on every cluster (the
    MultiKueue manager's sums included) and the admission check of the window it starts."""
    windows = [pool_window(inventory, p) for p in inventory.pools]
    out = []
    for at in capacity_boundaries(inventory):
        changes = []
        for cluster in inventory.clusters:
            before = quota_entries(kueue_objects(inventory, cluster.name, at - JUST_BEFORE))
            after = quota_entries(kueue_objects(inventory, cluster.name, at))
            for key in sorted(before.keys() | after.keys()):
                if before.get(key) != after.get(key):
                    changes.append(QuotaChange(cluster.name, *key, before.get(key, "none"), after.get(key, "none")))
        refusals, unchecked = window_refusals(inventory, at)
        out.append(
            Boundary(
                at=at,
                opens=tuple(w for w in windows if w.opens == at),
                closes=tuple(w for w in windows if w.closes == at),
                changes=tuple(changes),
                refusals=tuple(refusals),
                unchecked=tuple(unchecked),
            )
        )
    return out


def first_window_refusals(inventory: Inventory) -> tuple[list[Refusal], list[str]]:
    """The admission check of the window before the first boundary (every dated pool closed)."""
    boundaries = capacity_boundaries(inventory)
    if not boundaries:
        return [], []
    return window_refusals(inventory, boundaries[0] - JUST_BEFORE)
