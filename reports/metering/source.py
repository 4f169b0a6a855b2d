"""Usage records where they are kept: one Parquet or CSV file, a folder (month partitions like `month=2026-10/`
included), a glob, or the same on object storage (`s3://`, `gs://`, read through pyarrow's filesystems). DuckDB
reads them once (its own Parquet and CSV readers for local files, the Arrow dataset for object storage) into
the metering query's first step, `held` (sql/held.sql: the rows summed per cluster, team or namespace, pool
and hour, with a count of bad numbers), so a billion rows never become a frame. The check runs on those sums:
every name known, every pool on its cluster, hours in range, no bad number; then the rest of the query meters
them. Only when the check finds a problem are the files read again one by one (`usage.read_usage`) to name
the first offending line of each.

Rows are hourly (`hour`) or per minute (`minute`: the start of the minute, each row weighs 1/60 of an hour), per
team or, with a `pod` column, per pod (each pod at most 60 minutes an hour; many pods of a team share an hour).
"""

from __future__ import annotations

import datetime as dt
import glob
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.dataset as ds
import pyarrow.fs as pafs

from quartermaster.bounds import FIRST_HOUR, LAST_HOUR
from quartermaster.issues import Issue
from quartermaster.metering.meter import MeterResult, record_problems, run_meter
from quartermaster.metering.query import held_sql
from quartermaster.metering.usage import (
    NAMES,
    NUMERIC,
    Period,
    coverage_label,
    month_period,
    read_usage,
    wide_header,
)
from quartermaster.model import Inventory
from quartermaster.pricing import DEFAULT_IDLE_POLICY
from quartermaster.textsafety import sql_string

REMOTE = ("s3://", "gs://", "gcs://")
PARQUET = (".parquet", ".pq")
REMOTE_RETRY = dt.timedelta(seconds=20)
"""How long object storage is retried before an unreachable store is reported (GCS' default is 15 minutes)."""
PROGRESS_ROWS = 5_000_000
"""Inputs with at least this many rows report each stage on stderr, and the read's progress while it runs."""
PROGRESS_SECONDS = 5.0
"""How often the read's progress is printed."""
MEMORY_LIMIT = "2GB"
"""DuckDB's memory for the read (its sums per pod and hour of a billion per-pod rows take 5 GB; beyond the limit
they spill to its temporary folder): bench/meter_scale_bench.py's goal is 4 GB peak RSS."""
FIX = "Give a CSV or Parquet file, a folder or a glob of them (see `qm meter --help`)."


@dataclass(frozen=True)
class Source:
    """The files of one input and how to scan them."""

    shown: str
    files: list[str]
    filesystem: pafs.FileSystem
    dataset: ds.Dataset

    def rows(self) -> int | None:
        """Row count from Parquet metadata (None for CSV, which would have to be read)."""
        if self.dataset.format.default_extname != "parquet":
            return None
        return sum(int(f.metadata.num_rows) for f in self.dataset.get_fragments())


def open_source(spec: str) -> tuple[Source | None, list[Issue]]:
    """The dataset of a file, folder or glob, local or on object storage; an issue when it names no file."""
    try:
        if spec.startswith(("gs://", "gcs://")):  # from_uri would retry an unreachable store for 15 minutes
            filesystem, path = pafs.GcsFileSystem(retry_time_limit=REMOTE_RETRY), spec.split("://", 1)[1]
        elif spec.startswith(REMOTE):
            filesystem, path = pafs.FileSystem.from_uri(spec)
        else:
            filesystem, path = pafs.LocalFileSystem(), spec
        files = _files(filesystem, path)
        if not files:
            return None, [Issue("usage-file", f"{spec}: no usage files there", FIX)]
        if isinstance(filesystem, pafs.LocalFileSystem):
            wide = [issue for f in files if (issue := wide_header(Path(f), f)) is not None]
            if wide:
                return None, wide
        kind = "parquet" if files[0].lower().endswith(PARQUET) else "csv"
        other = [f for f in files if f.lower().endswith(PARQUET) != (kind == "parquet")]
        if other:
            return None, [
                Issue("usage-file", f"{spec}: mixes Parquet and CSV files ({other[0]})", "Keep one format per input.")
            ]
        # CSV on object storage: every column as text, typed by the check (a bad value on line 10 million is
        # then a located problem, not a failed scan); local files are read by DuckDB itself (`_scan`)
        text = {c: pa.string() for c in (*NAMES, "pod", "hour", "minute", *NUMERIC)}
        fmt: ds.FileFormat = (
            ds.ParquetFileFormat()
            if kind == "parquet"
            else ds.CsvFileFormat(convert_options=pacsv.ConvertOptions(column_types=text))
        )
        base = path if filesystem.get_file_info(path).type == pafs.FileType.Directory else None
        dataset = ds.dataset(files, format=fmt, filesystem=filesystem, partitioning="hive", partition_base_dir=base)
        dataset.schema.names  # noqa: B018  (reads the header: compressed data named .csv fails here, located)
    except (OSError, ValueError, pa.ArrowException) as err:
        return None, [Issue("usage-file", f"{spec}: cannot read usage records: {err}", FIX)]
    return Source(spec, files, filesystem, dataset), []


def _files(filesystem: pafs.FileSystem, path: str) -> list[str]:
    """The data files a path names: itself, the files under a folder, or a glob's matches (sorted)."""
    if any(c in path for c in "*?["):
        if isinstance(filesystem, pafs.LocalFileSystem):
            return sorted(p for p in glob.glob(path, recursive=True) if Path(p).is_file())
        root = path[: min(path.index(c) for c in "*?[" if c in path)].rsplit("/", 1)[0]
        infos = filesystem.get_file_info(pafs.FileSelector(root, recursive=True))
        return sorted(i.path for i in infos if i.is_file and Path(i.path).match(path))
    info = filesystem.get_file_info(path)
    if info.type == pafs.FileType.Directory:
        infos = filesystem.get_file_info(pafs.FileSelector(path, recursive=True))
        return sorted(i.path for i in infos if i.is_file and i.path.lower().endswith((*PARQUET, ".csv")))
    return [path] if info.type == pafs.FileType.File else []


def _scan(source: Source) -> str:
    """The FROM clause that scans the input: DuckDB's own Parquet or CSV reader for local files, the Arrow
    dataset (table `raw`) for object storage and for files whose names DuckDB would read as globs."""
    if not isinstance(source.filesystem, pafs.LocalFileSystem) or any(_globs(f) for f in source.files):
        return "raw"  # DuckDB reads a file name as a glob: `x?.csv` would read `x1.csv` again
    listed = ", ".join(sql_string(f) for f in source.files)
    if source.dataset.format.default_extname == "parquet":
        return f"read_parquet([{listed}], hive_partitioning = false)"
    return f"read_csv([{listed}], header = true)"


def _globs(name: str) -> bool:
    """Whether DuckDB would expand `name` as a glob pattern (`*`, `?`, `[`, `{`)."""
    return any(c in name for c in "*?[{")


def _usage_view(types: dict[str, str], scan: str) -> str:
    """The rows as the query's `usage` (query.USAGE_COLUMNS; `team` is the raw team or namespace), from the
    scan's DuckDB column types: typed columns used as they are, text parsed (NULL where it does not parse), times
    to UTC and to the start of their hour."""
    when = "minute" if "minute" in types and "hour" not in types else "hour"
    moment = {"TIMESTAMP": when, "TIMESTAMP WITH TIME ZONE": f"CAST({when} AS TIMESTAMP)"}.get(
        types[when], f"CAST(TRY_CAST({when} AS TIMESTAMPTZ) AS TIMESTAMP)"
    )  # text, with or without an offset
    numbers = [
        c
        if types[c] in ("DOUBLE", "FLOAT")
        else "CAST(NULL AS DOUBLE)"  # a boolean is no number of accelerators (true would count 1)
        if types[c] == "BOOLEAN"
        else f"TRY_CAST({c} AS DOUBLE)"
        for c in NUMERIC
    ]
    who = "team" if "team" in types else "namespace"
    return (
        f"SELECT CAST(cluster AS VARCHAR) AS cluster, CAST({who} AS VARCHAR) AS team, "
        f"CAST(flavor AS VARCHAR) AS flavor, date_trunc('hour', {moment}) AS hour, "
        f"{numbers[0]} AS accelerators_used, {numbers[1]} AS accelerators_requested, "
        f"{1 if when == 'minute' else 60} AS minutes, "
        f"{'CAST(pod AS VARCHAR)' if 'pod' in types else 'CAST(NULL AS VARCHAR)'} AS pod FROM {scan}"
    )


def meter_source(
    spec: str,
    inventory: Inventory,
    period: Period | None,
    policy: str = DEFAULT_IDLE_POLICY,
    on_stage: Callable[[str], None] | None = None,
) -> tuple[MeterResult | None, list[Issue]]:
    """Check and meter the usage records `spec` names (file, folder, glob, s3:// or gs://); `on_stage` is
    called after each stage ("read", the one pass over the rows; "meter"), by default a progress line on stderr
    for large inputs."""
    import duckdb

    source, issues = open_source(spec)
    if source is None:
        return None, issues
    names = source.dataset.schema.names
    who = "team" if "team" in names else "namespace"
    missing = [c for c in ("cluster", who, "flavor", *NUMERIC) if c not in names]
    if "hour" not in names and "minute" not in names:
        missing.insert(0, "hour (or minute)")
    if missing:
        return None, [
            Issue(
                "usage-columns",
                f"{spec}: missing column(s) {', '.join(missing)}",
                "The header must have hour (or minute), cluster, team or namespace, flavor, "
                "accelerators_used and accelerators_requested.",
                got=names,
            )
        ]
    rows = source.rows()
    show = rows is not None and rows >= PROGRESS_ROWS
    say = on_stage or _progress(show, spec, rows)
    con = duckdb.connect()
    scratch = tempfile.TemporaryDirectory(prefix="qm-meter-")  # DuckDB's spill folder (default: ./.tmp)
    try:
        con.execute("SET TimeZone = 'UTC'")
        con.execute(f"SET memory_limit = '{MEMORY_LIMIT}'")  # the sums per pod and hour spill to disk beyond it
        con.execute(f"SET temp_directory = {sql_string(scratch.name)}")
        con.register("raw", source.dataset)
        scan = _scan(source)
        try:
            described = con.sql(f"SELECT * FROM {scan} LIMIT 0")
            types = {c: str(t) for c, t in zip(described.columns, described.types, strict=True)}
            con.execute(f"CREATE VIEW usage AS {_usage_view(types, scan)}")
            with _read_progress(con, on_stage is None and show, spec, rows):
                con.execute(f"CREATE TABLE held_rows AS WITH {held_sql()} SELECT * FROM held")
        except duckdb.Error as err:  # e.g. a CSV value unlike its column's sniffed type: located by reading the files
            return None, _located(source, inventory, str(err).splitlines()[0])
        say("read")
        owner = (
            {t.name: t.name for t in inventory.teams}
            if who == "team"
            else {ns: t.name for t in inventory.teams for ns in t.namespaces}
        )
        con.register("owners", pa.table({"name": list(owner), "owner": list(owner.values())}))
        con.register(
            "pool_clusters",
            pa.table(
                {
                    "pool": [p.name for p in inventory.pools],
                    "cluster": [inventory.cluster_of_pool[p.name].name for p in inventory.pools],
                }
            ),
        )
        rows_held, bad, first, last = con.execute(_CHECK, [FIRST_HOUR, LAST_HOUR]).fetchone() or (0, 0, None, None)
        if not rows_held:
            return None, [Issue("usage-empty", f"{spec}: no usage records", "Give a file with at least one row.")]
        if bad:
            return None, _located(source, inventory)
        problems = record_problems(con, inventory, period or _covered(first, last), spec)
        if problems:
            return None, problems
        con.execute(
            "CREATE TABLE held AS SELECT h.cluster, o.owner AS team, h.pool, h.hour, "
            "SUM(h.used_units) AS used_units, SUM(h.requested_units) AS requested_units, "
            "SUM(h.held_units) AS held_units FROM held_rows AS h JOIN owners AS o ON h.team = o.name "
            "GROUP BY h.cluster, o.owner, h.pool, h.hour"
        )
        result, issues = run_meter(con, inventory, period or _covered(first, last), policy, held=True)
        say("meter")
        return result, issues
    finally:
        con.close()
        scratch.cleanup()


_CHECK = """
SELECT COUNT(*),
       COUNT(*) FILTER (WHERE o.name IS NULL OR p.pool IS NULL OR p.cluster <> h.cluster OR h.hour IS NULL
                        OR h.bad_numbers > 0 OR h.hour < ? OR h.hour > ?),
       MIN(h.hour), MAX(h.hour)
FROM held_rows AS h LEFT JOIN owners AS o ON h.team = o.name LEFT JOIN pool_clusters AS p ON h.pool = p.pool
"""
"""Rows held, how many of their groups have a problem (an unknown team or pool, a pool of another cluster, a bad or
out-of-range hour, a bad number), and the first and last hour: counted in DuckDB, so a million distinct unknown
names cost no Python object each."""


def _located(source: Source, inventory: Inventory, why: str = "some rows are not valid usage records") -> list[Issue]:
    """Each file's problems with its first offending line (the files are read one by one, as frames); `why` when
    none is found there."""
    issues: list[Issue] = []
    for name in source.files:
        if isinstance(source.filesystem, pafs.LocalFileSystem):
            issues += read_usage(Path(name), inventory, shown=name)[1]
            continue
        with tempfile.TemporaryDirectory() as scratch:  # remote: a local copy named like the original
            local = Path(scratch) / Path(name).name
            pafs.copy_files(
                name, str(local), source_filesystem=source.filesystem, destination_filesystem=pafs.LocalFileSystem()
            )
            issues += read_usage(local, inventory, shown=name)[1]
    return issues or [
        Issue("usage-records", f"{source.shown}: {why}", "Check the names, hours and numbers of each file.")
    ]


def _covered(first: dt.datetime, last: dt.datetime) -> Period:
    """The calendar months from `first` to `last` (the first and last hour of the records), cut to the days the
    records cover when they begin or end inside a month (a day with a record is covered, as `record_problems`
    checks); its label then says so (`coverage_label`)."""
    a, b = month_period(first.year, first.month), month_period(last.year, last.month)
    months = a if a == b else Period(f"{a.label}..{b.label}", a.start, b.end)
    day = dt.timedelta(days=1)
    start, end = (dt.datetime.combine(t.date(), dt.time()) for t in (first, last))
    part = Period(months.label, max(months.start, start), min(months.end, end + day))
    return Period(coverage_label(months, part), part.start, part.end)


@contextmanager
def _read_progress(
    con: Any,
    on: bool,
    spec: str,
    rows: int | None,
    next_poll: Callable[[threading.Event], bool] | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> Iterator[None]:
    """While the one pass over the rows runs, `qm meter: read NN % of N rows of SPEC, S s` on stderr every
    PROGRESS_SECONDS (DuckDB's own query progress, read from a second thread; DuckDB prints nothing itself).
    `next_poll(done)` waits for the next line and says whether the read still runs (by default: PROGRESS_SECONDS,
    or until `done` is set); `clock` gives the seconds shown."""
    if not on:
        yield
        return
    con.execute("SET enable_progress_bar = true")
    con.execute("SET enable_progress_bar_print = false")
    done, start = threading.Event(), clock()
    poll = next_poll or (lambda finished: not finished.wait(PROGRESS_SECONDS))

    def report() -> None:
        while poll(done):
            share = con.query_progress()
            if share >= 0:
                print(
                    f"qm meter: read {share:.0f} % of {rows:,} rows of {spec}, {clock() - start:.0f} s",
                    file=sys.stderr,
                    flush=True,
                )

    reporter = threading.Thread(target=report, daemon=True)
    reporter.start()
    try:
        yield
    finally:
        done.set()
        reporter.join()


def _progress(on: bool, spec: str, rows: int | None) -> Callable[[str], None]:
    """A function printing `<stage>: N rows in S s` on stderr (when `on`)."""
    start = time.perf_counter()

    def say(stage: str) -> None:
        if on:
            print(
                f"qm meter: {stage}: {rows:,} rows of {spec} in {time.perf_counter() - start:.1f} s",
                file=sys.stderr,
                flush=True,
            )

    if on:
        print(f"qm meter: reading {rows:,} rows of {spec}", file=sys.stderr, flush=True)
    return say
