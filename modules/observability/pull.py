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
from collections import defaultdict, deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

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
from quartermaster.modules.observability.prometheus import Prometheus, PrometheusError
from quartermaster.textsafety import log_line

T = TypeVar("T")
R = TypeVar("R")
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


class Hourly:
    """The pulled values: per (cluster, team, flavor) and column, one array of the hours from `since`, NaN where
    Prometheus gave no value (a checked value is never NaN). 8 bytes an hour, key and column, about what the
    records take anyway; the records are made a slab of hours at a time."""

    def __init__(self, since: dt.datetime, n_hours: int) -> None:
        self.since, self.n_hours = since, n_hours
        self.codes: dict[tuple[str, str, str], int] = {}
        """(cluster, team, flavor) -> its index in each column's list of arrays, in the order they came."""
        self.columns: dict[str, list[np.ndarray]] = {column: [] for column in QUERIES}

    def given(self, column: str, key: tuple[str, str, str], hours: np.ndarray) -> int | None:
        """The first of `hours` that already holds a value of `column` for `key` (another series gave it), else None."""
        code = self.codes.get(key)
        if code is None or not len(hours):
            return None
        held = ~np.isnan(self.columns[column][code][hours])
        return int(hours[held.argmax()]) if held.any() else None

    def put(self, column: str, key: tuple[str, str, str], hours: np.ndarray, values: np.ndarray) -> None:
        """Values of one column for one key at `hours` (indexes from `since`)."""
        if not len(hours):
            return
        code = self.codes.get(key)
        if code is None:
            code = self.codes[key] = len(self.codes)
            for arrays in self.columns.values():
                arrays.append(np.full(self.n_hours, np.nan))
        self.columns[column][code][hours] = values

    @property
    def empty(self) -> bool:
        return not self.codes

    def over_capacity(self, capacity: dict[str, int]) -> list[tuple[str, dt.datetime, float, int]]:
        """(pool, hour, accelerators held, the pool's capacity) wherever the teams of a pool together hold more in an
        hour (each max(requested, used), as metering charges) than the pool has at its largest (a
        series of 1,000,000 in a 32-GPU pool was written)."""
        held: dict[str, np.ndarray] = {}
        for (_, _, flavor), code in self.codes.items():
            values = np.fmax(*(self.columns[c][code] for c in QUERIES))
            held[flavor] = held.get(flavor, np.zeros(self.n_hours)) + np.nan_to_num(values)
        return [
            (flavor, self.since + int(hour) * HOUR, float(total[hour]), capacity.get(flavor, 0))
            for flavor, total in sorted(held.items())
            for hour in np.flatnonzero(total.round(6) > capacity.get(flavor, 0))
        ]

    def total(self, column: str) -> float:
        """Accelerator-hours of a column, as the records sum them (each value rounded to 6 decimals)."""
        return float(sum(np.nansum(a.round(6)) for a in self.columns[column]))

    def slabs(self, rows: int = 1_000_000) -> Iterator[pd.DataFrame]:
        """The records, about `rows` at a time (whole hours): one row per hour and key that Prometheus answered
        for (a missing column is 0), by hour, cluster, team and flavor, values rounded to 6 decimals."""
        names = sorted(self.codes)
        order = [self.codes[k] for k in names]
        categories = {}
        for i, column in enumerate(("cluster", "team", "flavor")):
            values = sorted({k[i] for k in names})
            code_of = {v: c for c, v in enumerate(values)}
            categories[column] = (np.array([code_of[k[i]] for k in names], dtype=np.int64), pd.Index(values))
        step = max(1, rows // max(1, len(names)))
        for first in range(0, self.n_hours, step):
            last = min(first + step, self.n_hours)
            block = {c: np.stack([self.columns[c][code][first:last] for code in order], axis=1) for c in self.columns}
            hour, key = np.nonzero(~np.logical_and.reduce([np.isnan(b) for b in block.values()]))
            if hour.size == 0:
                continue
            yield pd.DataFrame(
                {
                    "hour": np.datetime64(self.since, "s") + (first + hour).astype("timedelta64[h]"),
                    **{
                        c: pd.Categorical.from_codes(codes[key], categories=index)
                        for c, (codes, index) in categories.items()
                    },
                    **{c: np.nan_to_num(b[hour, key], nan=0.0).round(6) for c, b in block.items()},
                },
                columns=list(COLUMNS),
            )


@dataclass
class PullResult:
    """The pulled values (made into records in the usage format of `qm meter`) and what could not be mapped."""

    usage: Hourly
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


@dataclass(frozen=True)
class RangeQuery:
    """One request of a pull: the hourly means of one column's gauge, evaluated from `first` to `last` (step 1 h)."""

    column: str
    metric: str
    promql: str
    first: dt.datetime
    last: dt.datetime


def range_queries(
    inventory: Inventory,
    since: dt.datetime,
    until: dt.datetime,
    *,
    cluster: str | None,
    cluster_label: str,
    chunk_hours: int,
) -> list[RangeQuery]:
    """The requests that pull [since, until): per chunk, one per column. Each hour is evaluated 1 ms before its
    end, so the hour [h, h + 1 h) is the mean of the samples scraped in it."""
    group_by = [CLUSTER_QUEUE, FLAVOR, RESOURCE] + ([] if cluster else [cluster_label])
    promql = {column: hourly_query(metric, inventory, group_by) for column, metric in QUERIES.items()}
    return [
        RangeQuery(column, metric, promql[column], start + HOUR - EPSILON, end - EPSILON)
        for start, end in chunks(since, until, chunk_hours)
        for column, metric in QUERIES.items()
    ]


def pull_usage(
    inventory: Inventory,
    client: Prometheus,
    since: dt.datetime,
    until: dt.datetime,
    *,
    cluster: str | None,
    cluster_label: str,
    chunk_hours: int,
    parallel: int = 1,
    progress: Callable[[], None] = lambda: None,
) -> PullResult:
    """Query both gauges chunk by chunk (step 1 h), up to `parallel` requests at a time (the server answers the
    next while this process reads an answer), and map every series to the inventory's names.

    `cluster` names the one cluster all series come from; without it, each series' `cluster_label` names it.
    """
    usage = Hourly(since, (until - since) // HOUR)
    lost: dict[tuple[str, str, str, str, str], float] = defaultdict(float)
    reasons: dict[tuple[str, str, str, str], str] = {}
    """why_unmapped of each (cluster, ClusterQueue, flavor, resource) seen: each comes once a request."""
    queries = 0
    first = int(since.replace(tzinfo=dt.UTC).timestamp())
    plan = range_queries(inventory, since, until, cluster=cluster, cluster_label=cluster_label, chunk_hours=chunk_hours)
    answers = in_order(lambda r: client.query_range(r.promql, r.first, r.last, 3600), plan, parallel)
    for request, series in zip(plan, answers, strict=True):
        queries += 1
        progress()
        for s in series:
            where = cluster or s.labels.get(cluster_label)
            if where is None:
                raise UsageError(
                    f"--prometheus: the series of {request.metric} carry no `{cluster_label}` label; name "
                    "the cluster they come from with --cluster NAME, or the label that names it "
                    "with --cluster-label."
                )
            queue, flavor, resource = (s.labels.get(k, "") for k in (CLUSTER_QUEUE, FLAVOR, RESOURCE))
            named = (where, queue, flavor, resource)
            reason = reasons.get(named)
            if reason is None:
                reason = reasons[named] = why_unmapped(inventory, *named)
            if reason:
                if request.column == "accelerators_requested":
                    lost[(where, queue, flavor, resource, reason)] += float(s.values.sum())
                continue
            # evaluated 1 ms before the end of the hour: the hour starts one hour before the rounded time
            hours = (np.rint(s.times).astype(np.int64) - 3600 - first) // 3600
            twice = usage.given(request.column, (where, queue, flavor), hours)
            if twice is not None:
                raise PrometheusError(
                    f"--prometheus: two series of {request.metric} give cluster {where!r}, ClusterQueue {queue!r}, "
                    f"flavor {flavor!r} for the hour from {since + twice * HOUR:%Y-%m-%d %H:%M} UTC (the second: "
                    f"{log_line(', '.join(f'{k}={v!r}' for k, v in sorted(s.labels.items())))[:300]}); a pull "
                    "takes each hour once, so nothing is written. Check the server's recording rules or relabelling."
                )
            usage.put(request.column, (where, queue, flavor), hours, s.values)
    unmapped = [Unmapped(*key, round(hours, 6)) for key, hours in sorted(lost.items())]
    return PullResult(usage, unmapped, queries)


def in_order(work: Callable[[T], R], items: list[T], at_once: int) -> Iterator[R]:
    """`work(item)` of each item, in order, with up to `at_once` running at a time in threads (and no more than
    that many answers held); the first error is raised and nothing more is started."""
    if at_once <= 1:
        yield from map(work, items)
        return
    pool = ThreadPoolExecutor(max_workers=at_once, thread_name_prefix="qm-pull")
    try:
        running: deque[Future[R]] = deque()
        for item in items:
            running.append(pool.submit(work, item))
            if len(running) >= at_once:
                yield running.popleft().result()
        while running:
            yield running.popleft().result()
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


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
