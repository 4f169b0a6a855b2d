"""Tables `risk` (the report quarter's exposure at p90 demand) and `cost_band` (cost per quarter at p10, expected
and p90 demand); basis: exposure around the planned cost."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING

from quartermaster.demand_quantiles import quantile_at
from quartermaster.plan_figures import line_cents, quarter_cost, to_cent
from quartermaster.pricing import (
    PAY_PER_USE_MODELS,
    PricedLine,
    PricingModel,
    cheapest_on_demand_per_accelerator,
    decimal_of,
)
from quartermaster.reports.finance.table import ZERO, Column, Row, Table, column_sums
from quartermaster.units import Quarter, quarter_hours

if TYPE_CHECKING:
    from quartermaster.model import Inventory
    from quartermaster.plan_contract import PlanResult

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
    quarter: Quarter
    p10: Decimal
    expected: Decimal
    p90: Decimal


def demand_spread(inventory: Inventory, plan: PlanResult) -> list[tuple[Quarter, str, Decimal, Decimal | None]]:
    """(quarter, accelerator, accelerators below the expected level at p10, above it at p90 or None) per demand row,
    averaged over the quarter's hours. A quarter the plan forecasts from the usage history (PlanResult.forecast: the
    quarter in progress) takes its forecast's band over the hours it forecasts, not demand.csv's rows (the plan does
    not read them there): its metered hours have no spread. Otherwise demand.csv: p50 less its Q(0.1) (the given p10,
    else the lognormal through p50 and p90, `planner.data.quantile_at`), and p90 less p50."""
    forecast = {r.quarter for r in plan.forecast}
    out: list[tuple[Quarter, str, Decimal, Decimal | None]] = [
        (
            d.period,
            d.accelerator,
            Decimal(str(d.p50)) - decimal_of(quantile_at(d.quantiles, 0.1)),
            None if d.p90 is None else Decimal(str(d.p90)) - Decimal(str(d.p50)),
        )
        for d in inventory.demand
        if d.period not in forecast and not d.scenario
    ]
    for r in plan.forecast:
        share = Decimal(r.forecast_hours) / quarter_hours(r.quarter)
        out.append(
            (
                r.quarter,
                r.accelerator,
                decimal_of(r.expected_accelerators - r.p10_accelerators) * share,
                decimal_of(r.p90_accelerators - r.expected_accelerators) * share,
            )
        )
    return out


def _exposure_line(accelerator: str, accelerator_hours: Decimal, rate: Decimal) -> PricedLine:
    """p90 demand above the expected level, in accelerator-hours of a quarter, at the cheapest on-demand rate of its
    accelerator (the price book's; planned: what the plan would buy on demand for it)."""
    source = f"cheapest on-demand {accelerator} in the price book, p90 demand above expected"
    return PricedLine(accelerator_hours, "accelerator-hour", rate, "planned", source)


def p90_exposure(
    inventory: Inventory, plan: PlanResult, quarters: Sequence[Quarter]
) -> dict[Quarter, list[ExposureRow]]:
    """Per quarter, an `ExposureRow` per accelerator with a p90 above its expected level (demand_spread)."""
    rates = cheapest_on_demand_per_accelerator(inventory)
    extra: dict[Quarter, dict[str, Decimal]] = {q: {} for q in quarters}
    for quarter, accelerator, _, above in demand_spread(inventory, plan):
        if quarter in extra and above is not None:
            by_acc = extra[quarter]
            by_acc[accelerator] = by_acc.get(accelerator, ZERO) + above
    return {
        q: [
            ExposureRow(
                acc,
                more,
                rates.get(acc),
                line_cents(_exposure_line(acc, more * quarter_hours(q), rates[acc])) if acc in rates else None,
            )
            for acc, more in sorted(by_acc.items())
        ]
        for q, by_acc in extra.items()
    }


def risk_table(plan: PlanResult, quarter: Quarter, rows: list[ExposureRow]) -> tuple[Table, Decimal]:
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
    inventory: Inventory, plan: PlanResult, quarters: Sequence[Quarter], exposure: dict[Quarter, list[ExposureRow]]
) -> Table:
    """Cost per quarter at p10, expected and at p90 demand (basis: exposure).

    p90: the risk table's figure (`exposure`, the accelerator-hours above p50 bought on demand). p10: the
    accelerator-hours below the expected level at p10 (demand_spread) are taken off at the cheapest on-demand rate, at
    most the quarter's on-demand, spot and flex-start spend (commitments and capacity blocks are paid whether used or
    not)."""
    rates = cheapest_on_demand_per_accelerator(inventory)
    below: dict[Quarter, Decimal] = dict.fromkeys(quarters, ZERO)
    for quarter, accelerator, less, _ in demand_spread(inventory, plan):
        if quarter in below and accelerator in rates:
            below[quarter] += less * quarter_hours(quarter) * rates[accelerator]
    flexible = dict.fromkeys(quarters, ZERO)
    for r in plan.cost_by_quarter:
        if r.quarter in flexible and r.pricing_model in FLEXIBLE_MODELS:
            flexible[r.quarter] += r.usd
    rows: list[BandRow] = []
    for q in quarters:
        expected = quarter_cost(plan, q)
        p90 = expected + column_sums(exposure[q], ("exposure",))["exposure"]
        rows.append(BandRow(q, expected - to_cent(min(below[q], flexible[q])), expected, p90))
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
        "commitments and capacity blocks are paid anyway."
        + "".join(
            f" {q}: its metered hours as they were; its p10 and p90 for the rest are those of the forecast from the "
            f'usage history (Sources and plan settings, "Forecast, {q}").'
            for q in sorted({r.quarter for r in plan.forecast})
            if q in quarters
        ),
    )
