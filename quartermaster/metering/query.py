"""The metering query: the inventory's small tables (blocks, pool windows, teams, idle policy) written as SQL
from `rates.blocks()`, followed by the body in `sql/meter.sql`, in a portable subset of SQL that DuckDB runs
here and SQLGlot transpiles for Spark, BigQuery and Trino/Athena (`qm meter --emit-sql`).

The query reads one table, `usage` (USAGE_COLUMNS), and returns one row per charge line, idle line, idle share
and team; `meter.meter` turns them into a `MeterResult`. The warehouse query also returns one row per problem of
the records (`sql/checks.sql`, the same checks `qm meter` runs before it meters: `meter.record_problems`).
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from importlib.resources import files

from quartermaster.bounds import MAX_ACCELERATORS
from quartermaster.capacity import flavor_capacity
from quartermaster.metering.rates import Block
from quartermaster.metering.usage import Period
from quartermaster.model import Inventory
from quartermaster.textsafety import sql_string

UNITS_PER_HOUR = 60_000
"""Quantities in the query are integer milli-accelerator-minutes."""
RATE_PLACES = 10
"""Rates travel as DECIMAL(16, 10): USD per accelerator-hour to 1e-10."""
DIALECTS = {"duckdb": "duckdb", "spark": "spark", "bigquery": "bigquery", "trino": "trino", "athena": "athena"}
USAGE_COLUMNS = {
    "cluster": "VARCHAR, the cluster of the row's pool",
    "hour": "TIMESTAMP, the start of the hour in UTC (of the minute's hour for per-minute rows)",
    "team": "VARCHAR, a team of the inventory",
    "flavor": "VARCHAR, a pool (ResourceFlavor) of the inventory",
    "accelerators_used": "DOUBLE, mean accelerators used over the row's minutes",
    "accelerators_requested": "DOUBLE, mean accelerators requested over the row's minutes (a row with a "
    "missing, negative, infinite or NaN number counts 0)",
    "minutes": "INT, 60 for an hourly row, 1 for a per-minute row",
    "pod": "VARCHAR, the pod of a per-pod row (NULL for rows per team: a view adding CAST(NULL AS VARCHAR) AS pod "
    "when the table has none)",
}


def _text(value: str | None) -> str:
    return "CAST(NULL AS VARCHAR)" if value is None else sql_string(value)


def _time(moment: dt.datetime) -> str:
    """A timestamp literal with its UTC offset (never a naive one: engines read those in their session zone)."""
    return f"CAST('{moment:%Y-%m-%d %H:%M:%S}+00:00' AS TIMESTAMP)"


def _rate(rate: Decimal) -> str:
    return f"CAST({rate.quantize(Decimal(1).scaleb(-RATE_PLACES))} AS DECIMAL(16, {RATE_PLACES}))"


def _table(name: str, rows: list[list[str]], columns: list[str]) -> str:
    selects = [
        "SELECT " + ", ".join(f"{value} AS {column}" for value, column in zip(row, columns, strict=True))
        for row in rows
    ]
    return f"{name} AS (\n  " + "\n  UNION ALL\n  ".join(selects) + "\n)"


def _hours(windows: tuple[tuple[dt.datetime, dt.datetime], ...]) -> int:
    return sum(int((b - a).total_seconds()) // 3600 for a, b in windows)


def inventory_tables(inventory: Inventory, blks: list[Block], policy: str) -> list[str]:
    """The CTEs blocks, pool_windows, teams and idle_policy (block_id = position in `blks`)."""
    index = {b.key: i for i, b in enumerate(blks)}
    block_rows = [
        [
            f"CAST({i} AS INT)",
            _text(b.key),
            _text(b.pools[0] if len(b.pools) == 1 else None),
            f"CAST({b.accelerators * UNITS_PER_HOUR} AS BIGINT)",
            f"CAST({_hours(b.paid)} AS BIGINT)",
            _rate(b.rate),
            _text(b.category),
            _rate(b.overflow_rate),
            _text(b.overflow_category),
            f"CAST({int(b.rate == b.overflow_rate and b.category == b.overflow_category)} AS INT)",
            f"CAST({int(b.kind == 'commitment')} AS INT)",
        ]
        for i, b in enumerate(blks)
    ]
    windows = []
    for order, pool in enumerate(inventory.pools):
        own = blks[index[f"pool:{pool.name}"]]
        placed = [(index[own.key], w) for w in own.paid]
        if pool.commitment and f"commitment:{pool.commitment}" in index:
            committed = index[f"commitment:{pool.commitment}"]
            placed += [(committed, w) for w in blks[committed].paid if w[0] < w[1]]
        windows += [
            [_text(pool.name), f"CAST({order} AS INT)", f"CAST({i} AS INT)", _time(a), _time(b)] for i, (a, b) in placed
        ]
    if not windows:  # no pools: one row that matches no usage keeps the table typed
        never = _time(dt.datetime(2000, 1, 1))
        windows = [[_text(None), "CAST(NULL AS INT)", "CAST(NULL AS INT)", never, never]]
    owner = policy.removeprefix("owner:") if policy.startswith("owner:") else None
    return [
        _table(
            "blocks",
            block_rows,
            [
                "block_id",
                "block_key",
                "idle_pool",
                "paid_units",
                "paid_hours",
                "rate",
                "category",
                "overflow_rate",
                "overflow_category",
                "merged",
                "committed",
            ],
        ),
        _table("pool_windows", windows, ["pool", "pool_order", "block_id", "window_from", "window_to"]),
        _table("teams", [[_text(t.name), _text(t.cost_center)] for t in inventory.teams], ["team", "cost_center"]),
        _table("idle_policy", [[_text("owner" if owner else policy), _text(owner)]], ["policy", "owner"]),
    ]


def check_tables(inventory: Inventory, period: Period) -> list[str]:
    """The CTEs sql/checks.sql reads besides `held`: period, period_days (one row per day) and pool_capacity (each
    pool's accelerators at its largest, in units an hour)."""
    days = period.days()
    capacity = [
        [_text(pool), f"CAST({accelerators * UNITS_PER_HOUR} AS BIGINT)"]
        for pool, accelerators in flavor_capacity(inventory).items()
    ] or [[_text(None), "CAST(NULL AS BIGINT)"]]  # no pools: one row that matches no usage keeps the table typed
    return [
        _table("period", [[_time(period.start), _time(period.end)]], ["period_from", "period_to"]),
        _table("period_days", [[_time(d), _time(d + dt.timedelta(days=1))] for d in days], ["day_from", "day_to"]),
        _table("pool_capacity", capacity, ["pool", "capacity_units"]),
    ]


def checks_sql(inventory: Inventory, period: Period) -> str:
    """The query `meter.record_problems` runs over a table `held_rows` (sql/held.sql's rows): one row per problem
    (sql/checks.sql's `problems`)."""
    tables = ["held AS (SELECT * FROM held_rows)", *check_tables(inventory, period), _sql("checks.sql")]
    return "WITH\n" + ",\n".join(tables) + "\nSELECT * FROM problems"


PROBLEM_ROWS = """
UNION ALL
SELECT problem AS kind, 0 AS part, team, CAST(NULL AS INT) AS block_id, pool, CAST(NULL AS VARCHAR) AS category,
       CAST(NULL AS DECIMAL(16, 10)) AS rate, CAST(held_units AS DECIMAL(20, 3)) AS units,
       CAST(NULL AS BIGINT) AS cents, CAST(NULL AS BIGINT) AS requested_units, CAST(NULL AS BIGINT) AS used_units,
       hour, minutes, capacity_units AS limit_units
FROM problems"""
"""The problems of sql/checks.sql as rows of the metering query's result (the warehouse query)."""


def _sql(name: str) -> str:
    """A file of sql/ without its leading comment."""
    text = files("quartermaster.metering").joinpath(f"sql/{name}").read_text(encoding="utf-8")
    return "\n".join(line for line in text.splitlines() if not line.startswith("--"))


def held_sql() -> str:
    """The CTE `held` (sql/held.sql): the usage rows summed per pod, then per cluster, team, pool and hour (with
    the most minutes of one pod), numbers above the
    bound of `qm validate` (`bounds.MAX_ACCELERATORS`) counted as bad."""
    return _sql("held.sql").replace(":max_accelerators", str(MAX_ACCELERATORS))


def meter_sql(
    inventory: Inventory, blks: list[Block], policy: str, held: bool = True, checks: Period | None = None
) -> str:
    """The whole metering query in DuckDB's dialect (the portable subset); without the CTE `held` (then a table
    of that name) when `held` is False; with `checks`, also the rows of sql/checks.sql's problems over that
    period (the warehouse query)."""
    tables = inventory_tables(inventory, blks, policy) + ([held_sql()] if held else [])
    if checks is not None:
        tables += [*check_tables(inventory, checks), _sql("checks.sql")]
    return "WITH\n" + ",\n".join(tables) + ",\n" + _sql("meter.sql") + (PROBLEM_ROWS if checks else "")


def emit(inventory: Inventory, blks: list[Block], policy: str, dialect: str, period: Period) -> str:
    """The query for a warehouse (`qm meter --emit-sql`), transpiled by SQLGlot, after a header saying what it
    reads and returns."""
    import sqlglot

    query = sqlglot.transpile(
        meter_sql(inventory, blks, policy, checks=period), read="duckdb", write=DIALECTS[dialect], pretty=True
    )[0]
    header = [
        f"Quartermaster metering for {period.label}, idle policy {policy}, in {dialect} SQL (generated by qm meter "
        "--emit-sql; the inventory's blocks, rates and teams are inlined).",
        "It reads one table, `usage`, one row per team (or pod), pool and hour (or minute):",
        *(f"  {column}: {what}" for column, what in USAGE_COLUMNS.items()),
        "It returns one row per line: kind (usage, idle, idle-share, team), part (0 covered, 1 overflow), team,",
        "block_id, pool, category (FOCUS pricing category), rate (USD per accelerator-hour), units",
        f"(milli-accelerator-minutes: {UNITS_PER_HOUR:,} = 1 accelerator-hour), cents (USD cents, whole),",
        "requested_units and used_units (team rows). Sum of cents over usage and idle rows = the metered total.",
        "It also returns one row per problem of the records, the checks `qm meter` runs before it bills; the bill",
        "is not valid while there are any (hour: the hour, or the day's start, UTC):",
        "  usage-overlap: the same team (or pod), pool and hour recorded twice (minutes: the most minutes one pod",
        "    has, above 60; without pods the team's records are one pod);",
        "  usage-capacity: a pool holding more than it has (units: held, limit_units: the pool's largest size);",
        "  usage-coverage: a day of the period without any record (it would be billed as idle).",
    ]
    if dialect == "spark":
        header.append("Spark: set spark.sql.session.timeZone=UTC (usage hours are UTC).")
    return "\n".join(f"-- {line}" for line in header) + "\n" + query + "\n"
