"""Table `coverage`: commitment coverage, utilisation and savings per quarter."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING

from quartermaster.plan_figures import quarter_cost, quarter_on_demand
from quartermaster.pricing import shown_quantity
from quartermaster.reports.finance.table import Column, Row, Table
from quartermaster.reports.finance.tables.table_support import ratio
from quartermaster.units import Quarter

if TYPE_CHECKING:
    from quartermaster.plan_contract import PlanResult


@dataclass(frozen=True)
class CoverageRow(Row):
    quarter: Quarter
    cost: Decimal
    on_demand: Decimal
    savings: Decimal
    esr: Decimal
    coverage: Decimal
    utilisation: Decimal
    coverage_hours: Decimal
    utilisation_hours: Decimal
    served: Decimal


def coverage_table(plan: PlanResult, quarters: Sequence[Quarter]) -> Table:
    rows: list[CoverageRow] = []
    for q in quarters:
        k = plan.kpi(q)
        if k is None:
            continue
        cost, on_demand = quarter_cost(plan, q), quarter_on_demand(plan, q)
        rows.append(
            CoverageRow(
                q,
                cost,
                on_demand,
                on_demand - cost,
                ratio(k.effective_savings_rate),
                ratio(k.coverage),
                ratio(k.utilisation),
                ratio(k.coverage_accelerator_hours),
                ratio(k.utilisation_accelerator_hours),
                shown_quantity(k.served_accelerator_hours, 0),
            )
        )
    return Table(
        "coverage",
        "Commitment coverage, utilisation and savings",
        (
            Column("quarter", "Quarter"),
            Column("cost", "Cost", "money"),
            Column("on_demand", "All on-demand", "money"),
            Column("savings", "Savings", "money"),
            Column("esr", "Effective savings rate", "pct"),
            Column("coverage", "Coverage ($)", "pct"),
            Column("utilisation", "Utilisation ($)", "pct"),
            Column("coverage_hours", "Coverage (acc-h)", "pct"),
            Column("utilisation_hours", "Utilisation (acc-h)", "pct"),
            Column("served", "Served accelerator-hours", "number"),
        ),
        tuple(rows),
        note="Basis: planned. Coverage ($): share of the served demand's on-demand-equivalent spend that "
        "commitments cover. Utilisation ($): share of commitment spend that is used. The (acc-h) columns measure "
        "the same in accelerator-hours. Effective savings rate: 1 - cost / all-on-demand cost (FinOps Foundation)."
        + "".join(f" Baseline: {note}." for note in plan.baseline_stand_ins),
    )
