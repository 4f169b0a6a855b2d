"""Metering on a hand-checked fixture: request vs usage, committed cover and overflow, idle and its sharing."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from quartermaster.metering import check_usage, meter, parse_period, read_usage
from tests.reports.fixtures import FEBRUARY, small_fleet, usage

FEB = parse_period("2026-02")  # 28 days = 672 hours


def run(rows=FEBRUARY, policy: str = "proportional"):
    inventory = small_fleet()
    frame, issues = check_usage(usage(rows), inventory)
    assert issues == []
    result, issues = meter(inventory, frame, FEB, policy)
    assert issues == [] and result is not None
    return result


def test_team_charges_by_hand() -> None:
    r = run()
    teams = {t.team: t for t in r.teams}
    # a holds max(req, used): 4 + 6 + 2 = 12 GPU-h. Covered: 4 (hour 0) + 6 x 8/10 = 4.8 (hour 1) = 8.8 at $2
    # = $17.60; overflow 1.2 at $10 = $12.00; on-demand 2 at $10 = $20.00. Total $49.60.
    assert teams["a"].charged_hours == Decimal("12")
    assert teams["a"].usage_cost == Decimal("49.60")
    # b: covered 3 + 3.2 = 6.2 at $2 = $12.40; overflow 0.8 at $10 = $8.00; spot 4 at $3 = $12.00. Total $32.40.
    assert teams["b"].usage_cost == Decimal("32.40")
    # Efficiency = used / requested: a 9 / 11, b 11 / 11.
    assert teams["a"].efficiency == Decimal("0.8182")
    assert teams["b"].efficiency == Decimal("1.0000")
    lines = {(x.team, x.pool, x.category): (x.accelerator_hours, x.cost) for x in r.lines}
    assert lines[("a", "h100-resv", "Committed")] == (Decimal("8.800"), Decimal("17.60"))
    assert lines[("a", "h100-resv", "Standard")] == (Decimal("1.200"), Decimal("12.00"))
    assert lines[("b", "h100-spot", "Dynamic")] == (Decimal("4.000"), Decimal("12.00"))


def test_idle_is_paid_commitment_nobody_held_and_reconciles() -> None:
    r = run()
    # Paid: 8 GPUs x 672 h = 5,376 GPU-h at $2 = $10,752; held within it 7 + 8 = 15, so 5,361 GPU-h idle = $10,722.
    assert [(x.block, x.accelerator_hours, x.cost) for x in r.idle] == [
        ("commitment:c1", Decimal("5361.000"), Decimal("10722.00"))
    ]
    # Total = commitment $10,752 + overflow 2 GPU-h x $10 + on-demand $20 + spot $12 = $10,804.
    assert r.total_cost == Decimal("10804.00")
    assert r.usage_cost + r.idle_cost == r.total_cost
    assert sum(t.total for t in r.teams) == r.total_cost


def test_idle_shared_proportionally_to_charges_on_the_block() -> None:
    r = run(policy="proportional")
    # On the commitment block a was charged 17.60 + 12.00 = 29.60 and b 12.40 + 8.00 = 20.40 (of 50.00):
    # a 10,722 x 29.6/50 = 6,347.424 -> 6,347.42; b 4,374.576 -> 4,374.58 (largest remainder keeps the sum).
    shares = {t.team: t.idle_share for t in r.teams}
    assert shares == {"a": Decimal("6347.42"), "b": Decimal("4374.58")}


def test_idle_shared_evenly_between_teams_that_used_anything() -> None:
    shares = {t.team: t.idle_share for t in run(policy="even").teams}
    assert shares == {"a": Decimal("5361.00"), "b": Decimal("5361.00")}


def test_idle_to_an_owner() -> None:
    teams = {t.team: t for t in run(policy="owner:c").teams}
    assert teams["c"].idle_share == Decimal("10722.00") and teams["c"].usage_cost == Decimal(0)
    assert teams["a"].total == Decimal("49.60")


def test_idle_of_an_unused_commitment_is_not_lost() -> None:
    # OpenCost PR #883: idle disappeared when nothing ran on the resource. Only on-demand use here, so the
    # whole commitment ($10,752) is idle and goes to the only paying team.
    r = run(rows=[(5, "a", "h100", 3, 3)])
    assert r.idle_cost == Decimal("10752.00")
    assert {t.team: t.total for t in r.teams} == {"a": Decimal("10782.00")}
    assert r.total_cost == Decimal("10782.00")


def test_no_usage_at_all_leaves_idle_unallocated() -> None:
    # hour 700 is in March, outside the period; February has only the rows of 0 accelerators (`usage`)
    r = run(rows=[(700, "a", "h100", 1, 1)])
    assert r.teams == () and r.unallocated_idle == r.idle_cost == r.total_cost == Decimal("10752.00")


@pytest.mark.parametrize(
    ("column", "value", "want"),
    [
        # an unknown flavor names the row and suggests the closest pool
        ("flavor", "h100-resvv", "flavor `h100-resvv` is not a pool (ResourceFlavor) of the inventory"),
        # an unknown team
        ("team", "zz", "team `zz` is not a team of the inventory"),
        # a negative number of accelerators
        (
            "accelerators_used",
            -1,
            "accelerators_used must be a number of accelerators from 0 to 1,000,000 (the inventory's bound)",
        ),
    ],
)
def test_bad_records_are_located_issues(column: str, value: object, want: str) -> None:
    frame = usage(FEBRUARY)
    frame.loc[3, column] = value
    _, issues = check_usage(frame, small_fleet(), "usage.csv")
    assert len(issues) == 1
    assert issues[0].format().startswith(f"usage.csv:5 {column}: {want}")


def test_namespaces_map_to_teams() -> None:
    frame = usage(FEBRUARY).rename(columns={"team": "namespace"})
    normalised, issues = check_usage(frame, small_fleet())
    assert issues == [] and list(normalised["team"]) == list(usage(FEBRUARY)["team"])


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_files_meter_like_the_frame(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"usage{suffix}"
    frame = usage(FEBRUARY)
    frame.to_csv(path, index=False) if suffix == ".csv" else frame.to_parquet(path, index=False)
    records, issues = read_usage(path, small_fleet())
    assert issues == []
    result, _ = meter(small_fleet(), records, FEB)
    assert result is not None and result.to_dict() == run().to_dict()


@pytest.mark.parametrize(
    ("column", "value", "want"),
    [
        # text where the typed CSV reader expects a time or a number: read again as text, then located
        ("hour", "yesterday", "hour is not an ISO 8601 time"),
        (
            "accelerators_requested",
            "four",
            "accelerators_requested must be a number of accelerators from 0 to 1,000,000 (the inventory's bound)",
        ),
        ("flavor", "h100-resvv", "flavor `h100-resvv` is not a pool (ResourceFlavor) of the inventory"),
    ],
)
def test_bad_csv_values_are_located_issues(tmp_path: Path, column: str, value: str, want: str) -> None:
    frame = usage(FEBRUARY).astype({column: object})
    frame.loc[3, column] = value
    path = tmp_path / "usage.csv"
    frame.to_csv(path, index=False)
    _, issues = read_usage(path, small_fleet())
    assert [i.format().split(" (got")[0] for i in issues] == [f"{path}:5 {column}: {want}"]


def test_records_beyond_the_fleet_are_refused_with_what_they_name() -> None:
    """Issue 37: usage above what a pool can hold, the same hour twice, and days without records are refused, each
    naming the team, pool and hour (or the days), never billed."""
    inventory = small_fleet()
    # h100 holds at most 2 nodes x 8 = 16 GPUs: 17 is more than the pool can hold
    over = check_usage(usage([*FEBRUARY, (30, "a", "h100", 17, 17)]), inventory)[0]
    assert [
        (i.rule, "h100 at 2026-02-02 06:00 UTC holds 17.0 of 16" in i.message) for i in meter(inventory, over, FEB)[1]
    ] == [("usage-capacity", True)]
    # a row repeated: 120 minutes of records for a in h100-resv at hour 0
    twice = check_usage(usage([*FEBRUARY, FEBRUARY[0]]), inventory)[0]
    [issue] = meter(inventory, twice, FEB)[1]
    assert issue.rule == "usage-overlap" and "a in h100-resv at 2026-02-01 00:00 UTC (120 minutes)" in issue.message
    # March has no record at all: 31 of its 31 days
    [issue] = meter(inventory, check_usage(usage(FEBRUARY), inventory)[0], parse_period("2026-03"))[1]
    assert issue.rule == "usage-coverage" and "no usage records for 31 of the 2026-03 period's 31 days" in issue.message
