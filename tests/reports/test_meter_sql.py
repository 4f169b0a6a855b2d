"""The metering query: its portable subset, its transpiled forms, its inputs (folders, globs, month partitions,
per-minute rows) and its cent allocation against the pricing home."""

from __future__ import annotations

import re
import tempfile
import threading
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pytest
import sqlglot
from sqlglot import exp

from quartermaster.loader import load
from quartermaster.metering import check_usage, meter, parse_period
from quartermaster.metering.query import DIALECTS, UNITS_PER_HOUR, checks_sql, emit, held_sql, meter_sql
from quartermaster.metering.rates import blocks
from quartermaster.pricing import allocate_cents
from quartermaster.reports.metering import source
from quartermaster.reports.metering.source import meter_source
from tests.reports.fixtures import FEBRUARY, small_fleet, usage
from tests.reports.records import records

FEB = parse_period("2026-02")
OCT = parse_period("2026-10")
EXAMPLE = load(Path(__file__).resolve().parents[2] / "inventory").inventory
PORTABLE_FUNCTIONS = (
    exp.And,
    exp.Or,
    exp.Case,
    exp.If,
    exp.Cast,
    exp.Coalesce,
    exp.Count,
    exp.Floor,
    exp.Greatest,
    exp.Least,
    exp.Max,
    exp.Min,
    exp.Round,
    exp.RowNumber,
    exp.Sum,
)
"""The functions the query may call: each has the same meaning in DuckDB, Spark, BigQuery and Trino."""


def lint(sql: str) -> list[str]:
    """What in `sql` is outside the portable subset that SQLGlot carries to Spark, BigQuery and Trino."""
    tree = sqlglot.parse_one(sql, read="duckdb")
    found = []
    if any(g.args.get("all") for g in tree.find_all(exp.Group)):
        found.append("GROUP BY ALL")
    if any(f.find_ancestor(exp.Window) or f.find(exp.Window) for f in tree.find_all(exp.Filter)):
        found.append("FILTER inside a window aggregate")
    found += [
        f"naive timestamp literal {c.this.name}"
        for c in tree.find_all(exp.Cast)
        if c.to.is_type(*exp.DataType.TEMPORAL_TYPES)
        and isinstance(c.this, exp.Literal)
        and not re.search(r"(Z|[+-]\d\d:\d\d)$", c.this.name)
    ]
    found += [
        f"function {f.sql('duckdb')} outside the portable subset"
        for f in tree.find_all(exp.Func)
        if not isinstance(f, PORTABLE_FUNCTIONS)
    ]
    ctes = {c.alias for c in tree.find_all(exp.CTE)}
    found += [
        f"table function or unknown table {t.sql()}"
        for t in tree.find_all(exp.Table)
        if t.name not in ctes | {"usage"} or isinstance(t.this, exp.Func)
    ]
    if tree.find(exp.Qualify):
        found.append("QUALIFY")
    if tree.find(exp.IntDiv):
        found.append("integer division //")
    return found


def test_the_query_is_in_the_portable_subset() -> None:
    blks, _ = blocks(EXAMPLE, OCT.start, OCT.end)
    assert lint(meter_sql(EXAMPLE, blks, "proportional")) == []


@pytest.mark.parametrize(
    ("sql", "want"),
    [
        ("SELECT team, SUM(x) FROM usage GROUP BY ALL", "GROUP BY ALL"),
        ("SELECT SUM(x) FILTER (WHERE x > 0) OVER () FROM usage", "FILTER inside a window aggregate"),
        ("SELECT * FROM usage WHERE hour < TIMESTAMP '2026-10-01 00:00:00'", "naive timestamp literal"),
        ("SELECT * FROM read_parquet('u.parquet')", "function READ_PARQUET"),
        ("SELECT epoch(hour) FROM usage", "function EPOCH(hour) outside the portable subset"),
        ("SELECT * FROM usage QUALIFY ROW_NUMBER() OVER () = 1", "QUALIFY"),
    ],
)
def test_the_lint_finds_what_is_not_portable(sql: str, want: str) -> None:
    assert any(f.startswith(want) for f in lint(sql))


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_every_transpiled_query_parses_in_its_dialect(dialect: str) -> None:
    blks, _ = blocks(EXAMPLE, OCT.start, OCT.end)
    text = emit(EXAMPLE, blks, "even", dialect, OCT)
    header = [line for line in text.splitlines() if line.startswith("--")]
    assert any("`usage`" in line for line in header) and any("accelerators_requested" in line for line in header)
    tree = sqlglot.parse_one(text, read=DIALECTS[dialect])
    assert {t.name for t in tree.find_all(exp.Table)} - {c.alias for c in tree.find_all(exp.CTE)} == {"usage"}


def canonical(frame: pd.DataFrame, path: Path) -> Path:
    """Usage rows with the query's columns, as Parquet (`pod` NULL when the rows are per team)."""
    pods = frame["pod"] if "pod" in frame.columns else pd.Series(None, index=frame.index, dtype="string")
    frame.assign(minutes=60, pod=pods.astype("string")).to_parquet(path, index=False)
    return path


def duckdb_rows(sql: str, parquet: Path) -> list[tuple[object, ...]]:
    con = duckdb.connect()
    con.execute(f"CREATE VIEW usage AS SELECT * FROM read_parquet('{parquet}')")
    return sorted(tuple(r) for r in con.sql(sql).fetchall())


def spark_session() -> Any:
    """A local Spark session in UTC, tuned for tiny data."""
    from pyspark.sql import SparkSession

    return (
        SparkSession.builder.master("local[1]")
        .appName("qm-meter-test")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "1")
        # tiny data: planning and code generation would cost more than the rows
        .config("spark.sql.adaptive.enabled", "false")
        .config("spark.sql.codegen.wholeStage", "false")
        .config("spark.sql.codegen.factoryMode", "NO_CODEGEN")
        .getOrCreate()
    )


@pytest.mark.slow
@pytest.mark.spark
def test_spark_runs_the_emitted_query_to_the_same_cents(tmp_path: Path) -> None:
    inventory = small_fleet()
    parquet = canonical(usage(FEBRUARY), tmp_path / "usage.parquet")
    blks, _ = blocks(inventory, FEB.start, FEB.end)
    spark = spark_session()
    try:
        spark.read.parquet(str(parquet)).createOrReplaceTempView("usage")
        got = sorted(tuple(r) for r in spark.sql(emit(inventory, blks, "proportional", "spark", FEB)).collect())
    finally:
        spark.stop()
    want = duckdb_rows(meter_sql(inventory, blks, "proportional"), parquet)
    assert got == want
    # and the cents are the hand-checked metering (test_metering): total $10,804.00
    assert sum(r[8] for r in got if r[0] in ("usage", "idle")) == 1080400


def hostile_usage(days: int) -> pd.DataFrame:
    """February's records with `days` days covered, and, for the metering checks (issue 37), team a's first hour
    in h100-resv twice (120 minutes) and 17 GPUs of b in h100, a pool of at most 2 nodes x 8 = 16 GPUs."""
    return usage([*FEBRUARY, FEBRUARY[0], (30, "b", "h100", 17.0, 17.0)], days=days)


def emitted_problems(rows: list[tuple[object, ...]]) -> list[tuple[object, ...]]:
    """The problem rows of the warehouse query as (kind, team, pool, hour, minutes, units, limit_units)."""
    return sorted((r[0], r[2], r[4], r[11], r[12], r[7], r[13]) for r in rows if str(r[0]).startswith("usage-"))


def python_problems(inventory, frame: pd.DataFrame, period) -> tuple[list[tuple[object, ...]], list[str]]:
    """What `qm meter` flags on the same rows: sql/checks.sql's rows over meter.py's `held_rows`, and the rules of
    the issues meter() refuses them with."""
    con = duckdb.connect()
    con.register("frame", pd.read_parquet(canonical(frame, Path(tempfile.mkdtemp()) / "usage.parquet")))
    con.execute(f"CREATE TABLE held_rows AS WITH {held_sql()} SELECT * FROM held".replace("FROM usage", "FROM frame"))
    rows = sorted(
        (k, t, p, h, m, None if u is None else Decimal(u), lim)
        for k, t, p, h, m, u, lim in con.execute(checks_sql(inventory, period)).fetchall()
    )
    normalised, issues = check_usage(frame, inventory)
    assert issues == []
    return rows, [i.rule for i in meter(inventory, normalised, period)[1]]


def per_pod(frame: pd.DataFrame) -> pd.DataFrame:
    """Each hourly row as two pods of its team that each hold half of it for the whole hour (the same hour, twice
    over: one record per pod)."""
    halves = frame.loc[frame.index.repeat(2)].reset_index(drop=True)
    halves["pod"] = [f"{team}-{i % 2}" for i, team in enumerate(halves["team"])]
    return halves.assign(
        accelerators_used=halves["accelerators_used"] / 2,
        accelerators_requested=halves["accelerators_requested"] / 2,
    )


def per_minute(frame: pd.DataFrame) -> pd.DataFrame:
    """Each hourly row as sixty per-minute rows of the same numbers (`minute` in place of `hour`)."""
    minutes = frame.loc[frame.index.repeat(60)].reset_index(drop=True)
    minutes["minute"] = minutes["hour"] + pd.to_timedelta(list(range(60)) * len(frame), unit="min")
    return minutes.drop(columns=["hour"])


@pytest.mark.parametrize(
    ("frame", "want_rules"),
    [
        # the repeated hour hides the over-full pool (checked once hours are single); 20 of 28 days recorded
        (hostile_usage(days=20), ["usage-overlap", "usage-coverage"]),
        # variant: the repeated row dropped, so the 17 GPUs in a 16-GPU pool show
        (hostile_usage(days=20).drop(index=len(FEBRUARY)), ["usage-capacity", "usage-coverage"]),
        # per pod: two pods share each hour, and the repeated row repeats both pods (a doubled file)
        (per_pod(hostile_usage(days=20)), ["usage-overlap", "usage-coverage"]),
        (per_pod(hostile_usage(days=20).drop(index=len(FEBRUARY))), ["usage-capacity", "usage-coverage"]),
    ],
)
def test_the_warehouse_query_flags_what_qm_meter_flags(
    tmp_path: Path, frame: pd.DataFrame, want_rules: list[str]
) -> None:
    """Issue 37: `qm meter --emit-sql` returns a row per problem `qm meter` refuses the records for: the same team,
    pool and hour twice, a pool above its largest size, a day without records (days 21 to 28 of February)."""
    inventory = small_fleet()
    blks, _ = blocks(inventory, FEB.start, FEB.end)
    parquet = canonical(frame, tmp_path / "usage.parquet")
    got = emitted_problems(duckdb_rows(emit(inventory, blks, "proportional", "duckdb", FEB), parquet))
    want, rules = python_problems(inventory, frame, FEB)
    assert rules == want_rules and got == want
    assert sorted({r[0] for r in got}) == sorted(want_rules)
    # the days without records: the 21st to the 28th of February, one row each at the day's start
    assert [r[3].day for r in got if r[0] == "usage-coverage"] == list(range(21, 29))
    if "usage-capacity" in rules:  # 17 GPUs held for the hour, of h100's 16, in milli-accelerator-minutes
        assert [(r[2], r[5], r[6]) for r in got if r[0] == "usage-capacity"] == [
            ("h100", 17 * UNITS_PER_HOUR, 16 * UNITS_PER_HOUR)
        ]


@pytest.mark.slow
@pytest.mark.spark
def test_spark_flags_the_same_problems_as_qm_meter(tmp_path: Path) -> None:
    """Issue 37: the emitted Spark query, run by Spark, returns the problem rows `qm meter` finds on the same
    records (a repeated hour and missing days; with the repeat dropped, an over-full pool)."""
    inventory = small_fleet()
    blks, _ = blocks(inventory, FEB.start, FEB.end)
    query = emit(inventory, blks, "proportional", "spark", FEB)
    spark = spark_session()
    try:
        frames = [hostile_usage(20), hostile_usage(20).drop(index=len(FEBRUARY))]
        for i, frame in enumerate([*frames, *map(per_pod, frames)]):
            parquet = canonical(frame, tmp_path / f"usage-{i}.parquet")
            spark.read.parquet(str(parquet)).createOrReplaceTempView("usage")
            got = emitted_problems([tuple(r) for r in spark.sql(query).collect()])
            want, _ = python_problems(inventory, frame, FEB)
            assert got == want and got
    finally:
        spark.stop()


def frame_result(inventory, frame, period, policy="proportional"):
    normalised, issues = check_usage(frame, inventory)
    assert issues == []
    result, _ = meter(inventory, normalised, period, policy)
    assert result is not None
    return result.to_dict()


def test_a_folder_of_month_partitions_meters_like_one_frame(tmp_path: Path) -> None:
    frame = usage(FEBRUARY)
    folder = tmp_path / "usage" / "month=2026-02"
    folder.mkdir(parents=True)
    frame.iloc[:3].to_parquet(folder / "part-0.parquet", index=False)
    frame.iloc[3:].to_parquet(folder / "part-1.parquet", index=False)
    result, issues = meter_source(str(tmp_path / "usage"), small_fleet(), None)
    assert issues == [] and result is not None
    assert result.to_dict() == frame_result(small_fleet(), frame, FEB)


def test_a_glob_of_csv_files_meters_like_one_frame(tmp_path: Path) -> None:
    frame = usage(FEBRUARY)
    frame.iloc[:2].to_csv(tmp_path / "a.csv", index=False)
    frame.iloc[2:].to_csv(tmp_path / "b.csv", index=False)
    result, issues = meter_source(str(tmp_path / "*.csv"), small_fleet(), FEB)
    assert issues == [] and result is not None
    assert result.to_dict() == frame_result(small_fleet(), frame, FEB)


def test_per_minute_rows_weigh_a_sixtieth_of_an_hour(tmp_path: Path) -> None:
    # team a holds 8 GPUs of the on-demand pool (h100, $10/GPU-h) for 30 minutes of one hour, then nothing:
    # 8 x 30/60 = 4 GPU-h = $40.00; each other day of February has a minute of 0 accelerators (no day unrecorded)
    hour = pd.date_range("2026-02-03 10:00", periods=60, freq="min")
    idle = [pd.Timestamp(2026, 2, day, 12) for day in range(1, 29) if day != 3]
    frame = pd.DataFrame(
        {
            "minute": [*hour, *idle],
            "cluster": "gke-a",
            "team": "a",
            "flavor": "h100",
            "accelerators_used": [8.0] * 30 + [0.0] * (30 + len(idle)),
            "accelerators_requested": [8.0] * 30 + [0.0] * (30 + len(idle)),
        }
    )
    frame.to_parquet(tmp_path / "minutes.parquet", index=False)
    result, issues = meter_source(str(tmp_path / "minutes.parquet"), small_fleet(), FEB)
    assert issues == [] and result is not None
    team = {t.team: t for t in result.teams}["a"]
    assert (team.charged_hours, team.usage_cost) == (Decimal(4), Decimal("40.00"))


def test_each_hourly_row_as_sixty_minute_rows_meters_the_same(tmp_path: Path) -> None:
    frame = usage(FEBRUARY)
    per_minute(frame).to_parquet(tmp_path / "minutes.parquet", index=False)
    result, issues = meter_source(str(tmp_path / "minutes.parquet"), small_fleet(), FEB)
    assert issues == [] and result is not None
    assert result.to_dict() == frame_result(small_fleet(), frame, FEB)


def test_per_pod_records_are_billed_as_their_team_sums(tmp_path: Path) -> None:
    """Two pods of a team in one hour, each holding half of the team's row for all 60 minutes, bill what the team's
    row bills (the same hour is not recorded twice: each pod has 60 minutes); as a file (CSV, per minute) too."""
    frame = usage(FEBRUARY)
    pods = per_pod(frame)
    assert frame_result(small_fleet(), pods, FEB) == frame_result(small_fleet(), frame, FEB)
    per_minute(pods).to_csv(tmp_path / "pods.csv", index=False)
    result, issues = meter_source(str(tmp_path / "pods.csv"), small_fleet(), FEB)
    assert issues == [] and result is not None
    assert result.to_dict() == frame_result(small_fleet(), frame, FEB)


def test_one_pod_recorded_twice_in_an_hour_is_refused(tmp_path: Path) -> None:
    """Pod a-0's first hour twice (a re-pull): 120 minutes of one pod, refused by both paths, while the other pods
    of the hour are fine."""
    pods = per_pod(usage(FEBRUARY))
    doubled = pd.concat([pods, pods.iloc[[0]]], ignore_index=True)
    normalised, issues = check_usage(doubled, small_fleet())
    assert issues == []
    _, problems = meter(small_fleet(), normalised, FEB)
    doubled.to_parquet(tmp_path / "pods.parquet", index=False)
    _, from_file = meter_source(str(tmp_path / "pods.parquet"), small_fleet(), FEB)
    for found in (problems, from_file):
        assert [i.rule for i in found] == ["usage-overlap"]
        assert "a in h100-resv at 2026-02-01 00:00 UTC (120 minutes)" in found[0].format()


def test_a_bad_row_in_the_second_file_of_a_folder_is_located(tmp_path: Path) -> None:
    frame = usage(FEBRUARY).astype({"flavor": object})
    frame.iloc[:3].to_csv(tmp_path / "a.csv", index=False)
    second = frame.iloc[3:].reset_index(drop=True)
    second.loc[1, "flavor"] = "h100-resvv"
    second.to_csv(tmp_path / "b.csv", index=False)
    result, issues = meter_source(str(tmp_path), small_fleet(), FEB)
    assert result is None
    # the second data row of b.csv is its line 3
    assert [i.format().split(" (got")[0] for i in issues] == [
        f"{tmp_path / 'b.csv'}:3 flavor: flavor `h100-resvv` is not a pool (ResourceFlavor) of the inventory"
    ]


def test_no_files_is_an_issue(tmp_path: Path) -> None:
    result, issues = meter_source(str(tmp_path / "*.parquet"), small_fleet(), FEB)
    assert result is None and "no usage files there" in issues[0].format()


def test_the_query_allocates_cents_as_the_pricing_home_does() -> None:
    """Each line's cents are pricing.allocate_cents of its exact amount (units x rate / 60,000 USD), keys in
    line order, so that the lines sum to the metered total."""
    frame, _ = check_usage(records(2_000, seed=3), EXAMPLE)
    blks, _ = blocks(EXAMPLE, OCT.start, OCT.end)
    con = duckdb.connect()
    con.register("frame", frame)
    con.execute(
        "CREATE VIEW usage AS SELECT '' AS cluster, hour, CAST(team AS VARCHAR) AS team, "
        "CAST(flavor AS VARCHAR) AS flavor, used AS accelerators_used, requested AS accelerators_requested, "
        "60 AS minutes, CAST(NULL AS VARCHAR) AS pod FROM frame"
    )
    rows = con.sql(meter_sql(EXAMPLE, blks, "proportional")).to_arrow_table().to_pylist()
    lines = [r for r in rows if r["kind"] in ("usage", "idle") and r["units"] > 0]
    lines.sort(
        key=lambda r: (
            r["kind"] == "idle",
            r["team"] or "",
            [p.name for p in EXAMPLE.pools].index(r["pool"]) if r["kind"] == "usage" else 0,
            blks[r["block_id"]].kind == "commitment",
            r["part"],
            r["block_id"],
        )
    )
    amounts = {f"{i:06d}": r["units"] * r["rate"] / UNITS_PER_HOUR for i, r in enumerate(lines)}
    total = sum(Decimal(r["cents"]) for r in lines) / 100
    assert {k: v * 100 for k, v in allocate_cents(amounts, total).items()} == {
        f"{i:06d}": Decimal(r["cents"]) for i, r in enumerate(lines)
    }


@pytest.mark.parametrize(
    ("args", "want"),
    [
        (["--emit-sql", "spark"], "--emit-sql needs --period"),
        (["--emit-sql", "oracle", "--period", "2026-10"], "--emit-sql oracle: not a dialect; use one of duckdb"),
        ([], "give USAGE"),
    ],
)
def test_emit_sql_mistakes_say_what_to_give(args: list[str], want: str) -> None:
    from typer.testing import CliRunner

    from quartermaster.cli import app

    inventory = Path(__file__).resolve().parents[2] / "inventory"
    result = CliRunner().invoke(app, ["meter", "--inventory", str(inventory), *args])
    assert result.exit_code == 2 and want in " ".join(result.output.split())


def test_emit_sql_prints_the_query_for_the_period() -> None:
    from typer.testing import CliRunner

    from quartermaster.cli import app

    inventory = Path(__file__).resolve().parents[2] / "inventory"
    result = CliRunner().invoke(
        app, ["meter", "--inventory", str(inventory), "--emit-sql", "bigquery", "--period", "2026-10"]
    )
    assert result.exit_code == 0, result.output
    assert result.output.startswith("-- Quartermaster metering for 2026-10, idle policy proportional, in bigquery")
    # the commitment gcp-east4-h100-3y: 16 nodes x 8 GPUs = 128 GPUs paid, 7,680,000 units an hour, 744 hours
    assert "7680000" in result.output and "744" in result.output


def test_a_long_read_reports_duckdbs_progress_while_it_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """DuckDB's progress read while a query is halfway: a function in the query holds it at row 50,000 of 100,000
    until the reporter has read the progress once, so exactly one line is printed whatever the machine's speed;
    the clock says 7 s have passed."""
    halfway, polled = threading.Event(), threading.Event()
    calls: list[bool] = []

    def hold(i: int) -> int:
        if i == 50_000:
            halfway.set()
            polled.wait(60)
        return i

    def next_poll(done: threading.Event) -> bool:
        """First call: wait until the query is halfway, then let the reporter read the progress. Second call
        (the progress has been read): release the query and wait for it to end."""
        if not calls:
            calls.append(halfway.wait(60))
            return True
        polled.set()
        done.wait()
        return False

    con = duckdb.connect()
    con.create_function("hold", hold, ["BIGINT"], "BIGINT", side_effects=True)
    clock = iter([100.0, 107.0])
    with source._read_progress(con, True, "usage/", 10**9, next_poll, lambda: next(clock)):
        con.execute("SELECT SUM(hold(i)) FROM range(100000) AS r(i)").fetchall()
    [line] = capsys.readouterr().err.splitlines()
    share = re.fullmatch(r"qm meter: read (\d+) % of 1,000,000,000 rows of usage/, 7 s", line)
    assert share and 0 <= int(share[1]) <= 100, line
    with source._read_progress(con, False, "usage/", 10**9):  # small inputs: nothing
        con.execute("SELECT COUNT(*) FROM range(10)").fetchall()
    assert capsys.readouterr().err == ""
