"""Table `unmet_demand`: demand the plan cannot serve."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING

from quartermaster.pricing import decimal_of
from quartermaster.reports.finance.table import Column, Row, Table
from quartermaster.units import Quarter

if TYPE_CHECKING:
    from quartermaster.plan_contract import PlanResult


@dataclass(frozen=True)
class UnmetLine(Row):
    quarter: Quarter
    team: str
    accelerator: str
    site: str
    hours: Decimal
    peak: Decimal


def unmet_table(plan: PlanResult) -> Table:
    rows = tuple(
        UnmetLine(
            r.quarter,
            r.team,
            r.accelerator,
            r.site or "any",
            decimal_of(r.expected_accelerator_hours),
            decimal_of(r.peak_accelerators),
        )
        for r in plan.unmet_demand
    )
    return Table(
        "unmet_demand",
        "Unmet demand",
        (
            Column("quarter", "Quarter"),
            Column("team", "Team"),
            Column("accelerator", "Accelerator"),
            Column("site", "Site"),
            Column("hours", "Expected accelerator-hours", "number"),
            Column("peak", "Peak accelerators", "number"),
        ),
        rows,
        note="Demand the plan cannot serve within supply caps, residency and budgets (never dropped silently).",
    )
