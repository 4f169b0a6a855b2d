"""`qm meter USAGE`: cost per team and cost centre from usage records, with idle capacity as its own line."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table

from quartermaster.cli.command_support import check_output, console, load_or_exit, print_issue
from quartermaster.errors import ProblemsFound, UsageError
from quartermaster.issues import Issue
from quartermaster.pricing import BASES, DEFAULT_IDLE_POLICY

if TYPE_CHECKING:
    from quartermaster.metering import MeterResult, Period
    from quartermaster.model import Inventory


def command(
    usage: str = typer.Argument(
        None,
        help="Usage records: a CSV or Parquet file, a folder (month partitions like "
        "month=2026-10/ included), a glob, or the same on s3:// or gs://; columns hour (or "
        "minute), cluster, team or namespace, flavor, accelerators_used, "
        "accelerators_requested, optionally pod (rows per pod: a team's pods share an hour, each pod at most 60 "
        "minutes of it; without pod, one record per team, pool and hour or 60 per-minute records).",
        show_default=False,
    ),
    inventory: Path = typer.Option(Path("inventory"), "--inventory", "-i", help="Inventory directory.", exists=True),
    period: str = typer.Option(
        None,
        help="Month (2026-10) or quarter (2026Q4); default: the months the records span, cut to the days they cover "
        "when they begin or end inside a month (the period's name says so).",
    ),
    idle: str = typer.Option(DEFAULT_IDLE_POLICY, help="Idle sharing: proportional, even, or owner:TEAM."),
    out: Path = typer.Option(None, help="Also write meter.json and CSVs (teams, cost centres, lines, ledger) here."),
    emit_sql: str = typer.Option(
        None,
        "--emit-sql",
        metavar="DIALECT",
        help="Print the metering query for a warehouse instead (duckdb, spark, bigquery, "
        "trino, athena) over its own table `usage`, with a row per problem of the records that qm meter refuses "
        "them for; needs --period, reads no USAGE.",
    ),
) -> None:
    """Charge each team max(requested, used) accelerator-hours at the rate of the capacity that served it."""
    # imported when run, so that `qm --help` stays fast
    from quartermaster.reports.metering.export import write_meter
    from quartermaster.reports.metering.source import meter_source

    if out:
        check_output(out, "--out", inventory, folder=True, inputs=(usage,) if usage else ())
    inv = load_or_exit(inventory).inventory
    chosen = checked_period(inv, idle, period)
    if emit_sql:
        emit(inv, chosen, idle, emit_sql)
        return
    if not usage:
        raise UsageError("give USAGE (the usage records to meter), or --emit-sql DIALECT with --period")
    result, issues = meter_source(usage, inv, chosen, idle)
    exit_on(issues)
    assert result is not None  # meter returns a result whenever it returns no issues
    show(result)
    if out:
        for path in write_meter(result, out):
            console.print(f"wrote {path}")


def emit(inventory: Inventory, period: Period | None, idle: str, dialect: str) -> None:
    """Print the metering query in a warehouse's SQL dialect on stdout."""
    # imported when run, so that `qm --help` stays fast
    from quartermaster.metering.query import DIALECTS, emit
    from quartermaster.metering.rates import blocks

    if dialect not in DIALECTS:
        raise UsageError(f"--emit-sql {dialect}: not a dialect; use one of {', '.join(DIALECTS)}")
    if period is None:
        raise UsageError(
            "--emit-sql needs --period (a month like 2026-10 or a quarter like 2026Q4): the query "
            "inlines the blocks paid in it"
        )
    blks, issues = blocks(inventory, period.start, period.end)
    exit_on(issues, "emitted")
    sys.stdout.write(emit(inventory, blks, idle, dialect, period))


def checked_period(inventory: Inventory, idle: str, period: str | None) -> Period | None:
    """Check `--idle` and `--period`; exit 2 saying the accepted forms when either is wrong."""
    # imported when run, so that `qm --help` stays fast
    from quartermaster.metering import check_policy, parse_period

    problem = check_policy(idle, inventory)
    if problem:
        raise UsageError(problem)
    try:
        return parse_period(period) if period else None
    except ValueError as err:
        raise UsageError(f"--period {err}") from None


def exit_on(issues: list[Issue], done: str = "metered") -> None:
    """Print usage-record problems and exit 1 if there are any ("nothing was <done>")."""
    for issue in issues:
        print_issue(issue)
    if issues:
        raise ProblemsFound(f"{len(issues)} problem(s); nothing was {done}.")


def show(result: MeterResult) -> None:
    """Print the team table, the idle lines and the reconciliation."""
    # imported when run, so that `qm --help` stays fast
    from quartermaster.pricing import format_usd as money
    from quartermaster.reports.filters import pct

    teams = Table(
        title=f"Metered cost, {result.period.label} (basis: metered, i.e. {BASES['metered']}; idle policy "
        f"{result.policy})",
        title_justify="left",
    )
    for column in (
        "team",
        "cost centre",
        "requested h",
        "used h",
        "charged h",
        "efficiency",
        "usage",
        "idle share",
        "total",
    ):
        teams.add_column(column, justify="left" if column in ("team", "cost centre") else "right")
    for t in result.teams:
        teams.add_row(
            t.team,
            t.cost_center,
            f"{t.requested_hours:,.1f}",
            f"{t.used_hours:,.1f}",
            f"{t.charged_hours:,.1f}",
            pct(t.efficiency),
            money(t.usage_cost),
            money(t.idle_share),
            money(t.total),
        )
    console.print(teams)
    idle = Table(title="Idle capacity (paid, held by nobody)", title_justify="left")
    for column in ("block", "accelerator-hours", "rate / acc-h", "cost"):
        idle.add_column(column, justify="left" if column == "block" else "right")
    for x in result.idle:
        idle.add_row(x.block, f"{x.accelerator_hours:,.1f}", money(x.rate, places=4), money(x.cost))
    console.print(idle)
    centers = ", ".join(f"{cc} {money(v)}" for cc, v in sorted(result.cost_centers.items()))
    console.print(f"cost centres: {centers}")
    console.print(
        f"total {money(result.total_cost)} = team usage {money(result.usage_cost)} + idle {money(result.idle_cost)}"
    )
    if result.unallocated_idle:
        console.print(f"idle not shared (no team used anything): {money(result.unallocated_idle)}")
