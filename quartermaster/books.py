"""On-prem capital as finance books it: a purchase's rate split into capital and operating parts
(`pricing.onprem_split`), the capital part capitalised (financed: at the present value of its monthly payments at
`policy.financing_rate`, `pricing.present_value`, the rest interest on the amount still owed), depreciated
straight-line over its life from the month it starts; the operating part booked by month. Every amount is to the
cent and every by-month mapping adds up to its total, so the report's tables only show and sum them."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING

from quartermaster.pricing import PricingModel, allocate_cents, cents, onprem_split, present_value

if TYPE_CHECKING:
    from quartermaster.model import Inventory
    from quartermaster.plan_contract import PlanResult, PurchaseRow

ZERO = Decimal(0)
CENTS = Decimal("0.00")


def calendar_months(start: dt.date, end: dt.date) -> list[tuple[str, int]]:
    """The calendar months from `start` up to `end` (exclusive) as (`2027-01`, hours of the month inside)."""
    out: list[tuple[str, int]] = []
    first = dt.date(start.year, start.month, 1)
    while first < end:
        nxt = dt.date(first.year + first.month // 12, first.month % 12 + 1, 1)
        hours = ((min(nxt, end) - max(first, start)).days) * 24
        out.append((f"{first:%Y-%m}", hours))
        first = nxt
    return out


def month_label(first: dt.date, ahead: int) -> str:
    """`2027-03` for the month `ahead` months after `first`."""
    index = first.month - 1 + ahead
    return f"{first.year + index // 12:04d}-{index % 12 + 1:02d}"


def hourly_by_month(start: dt.date, end: dt.date, usd_per_hour: Decimal, total: Decimal) -> dict[str, Decimal]:
    """`usd_per_hour` for each calendar month's own hours from `start` to `end`, to the cent, adding up to `total`."""
    return allocate_cents({m: usd_per_hour * hours for m, hours in calendar_months(start, end)}, total)


def monthly_payments(row: PurchaseRow) -> dict[str, Decimal]:
    """A purchase's hourly payments per calendar month, to the cent, adding up to liability - upfront."""
    liability, upfront = cents(row.total_liability_usd), cents(row.upfront_usd)
    if liability == upfront:  # all upfront (a capacity block): nothing by the hour
        return {}
    return hourly_by_month(row.start, row.end, row.usd_per_node_hour * row.nodes, liability - upfront)


@dataclass(frozen=True)
class Booking:
    """An on-prem purchase as finance books it, each amount to the cent and each by-month mapping keyed `2027-01`:
    `upfront` capital paid when bought; `payments` its capital paid by the month (cash), of which `financed` is the
    present value and `interest` (by month) the rest; `liability` the financed amount outstanding at each month's
    end; `depreciation` of the capital value (`upfront + financed`) straight-line over `life_months`; `operating`
    its operating cost by month."""

    nodes: int
    life_months: int
    upfront: Decimal
    payments: dict[str, Decimal]
    financed: Decimal
    interest: dict[str, Decimal]
    liability: dict[str, Decimal]
    depreciation: dict[str, Decimal]
    operating: dict[str, Decimal]

    @property
    def capital(self) -> Decimal:
        return self.upfront + self.financed

    @property
    def first_month(self) -> str:
        return next(iter(self.depreciation))

    @property
    def interest_total(self) -> Decimal:
        return sum(self.interest.values(), CENTS)

    @property
    def depreciation_month(self) -> Decimal:
        """Depreciation a month: capital value / life months, to the cent."""
        return cents(self.capital / self.life_months)

    @property
    def operating_month(self) -> Decimal:
        """Operating cost a month on average over the life, to the cent."""
        return cents(sum(self.operating.values(), ZERO) / self.life_months)


def _interest(
    payments: dict[str, Decimal], financed: Decimal, annual_rate: Decimal
) -> tuple[dict[str, Decimal], dict[str, Decimal]]:
    """(interest, liability at month end) by month: each month's interest is the liability outstanding times the
    monthly rate, to the cent; the payment less the interest repays the liability, which the last payment clears."""
    interest: dict[str, Decimal] = {}
    liability: dict[str, Decimal] = {}
    owed = financed
    months = list(payments)
    for i, m in enumerate(months):
        due = owed * annual_rate / 12 if i < len(months) - 1 else payments[m] - owed
        interest[m] = cents(due)
        owed -= payments[m] - interest[m]
        liability[m] = owed
    return interest, liability


def book(
    start: dt.date,
    end: dt.date,
    nodes: int,
    life_months: int,
    usd_per_node_hour: Decimal,
    upfront: Decimal,
    operating_usd_per_node_hour: Decimal,
    annual_rate: Decimal,
) -> Booking:
    """Book an on-prem purchase (`Booking`): `usd_per_node_hour` its whole rate, paid every hour from `start` to
    `end`, of which `operating_usd_per_node_hour` is operating cost and the rest capital paid by the month."""
    hours = (end - start).days * 24
    paid = hourly_by_month(start, end, usd_per_node_hour * nodes, cents(usd_per_node_hour * nodes * hours))
    operating = hourly_by_month(
        start, end, operating_usd_per_node_hour * nodes, cents(operating_usd_per_node_hour * nodes * hours)
    )
    payments = {m: usd - operating[m] for m, usd in paid.items()}
    financed = cents(present_value(list(payments.values()), annual_rate))
    interest, liability = _interest(payments, financed, annual_rate)
    capital = cents(upfront) + financed
    life = [month_label(dt.date(start.year, start.month, 1), i) for i in range(life_months)]
    depreciation = allocate_cents(dict.fromkeys(life, capital / life_months), capital)
    return Booking(nodes, life_months, cents(upfront), payments, financed, interest, liability, depreciation, operating)


def _operating_rate(inventory: Inventory, machine: str, site: str) -> Decimal:
    split = onprem_split(inventory, machine, site)
    return ZERO if split is None else split.operating_usd_per_node_hour


def plan_bookings(inventory: Inventory, plan: PlanResult) -> list[tuple[PurchaseRow, Booking]]:
    """The plan's on-prem purchases, booked."""
    rate = inventory.policy.financing_rate
    return [
        (
            r,
            book(
                r.start,
                r.end,
                r.nodes,
                r.term_months,
                r.usd_per_node_hour,
                r.upfront_usd,
                _operating_rate(inventory, r.machine, r.site),
                rate,
            ),
        )
        for r in plan.purchase_schedule
        if r.pricing_model == PricingModel.ONPREM
    ]


def asset_bookings(inventory: Inventory) -> list[tuple[str, Booking]]:
    """The on-prem assets already held (the inventory's `on-prem-purchase` commitments), booked from their start."""
    rate = inventory.policy.financing_rate
    return [
        (
            c.name,
            book(
                c.start,
                c.end,
                c.count,
                c.term_months,
                c.usd_per_node_hour,
                ZERO,
                _operating_rate(inventory, c.machine, c.site),
                rate,
            ),
        )
        for c in inventory.commitments
        if c.kind == "on-prem-purchase" and c.term_months
    ]
