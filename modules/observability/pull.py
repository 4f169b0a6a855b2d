"""Actual usage from Prometheus: Kueue's per-ClusterQueue, per-flavor gauges -> hourly usage records.

Definitions (one row per hour, cluster, team and flavor; hours are UTC, `hour` is the start of the hour):
- `accelerators_requested` = the mean over the hour of `kueue_cluster_queue_resource_reservation` for the
  accelerator resource of the flavor's machine: accelerators the team's workloads held quota for in that flavor
  (admitted, or granted and waiting on admission checks such as a flex-start provisioning request);
- `accelerators_used` = the mean over the hour of `kueue_cluster_queue_resource_usage` for the same resource:
  accelerators of the team's admitted workloads.
"Mean over the hour" is `avg_over_time(...[1h])` evaluated 1 ms before the end of the hour: the mean of the
samples scraped in that hour. The mapping follows the objects `qm render` writes: a ClusterQueue is named after
its team, a ResourceFlavor after its pool. A series whose cluster, ClusterQueue, flavor or resource names
nothing of the inventory is left out of the records and named in a warning with its accelerator-hours.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from quartermaster.errors import UsageError
from quartermaster.model import Inventory
from quartermaster.modules.observability.metrics import (
    CLUSTER_QUEUE,
    FLAVOR,
    KUEUE_RESERVATION,
    KUEUE_USAGE,
    NOT_FOLLOWER,
    RESOURCE,
    resource_matcher,
)
from quartermaster.modules.observability.prometheus import Prometheus

HOUR = dt.timedelta(hours=1)
EPSILON = dt.timedelta(milliseconds=1)
COLUMNS = ("hour", "cluster", "team", "flavor", "accelerators_used", "accelerators_requested")
QUERIES = {"accelerators_requested": KUEUE_RESERVATION, "accelerators_used": KUEUE_USAGE}
"""Output column -> the Kueue gauge it is the hourly mean of."""


@dataclass(frozen=True)
class Unmapped:
    """Series that name nothing of the inventory, grouped by what they name and why they were left out."""

    cluster: str
    cluster_queue: str
    flavor: str
    resource: str
    reason: str
    accelerator_hours: float

    def format(self) -> str:
        return (
            f"not mapped: cluster {self.cluster!r}, ClusterQueue {self.cluster_queue!r}, flavor {self.flavor!r}, "
            f"resource {self.resource!r} ({self.accelerator_hours:,.1f} accelerator-hours left out): "
            f"{self.reason}"
        )


@dataclass
class PullResult:
    """The records (the usage format of `qm meter`) and what could not be mapped."""

    records: pd.DataFrame
    unmapped: list[Unmapped]
    queries: int


def hourly_query(metric: str, inventory: Inventory, group_by: list[str]) -> str:
    """The PromQL of one column: per-series hourly means of the accelerator resources, summed over cohorts."""
    resources = [inventory.machine_by_name[p.machine].resource_name for p in inventory.pools]
    selector = f"{metric}{{{resource_matcher(resources)},{NOT_FOLLOWER}}}"
    return f"sum by ({', '.join(group_by)}) (avg_over_time({selector}[1h]))"


def chunks(since: dt.datetime, until: dt.datetime, hours: int) -> list[tuple[dt.datetime, dt.datetime]]:
    """[since, until) in pieces of at most `hours` hours."""
    out, start = [], since
    while start < until:
        end = min(start + hours * HOUR, until)
        out.append((start, end))
        start = end
    return out


def pull_usage(
    inventory: Inventory,
    client: Prometheus,
    since: dt.datetime,
    until: dt.datetime,
    *,
    cluster: str | None,
    cluster_label: str,
    chunk_hours: int,
    progress: Callable[[], None] = lambda: None,
) -> PullResult:
    """Query both gauges chunk by chunk (step 1 h) and map every series to the inventory's names.

    `cluster` names the one cluster all series come from; without it, each series' `cluster_label` names it.
    """
    group_by = [CLUSTER_QUEUE, FLAVOR, RESOURCE] + ([] if cluster else [cluster_label])
    keys: dict[tuple[str, str, str], int] = {}
    """(cluster, team, flavor) -> a small code; the points are kept as arrays per column, never one object each."""
    parts: dict[str, list[tuple[int, np.ndarray, np.ndarray]]] = {column: [] for column in QUERIES}
    """Per column, each mapped series as (key code, hour indexes from `since`, values)."""
    lost: dict[tuple[str, str, str, str, str], float] = defaultdict(float)
    queries = 0
    first = int(since.replace(tzinfo=dt.UTC).timestamp())
    promql = {column: hourly_query(metric, inventory, group_by) for column, metric in QUERIES.items()}
    for start, end in chunks(since, until, chunk_hours):
        for column, metric in QUERIES.items():
            series = client.query_range(promql[column], start + HOUR - EPSILON, end - EPSILON, 3600)
            queries += 1
            progress()
            for s in series:
                where = cluster or s.labels.get(cluster_label)
                if where is None:
                    raise UsageError(
                        f"--prometheus: the series of {metric} carry no `{cluster_label}` label; name "
                        "the cluster they come from with --cluster NAME, or the label that names it "
                        "with --cluster-label."
                    )
                queue, flavor, resource = (s.labels.get(k, "") for k in (CLUSTER_QUEUE, FLAVOR, RESOURCE))
                reason = why_unmapped(inventory, where, queue, flavor, resource)
                if reason:
                    if column == "accelerators_requested":
                        lost[(where, queue, flavor, resource, reason)] += float(s.values.sum())
                    continue
                code = keys.setdefault((where, queue, flavor), len(keys))
                # evaluated 1 ms before the end of the hour: the hour starts one hour before the rounded time
                hours = (np.rint(s.times).astype(np.int64) - 3600 - first) // 3600
                parts[column].append((code, hours, s.values))
    records = _records(since, (until - since) // HOUR, keys, parts)
    unmapped = [Unmapped(*key, round(hours, 6)) for key, hours in sorted(lost.items())]
    return PullResult(records, unmapped, queries)


def _records(
    since: dt.datetime,
    n_hours: int,
    keys: dict[tuple[str, str, str], int],
    parts: dict[str, list[tuple[int, np.ndarray, np.ndarray]]],
) -> pd.DataFrame:
    """One row per hour and (cluster, team, flavor) that Prometheus answered for (a missing column is 0), sorted
    by hour, cluster, team and flavor, values rounded to 6 decimals. Values go into one dense hour x key array per
    column (8 bytes a cell: the records are about that many cells anyway)."""
    names = sorted(keys)
    rank = np.empty(len(keys), dtype=np.int64)
    rank[[keys[k] for k in names]] = np.arange(len(names))
    grids, answered = {}, np.zeros((n_hours, len(names)), dtype=bool)
    for column, pieces in parts.items():
        grid = np.zeros((n_hours, len(names)))
        for code, hours, values in pieces:
            grid[hours, rank[code]] = values
            answered[hours, rank[code]] = True
        grids[column] = grid
    hour, key = np.nonzero(answered)  # row-major: by hour, then by key in sorted order
    named = {}
    for i, column in enumerate(("cluster", "team", "flavor")):
        categories = sorted({k[i] for k in names})
        code_of_key = np.array([categories.index(k[i]) for k in names], dtype=np.int64)
        named[column] = pd.Categorical.from_codes(code_of_key[key], categories=pd.Index(categories))
    return pd.DataFrame(
        {
            "hour": np.datetime64(since, "s") + hour.astype("timedelta64[h]"),
            **named,
            **{c: grids[c][hour, key].round(6) for c in grids},
        },
        columns=list(COLUMNS),
    )


def why_unmapped(inventory: Inventory, cluster: str, queue: str, flavor: str, resource: str) -> str:
    """Why a series names nothing of the inventory, or "" when it maps to a cluster, team and pool."""
    clusters = inventory.cluster_by_name
    if cluster not in clusters:
        return f"no cluster `{cluster}` in the inventory (clusters: {', '.join(sorted(clusters))})"
    if queue not in inventory.team_by_name:
        return (
            f"ClusterQueue `{queue}` is no team of the inventory (Quartermaster names each ClusterQueue after "
            "its team; a queue made by hand is not metered)"
        )
    pools = {p.name: p for p in clusters[cluster].pools}
    if flavor not in pools:
        return (
            f"flavor `{flavor}` is no pool of cluster `{cluster}` (a MultiKueue manager's logical flavor is "
            "counted on the worker that ran the workload)"
        )
    wanted = inventory.machine_by_name[pools[flavor].machine].resource_name
    if resource != wanted:
        return f"pool `{flavor}` serves `{wanted}`, not `{resource}`"
    return ""
