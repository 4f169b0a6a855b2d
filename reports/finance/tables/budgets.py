"""Table `budget_variance`: forecast (planned) against budget per cost centre with a budget in the quarter."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING

from quartermaster.pricing import cents
from quartermaster.reports.finance.table import NAME_COLUMN, ZERO, Column, Row, Table, column_sums
from quartermaster.reports.finance.tables.common import PCT, centre_name
from quartermaster.reports.planned import centre_costs

if TYPE_CHECKING:
    from quartermaster.model import Inventory
    from quartermaster.plan_result import PlanResult


@dataclass(frozen=True)
class BudgetLine(Row):
    cost_center: str
    cost_center_name: str
    budget: Decimal
    forecast: Decimal
    variance: Decimal
    used: Decimal | None


def _line(code: str, name: str, budget: Decimal, forecast: Decimal) -> BudgetLine:
    return BudgetLine(
        code, name, budget, forecast, forecast - budget, (forecast / budget).quantize(PCT) if budget else None
    )


def budget_variance(inventory: Inventory, plan: PlanResult, quarter: str) -> Table:
    """Forecast - budget per cost centre with a budget (policy.budgets)."""
    forecast = centre_costs(plan, quarter)
    rows = tuple(
        _line(b.cost_center, centre_name(inventory, b.cost_center), cents(b.usd), forecast.get(b.cost_center, ZERO))
        for b in sorted(inventory.policy.budgets, key=lambda b: b.cost_center)
        if b.quarter == quarter
    )
    sums = column_sums(rows, ("budget", "forecast"))
    return Table(
        "budget_variance",
        f"Budget variance by cost centre, {quarter}",
        (
            Column("cost_center", "Cost centre"),
            NAME_COLUMN,
            Column("budget", "Budget", "money"),
            Column("forecast", "Forecast", "money"),
            Column("variance", "Variance", "delta"),
            Column("used", "Of budget", "pct"),
        ),
        rows,
        total=_line("Total", "", sums["budget"], sums["forecast"]) if rows else None,
        note="Basis: planned. Variance = forecast - budget; negative is under budget. Budgets from policy.budgets.",
    )
