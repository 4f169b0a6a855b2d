"""Tables `budget_status` (every budget of the plan's quarters, basis planned) and `budget_variance` (the report's
quarter), both from `budgets.budget_status`, the one answer every view gives."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING

from quartermaster.planned import planned_status
from quartermaster.reports.finance.table import NAME_COLUMN, Column, Row, Table, column_sums
from quartermaster.reports.finance.tables.common import centre_name

if TYPE_CHECKING:
    from quartermaster.model import Inventory
    from quartermaster.plan_result import PlanResult


@dataclass(frozen=True)
class StatusLine(Row):
    cost_center: str
    cost_center_name: str
    quarter: str
    basis: str
    usd: Decimal
    budget_usd: Decimal
    used: Decimal | None


@dataclass(frozen=True)
class BudgetLine(Row):
    cost_center: str
    cost_center_name: str
    budget: Decimal
    forecast: Decimal
    variance: Decimal
    used: Decimal | None


def budget_tables(inventory: Inventory, plan: PlanResult, quarter: str) -> tuple[Table, Table]:
    """(budget_status, budget_variance)."""
    status = planned_status(inventory.policy.budgets, plan)
    lines = tuple(
        StatusLine(
            s.cost_center,
            centre_name(inventory, s.cost_center),
            s.quarter,
            s.basis,
            s.usd,
            s.budget_usd,
            s.used,
        )
        for s in status
    )
    status_table = Table(
        "budget_status",
        "Budget status by cost centre and quarter (basis: planned)",
        (
            Column("cost_center", "Cost centre"),
            NAME_COLUMN,
            Column("quarter", "Quarter"),
            Column("basis", "Basis"),
            Column("usd", "Charge", "money"),
            Column("budget_usd", "Budget", "money"),
            Column("used", "Of budget", "pct"),
        ),
        lines,
        note="Basis: planned: the plan's charge of the cost centre's teams in the quarter (their use plus their share "
        "of idle), as in the cost-centre table. `qm diff` shows the same planned row for a cost centre a quota change "
        "touches, with its exposure row (the quotas used in full) beside it.",
    )
    rows = tuple(
        BudgetLine(s.cost_center, centre_name(inventory, s.cost_center), s.budget_usd, s.usd, s.variance, s.used)
        for s in status
        if s.quarter == quarter
    )
    sums = column_sums(rows, ("budget", "forecast"))
    variance = Table(
        "budget_variance",
        f"Budget variance by cost centre, {quarter} (basis: planned)",
        (
            Column("cost_center", "Cost centre"),
            NAME_COLUMN,
            Column("budget", "Budget", "money"),
            Column("forecast", "Planned charge", "money"),
            Column("variance", "Variance", "delta"),
            Column("used", "Of budget", "pct"),
        ),
        rows,
        total=BudgetLine(
            "Total",
            "",
            sums["budget"],
            sums["forecast"],
            sums["forecast"] - sums["budget"],
            sums["forecast"] / sums["budget"] if sums["budget"] else None,
        )
        if rows
        else None,
        note="Basis: planned. Variance = planned charge - budget; negative is under budget. Budgets from "
        "policy.budgets.",
    )
    return status_table, variance
