"""A plan's money as people read it: one rounding rule for every view (`qm plan`, the finance report in HTML, PDF,
XLSX, CSV and JSON, the plan's FOCUS forecast, the quota diff's budget status).

The rule, written once here:

- a **quarter's cost** is the plan's figure rounded half up to the cent (`pricing.cents`);
- anything **inside a quarter** (a team, a cost centre, a pricing model, a FOCUS line of a team and pricing model)
  is that quarter's cent figure split with `pricing.allocate_cents`, so the parts add up to it exactly; a split in
  two directions at once (FOCUS: pricing model x team) adds up to both splits (`allocate_grid`);
- anything **over several quarters** (four quarters, the horizon, a team's next four quarters) is the sum of the
  quarters' cent figures, so it equals the sum of the quarters shown;
- a **purchase's** liability and in-horizon part are each rounded to the cent; the plan's totals are their sums;
- a **priced line** (`pricing.PricedLine`: a commitment's cost in a quarter, an exposure) is rounded once, where it is
  shown (`line_cents`), and any other figure of the plan as solved (a saving, a credit) the same way (`to_cent`).

The finance report's tables take their cents from here and round nothing themselves
(tests/reports/test_ledger_tables.py checks that no table module rounds).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from decimal import ROUND_FLOOR, Decimal
from typing import TYPE_CHECKING, TypeVar, overload

from quartermaster.budget_status import BudgetStatus, QuarterBudget, budget_status
from quartermaster.pricing import CENT, PricedLine, allocate_cents, cents, known_usd
from quartermaster.units import Quarter

if TYPE_CHECKING:
    from quartermaster.plan_contract import PlanResult, PurchaseRow

ZERO = Decimal("0.00")
R = TypeVar("R", bound=Hashable)
C = TypeVar("C", bound=Hashable)


def quarter_cost(plan: PlanResult, quarter: Quarter) -> Decimal:
    """The plan's cost of a quarter to the cent; 0 for a quarter outside the plan."""
    kpi = plan.kpi(quarter)
    return ZERO if kpi is None else cents(kpi.cost_usd)


def quarter_on_demand(plan: PlanResult, quarter: Quarter) -> Decimal:
    """The quarter's demand at on-demand prices (the all-on-demand baseline) to the cent."""
    kpi = plan.kpi(quarter)
    return ZERO if kpi is None else cents(kpi.on_demand_equivalent_usd)


def quarters_cost(plan: PlanResult, quarters: Iterable[Quarter]) -> Decimal:
    """Several quarters' cost: the sum of their cent figures."""
    return sum((quarter_cost(plan, q) for q in quarters), ZERO)


def quarters_on_demand(plan: PlanResult, quarters: Iterable[Quarter]) -> Decimal:
    return sum((quarter_on_demand(plan, q) for q in quarters), ZERO)


def horizon_cost(plan: PlanResult) -> Decimal:
    """The plan's expected cost over its horizon as shown: the sum of its quarters' cent figures."""
    return quarters_cost(plan, plan.quarters)


def horizon_on_demand(plan: PlanResult) -> Decimal:
    return quarters_on_demand(plan, plan.quarters)


def model_costs(plan: PlanResult, quarter: Quarter) -> dict[str, Decimal]:
    """pricing model -> its part of the quarter's cost to the cent (the ledger's cost side by pricing model,
    `cost_by_quarter`); the parts add up to `quarter_cost`. The report's spend table and the FOCUS forecast split
    the quarter with it."""
    raw: dict[str, Decimal] = {}
    for r in plan.cost_by_quarter:
        if r.quarter == quarter:
            raw[r.pricing_model] = raw.get(r.pricing_model, ZERO) + r.usd
    return allocate_cents(raw, quarter_cost(plan, quarter))


def team_costs(plan: PlanResult, quarter: Quarter) -> dict[str, tuple[str, Decimal]]:
    """team -> (cost centre, its charge in the quarter to the cent); the charges add up to `quarter_cost`."""
    rows = [r for r in plan.cost_by_team if r.quarter == quarter]
    rounded = allocate_cents({r.team: r.usd for r in rows}, quarter_cost(plan, quarter))
    return {r.team: (r.cost_center, rounded[r.team]) for r in rows}


def centre_costs(plan: PlanResult, quarter: Quarter) -> dict[str, Decimal]:
    """cost centre -> its teams' charges in the quarter (`team_costs`) added up."""
    out: dict[str, Decimal] = {}
    for centre, usd in team_costs(plan, quarter).values():
        out[centre] = out.get(centre, ZERO) + usd
    return out


def centre_use(plan: PlanResult, quarter: Quarter) -> dict[str, Decimal]:
    """cost centre -> its teams' planned use in the quarter without their share of idle, to the cent: each team's
    charge (`team_costs`) split into use and idle share (`allocate_cents`), the use parts added up."""
    charge = team_costs(plan, quarter)
    out: dict[str, Decimal] = {}
    for r in plan.cost_by_team:
        if r.quarter == quarter:
            use = allocate_cents({"use": r.usage_usd, "idle": r.idle_share_usd}, charge[r.team][1])["use"]
            out[r.cost_center] = out.get(r.cost_center, ZERO) + use
    return out


def planned_use(plan: PlanResult) -> dict[tuple[str, Quarter], Decimal]:
    """(cost centre, quarter) -> the cost centre's planned use without idle share (`centre_use`) in every quarter of
    the plan: what metered use at the pools' rates, which shares no idle, is held to."""
    return {(centre, q): usd for q in plan.quarters for centre, usd in centre_use(plan, q).items()}


def planned_charges(plan: PlanResult) -> dict[tuple[str, Quarter], Decimal]:
    """(cost centre, quarter) -> the cost centre's planned charge (`centre_costs`) in every quarter of the plan: the
    `planned` basis of `budget_status.budget_status`."""
    return {(centre, q): usd for q in plan.quarters for centre, usd in centre_costs(plan, q).items()}


def planned_status(budgets: Iterable[QuarterBudget], plan: PlanResult) -> tuple[BudgetStatus, ...]:
    """Every budget of the plan's quarters against the cost centre's planned charge (`planned_charges`): the plan's
    `budget_status` table, the finance report's, `qm diff --plan`'s planned rows and the alert rules' figures."""
    return budget_status(budgets, planned_charges(plan), "planned", plan.quarters)


@overload
def to_cent(amount: Decimal) -> Decimal: ...
@overload
def to_cent(amount: None) -> None: ...
def to_cent(amount: Decimal | None) -> Decimal | None:
    """A figure of the plan as solved (a saving, a credit, a liability), as shown: to the cent, half up; None (unknown)
    stays None."""
    return None if amount is None else cents(amount)


def line_cents(*lines: PricedLine) -> Decimal:
    """Priced lines as shown: their amounts added up exactly (`pricing.known_usd`), then rounded to the cent once."""
    return cents(known_usd(*lines))


def shares_of(parts: Mapping[R, Decimal], total: Decimal) -> dict[R, Decimal]:
    """A cent figure split into parts in proportion to `parts`, each to the cent, adding up to `total` exactly
    (`pricing.allocate_cents`): a quarter's cost by pricing model, a charge by month."""
    return allocate_cents(parts, total)


@dataclass(frozen=True)
class PurchaseCents:
    """A purchase's figures as shown, each to the cent (the purchase schedule, payments, changes and capital tables)."""

    liability: Decimal
    in_horizon: Decimal
    upfront: Decimal
    monthly: Decimal


def purchase_cents(row: PurchaseRow) -> PurchaseCents:
    """A purchase's liability, in-horizon part, upfront payment and monthly payment, each rounded once."""
    return PurchaseCents(
        cents(row.total_liability_usd), cents(row.in_horizon_usd), cents(row.upfront_usd), cents(row.monthly_usd)
    )


def idle_shares(plan: PlanResult, quarter: Quarter) -> dict[str, Decimal]:
    """team -> its share of the quarter's idle (`cost_by_team.idle_share_usd`), to the cent."""
    return {r.team: cents(r.idle_share_usd) for r in plan.cost_by_team if r.quarter == quarter}


def closed_charges(plan: PlanResult, quarter: Quarter, start: dt.datetime, end: dt.datetime) -> dict[str, Decimal]:
    """team -> what `qm meter` charged it in the closed periods of the quarter (`closed_costs`) that begin in [start,
    end) (a month, or the part of it the usage history covers), to the cent."""
    out: dict[str, Decimal] = {}
    for r in plan.closed_in(quarter):
        if start <= dt.datetime.fromisoformat(r.start) < end:
            out[r.team] = out.get(r.team, ZERO) + cents(r.usd)
    return out


def prorated_open_charges(plan: PlanResult, quarter: Quarter, share: Decimal) -> dict[str, Decimal]:
    """team -> `share` of its planned charge in the quarter's open part (its charge, `team_costs`, less what the closed
    part metered), to the cent: a period of the open part prorated by its hours."""
    spent: dict[str, Decimal] = {}
    for r in plan.closed_in(quarter):
        spent[r.team] = spent.get(r.team, ZERO) + r.usd
    return {team: cents((usd - spent.get(team, ZERO)) * share) for team, (_, usd) in team_costs(plan, quarter).items()}


def purchase_liability(plan: PlanResult) -> tuple[Decimal, Decimal]:
    """All new purchases' (liability, part inside the horizon): the sums of each purchase's cent figures."""
    return (
        sum((cents(p.total_liability_usd) for p in plan.purchase_schedule), ZERO),
        sum((cents(p.in_horizon_usd) for p in plan.purchase_schedule), ZERO),
    )


def allocate_grid(
    cells: Mapping[tuple[R, C], Decimal], row_totals: Mapping[R, Decimal], column_totals: Mapping[C, Decimal]
) -> dict[tuple[R, C], Decimal]:
    """Round a table of amounts to the cent so that each row adds up to `row_totals` and each column to
    `column_totals` (both in cents with the same sum, each within about a cent of its unrounded line).

    Every cell is floored to the cent; then, a cent at a time, a cell whose row and column both miss a cent gains one
    (largest remainder first), a cell whose row and column both have a cent too many loses one (smallest remainder
    first), and when neither exists a cent moves between two rows within one column. Each step brings the rows and
    columns a cent closer on both sides, so it ends with every total met."""
    out = {k: v.quantize(CENT, rounding=ROUND_FLOOR) for k, v in cells.items()}
    row_left = {r: row_totals[r] - sum((v for (rr, _), v in out.items() if rr == r), ZERO) for r in row_totals}
    col_left = {c: column_totals[c] - sum((v for (_, cc), v in out.items() if cc == c), ZERO) for c in column_totals}
    if sum(row_left.values(), ZERO) != sum(col_left.values(), ZERO):
        raise ValueError("allocate_grid: the row and column totals do not add up to the same cents")

    def remainder(key: tuple[R, C]) -> tuple[Decimal, str]:
        return (cells[key] - out[key], str(key))

    def step(key: tuple[R, C], cent: Decimal) -> None:
        out[key] += cent
        row_left[key[0]] -= cent
        col_left[key[1]] -= cent

    while any(row_left.values()) or any(col_left.values()):
        gain = [k for k in out if row_left[k[0]] > 0 and col_left[k[1]] > 0]
        lose = [k for k in out if row_left[k[0]] < 0 and col_left[k[1]] < 0 and out[k] >= CENT]
        if gain:
            step(max(gain, key=remainder), CENT)
        elif lose:
            step(min(lose, key=remainder), -CENT)
        else:  # rows still differ while the columns are met: move a cent from a row with too many to one missing it
            short = next(r for r, left in row_left.items() if left > 0)
            extra = next(r for r, left in row_left.items() if left < 0)
            column = next(c for (r, c), v in out.items() if r == extra and v >= CENT and (short, c) in out)
            step((extra, column), -CENT)
            step((short, column), CENT)
    return out
