"""`qm report [PATH]`: the quarterly planning report for finance (HTML, XLSX, CSV, JSON and PDF)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from quartermaster.cli.command_support import (
    UNREADABLE,
    check_output,
    console,
    err_console,
    inventory_argument,
    load_or_exit,
    quarter_option,
    read_plan_or_exit,
    unreadable_plan,
)
from quartermaster.errors import UsageError
from quartermaster.model import Inventory
from quartermaster.units import Quarter

if TYPE_CHECKING:
    from quartermaster.plan_contract import PlanResult

FORMATS = ("html", "json", "csv", "xlsx", "pdf")


def plan_or_exit(
    inventory: Inventory, quarter: Quarter | None, plan_dir: Path | None, what: str = "--plan"
) -> PlanResult:
    """A plan read from a folder written by `qm plan`, or planned now from `quarter` on."""
    # imported when run, so that `qm --help` stays fast
    from quartermaster.planner import PlanOptions, plan

    if plan_dir is not None:
        return read_plan_or_exit(plan_dir, what, relaxed_ok=True)  # the report's source trail labels it
    with err_console.status("Planning") as status:
        return plan(inventory, PlanOptions(start=quarter), progress=lambda msg: status.update(msg))


def command(
    path: Path = inventory_argument(),
    quarter: Quarter | None = typer.Option(
        None,
        parser=quarter_option,
        help="Quarter to report on, e.g. 2027Q1; default: the plan's first open to purchases.",
    ),
    plan_dir: Path = typer.Option(None, "--plan", help="A plan folder written by `qm plan`; default: plan now."),
    previous: Path = typer.Option(None, help="The previous plan's folder, to show what changed."),
    out: Path = typer.Option(Path("out/report"), help="Folder for report.html, report.xlsx, report.pdf, CSVs, JSON."),
    formats: str = typer.Option(",".join(FORMATS), help="Comma-separated subset of html,json,csv,xlsx,pdf."),
    usage: Path = typer.Option(
        None,
        help="Usage records (CSV or Parquet, as `qm meter` and `qm usage pull` "
        "write them) for plan vs actual; default: the inventory's usage files.",
    ),
) -> None:
    """Write the quarterly planning report: spend, savings, commitments to approve, coverage, risk, budgets."""
    chosen = tuple(f.strip() for f in formats.split(",") if f.strip())
    unknown = sorted(set(chosen) - set(FORMATS))
    if unknown:
        raise UsageError(f"--formats: unknown {', '.join(unknown)}; choose from {', '.join(FORMATS)}.")
    check_output(out, "--out", path, folder=True, inputs=(str(usage),) if usage else ())
    # imported when run (after the cheap checks), so that `qm --help` and a usage mistake stay fast
    from quartermaster.pricing import format_usd as money
    from quartermaster.reports.filters import pct
    from quartermaster.reports.finance import RenderOptions, build_report, write_report
    from quartermaster.reports.finance.sources import inventory_revision

    inventory = load_or_exit(path).inventory
    records = None
    if usage is not None:
        from quartermaster.cli.meter_command import exit_on
        from quartermaster.metering import read_usage

        records, issues = read_usage(usage, inventory)
        exit_on(issues, "reported")
    result = plan_or_exit(inventory, quarter, plan_dir)
    before = plan_or_exit(inventory, quarter, previous, "--previous") if previous is not None else None
    data = build_report(inventory, result, quarter, before, inventory_revision(path), records)
    if plan_dir is not None:  # the plan sweep's section, when the folder holds a sweep of this plan
        from quartermaster.reports.finance.sweep_section import with_sweep

        try:
            data = with_sweep(data, plan_dir, result)
        except UNREADABLE as error:
            raise unreadable_plan("--plan", plan_dir, error) from None
    written, messages = write_report(data, out, RenderOptions(formats=chosen, generated=dt.datetime.now(dt.UTC).date()))
    s = data.summary
    console.print(
        f"[bold]{data.title}[/]: spend {money(s.spend_quarter.current)} "
        f"(next four quarters {money(s.spend_next_four.current)}), savings vs all on-demand "
        f"{money(s.savings_quarter.current)}, effective savings rate {pct(s.savings_rate.current)}; "
        f"{len(s.approve)} commitment(s) to approve, liability {money(s.approve_liability)} "
        f"({money(s.approve_in_horizon)} in the plan's horizon)."
    )
    for message in messages:
        err_console.print(message)
    console.print(f"Wrote {len(written)} files to {out}/; open {out / 'report.html'}")
