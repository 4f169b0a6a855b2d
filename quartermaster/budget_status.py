"""Budget status: one answer to "how does cost centre C stand against its budget for quarter Q?", for every view.

`budget_status` is the one function the plan (its `budget_status` table and `qm plan`'s summary), the finance report
(its budget tables and `report.json`), the quota-PR check (`qm diff`, markdown, text and `--format json`) and the
alert rules' budget annotations (`qm observability render --plan`) use; on the planned basis through
`plan_figures.planned_status`. It pairs each budget of `policy.budgets` with the cost centre's charge for that quarter
on one basis (`pricing.BASES`):

- **planned**: the plan's charge of the cost centre's teams in the quarter (use plus idle share), to the cent as the
  finance report shows it (`plan_figures.centre_costs`);
- **exposure**: the quota diff's monthly exposure of the cost centre's teams (their quotas used in full at the
  flavors' marginal rates) times the quarter's months;
- **metered**: what `qm meter` charged the cost centre in the quarter.

The same (cost centre, quarter, basis) gives the same row in every view; views that show two bases show both rows
under one heading, each labelled with its basis.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Protocol

from quartermaster.pricing import Basis, cents
from quartermaster.units import Quarter


class QuarterBudget(Protocol):
    """A budget of `policy.budgets` as the inventory (`model.Budget`) or the planner's tables hold it."""

    @property
    def cost_center(self) -> str: ...
    @property
    def quarter(self) -> Quarter: ...
    @property
    def usd(self) -> Decimal: ...


@dataclass(frozen=True)
class BudgetStatus:
    """A cost centre's charge in a quarter on one basis against its budget, both to the cent."""

    cost_center: str
    quarter: Quarter
    basis: Basis
    usd: Decimal
    """usd: the cost centre's charge in the quarter on `basis`."""
    budget_usd: Decimal
    """budget_usd: its budget for the quarter (policy.budgets)."""

    @property
    def used(self) -> Decimal | None:
        """The share of the budget the charge uses, exact (every view rounds it once, `pricing.format_pct`); None for
        a budget of 0."""
        return self.usd / self.budget_usd if self.budget_usd else None

    @property
    def variance(self) -> Decimal:
        """Charge - budget: negative is under budget."""
        return self.usd - self.budget_usd

    @property
    def over(self) -> bool:
        return self.usd > self.budget_usd


def budget_status(
    budgets: Iterable[QuarterBudget],
    charges: Mapping[tuple[str, Quarter], Decimal],
    basis: Basis,
    quarters: Collection[Quarter],
) -> tuple[BudgetStatus, ...]:
    """A row per budget of one of `quarters`, sorted by quarter then cost centre: the cost centre's charge in the
    quarter on `basis` (`charges`, keyed by (cost centre, quarter); none is 0) against the budget, both to the cent."""
    return tuple(
        BudgetStatus(
            b.cost_center, b.quarter, basis, cents(charges.get((b.cost_center, b.quarter), Decimal(0))), cents(b.usd)
        )
        for b in sorted(budgets, key=lambda b: (b.quarter, b.cost_center))
        if b.quarter in quarters
    )
