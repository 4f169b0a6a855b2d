"""The quarterly planning report as data: every figure computed once, as Decimal money with past / current / delta;
renderers only format (STYLE habit 13). Each table is built by its own module under `tables/`; money is rounded by
the one rule of `quartermaster.plan_figures`.

Sources: the planner's result (`PlanResult`), the inventory (demand forecast, pools, prices, budgets), optionally a
previous plan and usage records. FinOps measures: savings vs all on-demand = on-demand equivalent - cost; effective
savings rate = 1 - cost / on-demand equivalent; commitment coverage = on-demand-equivalent spend covered by
commitments / all on-demand-equivalent spend; commitment utilisation = commitment spend used / commitment spend (both
in dollars; the accelerator-hour versions beside them, labelled); budget variance = forecast - budget.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from quartermaster.errors import ProblemsFound
from quartermaster.plan_figures import (
    centre_costs,
    purchase_liability,
    quarter_cost,
    quarters_cost,
    quarters_on_demand,
    to_cent,
)
from quartermaster.pricing import shown_quantity
from quartermaster.reports.finance.chart_data import report_charts
from quartermaster.reports.finance.table import CENTS, ZERO, Amount, Chart, Row, Table
from quartermaster.reports.finance.tables.approve import Commitment, approve_table
from quartermaster.reports.finance.tables.break_even import break_even_table
from quartermaster.reports.finance.tables.bridge import bridge_table
from quartermaster.reports.finance.tables.budgets import budget_table
from quartermaster.reports.finance.tables.capital import capital_tables, payment_schedule
from quartermaster.reports.finance.tables.caveats import caveats_table
from quartermaster.reports.finance.tables.changes import changes_tables
from quartermaster.reports.finance.tables.coverage import coverage_table
from quartermaster.reports.finance.tables.demand import demand_vs_capacity
from quartermaster.reports.finance.tables.expiry import ExpiryRow, expiry_table
from quartermaster.reports.finance.tables.payments import purchase_payments
from quartermaster.reports.finance.tables.placement_tables import (
    credit_table,
    moves_table,
    proposed_quotas_table,
    utilisation_table,
)
from quartermaster.reports.finance.tables.plan_vs_actual import plan_vs_actual
from quartermaster.reports.finance.tables.purchase_schedule import purchase_schedule
from quartermaster.reports.finance.tables.risk import cost_band, p90_exposure, risk_table
from quartermaster.reports.finance.tables.routing import routing_table
from quartermaster.reports.finance.tables.source_trail import source_trail
from quartermaster.reports.finance.tables.spend import spend_by_quarter
from quartermaster.reports.finance.tables.table_support import commitment_term, ratio
from quartermaster.reports.finance.tables.teams import by_team
from quartermaster.reports.finance.tables.unmet import unmet_table
from quartermaster.units import Quarter, next_quarters

if TYPE_CHECKING:
    import pandas as pd

    from quartermaster.model import Inventory
    from quartermaster.plan_contract import PlanResult


@dataclass(frozen=True)
class NewPurchases:
    """All new purchases of the plan: what they bind to over their whole terms and what of it falls inside the
    horizon, to the cent as `qm plan` prints them; the credit for the capacity they leave after the horizon (None:
    a plan written before the planner recorded it)."""

    liability: Decimal
    in_horizon: Decimal
    post_horizon_credit: Decimal | None


@dataclass(frozen=True)
class InProgress:
    """The quarter in progress (the plan's first, when its actuals end inside it): its spend, its closed months as
    `qm meter` charged them to `metered_until` and the rest planned; and the months metered so far against a plan's
    figure for them (plan vs actual's rows for the quarter: the previous plan's where given; None when none)."""

    quarter: Quarter
    metered_until: str
    spend: Decimal
    months: str | None
    planned_to_date: Decimal | None
    metered_to_date: Decimal | None
    compared_with: str | None = None
    """compared_with: whose figure planned_to_date is: `previous plan` (its forecast) or `this plan` (its closed
    months, as metered)."""

    @property
    def variance_to_date(self) -> Decimal | None:
        if self.planned_to_date is None or self.metered_to_date is None:
            return None
        return self.metered_to_date - self.planned_to_date


@dataclass(frozen=True)
class Summary:
    quarter: Quarter
    next_four: tuple[Quarter, ...]
    spend_quarter: Amount
    spend_next_four: Amount
    on_demand_quarter: Amount
    savings_quarter: Amount
    savings_next_four: Amount
    savings_rate: Amount
    coverage: Amount
    utilisation: Amount
    approve: tuple[Commitment, ...]
    approve_liability: Decimal
    approve_monthly: Decimal
    """approve_monthly: the monthly payments of the commitments to approve, each during its own term."""
    approve_upfront: Decimal
    """approve_upfront: what the purchases to approve cost when bought (capacity blocks, upfront fees)."""
    approve_in_horizon: Decimal
    """approve_in_horizon: the part of approve_liability inside the plan's horizon."""
    purchases: NewPurchases
    p90_cost: Decimal
    unmet_hours: Decimal
    budget_total: Decimal | None
    budget_variance: Decimal | None
    expiry_warnings: tuple[ExpiryRow, ...] = ()
    """expiry_warnings: the rows of the commitment expiry table that cross its threshold."""
    budget_centres: tuple[int, int] = (0, 0)
    """budget_centres: (cost centres with a budget this quarter, cost centres with planned cost): the headline
    budget figure covers only the first."""
    approve_capital: Decimal = CENTS
    """approve_capital: the capital value of the on-prem purchases to approve (table capital_purchases)."""
    approve_depreciation: Decimal = CENTS
    """approve_depreciation: their depreciation a month over their life."""
    in_progress: InProgress | None = None
    """in_progress: the quarter in progress, which the bridge and plan vs actual explain (in_progress())."""


@dataclass(frozen=True)
class ReportData:
    """Everything the quarterly planning report shows."""

    title: str
    quarter: Quarter
    plan_outcome: str
    plan_quarters: tuple[Quarter, ...]
    has_previous: bool
    summary: Summary
    tables: tuple[Table, ...]
    charts: tuple[Chart, ...] = field(default=())
    what_if: tuple[str, ...] = ()
    """what_if: the plan's what-if overrides (`demand=+20%`); empty for a plan of the forecast as written."""

    def table(self, name: str) -> Table:
        return next(t for t in self.tables if t.name == name)

    def chart(self, name: str) -> Chart:
        return next(c for c in self.charts if c.name == name)

    def to_json(self, generated: dt.date | None = None) -> str:
        """Sorted, indented JSON; money as decimal strings; `generated` the day the report was written (None:
        not recorded, as in golden files)."""

        def plain(obj: Any) -> Any:
            if isinstance(obj, (Decimal, dt.date)):
                return str(obj)
            if isinstance(obj, Amount):
                return plain(obj.to_dict())
            if isinstance(obj, Table):
                return plain(obj.to_dict())
            if isinstance(obj, Row):
                return {k: plain(obj[k]) for k in obj.cell_keys()}
            if hasattr(obj, "__dataclass_fields__"):
                return {k: plain(getattr(obj, k)) for k in obj.__dataclass_fields__}
            if isinstance(obj, dict):
                return {str(k): plain(v) for k, v in obj.items()}
            if isinstance(obj, (list, tuple)):
                return [plain(v) for v in obj]
            return obj

        return json.dumps({**plain(self), "generated": plain(generated)}, indent=2, sort_keys=True) + "\n"


def in_progress(plan: PlanResult, quarter: Quarter, vs_actual: Table) -> InProgress | None:
    """The quarter in progress, the plan's first when its actuals end inside it (None otherwise): its spend (the
    closed months as metered, the rest planned) and the months metered so far against the previous plan's figure
    for them where plan vs actual has one, else this plan's (its closed months: the metered figure)."""
    first = plan.quarters[0] if plan.quarters else None
    if plan.actuals_until is None or first is None or not plan.closed_in(first):
        return None
    rows = [r for r in vs_actual.rows if r["quarter"] == first and r["plan"] == "previous plan"]
    rows = rows or [r for r in vs_actual.rows if r["quarter"] == first and r["plan"] == "this plan"]
    return InProgress(
        first,
        plan.actuals_until[:10],
        quarter_cost(plan, first),
        ", ".join(sorted({r["months"] for r in rows})) or None,
        sum((r["planned"] for r in rows), CENTS) if rows else None,
        sum((r["metered"] for r in rows), CENTS) if rows else None,
        rows[0]["plan"] if rows else None,
    )


def build_report(
    inventory: Inventory,
    plan: PlanResult,
    quarter: Quarter | None = None,
    previous: PlanResult | None = None,
    revision: str | None = None,
    usage: pd.DataFrame | None = None,
) -> ReportData:
    """The report for `quarter` (default: the plan's first quarter open to purchases, after a quarter in progress)
    of a solved plan; `revision` is the
    inventory's git revision (`sources.inventory_revision`), None when not known; `usage`: checked usage records
    (`metering.read_usage`, e.g. pulled from Prometheus) for plan vs actual in place of the inventory's own."""
    if not plan.has_plan:
        raise ProblemsFound(f"the plan has no solution (outcome `{plan.outcome}`); fix the plan before reporting on it")
    quarters = list(plan.quarters)
    quarter = quarter or plan.first_open_quarter or quarters[0]
    if quarter not in quarters:
        raise ProblemsFound(f"the plan covers {quarters[0]}..{quarters[-1]}, not {quarter}; pick a quarter inside it")
    four_in = [q for q in next_quarters(quarter, 4) if q in quarters]
    before = previous if previous is not None and previous.has_plan else None

    def amount(fn: Callable[[PlanResult], Decimal]) -> Amount:
        return Amount(fn(plan), fn(before) if before is not None else None)

    def kpi_ratio(name: str) -> Callable[[PlanResult], Decimal]:
        def of(p: PlanResult) -> Decimal:
            k = p.kpi(quarter)
            return ratio(getattr(k, name)) if k is not None else ZERO

        return of

    payments = purchase_payments(plan)
    approve_rows = [r for r in plan.purchase_schedule if r.start_quarter == quarter]
    approve = tuple(
        Commitment(
            r.site,
            r.machine,
            r.pricing_model,
            commitment_term(r),
            r.nodes,
            r.accelerators,
            paid.payment,
            paid.upfront,
            paid.monthly,
            paid.over_term,
            paid.liability,
            paid.in_horizon,
        )
        for r, paid in zip(plan.purchase_schedule, payments, strict=True)
        if r.start_quarter == quarter
    )
    tables: list[Table] = [
        source_trail(inventory, plan, revision),
        bridge_table(inventory, plan, usage),
        approve_table(approve),
        break_even_table(inventory, plan, approve_rows),
        caveats_table(plan),
    ]
    spend = spend_by_quarter(plan, quarters)
    tables.append(spend)
    teams, centres = by_team(inventory, plan, previous, quarter)
    tables += [centres, teams, plan_vs_actual(inventory, plan, previous, usage)]
    coverage = coverage_table(plan, quarters)
    expiry = expiry_table(inventory, spend, coverage)
    capital, assets, depreciation = capital_tables(inventory, plan)
    tables += [coverage, expiry, purchase_schedule(plan, payments), payment_schedule(plan)]
    tables += [capital, assets, depreciation]
    tables += [demand_vs_capacity(inventory, plan, quarter), routing_table(inventory, plan), moves_table(plan)]
    tables.append(proposed_quotas_table(inventory, plan))
    tables += [utilisation_table(plan), credit_table(plan)]
    exposure = p90_exposure(inventory, plan, quarters)
    risk, p90_cost = risk_table(plan, quarter, exposure[quarter])
    tables += [risk, cost_band(inventory, plan, quarters, exposure), unmet_table(plan)]
    status = budget_table(inventory, plan)
    budgets = [r for r in status.rows if r["quarter"] == quarter]
    tables.append(status)
    if before is not None:
        tables += changes_tables(plan, before, quarters)
    liability, in_horizon = purchase_liability(plan)
    kpi = plan.kpi(quarter)
    vs_actual = next(t for t in tables if t.name == "plan_vs_actual")
    summary = Summary(
        quarter,
        tuple(four_in),
        amount(lambda p: quarter_cost(p, quarter)),
        amount(lambda p: quarters_cost(p, four_in)),
        amount(lambda p: quarters_on_demand(p, [quarter])),
        amount(lambda p: quarters_on_demand(p, [quarter]) - quarter_cost(p, quarter)),
        amount(lambda p: quarters_on_demand(p, four_in) - quarters_cost(p, four_in)),
        amount(kpi_ratio("effective_savings_rate")),
        amount(kpi_ratio("coverage")),
        amount(kpi_ratio("utilisation")),
        approve,
        sum((c.liability for c in approve), CENTS),
        sum((c.monthly for c in approve if c.monthly is not None), CENTS),
        sum((c.upfront for c in approve if c.upfront is not None), CENTS),
        sum((c.in_horizon for c in approve), CENTS),
        NewPurchases(
            liability,
            in_horizon,
            to_cent(plan.post_horizon_credit_usd),
        ),
        p90_cost,
        shown_quantity(kpi.unmet_accelerator_hours if kpi else 0.0),
        sum((r["budget_usd"] for r in budgets), CENTS) if budgets else None,
        sum((r["variance"] for r in budgets), CENTS) if budgets else None,
        tuple(r for r in expiry.rows if isinstance(r, ExpiryRow) and r.warning),
        (len(budgets), len(centre_costs(plan, quarter))),
        sum((r["capital"] for r in capital.rows if r["start_quarter"] == quarter), CENTS),
        sum((r["depreciation_month"] for r in capital.rows if r["start_quarter"] == quarter), CENTS),
        in_progress(plan, quarter, vs_actual),
    )
    return ReportData(
        f"Accelerator capacity plan {quarter}",
        quarter,
        plan.outcome,
        tuple(quarters),
        before is not None,
        summary,
        tuple(tables),
        report_charts(quarters, tables),
        plan.options.what_if,
    )
