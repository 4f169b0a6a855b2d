"""Tables `risk` (the report quarter's exposure at p90 demand) and `cost_band` (cost per quarter at p10, expected
and p90 demand); basis: exposure around the planned cost."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING

from quartermaster.demand import quantile_at
from quartermaster.planned import quarter_cost
from quartermaster.pricing import (
    PAY_PER_USE_MODELS,
    PricingModel,
    cents,
    cheapest_on_demand_per_accelerator,
    decimal_of,
)
from quartermaster.reports.finance.table import ZERO, Column, Row, Table, column_sums
from quartermaster.units import quarter_hours

if TYPE_CHECKING:
    from quartermaster.model import Inventory
    from quartermaster.plan_result import PlanResult

FLEXIBLE_MODELS = tuple(m for m in PAY_PER_USE_MODELS if m != PricingModel.CAPACITY_BLOCK)
"""Spend that shrinks when demand does (capacity blocks and commitments are paid whether used or not)."""


@dataclass(frozen=True)
class ExposureRow(Row):
    """If every team ran at its p90 for the whole quarter: the accelerators above p50 (`extra`), bought on demand at
    the cheapest on-demand `rate` of the accelerator: the `exposure` (None without an on-demand price)."""

    accelerator: str
    extra: Decimal | None
    rate: Decimal | None
    exposure: Decimal | None


@dataclass(frozen=True)
class BandRow(Row):
    quarter: str
    p10: Decimal
    expected: Decimal
    p90: Decimal


def p90_exposure(inventory: Inventory, quarters: list[str]) -> dict[str, list[ExposureRow]]:
    """Per quarter, an `ExposureRow` per accelerator with a p90 above its p50."""
    rates = cheapest_on_demand_per_accelerator(inventory)
    extra: dict[str, dict[str, Decimal]] = {q: {} for q in quarters}
    for d in inventory.demand:
        if d.period in extra and not d.scenario and d.p90 is not None:
            by_acc = extra[d.period]
            by_acc[d.accelerator] = by_acc.get(d.accelerator, ZERO) + Decimal(str(d.p90)) - Decimal(str(d.p50))
    return {
        q: [
            ExposureRow(
                acc,
                more,
                rates.get(acc),
                cents(more * quarter_hours(q) * rates[acc]) if acc in rates else None,
            )
            for acc, more in sorted(by_acc.items())
        ]
        for q, by_acc in extra.items()
    }


def risk_table(plan: PlanResult, quarter: str, rows: list[ExposureRow]) -> tuple[Table, Decimal]:
    """The p90 exposure of the report's quarter (`p90_exposure`'s rows of it) and the cost at p90 demand."""
    exposure = column_sums(rows, ("exposure",))["exposure"]
    expected = quarter_cost(plan, quarter)
    table = Table(
        "risk",
        f"Risk: p90 demand in {quarter}",
        (
            Column("accelerator", "Accelerator"),
            Column("extra", "p90 - p50 accelerators", "number"),
            Column("rate", "On-demand USD / accelerator-hour", "money"),
            Column("exposure", "Extra cost at p90", "money"),
        ),
        tuple(rows),
        total=ExposureRow("Total", None, None, exposure),
        note=f"Expected cost {expected:,} USD; at p90 demand all quarter ({quarter_hours(quarter):,} hours) the extra "
        "accelerators are bought on demand, the most the plan's recourse would cost.",
    )
    return table, expected + exposure


def cost_band(
    inventory: Inventory, plan: PlanResult, quarters: list[str], exposure: dict[str, list[ExposureRow]]
) -> Table:
    """Cost per quarter at p10, expected and at p90 demand (basis: exposure).

    p90: the risk table's figure (`exposure`, the accelerator-hours above p50 bought on demand). p10: each demand
    row's Q(0.1) of the planner's own fit (`planner.data.quantile_at`: the given p10, else the lognormal through p50
    and p90, p50^2 / p90); the accelerator-hours below p50 are taken off at the cheapest on-demand rate, at most the
    quarter's on-demand, spot and flex-start spend (commitments and capacity blocks are paid whether used or not)."""
    rates = cheapest_on_demand_per_accelerator(inventory)
    below = dict.fromkeys(quarters, ZERO)
    for d in inventory.demand:
        if d.period in below and not d.scenario and d.accelerator in rates:
            p10 = decimal_of(quantile_at(d.quantiles, 0.1))
            below[d.period] += (Decimal(str(d.p50)) - p10) * quarter_hours(d.period) * rates[d.accelerator]
    flexible = dict.fromkeys(quarters, ZERO)
    for r in plan.cost_by_quarter:
        if r.quarter in flexible and r.pricing_model in FLEXIBLE_MODELS:
            flexible[r.quarter] += r.usd
    rows: list[BandRow] = []
    for q in quarters:
        expected = quarter_cost(plan, q)
        p90 = expected + column_sums(exposure[q], ("exposure",))["exposure"]
        rows.append(BandRow(q, expected - cents(min(below[q], flexible[q])), expected, p90))
    return Table(
        "cost_band",
        "Cost per quarter at p10 and p90 demand",
        (
            Column("quarter", "Quarter"),
            Column("p10", "At p10 demand", "money"),
            Column("expected", "Expected (planned)", "money"),
            Column("p90", "At p90 demand", "money"),
        ),
        tuple(rows),
        note="Basis: exposure around the planned cost. At p90 demand: the accelerator-hours above p50 bought on "
        "demand at the cheapest on-demand rate (the risk table). At p10 demand (the given p10, else that of the "
        "planner's lognormal fit through p50 and p90: p50 x p50 / p90): the accelerator-hours below p50 no longer "
        "bought, at the cheapest on-demand rate, at most the quarter's on-demand, spot and flex-start spend; "
        "commitments and capacity blocks are paid anyway.",
    )
