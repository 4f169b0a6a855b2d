"""`qm export focus`: metered (or planned) cost as a FOCUS 1.3 CSV."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from quartermaster.cli.command_support import check_output, console, inventory_argument, load_or_exit, quarter_option
from quartermaster.cli.meter_command import checked_period, exit_on
from quartermaster.errors import ProblemsFound, UsageError
from quartermaster.model import Inventory
from quartermaster.pricing import DEFAULT_IDLE_POLICY
from quartermaster.units import Quarter

app = typer.Typer(help="Export cost data in open formats.", no_args_is_help=True)


@app.command("focus")
def focus(
    path: Path = inventory_argument(),
    period: str = typer.Option(
        None,
        help="Metered month (2026-10) or quarter (2026Q4); default: the months of the usage (a month it covers in "
        "part: that part, which its rows' charge period shows).",
    ),
    quarter: Quarter | None = typer.Option(
        None,
        parser=quarter_option,
        help="Export the plan's forecast for this quarter (2027Q1) instead of metered usage.",
    ),
    plan: Path = typer.Option(None, help="A plan folder written by `qm plan` (with --quarter); default: plan now."),
    usage: Path = typer.Option(
        None, help="Usage records (CSV or Parquet); default: the inventory's usage.csv.", exists=True, dir_okay=False
    ),
    idle: str = typer.Option(DEFAULT_IDLE_POLICY, help="Idle sharing: proportional, even, or owner:TEAM."),
    out: Path = typer.Option(
        None, help="Output CSV; default focus-<period>.csv, or focus-forecast-<quarter>.csv, in the current folder."
    ),
) -> None:
    """Write FOCUS 1.3 rows: every mandatory column, commitment columns, x_Team and x_CostCenter."""
    inputs = (str(usage),) if usage else ()
    if out is not None:
        check_output(out, "--out", path, folder=False, inputs=inputs)
    # imported when run (after the cheap checks), so that `qm --help` and a usage mistake stay fast
    from quartermaster.reports.focus import write_focus

    inventory = load_or_exit(path).inventory
    if quarter and period:
        raise UsageError("--period (metered usage) and --quarter (the plan's forecast) exclude each other; give one.")
    if quarter:
        rows, label = _planned(inventory, quarter, plan)
        name, what = f"focus-forecast-{label}.csv", f"FOCUS-shaped forecast rows (planned, not spend) for {label}"
    else:
        rows, label = _metered(inventory, period, usage, idle)
        name, what = f"focus-{label}.csv", f"FOCUS 1.3 rows (metered) for {label}"
    target = out or Path(name)
    check_output(target, "--out", path, folder=False, inputs=inputs)
    write_focus(rows, target)
    console.print(f"wrote {target}: {len(rows)} {what}")


def _metered(
    inventory: Inventory, period: str | None, usage: Path | None, idle: str
) -> tuple[list[dict[str, Any]], str]:
    # imported when run, so that `qm --help` stays fast
    from quartermaster.metering import (
        check_usage,
        covered_month,
        inventory_records,
        meter,
        period_of,
        read_usage,
    )
    from quartermaster.reports.focus import focus_rows

    chosen = checked_period(inventory, idle, period)
    if usage is not None:
        records, issues = read_usage(usage, inventory)
    else:
        records, issues = check_usage(inventory_records(inventory), inventory, "usage.csv")
    exit_on(issues, "exported")
    if records.empty:
        raise ProblemsFound("no usage records to export; add usage.csv to the inventory or pass --usage FILE")
    whole = chosen or period_of(records["hour"])
    results = []
    for month in whole.months():
        # by default each month the records cover in part is metered for that part (its charge period says so)
        result, issues = meter(inventory, records, month if chosen else covered_month(records, month), idle)
        exit_on(issues, "exported")
        if result is not None:
            results.append(result)
    return focus_rows(inventory, results), whole.label


def _planned(inventory: Inventory, quarter: Quarter, plan_dir: Path | None) -> tuple[list[dict[str, Any]], str]:
    # imported when run, so that `qm --help` stays fast
    from quartermaster.cli.report_command import plan_or_exit
    from quartermaster.reports.focus import plan_focus_rows

    result = plan_or_exit(inventory, quarter, plan_dir)
    return plan_focus_rows(inventory, result, quarter), quarter
