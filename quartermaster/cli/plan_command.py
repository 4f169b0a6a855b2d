"""`qm plan [PATH]`: size commitments against demand (the reservation planner) and write the plan."""

from __future__ import annotations

import datetime as dt
import math
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table

from quartermaster.bounds import MAX_DRAWS, MAX_SOLVE_SECONDS, MAX_SWEEP_POINTS
from quartermaster.cli.command_support import (
    check_output,
    console,
    err_console,
    finite,
    inventory_argument,
    load_or_exit,
    object_name_option,
    quarter_option,
)
from quartermaster.errors import ProblemsFound, UsageError
from quartermaster.pricing import DEFAULT_IDLE_POLICY, cents, decimal_of, format_pct, format_usd
from quartermaster.units import Quarter

if TYPE_CHECKING:
    from quartermaster.model import Inventory
    from quartermaster.plan_contract import PlanResult
    from quartermaster.planner import PlanOptions
    from quartermaster.sweep_result import SweepSpec


def command(
    path: Path = inventory_argument(),
    horizon: str = typer.Option("8q", help="Quarters to plan, e.g. 8q or 2y."),
    start: Quarter | None = typer.Option(
        None,
        parser=quarter_option,
        help="First quarter, e.g. 2027Q1; default: the quarter in progress where the usage history ends, else the "
        "first with demand.",
    ),
    as_of: str | None = typer.Option(
        None,
        help="The day the actuals end, e.g. 2026-10-16: usage before it is metered (the quarter in progress is "
        "charged as qm meter charges it), after it is forecast and planned, and purchases can start that day; "
        "default: where the usage history ends.",
    ),
    scenario: str | None = typer.Option(None, help="Plan for one scenario of policy.scenarios only."),
    what_if: list[str] = typer.Option(
        [], "--what-if", help="demand=+20%, price:<site>/<machine>=-10%, lose-site=<site> (repeatable)."
    ),
    explain_infeasible: bool = typer.Option(False, help="Let business rules give at a penalty and report which did."),
    from_usage: bool = typer.Option(False, help="Derive demand from the usage history instead of demand.csv."),
    min_utilisation: float | None = typer.Option(
        None, parser=finite(0, 1), help="Least expected utilisation of new commitments (0-1)."
    ),
    idle: str = typer.Option(
        DEFAULT_IDLE_POLICY,
        help="How committed hours nobody uses are shared between teams: "
        "proportional, even, or owner:TEAM (as qm meter).",
    ),
    solver: str = typer.Option("highs", help="highs (default) or cbc."),
    time_limit: float = typer.Option(
        120.0,
        parser=finite(0, MAX_SOLVE_SECONDS),
        help="Time limit in seconds of each solver run: the LP relaxation and the rounded re-solve each get all of "
        "it, branch-and-bound (when needed) what is left of it, at least 1 s (0-86400).",
    ),
    gap: float = typer.Option(1e-3, parser=finite(0, 1), help="Relative optimality gap at which to stop (0-1)."),
    write_lp: Path | None = typer.Option(None, help="Also write the model as an LP file."),
    out: Path = typer.Option(Path("out/plan"), help="Folder for the plan (JSON + CSV)."),
    propose: bool = typer.Option(
        False,
        help="Write the proposed quotas into the inventory's team files "
        "(comments and layout kept), for the flavors where they fit today's pools.",
    ),
    force: bool = typer.Option(False, help="With --propose: edit team files even if they have uncommitted changes."),
    sweep: list[str] = typer.Option(
        [],
        "--sweep",
        help="Also plan a what-if grid: a what-if target and its values, "
        "e.g. 'demand=-10%,0,+10%' (repeatable: the cartesian product).",
    ),
    draws: int = typer.Option(
        0, max=MAX_DRAWS, help="Also plan this many demand draws from the forecast's quantiles (x the grid)."
    ),
    seed: int = typer.Option(0, help="Seed of the demand draws: the same seed, the same draws."),
    backend: str = typer.Option(
        "processes",
        help="Where the sweep's scenarios are solved: processes (every core), "
        "serial, or ray (the `ray` extra; RAY_ADDRESS for a cluster).",
    ),
    workers: int | None = typer.Option(None, help="Sweep workers; default: one per core."),
    rayjob: str | None = typer.Option(
        None,
        metavar="TEAM",
        help="Print the sweep as a KubeRay RayJob queued to "
        "TEAM's LocalQueue (Kueue) instead of solving it; needs --image.",
    ),
    image: str | None = typer.Option(
        None, help="With --rayjob: the image (Quartermaster with the ray extra, the inventory at /inventory)."
    ),
    results_claim: str | None = typer.Option(
        None,
        parser=object_name_option,
        metavar="PVC",
        help="With --rayjob: the PersistentVolumeClaim in the team's namespace that the plan is written to.",
    ),
) -> None:
    """Plan what to commit to, where and when; print a summary and write the plan to --out."""
    from quartermaster.plan_contract import SOLVERS

    chosen = next((s for s in SOLVERS if s == solver), None)
    if chosen is None:
        raise UsageError(f"--solver must be highs or cbc (got {solver}).")
    check_output(out, "--out", path, folder=True)  # before solving, not after
    if write_lp is not None:
        check_output(write_lp, "--write-lp", path, folder=False)
    # imported when run (after the cheap checks), so that `qm --help` and a usage mistake stay fast
    from quartermaster.planner import PlanInputError, PlanOptions, plan
    from quartermaster.planner import sweep as sweeps
    from quartermaster.planner.options import parse_horizon
    from quartermaster.sweep_result import clear as clear_sweep

    inventory = load_or_exit(path).inventory
    try:
        day = _day(as_of)
        spec = sweeps.spec_of(sweep, draws, seed)
        scenarios = math.prod(len(values) for _, values in spec.grid) * max(1, spec.draws)
        if scenarios > MAX_SWEEP_POINTS:
            raise UsageError(
                f"--sweep and --draws make {scenarios:,} scenarios, each one solve; at most {MAX_SWEEP_POINTS:,} "
                "are planned at once. Sweep fewer values or draws."
            )
        options = PlanOptions(
            horizon=parse_horizon(horizon),
            start=start,
            as_of=day,
            scenario=scenario,
            what_if=tuple(what_if),
            explain_infeasible=explain_infeasible,
            from_usage=from_usage,
            min_utilisation=min_utilisation,
            idle_policy=idle,
            solver=chosen,
            time_limit_s=time_limit,
            gap_rel=gap,
            credit_shares=(0.0, 0.5),
        )
        sweeps.check(inventory, options, spec, backend, workers)  # before planning, not after
        if rayjob is not None:
            _print_rayjob(inventory, rayjob, image, results_claim, spec, options)
            return
        with err_console.status("Planning") as status:
            result = plan(inventory, options, write_lp=write_lp, progress=lambda msg: status.update(msg))
    except PlanInputError as exc:
        raise PlanInputError(f"{path}: {exc}") from None
    written = result.write(out)
    _print(result)
    _print_bridge(inventory, result)
    console.print(f"Wrote {len(written)} files to {out}/" + (f"; model in {write_lp}" if write_lp else ""))
    if (spec.grid or spec.draws) and result.has_plan and result.outcome != "infeasible":
        _sweep(path, inventory, options, spec, result, backend, workers, out)
    elif clear_sweep(out):  # no sweep, or none run for a plan that has none
        console.print(f"Removed the previous sweep from {out}/ (this plan has none).")
    if not result.has_plan or result.outcome == "infeasible":
        if result.outcome == "no-solution":
            raise ProblemsFound(f"the solver ended without a plan ({result.status}); see above.")
        raise ProblemsFound(f"no plan satisfies the inventory ({result.outcome}); see above.")
    if propose:
        _propose(path, inventory, result, force)


def _print_rayjob(
    inventory: Inventory, team: str, image: str | None, claim: str | None, spec: SweepSpec, options: PlanOptions
) -> None:
    """The sweep as a RayJob on stdout (`| kubectl apply -f -`): the plan's options and the sweep as arguments,
    queued to the team's first queue and requesting its accelerators (`admission.team_target`)."""
    from quartermaster.modules.kueue.admission import team_target
    from quartermaster.planner.rayjob import rayjob
    from quartermaster.yamlwriter import dump_yaml

    if image is None:
        raise UsageError(
            "--rayjob needs --image: the image that runs the sweep (Quartermaster with the ray extra "
            "and the inventory at /inventory)."
        )
    if not (spec.grid or spec.draws):
        raise UsageError("--rayjob prints a sweep; give it --sweep or --draws.")
    args = [
        "--horizon",
        f"{options.horizon}q",
        *(["--start", options.start] if options.start else []),
        *(["--as-of", str(options.as_of)] if options.as_of else []),
        *(["--scenario", options.scenario] if options.scenario else []),
        *[a for w in options.what_if for a in ("--what-if", w)],
        *[a for t, values in spec.grid for a in ("--sweep", f"{t}={','.join(values)}")],
        *(["--draws", str(spec.draws), "--seed", str(spec.seed)] if spec.draws else []),
    ]
    target = team_target(inventory, team, dt.datetime.now(dt.UTC)) if team in inventory.team_by_name else None
    job = rayjob(inventory, team, args, image=image, target=target, results_claim=claim)
    print(dump_yaml(job), end="")


def _sweep(
    path: Path,
    inventory: Inventory,
    options: PlanOptions,
    spec: SweepSpec,
    result: PlanResult,
    backend: str,
    workers: int | None,
    out: Path,
) -> None:
    """Solve the sweep's scenarios, write them beside the plan and print the spread of the planned cost."""
    from quartermaster.planner import PlanInputError
    from quartermaster.planner.sweep import run_sweep
    from quartermaster.reports.finance.sweep_section import spread
    from quartermaster.sweep_result import PLANNED

    total = len(spec.scenarios())
    try:
        with err_console.status(f"Sweep: 0 of {total} scenarios solved") as status:
            done = run_sweep(
                inventory,
                options,
                spec,
                backend=backend,
                workers=workers,
                base=result,
                progress=lambda n, of: status.update(f"Sweep: {n} of {of} scenarios solved"),
            )
    except PlanInputError as exc:
        raise PlanInputError(f"{path}: {exc}") from None
    written = done.write(out)
    outcomes = Counter({r["scenario"]: r["outcome"] for r in done.costs.to_pylist()}.values())
    bands, (low, mid, high) = spread(done)
    console.print(
        f"[bold]Sweep[/]: {total} scenarios ({', '.join(f'{n} {o}' for o, n in sorted(outcomes.items()))})"
        f" on {done.meta['backend']} x {done.meta['workers']} in {done.meta['wall_seconds']:.1f} s."
    )
    if bands:
        b = bands[-1]
        console.print(
            f"Expected cost over the horizon (planned), across the {b.scenarios} scenarios with a plan: "
            f"{low} {format_usd(b.low)}"
            + ("" if mid is None or b.mid is None else f", {mid} {format_usd(b.mid)}")
            + f", {high} {format_usd(b.high)}."
        )
    if sum(n for o, n in outcomes.items() if o not in PLANNED):
        console.print("Scenarios without a plan are left out of the distribution (outcome in sweep.csv).")
    console.print(f"Wrote {len(written)} files to {out}/ (sweep.parquet, sweep.csv, sweep_purchases.*, sweep.json)")


def _propose(path: Path, inventory: Inventory, result: PlanResult, force: bool) -> None:
    """Write the proposed quotas that fit today's pools into the team files; say which flavors were left."""
    # imported when run, so that `qm --help` stays fast
    from quartermaster.cli.quota_command import write_quotas
    from quartermaster.planner.propose import proposed_changes

    changes, skipped = proposed_changes(inventory, result.proposed_quotas)
    for reason in skipped:
        console.print(f"not proposed: {reason}")
    if changes:
        write_quotas(path, changes, force)
    else:
        console.print("Proposed quotas: nothing to change.")


def solve_summary(r: PlanResult) -> str:
    """The outcome, solver, time and gap of a plan. CBC gives no MIP bound, so its gap is to the LP relaxation
    (an optimal CBC plan may sit a few percent above it) and is named so."""
    gap = ""
    if r.gap is not None:
        gap = f", gap to the LP bound {r.gap:.3%}" if r.solver == "cbc" else f", gap {r.gap:.3%}"
    return f"{r.outcome} ({r.solver}, {r.solve_seconds:.1f} s{gap})"


def _print(r: PlanResult) -> None:
    from quartermaster.plan_figures import horizon_cost, horizon_on_demand, purchase_liability

    if r.relaxed_rules:
        head = "No plan satisfies every business rule" if r.outcome == "infeasible" else "Business rules gave"
        console.print(f"[bold red]{head}[/]; these had to give (named slack variables):")
        for x in r.relaxed_rules:
            console.print(f"  {x.rule} at {x.where}: {x.amount:,.2f} {x.unit} ({x.variable})", markup=False)
    if r.objective_usd is None:
        advice = "Rerun with --explain-infeasible to see which rules cannot hold together."
        if r.outcome == "no-solution":  # the solver stopped (time limit, solver error): no rule was shown to fail
            advice = "No rule was shown to fail."
        note = f"{r.note[0].upper()}{r.note[1:]}. " if r.note else ""
        console.print(f"[bold red]No plan[/]: the solver ended `{r.outcome}` ({r.solver}, {r.status}). {note}{advice}")
        return
    console.print(
        f"[bold]Plan {r.quarters[0]}..{r.quarters[-1]}[/]: {solve_summary(r)}. "
        f"Expected cost (planned) {format_usd(horizon_cost(r))} vs "
        f"{format_usd(horizon_on_demand(r))} all on-demand (savings rate "
        f"{format_pct(r.savings_rate or 0)})."
    )
    if r.purchase_schedule:
        liability, in_horizon = purchase_liability(r)
        console.print(
            f"New commitments: {format_usd(liability)} liability over their whole "
            f"terms, {format_usd(in_horizon)} of it inside the horizon (planned); "
            f"the capacity they leave after it is credited {format_usd(r.post_horizon_credit_usd or 0)} "
            "(the on-demand cost it avoids, as far as demand uses it)."
        )
    for share in r.credit_sensitivity:
        console.print(
            f"  with {share.credit_share:.0%} of the post-horizon credit: horizon cost "
            f"{format_usd(share.expected_cost_usd)}, "
            f"{share.first_quarter} purchases' liability {format_usd(share.first_quarter_liability_usd)} (planned)."
        )
    for note in r.notes:
        console.print(f"  note: {note}", markup=False)
    for note in r.baseline_stand_ins:
        console.print(f"  all-on-demand baseline: {note}", markup=False)
    buys = Table(title="Purchase schedule", title_justify="left")
    money_columns = ("upfront", "monthly", "liability")
    for c in ("start", "site", "machine", "model", "term", "nodes", "accelerators", *money_columns):
        buys.add_column(c, justify="right" if c in ("term", "nodes", "accelerators", *money_columns) else "left")
    for p in r.purchase_schedule:  # a capacity block: its dates, and its whole price paid up front
        term = f"{p.term_months} mo" if p.term_months else f"{(p.end - p.start).days // 7} wk"
        buys.add_row(
            str(p.start),
            p.site,
            p.machine,
            p.pricing_model,
            term,
            str(p.nodes),
            str(p.accelerators),
            format_usd(p.upfront_usd) if p.upfront_usd else "-",
            format_usd(p.monthly_usd) if p.monthly_usd else "-",
            format_usd(p.total_liability_usd),
        )
    console.print(buys if len(r.purchase_schedule) else "No new commitments.")
    now = [p for p in r.purchase_schedule if p.start_quarter == r.first_open_quarter]
    if now:
        console.print(
            f"To approve now: {len(now)} purchase(s) starting in {r.first_open_quarter} (from "
            f"{min(p.start for p in now)}), liability {format_usd(sum(cents(p.total_liability_usd) for p in now))}; "
            f"{len(r.purchase_schedule) - len(now)} in later quarters."
        )
    kpis = Table(title="Per quarter", title_justify="left")
    for c in ("quarter", "cost", "all on-demand", "savings rate", "coverage $", "utilisation $", "unmet acc-h"):
        kpis.add_column(c, justify="left" if c == "quarter" else "right")
    for k in r.kpis:
        kpis.add_row(
            k.quarter,
            format_usd(k.cost_usd),
            format_usd(k.on_demand_equivalent_usd),
            format_pct(decimal_of(k.effective_savings_rate)),
            format_pct(decimal_of(k.coverage)),
            format_pct(decimal_of(k.utilisation)),
            f"{k.unmet_accelerator_hours:,.0f}",
        )
    console.print(kpis)
    for q in r.quarters:
        closed = r.closed_in(q)
        if closed:
            console.print(
                f"{q}: {format_usd(sum(c.usd for c in closed))} metered to "
                f"{r.actuals_until[:16].replace('T', ' ') if r.actuals_until else ''} (closed: "
                f"{', '.join(dict.fromkeys(c.period for c in closed))}, as qm meter charges it), the rest planned."
            )
    if r.budget_status:
        _print_budget_status(r)
    above = r.quotas_above_pool()
    if above:
        console.print(
            "Proposed quotas above their pool (fits_pool in proposed_quotas.csv): "
            + "; ".join(f"{f} {need} accelerators against {size}" for f, need, size in above)
            + ".",
            markup=False,
        )
    if len(r.unmet_demand):
        console.print(f"[bold yellow]Unmet demand[/] in {len(r.unmet_demand)} team-quarters (see unmet_demand.csv).")


def _day(text: str | None) -> dt.date | None:
    """--as-of as a date; a usage error naming the form otherwise."""
    if text is None:
        return None
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise UsageError(f"--as-of must be a day like 2026-11-15 (got {text!r}).") from None


def _print_budget_status(r: PlanResult) -> None:
    """The plan's budget status (`budget_status.budget_status`, basis planned): the rows the finance report shows."""
    from quartermaster.reports.filters import pct

    table = Table(title="Budget status by cost centre and quarter (basis: planned)", title_justify="left")
    for c in ("cost centre", "quarter", "charge", "budget", "of budget"):
        table.add_column(c, justify="left" if c in ("cost centre", "quarter") else "right")
    for b in r.budget_status:
        table.add_row(
            b.cost_center,
            b.quarter,
            format_usd(b.usd),
            format_usd(b.budget_usd),
            pct(b.used),
        )
    console.print(table)
    over = [b for b in r.budget_status if b.over]
    console.print(
        f"Budgets (planned: each cost centre's teams' use plus idle share): {len(r.budget_status) - len(over)} of "
        f"{len(r.budget_status)} within."
        + "".join(f" {b.cost_center} {b.quarter} over by {format_usd(b.variance)}." for b in over)
        + (f" {OVER_WHY}" if over else "")
    )


OVER_WHY = (
    "(The plan caps each cost centre's use at its budget; its share of idle capacity, which depends on what the plan "
    "buys, comes on top and can take the charge over.)"
)
"""Why a budget the plan kept can show as over: printed after the budgets over (docs/reference/qm-plan.md)."""


def _print_bridge(inventory: Inventory, r: PlanResult) -> None:
    """From the last metered month, scaled to a quarter, to the plan's first quarter (`reports.cost_bridge`)."""
    if not r.has_plan or not inventory.usage:
        return
    from quartermaster.reports.cost_bridge import build_bridge
    from quartermaster.reports.finance.tables.plan_vs_actual import usage_months

    records, months = usage_months(inventory, None)
    lines = build_bridge(inventory, r, records, months[-1]) if months else None
    if not lines:
        return
    bridge = Table(title="From actuals to the plan (metered -> planned)", title_justify="left")
    bridge.add_column("item")
    bridge.add_column("USD", justify="right")
    for i, line in enumerate(lines):
        shown = (
            format_usd(line.usd) if i in (0, len(lines) - 1) else ("+" if line.usd > 0 else "") + format_usd(line.usd)
        )
        bridge.add_row(line.item, shown)
    console.print(bridge)
