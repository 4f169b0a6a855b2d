"""Usage records where they are kept: one Parquet or CSV file, a folder (month partitions like `month=2026-10/`
included), a glob, or the same on object storage (`s3://`, `gs://`, read through pyarrow's filesystems). DuckDB
scans them as one Arrow dataset, twice: a check that every row names a known team (or namespace), pool and
cluster with numbers and hours that make sense (aggregated per name, so a billion rows never become a frame),
then the metering query. Only when the check finds a problem are the files read again one by one
(`usage.read_usage`) to name the first offending line of each.

Rows are hourly (`hour`) or per minute (`minute`: the start of the minute, each row weighs 1/60 of an hour).
"""

from __future__ import annotations

import datetime as dt
import glob
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.dataset as ds
import pyarrow.fs as pafs

from quartermaster.issues import Issue
from quartermaster.model import Inventory
from quartermaster.pricing import DEFAULT_IDLE_POLICY
from quartermaster.reports.metering.meter import MeterResult, run_meter
from quartermaster.reports.metering.usage import NAMES, NUMERIC, Period, month_period, read_usage
from quartermaster.units import FIRST_DAY, LAST_DAY

REMOTE = ("s3://", "gs://", "gcs://")
PARQUET = (".parquet", ".pq")
PROGRESS_ROWS = 5_000_000
"""Inputs with at least this many rows report each stage on stderr."""
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
        return sum(f.metadata.num_rows for f in self.dataset.get_fragments())


def open_source(spec: str) -> tuple[Source | None, list[Issue]]:
    """The dataset of a file, folder or glob, local or on object storage; an issue when it names no file."""
    try:
        if spec.startswith(REMOTE):
            filesystem, path = pafs.FileSystem.from_uri(spec)
        else:
            filesystem, path = pafs.LocalFileSystem(), spec
        files = _files(filesystem, path)
        if not files:
            return None, [Issue("usage-file", f"{spec}: no usage files there", FIX)]
        kind = "parquet" if files[0].lower().endswith(PARQUET) else "csv"
        other = [f for f in files if f.lower().endswith(PARQUET) != (kind == "parquet")]
        if other:
            return None, [Issue("usage-file", f"{spec}: mixes Parquet and CSV files ({other[0]})",
                                "Keep one format per input.")]
        # CSV: every column as text, typed by the check (a bad value on line 10 million is then a located
        # problem, not a failed scan)
        text = {c: pa.string() for c in (*NAMES, "hour", "minute", *NUMERIC)}
        fmt: ds.FileFormat = ds.ParquetFileFormat() if kind == "parquet" else ds.CsvFileFormat(
            convert_options=pacsv.ConvertOptions(column_types=text))
        base = path if filesystem.get_file_info(path).type == pafs.FileType.Directory else None
        dataset = ds.dataset(files, format=fmt, filesystem=filesystem, partitioning="hive",
                             partition_base_dir=base)
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


def _typed(names: list[str], owner: dict[str, str]) -> str:
    """The raw rows with typed columns (NULL where a value does not parse) and the team a namespace maps to."""
    minute = "minute" in names and "hour" not in names
    when = "minute" if minute else "hour"
    time_ = f"CAST(TRY_CAST({when} AS TIMESTAMPTZ) AS TIMESTAMP)"  # an offset or a zone: to UTC (the session's)
    who = "team" if "team" in names else "namespace"
    mapping = " ".join(f"WHEN '{ns}' THEN '{team}'" for ns, team in owner.items())
    team = "CAST(team AS VARCHAR)" if who == "team" else f"CASE CAST(namespace AS VARCHAR) {mapping} END"
    return (f"SELECT CAST(cluster AS VARCHAR) AS cluster, CAST({who} AS VARCHAR) AS who, {team} AS team, "
            f"CAST(flavor AS VARCHAR) AS flavor, {time_} AS moment, {1 if minute else 60} AS minutes, "
            + ", ".join(f"TRY_CAST({c} AS DOUBLE) AS {c}" for c in NUMERIC) + " FROM raw")


def meter_source(
    spec: str, inventory: Inventory, period: Period | None, policy: str = DEFAULT_IDLE_POLICY
) -> tuple[MeterResult | None, list[Issue]]:
    """Check and meter the usage records `spec` names (file, folder, glob, s3:// or gs://)."""
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
        return None, [Issue("usage-columns", f"{spec}: missing column(s) {', '.join(missing)}",
                            "The header must have hour (or minute), cluster, team or namespace, flavor, "
                            "accelerators_used and accelerators_requested.", got=names)]
    rows = source.rows()
    say = _progress(rows is not None and rows >= PROGRESS_ROWS, spec, rows)
    owner = {ns: t.name for t in inventory.teams for ns in t.namespaces}
    con = duckdb.connect()
    try:
        con.execute("SET TimeZone = 'UTC'")
        con.register("raw", source.dataset)
        con.execute(f"CREATE VIEW typed AS {_typed(names, owner)}")
        first, last = (dt.datetime.combine(d, dt.time()) for d in (FIRST_DAY, LAST_DAY))
        numbers = " OR ".join(f"{c} IS NULL OR isnan({c}) OR isinf({c}) OR {c} < 0" for c in NUMERIC)
        checked = con.sql(
            "SELECT cluster, who, team, flavor, COUNT(*) AS n, MIN(moment) AS first, MAX(moment) AS last, "
            "SUM(CASE WHEN moment IS NULL THEN 1 ELSE 0 END) AS bad_time, "
            f"SUM(CASE WHEN moment < TIMESTAMP '{first}' OR moment > TIMESTAMP '{last}' "
            "THEN 1 ELSE 0 END) AS out_of_range, "
            f"SUM(CASE WHEN {numbers} THEN 1 ELSE 0 END) AS bad_number "
            "FROM typed GROUP BY cluster, who, team, flavor").to_arrow_table().to_pylist()
        say("checked")
        if not checked:
            return None, [Issue("usage-empty", f"{spec}: no usage records", "Give a file with at least one row.")]
        if _problems(checked, inventory):
            return None, _located(source, inventory)
        con.execute("CREATE VIEW usage AS SELECT date_trunc('hour', moment) AS hour, team, flavor, "
                    "accelerators_used, accelerators_requested, minutes FROM typed")
        span = _months(min(r["first"] for r in checked), max(r["last"] for r in checked))
        result, issues = run_meter(con, inventory, period or span, policy)
        say("metered")
        return result, issues
    finally:
        con.close()


def _problems(checked: list[dict[str, Any]], inventory: Inventory) -> bool:
    """Whether any group of rows has an unknown name, a wrong cluster, a bad hour or a bad number."""
    cluster_of = {p: inventory.cluster_of_pool[p].name for p in (p.name for p in inventory.pools)}
    return any(
        r["team"] not in inventory.team_by_name or r["flavor"] not in cluster_of
        or cluster_of[r["flavor"]] != r["cluster"] or r["bad_time"] or r["out_of_range"] or r["bad_number"]
        for r in checked
    )


def _located(source: Source, inventory: Inventory) -> list[Issue]:
    """Each file's problems with its first offending line (the files are read one by one, as frames)."""
    issues: list[Issue] = []
    for name in source.files:
        with source.filesystem.open_input_file(name) as f:
            path = Path(name) if isinstance(source.filesystem, pafs.LocalFileSystem) else None
            if path is None:  # remote: a local copy named like the original
                local = Path(tempfile.mkdtemp()) / Path(name).name
                local.write_bytes(f.read())
                path = local
        _, found = read_usage(path, inventory, shown=name)
        issues += found
    return issues or [Issue("usage-records", f"{source.shown}: some rows are not valid usage records",
                            "Check the names, hours and numbers of each file.")]


def _months(first: dt.datetime, last: dt.datetime) -> Period:
    """The whole calendar months from `first` to `last`."""
    a, b = month_period(first.year, first.month), month_period(last.year, last.month)
    return a if a == b else Period(f"{a.label}..{b.label}", a.start, b.end)


def _progress(on: bool, spec: str, rows: int | None) -> Any:
    """A function printing `<stage> N rows in S s` on stderr (when `on`)."""
    start = time.perf_counter()

    def say(stage: str) -> None:
        if on:
            print(f"qm meter: {stage} {rows:,} rows of {spec} in {time.perf_counter() - start:.1f} s",
                  file=sys.stderr, flush=True)
    if on:
        print(f"qm meter: reading {rows:,} rows of {spec}", file=sys.stderr, flush=True)
    return say
