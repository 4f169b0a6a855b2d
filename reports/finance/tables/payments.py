"""How each purchase of the plan is paid, shared by the tables `commitments_to_approve` and `purchase_schedule`."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Literal

from quartermaster.plan_figures import purchase_cents
from quartermaster.reports.finance.table import Column

if TYPE_CHECKING:
    from quartermaster.plan_contract import PlanResult, PurchaseRow

Payment = Literal["all upfront", "partial upfront", "no upfront"]


def payment_of(row: PurchaseRow) -> Payment:
    """How a purchase is paid, from the plan's own figures (its contract shape): `all upfront` (a capacity block's
    price, EC2 `CapacityBlockOffering.UpfrontFee`; an all-upfront reservation), `partial upfront` (a fee when bought
    and a rate every hour of the term) or `no upfront` (a rate every hour of the term)."""
    if not row.upfront_usd:
        return "no upfront"
    return "partial upfront" if row.usd_per_node_hour and row.term_months else "all upfront"


@dataclass(frozen=True)
class Payments:
    """A purchase's payments to the cent: `upfront` when bought (None: none), `monthly` a month over its term (None:
    none), `over_term` all of its hourly payments (liability - upfront), `liability` and the part `in_horizon`
    (each rounded to the cent, `quartermaster.plan_figures`: the plan's totals are their sums)."""

    payment: Payment
    upfront: Decimal | None
    monthly: Decimal | None
    over_term: Decimal
    liability: Decimal
    in_horizon: Decimal


def purchase_payments(plan: PlanResult) -> list[Payments]:
    """Each purchase's payments in plan order, from its own figures; upfront + over the term = liability."""
    out: list[Payments] = []
    for r in plan.purchase_schedule:
        payment = payment_of(r)
        shown = purchase_cents(r)
        upfront = shown.liability if payment == "all upfront" else shown.upfront
        out.append(
            Payments(
                payment,
                upfront or None,
                shown.monthly or None,
                shown.liability - upfront,
                shown.liability,
                shown.in_horizon,
            )
        )
    return out


PAYMENT_COLUMNS = (
    Column("payment", "Payment"),
    Column("upfront", "Paid upfront", "money"),
    Column("monthly", "Paid monthly, a 730-hour month", "money"),
    Column("over_term", "Paid over the term", "money"),
    Column("liability", "Total liability", "money"),
    Column("in_horizon", "Of which in the plan's horizon", "money"),
)
"""How a purchase is paid (`Payments`), in the commitments to approve and the purchase schedule."""
