"""The finance report's plan-sweep section: when the plan folder holds a sweep (`qm plan --sweep / --draws`), the
spread of the planned cost per quarter across its scenarios and the commitments bought across them.

The figures come from the sweep's contract, quartermaster/sweep_result.py (`cost_bands`, `robust_commitments`);
this module only lays them out as report Tables (`sweep_cost`, `sweep_commitments`), which every renderer shows
like the others, and the HTML in its own partial (templates/finance_sweep.html.j2).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from decimal import Decimal
from pathlib import Path

from quartermaster.errors import UsageError
from quartermaster.plan_contract import PlanResult
from quartermaster.plan_figures import horizon_cost, quarter_cost, to_cent
from quartermaster.reports.finance.build import ReportData
from quartermaster.reports.finance.table import Column, Row, Table
from quartermaster.sweep_result import PLANNED, Sweep, cost_bands, load_sweep, robust_commitments
from quartermaster.units import Quarter

TABLES = ("sweep_cost", "sweep_commitments")


@dataclass(frozen=True)
class SweepCostRow(Row):
    """A quarter's (or the horizon's) planned cost across the sweep: with demand draws its percentiles (`low`,
    `mid`, `high` = 10th, 50th, 90th), over a grid of what-ifs alone its lowest and highest (`mid` unused)."""

    quarter: str
    """quarter: a quarter, or `total` for the horizon: text, not a `Quarter`."""
    scenarios: int
    low: Decimal
    mid: Decimal | None
    high: Decimal
    plan: Decimal | None


@dataclass(frozen=True)
class Spread:
    """How a sweep's spread is told: percentiles of draws, or a grid's range."""

    quarter: str
    """quarter: a quarter, or `total` for the horizon: text, not a `Quarter`."""
    scenarios: int
    low: Decimal
    mid: Decimal | None
    high: Decimal


def spread(sweep: Sweep) -> tuple[list[Spread], tuple[str, str | None, str]]:
    """Per quarter, then the horizon (quarter `total`): the planned cost across the scenarios with a plan, and the
    labels of its three figures. "p90" is kept for demand's 90th percentile: a sweep with demand draws gives the
    10th, 50th and 90th percentile "of N draws"; a grid of what-ifs alone, whose values are no sample, gives its
    lowest and highest."""
    bands = cost_bands(sweep)
    if sweep.spec.draws:
        n = bands[0].scenarios if bands else 0
        labels = (f"10th percentile of {n} draws", f"median of {n} draws", f"90th percentile of {n} draws")
        return [Spread(b.quarter, b.scenarios, b.p10_usd, b.p50_usd, b.p90_usd) for b in bands], labels
    rows = [r for r in sweep.costs.to_pylist() if r["outcome"] in PLANNED]
    by_quarter: dict[str, list[Decimal]] = {}
    for r in rows:
        by_quarter.setdefault(r["quarter"], []).append(Decimal(r["cost_usd"]))
    totals = [Decimal(v) for v in {r["scenario"]: r["expected_cost_usd"] for r in rows}.values()]
    groups = [*sorted(by_quarter.items()), *([("total", totals)] if totals else [])]
    return [Spread(q, len(v), min(v), None, max(v)) for q, v in groups], ("lowest", None, "highest")


@dataclass(frozen=True)
class SweepCommitmentRow(Row):
    site: str
    machine: str
    pricing_model: str
    term_months: int
    bought_in: int
    share: Decimal
    min_nodes: int
    max_nodes: int
    first_quarter: Quarter
    plan_nodes: int


def with_sweep(data: ReportData, plan_dir: Path, plan: PlanResult) -> ReportData:
    """The report with the sweep's tables added when `plan_dir` holds a sweep of this plan; unchanged without one.
    A sweep written with another plan (its recorded expected cost differs) is refused: rerun `qm plan --sweep`."""
    sweep = load_sweep(plan_dir)
    if sweep is None:
        return data
    recorded = sweep.meta.get("plan_expected_cost_usd")
    if recorded is None or plan.expected_cost_usd is None or Decimal(recorded) != plan.expected_cost_usd:
        raise UsageError(
            f"--plan {plan_dir}: sweep.json was written with another plan (expected cost {recorded}, "
            f"plan.json {plan.expected_cost_usd}); rerun `qm plan --sweep ... --out {plan_dir}`."
        )
    return replace(data, tables=(*data.tables, *sweep_tables(sweep, plan)))


def sweep_tables(sweep: Sweep, plan: PlanResult) -> tuple[Table, Table]:
    """The cost spread per quarter (with the horizon's as the total row) and the purchases across scenarios."""
    bands, (low, mid, high) = spread(sweep)
    outcomes = {r["scenario"]: r["outcome"] for r in sweep.costs.select(["scenario", "outcome"]).to_pylist()}
    left_out = sum(o not in PLANNED for o in outcomes.values())
    what = _described(sweep, len(outcomes))

    def row(band: Spread, plan_usd: Decimal | None, label: str | None = None) -> SweepCostRow:
        return SweepCostRow(
            label or band.quarter,
            band.scenarios,
            to_cent(band.low),
            to_cent(band.mid),
            to_cent(band.high),
            plan_usd,
        )

    quarters = [b for b in bands if b.quarter != "total"]
    total = next((b for b in bands if b.quarter == "total"), None)
    cost = Table(
        name="sweep_cost",
        title="Planned cost across the sweep's scenarios (basis: planned)",
        columns=(
            Column("quarter", "Quarter"),
            Column("scenarios", "Scenarios", "int"),
            Column("low", low[0].upper() + low[1:], "money"),
            *((Column("mid", mid[0].upper() + mid[1:], "money"),) if mid else ()),
            Column("high", high[0].upper() + high[1:], "money"),
            Column("plan", "This plan", "money"),
        ),
        rows=tuple(row(b, quarter_cost(plan, Quarter(b.quarter))) for b in quarters),
        total=None if total is None else row(total, horizon_cost(plan), "Horizon"),
        note=(
            f"{what}. Each scenario is planned on its own; "
            + (
                "the percentiles are across the scenarios with a plan, interpolated between them, per quarter and "
                "for the horizon (whose percentiles are not the sums of the quarters'). "
                if mid
                else "a grid of what-ifs is no sample, so it shows the lowest and highest planned cost, per quarter "
                "and for the horizon. "
            )
            + "This plan: the forecast as written (the spend table's figures). The risk section's \"at p90 demand\" "
            "is another figure: every team at its 90th-percentile demand all quarter, bought on demand."
            + (
                f" {left_out} scenario(s) without a plan are left out (sweep.csv has their outcome)."
                if left_out
                else ""
            )
        ),
    )
    in_plan: dict[tuple[str, str, str, int], int] = {}
    for p in plan.purchase_schedule:
        key = (p.site, p.machine, p.pricing_model, p.term_months)
        in_plan[key] = in_plan.get(key, 0) + p.nodes
    commitments = Table(
        name="sweep_commitments",
        title="Commitments across the sweep's scenarios",
        columns=(
            Column("site", "Site"),
            Column("machine", "Machine"),
            Column("pricing_model", "Model"),
            Column("term_months", "Term (months)", "int"),
            Column("bought_in", "Bought in (scenarios)", "int"),
            Column("share", "Share of scenarios", "pct"),
            Column("min_nodes", "Nodes, fewest", "int"),
            Column("max_nodes", "Nodes, most", "int"),
            Column("first_quarter", "First start"),
            Column("plan_nodes", "Nodes in this plan", "int"),
        ),
        rows=tuple(
            SweepCommitmentRow(
                c.site,
                c.machine,
                c.pricing_model,
                c.term_months,
                c.bought_in,
                Decimal(c.bought_in) / Decimal(c.scenarios),
                c.min_nodes,
                c.max_nodes,
                c.first_quarter,
                in_plan.get((c.site, c.machine, c.pricing_model, c.term_months), 0),
            )
            for c in robust_commitments(sweep)
        ),
        note="Nodes bought over the horizon per kind of purchase, among the scenarios that buy it; one bought in "
        "every scenario is robust to the sweep's what-ifs and draws.",
    )
    return cost, commitments


def _described(sweep: Sweep, scenarios: int) -> str:
    """`24 scenarios: demand -10%, 0, +10% x 8 demand draws (seed 7)`."""
    parts = [f"{target} {', '.join(values)}" for target, values in sweep.spec.grid]
    if sweep.spec.draws:
        parts.append(f"{sweep.spec.draws} demand draws (seed {sweep.spec.seed})")
    return f"{scenarios} scenarios: " + " x ".join(parts)
