"""Table `spend_by_quarter`: quarter x pricing model."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, ClassVar

from quartermaster.plan_contract import CLOSED
from quartermaster.plan_figures import model_costs, quarter_cost
from quartermaster.pricing import COMMITTED_MODELS, PAY_PER_USE_MODELS, SPEND_RULE, PricingModel
from quartermaster.reports.finance.table import CENTS, Column, Row, Table, column_sums
from quartermaster.units import Quarter

if TYPE_CHECKING:
    from quartermaster.plan_contract import PlanResult

MODEL_LABEL = {
    "existing-commitments": "existing commitments",
    PricingModel.COMMIT: "new commitments",
    PricingModel.ONPREM: "on-prem",
    PricingModel.CAPACITY_BLOCK: "capacity blocks",
    PricingModel.ON_DEMAND: "on-demand",
    PricingModel.FLEX_START: "flex-start",
    PricingModel.SPOT: "spot",
    CLOSED: "metered (closed part)",
}
MODEL_ORDER = [CLOSED, "existing-commitments", *COMMITTED_MODELS, *PAY_PER_USE_MODELS]


@dataclass(frozen=True)
class SpendRow(Row):
    """A quarter's cost per pricing model (`by_model`, a column each) and its total."""

    PARTS: ClassVar[str | None] = "by_model"
    quarter: str
    """quarter: a quarter, or `All quarters` on the total row: text, not a `Quarter`."""
    total: Decimal
    by_model: Mapping[str, Decimal] = field(default_factory=dict)


def spend_by_quarter(plan: PlanResult, quarters: Sequence[Quarter]) -> Table:
    """Quarter x pricing model, each row's parts rounded so they add up to the quarter's cost to the cent."""
    present = {r.pricing_model for r in plan.cost_by_quarter}
    models = [m for m in MODEL_ORDER if m in present] + sorted(present - set(MODEL_ORDER))
    rows: list[SpendRow] = []
    for q in quarters:
        parts = model_costs(plan, q)
        rows.append(SpendRow(q, quarter_cost(plan, q), {m: parts.get(m, CENTS) for m in models}))
    sums = column_sums(rows, (*models, "total"))
    return Table(
        "spend_by_quarter",
        "Spend by quarter and pricing model",
        (
            Column("quarter", "Quarter"),
            *(Column(m, MODEL_LABEL.get(m, m), "money") for m in models),
            Column("total", "Total", "money"),
        ),
        tuple(rows),
        total=SpendRow("All quarters", sums["total"], {m: sums[m] for m in models}),
        note='Basis: planned; the closed part of the quarter in progress (column "metered (closed part)", before '
        "the end of the actuals) is what `qm meter` charged for it, basis metered. Each quarter's cost to the cent, "
        "split by pricing model so the parts add up to it; "
        f"All quarters: the sum of the quarters shown. {SPEND_RULE}",
    )
