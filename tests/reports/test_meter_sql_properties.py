"""The metering query's money against the pricing home on generated usage (issue 26, point 7): whatever the usage,
the SQL's cents per line are `pricing.allocate_cents` of the lines' exact amounts, and each idle line is shared
out as `pricing.split_cents` over `pricing.idle_weights` of the idle policy. One rule, written in Python, that the
SQL (run by DuckDB here, by a warehouse in production) must meet.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import duckdb
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quartermaster.metering import check_usage, parse_period
from quartermaster.metering.query import UNITS_PER_HOUR, meter_sql
from quartermaster.metering.rates import blocks
from quartermaster.pricing import allocate_cents, cents, idle_weights, split_cents
from tests.reports.fixtures import small_fleet

pytestmark = pytest.mark.slow  # 80 runs of the metering query

FEB = parse_period("2026-02")
FLEET = small_fleet()  # reservation c1 (8 GPUs at $2/GPU-h), on-demand $10/GPU-h and spot $3/GPU-h pools
BLOCKS, _ = blocks(FLEET, FEB.start, FEB.end)
TEAMS = [t.name for t in FLEET.teams]
POOLS = [p.name for p in FLEET.pools]

record = st.tuples(
    st.integers(0, 47),  # hour of February (two days, so hours repeat across teams and pools)
    st.sampled_from(TEAMS),
    st.sampled_from(POOLS),
    st.integers(0, 16),  # accelerators used
    st.integers(0, 16),  # accelerators requested
)
usage_records = st.lists(record, min_size=1, max_size=40, unique_by=lambda r: r[:3])
policies = st.sampled_from(["proportional", "even", "owner:b"])


def metered_rows(records: list[tuple[int, str, str, int, int]], policy: str) -> list[dict]:
    raw = pd.DataFrame(
        {
            "hour": [dt.datetime(2026, 2, 1) + dt.timedelta(hours=h) for h, *_ in records],
            "cluster": "gke-a",
            "team": [r[1] for r in records],
            "flavor": [r[2] for r in records],
            "accelerators_used": [float(r[3]) for r in records],
            "accelerators_requested": [float(r[4]) for r in records],
        }
    )
    frame, issues = check_usage(raw, FLEET)
    assert issues == []
    con = duckdb.connect()
    con.register("frame", frame)
    con.execute(
        "CREATE VIEW usage AS SELECT '' AS cluster, hour, CAST(team AS VARCHAR) AS team, "
        "CAST(flavor AS VARCHAR) AS flavor, used AS accelerators_used, requested AS accelerators_requested, "
        "60 AS minutes, CAST(NULL AS VARCHAR) AS pod FROM frame"
    )
    return con.sql(meter_sql(FLEET, BLOCKS, policy)).to_arrow_table().to_pylist()


def line_order(row: dict) -> tuple:
    """The query's order of lines for ties: usage by team, pool, pool before commitment, covered before overflow;
    then idle by block."""
    usage = row["kind"] == "usage"
    return (
        not usage,
        row["team"] or "",
        POOLS.index(row["pool"]) if usage else 0,
        BLOCKS[row["block_id"]].kind == "commitment",
        row["part"],
        row["block_id"],
    )


PROPERTY = settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(usage_records, policies)
def test_the_querys_cents_are_the_pricing_homes_allocation(records, policy) -> None:
    rows = metered_rows(records, policy)
    lines = sorted((r for r in rows if r["kind"] in ("usage", "idle") and r["units"] > 0), key=line_order)
    amounts = {f"{i:06d}": r["units"] * r["rate"] / UNITS_PER_HOUR for i, r in enumerate(lines)}
    total = cents(sum(amounts.values(), Decimal(0)))  # the metered total: the exact amounts' sum, to the cent
    want = allocate_cents(amounts, total)
    assert {f"{i:06d}": Decimal(r["cents"]) / 100 for i, r in enumerate(lines)} == want


@PROPERTY
@given(usage_records, policies)
def test_the_querys_idle_shares_are_the_pricing_homes_split(records, policy) -> None:
    rows = metered_rows(records, policy)
    usage = [r for r in rows if r["kind"] == "usage"]
    use = {t: Decimal(sum(r["cents"] for r in usage if r["team"] == t)) for t in TEAMS}
    for idle in (r for r in rows if r["kind"] == "idle" and r["cents"] > 0):
        block = idle["block_id"]
        on_block = {
            t: Decimal(sum(r["cents"] for r in usage if r["team"] == t and r["block_id"] == block)) for t in TEAMS
        }
        weights = idle_weights(policy, use, TEAMS, on_block)
        want = {t: c for t, c in split_cents(Decimal(idle["cents"]) / 100, weights).items() if c}
        got = {
            r["team"]: Decimal(r["cents"]) / 100
            for r in rows
            if r["kind"] == "idle-share" and r["block_id"] == block and r["cents"]
        }
        assert got == want
        assert sum(got.values()) == Decimal(idle["cents"]) / 100  # the idle line is shared out to the cent
