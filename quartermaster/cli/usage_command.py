"""`qm usage pull`: actual hourly usage per cluster, team and flavor from Kueue's gauges in Prometheus, written in
the usage format that `qm meter`, `qm plan --from-usage`, `qm report` and the quota impact replay read."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from quartermaster.bounds import FIRST_DAY, LAST_DAY, calendar_problem
from quartermaster.cli.command_support import check_output, console, err_console, finite, load_or_exit
from quartermaster.errors import ProblemsFound, UsageError
from quartermaster.issues import Issue
from quartermaster.modules.observability.metrics import DEFAULT_CLUSTER_LABEL
from quartermaster.textsafety import log_line, promql_label_name
from quartermaster.units import utc_hour

if TYPE_CHECKING:
    import pandas as pd

    from quartermaster.model import Inventory

app = typer.Typer(help="Actual usage from monitoring.", no_args_is_help=True)

SUFFIXES = (".csv", ".parquet", ".pq")


def parse_hour(text: str, option: str) -> dt.datetime:
    """`2026-10-01` or `2026-10-01T06:00[:00][Z|+hh:mm]` as a naive UTC hour; a UsageError otherwise."""
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        raise UsageError(
            f"{option} {log_line(text)}: not a date or time; write e.g. 2026-10-01 or 2026-10-01T06:00Z "
            "(UTC unless an offset is given)."
        ) from None
    moment = utc_hour(moment)
    problem = calendar_problem(moment)
    if problem:
        raise UsageError(f"{option} {text}: {problem}; usage hours are from {FIRST_DAY} to {LAST_DAY}.")
    if moment.minute or moment.second or moment.microsecond:
        raise UsageError(
            f"{option} {text}: usage is hourly; give the start of an hour, e.g. "
            f"{moment.replace(minute=0, second=0, microsecond=0).isoformat()}."
        )
    return moment


@app.command("pull")
def pull(
    prometheus: str = typer.Option(
        ...,
        "--prometheus",
        help="Base URL of Prometheus (or Thanos, Mimir), e.g. "
        "http://prometheus:9090. Credentials: QM_PROMETHEUS_TOKEN, or QM_PROMETHEUS_USER "
        "and QM_PROMETHEUS_PASSWORD, from the environment.",
    ),
    since: str = typer.Option(..., help="First hour, inclusive (UTC unless an offset is given): 2026-10-01."),
    until: str = typer.Option(..., help="End, exclusive: 2026-11-01 pulls all of October."),
    out: Path = typer.Option(..., "--out", "-o", help="Output file: .csv or .parquet.", dir_okay=False),
    inventory: Path = typer.Option(Path("inventory"), "--inventory", "-i", help="Inventory directory.", exists=True),
    cluster: str = typer.Option(
        None,
        help="The cluster every series comes from (a per-cluster Prometheus); default: each series' --cluster-label.",
    ),
    cluster_label: str = typer.Option(DEFAULT_CLUSTER_LABEL, help="The label naming a series' cluster."),
    chunk_hours: int = typer.Option(168, min=1, max=11000, help="Hours per query_range request (step 1 h)."),
    parallel: int = typer.Option(
        2, min=1, max=8, help="Requests at a time: Prometheus answers the next while the last is read."
    ),
    timeout: float = typer.Option(
        300,
        parser=finite(1, 86400),
        help="Seconds one request may take in all (connecting, reading, retries; 1-86400).",
    ),
    max_answer_mb: int = typer.Option(
        512, min=1, max=4096, help="Largest answer read, in MB; a larger one is refused (use a smaller --chunk-hours)."
    ),
) -> None:
    """Pull hourly accelerators requested (Kueue reservation) and used (Kueue admitted usage) per cluster, team and
    flavor; series that name nothing of the inventory are named in warnings, never dropped silently."""
    # imported when run, so that `qm --help` stays fast
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from quartermaster.capacity import flavor_capacity
    from quartermaster.modules.observability.prometheus import Prometheus
    from quartermaster.modules.observability.pull import chunks, pull_usage

    if out.suffix.lower() not in SUFFIXES:
        raise UsageError(f"--out {out}: write .csv or .parquet (the formats `qm meter` reads).")
    check_output(out, "--out", inventory, folder=False)
    start, end = parse_hour(since, "--since"), parse_hour(until, "--until")
    if end <= start:
        raise UsageError(f"--until {until}: is not after --since {since}; the range is [since, until).")
    try:
        promql_label_name(cluster_label)
    except ValueError as error:
        raise UsageError(f"--cluster-label: {error}.") from None
    client = Prometheus(prometheus, deadline=timeout, max_bytes=max_answer_mb * 1024 * 1024)
    inv = load_or_exit(inventory).inventory
    if cluster is not None and cluster not in inv.cluster_by_name:
        from quartermaster.issues import did_you_mean

        hint = did_you_mean(cluster, list(inv.cluster_by_name)) or f"Clusters: {', '.join(inv.cluster_by_name)}."
        raise UsageError(f"--cluster: no such cluster `{log_line(cluster)}` in {inventory}. {hint}")
    total = 2 * len(chunks(start, end, chunk_hours))
    with Progress(
        TextColumn("querying Prometheus"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
    ) as bar:
        task = bar.add_task("pull", total=total)
        result = pull_usage(
            inv,
            client,
            start,
            end,
            cluster=cluster,
            cluster_label=cluster_label,
            chunk_hours=chunk_hours,
            parallel=parallel,
            progress=lambda: bar.advance(task),
        )
    for lost in result.unmapped:
        err_console.print(log_line(f"warning: {lost.format()}"), markup=False)
    usage = result.usage
    if usage.empty:
        raise ProblemsFound(
            f"no Kueue usage series in [{start.isoformat()}, {end.isoformat()}) that map to the "
            f"inventory; nothing was written. Check that Kueue exports its ClusterQueue resource "
            "metrics (metrics.enableClusterQueueResources: true) and the range."
        )
    over = usage.over_capacity(flavor_capacity(inv))
    if over:
        for pool, hour, held, capacity in over[:5]:
            err_console.print(
                log_line(
                    f"{pool} at {hour:%Y-%m-%d %H:%M} UTC: the series hold {held:,.1f} accelerators, more than the "
                    f"pool's {capacity:,}"
                ),
                markup=False,
            )
        raise ProblemsFound(
            f"{len(over):,} pool-hour(s) above what the pool can hold (the first named above); nothing was written. "
            "Check the cluster label and the ClusterQueues' flavors, or the exporter's values."
        )
    records = write_records(usage.slabs(), out, inv)
    console.print(
        f"wrote {out}: {records:,} records, {usage.total('accelerators_requested'):,.1f} accelerator-hours "
        f"requested, {usage.total('accelerators_used'):,.1f} used ({result.queries} queries, "
        f"{client.retries} retries)"
    )
    if result.unmapped:
        console.print(
            f"{len(result.unmapped)} series not mapped to the inventory (named above); their "
            f"{sum(u.accelerator_hours for u in result.unmapped):,.1f} accelerator-hours are not in "
            f"{out}."
        )


def write_records(slabs: Iterator[pd.DataFrame], out: Path, inventory: Inventory) -> int:
    """Check each slab of records as `qm meter` reads them and write it to `out` (CSV or Parquet), through a
    partial file beside it that replaces `out` only when every slab passed; the number of records. A slab with
    problems stops it: they are printed (rows counted from the file's start) and nothing is written."""
    # imported when run, so that `qm --help` stays fast
    import pyarrow as pa
    import pyarrow.parquet as pq

    from quartermaster.cli.meter_command import exit_on
    from quartermaster.metering.usage import check_usage

    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(f".{out.name}.partial")
    written = 0
    try:
        with partial.open("wb") as file:
            parquet: pq.ParquetWriter | None = None
            for slab in slabs:
                _, issues = check_usage(slab, inventory, str(out))
                exit_on([_rows_on(issue, written) for issue in issues], "written")
                if out.suffix.lower() == ".csv":
                    slab.to_csv(file, index=False, header=not written, date_format="%Y-%m-%dT%H:%M:%S")
                else:  # hours as a timestamp column, names dictionary-encoded
                    table = pa.Table.from_pandas(slab, preserve_index=False)
                    if parquet is None:
                        parquet = pq.ParquetWriter(file, table.schema)
                    parquet.write_table(table)
                written += len(slab)
            if parquet is not None:
                parquet.close()
        partial.replace(out)
    finally:
        partial.unlink(missing_ok=True)
    return written


def _rows_on(issue: Issue, rows_before: int) -> Issue:
    """An issue of one slab located in the whole file (its rows come after `rows_before` others)."""
    where = issue.location
    if where is None or where.line is None:
        return issue
    return replace(issue, location=replace(where, line=where.line + rows_before))
