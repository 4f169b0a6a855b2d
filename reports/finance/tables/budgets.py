"""Table `budget_status`: every budget of the plan's quarters against the planned charge, from
`plan_figures.planned_status`, the one answer every view gives (the report shows it once; the summary adds up its rows
of the report's quarter)."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING

from quartermaster.plan_figures import planned_status
from quartermaster.pricing import SPEND_RULE
from quartermaster.reports.finance.table import NAME_COLUMN, Column, Row, Table
from quartermaster.reports.finance.tables.table_support import centre_name
from quartermaster.units import Quarter

if TYPE_CHECKING:
    from quartermaster.model import Inventory
    from quartermaster.plan_contract import PlanResult


@dataclass(frozen=True)
class StatusLine(Row):
    cost_center: str
    cost_center_name: str
    quarter: Quarter
    basis: str
    usd: Decimal
    budget_usd: Decimal
    variance: Decimal
    used: Decimal | None


def budget_table(inventory: Inventory, plan: PlanResult) -> Table:
    """Table budget_status: every budget of the plan's quarters against the planned charge, with its variance."""
    status = planned_status(inventory.policy.budgets, plan)
    lines = tuple(
        StatusLine(
            s.cost_center,
            centre_name(inventory, s.cost_center),
            s.quarter,
            s.basis,
            s.usd,
            s.budget_usd,
            s.variance,
            s.used,
        )
        for s in status
    )
    return Table(
        "budget_status",
        "Budget status by cost centre and quarter (basis: planned)",
        (
            Column("cost_center", "Cost centre"),
            NAME_COLUMN,
            Column("quarter", "Quarter"),
            Column("basis", "Basis"),
            Column("usd", "Charge", "money"),
            Column("budget_usd", "Budget", "money"),
            Column("variance", "Variance", "delta"),
            Column("used", "Of budget", "pct"),
        ),
        lines,
        note="Basis: planned: the plan's charge of the cost centre's teams in the quarter (their use plus their share "
        "of idle), as in the cost-centre table; variance = charge - budget, negative under budget. The quota pull "
        "request's check shows the same planned row for a cost centre a quota change touches, with its exposure row "
        f"(the quotas used in full) beside it. {SPEND_RULE}",
    )
