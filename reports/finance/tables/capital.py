"""Purchases as finance books them: tables `payment_schedule` (what every purchase pays in each calendar month),
`capital_purchases` (on-prem purchases as capital, paid upfront or financed) and `depreciation` (their straight-line
depreciation per month over their life, apart from cloud spend).

A purchase's liability is its rate times the hours of its term, from start to end (a 48-month term from 2027-01-01
has 35,064 hours: 1,461 days, a leap day included), plus its upfront fee. The "a month" figure elsewhere is a
730-hour month (`pricing.HOURS_PER_MONTH`), so 48 of them cover 35,040 hours; the payment schedule pays each
calendar month's own hours, so its months add up to the liability exactly.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING

from quartermaster.pricing import PricingModel, allocate_cents, cents
from quartermaster.reports.finance.table import CENTS, Column, Row, Table, column_sums

if TYPE_CHECKING:
    from quartermaster.plan_result import PlanResult, PurchaseRow

ZERO = Decimal(0)


def _months(start: dt.date, end: dt.date) -> list[tuple[str, int]]:
    """The calendar months from `start` up to `end` (exclusive) as (`2027-01`, hours of the month inside)."""
    out: list[tuple[str, int]] = []
    first = dt.date(start.year, start.month, 1)
    while first < end:
        nxt = dt.date(first.year + first.month // 12, first.month % 12 + 1, 1)
        hours = ((min(nxt, end) - max(first, start)).days) * 24
        out.append((f"{first:%Y-%m}", hours))
        first = nxt
    return out


def _month_label(first: dt.date, ahead: int) -> str:
    """`2027-03` for the month `ahead` months after `first`."""
    index = first.month - 1 + ahead
    return f"{first.year + index // 12:04d}-{index % 12 + 1:02d}"


def term_hours(row: PurchaseRow) -> int:
    """Hours from a purchase's start to its end."""
    return (row.end - row.start).days * 24


def monthly_payments(row: PurchaseRow) -> dict[str, Decimal]:
    """A purchase's hourly payments per calendar month, to the cent, adding up to liability - upfront."""
    liability, upfront = cents(row.total_liability_usd), cents(row.upfront_usd)
    if liability == upfront:  # all upfront (a capacity block): nothing by the hour
        return {}
    by_month = {m: row.usd_per_node_hour * row.nodes * hours for m, hours in _months(row.start, row.end)}
    return allocate_cents(by_month, liability - upfront)


@dataclass(frozen=True)
class PaymentMonth(Row):
    month: str
    upfront: Decimal
    hourly: Decimal
    total: Decimal
    falls_due: str


def payment_schedule(plan: PlanResult) -> Table:
    """Per calendar month from the first purchase's start to the last one's end: upfront fees paid then, hourly
    payments for the month's hours, and which purchases start or end."""
    upfront: dict[str, Decimal] = {}
    hourly: dict[str, Decimal] = {}
    events: dict[str, list[str]] = {}
    for r in plan.purchase_schedule:
        name = f"{r.nodes} x {r.machine} {r.pricing_model} at {r.site}"
        start = f"{r.start:%Y-%m}"
        if r.upfront_usd:
            upfront[start] = upfront.get(start, ZERO) + cents(r.upfront_usd)
        for month, usd in monthly_payments(r).items():
            hourly[month] = hourly.get(month, ZERO) + usd
        events.setdefault(start, []).append(f"starts: {name}")
        last = r.end - dt.timedelta(days=1)
        events.setdefault(f"{last:%Y-%m}", []).append(f"ends {r.end}: {name}")
    months = sorted(set(upfront) | set(hourly) | set(events))
    rows = tuple(
        PaymentMonth(
            m,
            upfront.get(m, CENTS),
            hourly.get(m, CENTS),
            upfront.get(m, CENTS) + hourly.get(m, CENTS),
            "; ".join(events.get(m, ())),
        )
        for m in months
    )
    sums = column_sums(rows, ("upfront", "hourly", "total"))
    return Table(
        "payment_schedule",
        "Payment schedule of the plan's purchases, by calendar month",
        (
            Column("month", "Month"),
            Column("upfront", "Paid upfront", "money"),
            Column("hourly", "Paid for the month's hours", "money"),
            Column("total", "Total", "money"),
            Column("falls_due", "Starts and ends"),
        ),
        rows,
        total=PaymentMonth("Total", sums["upfront"], sums["hourly"], sums["total"], ""),
        note="Basis: planned. Each purchase pays its rate for the hours of each calendar month of its term (744 in a "
        "31-day month, 672 in February, 696 in a leap February) and its upfront fee in its first month; the months "
        "add up to the total liability of the purchase schedule exactly. The purchase schedule's 'a month' is a "
        "730-hour month (8,760 / 12), so its monthly figure x the term's months differs from the liability by the "
        "hours the calendar adds (e.g. 48 months from 2027-01-01 have 35,064 hours, 24 more than 48 x 730).",
    )


@dataclass(frozen=True)
class CapitalPurchase(Row):
    start_quarter: str
    site: str
    machine: str
    nodes: int | None
    life_months: int | None
    financing: str
    capital: Decimal
    upfront: Decimal
    financed: Decimal
    depreciation_month: Decimal
    hours: int | None


def _financing(capital: Decimal, upfront: Decimal) -> str:
    if upfront == capital:
        return "paid upfront"
    return "part upfront, the rest financed monthly" if upfront else "financed: paid monthly over its life"


def _on_prem(plan: PlanResult) -> list[PurchaseRow]:
    return [r for r in plan.purchase_schedule if r.pricing_model == PricingModel.ONPREM]


def capital_tables(plan: PlanResult) -> tuple[Table, Table]:
    """(capital_purchases, depreciation) of the plan's on-prem purchases."""
    rows: list[CapitalPurchase] = []
    depreciation: dict[str, Decimal] = {}
    bought: dict[str, Decimal] = {}
    for r in _on_prem(plan):
        capital, upfront = cents(r.total_liability_usd), cents(r.upfront_usd)
        life = r.term_months
        first = dt.date(r.start.year, r.start.month, 1)
        months = [
            f"{dt.date(first.year + (first.month - 1 + i) // 12, (first.month - 1 + i) % 12 + 1, 1):%Y-%m}"
            for i in range(life)
        ]
        per_month = allocate_cents(dict.fromkeys(months, capital / life), capital)
        for m, usd in per_month.items():
            depreciation[m] = depreciation.get(m, ZERO) + usd
        bought[months[0]] = bought.get(months[0], ZERO) + capital
        rows.append(
            CapitalPurchase(
                r.start_quarter,
                r.site,
                r.machine,
                r.nodes,
                life,
                _financing(capital, upfront),
                capital,
                upfront,
                capital - upfront,
                cents(capital / life),
                term_hours(r),
            )
        )
    sums = column_sums(rows, ("capital", "upfront", "financed", "depreciation_month"))
    purchases = Table(
        "capital_purchases",
        "On-prem purchases as capital",
        (
            Column("start_quarter", "Start"),
            Column("site", "Site"),
            Column("machine", "Machine"),
            Column("nodes", "Nodes", "int"),
            Column("life_months", "Life (months)", "int"),
            Column("financing", "Paid"),
            Column("capital", "Capital value", "money"),
            Column("upfront", "Paid upfront", "money"),
            Column("financed", "Financed", "money"),
            Column("depreciation_month", "Depreciation a month", "money"),
            Column("hours", "Hours in its life", "int"),
        ),
        tuple(rows),
        total=CapitalPurchase(
            "Total",
            "",
            "",
            sum(r.nodes or 0 for r in rows),
            None,
            "",
            sums["capital"],
            sums["upfront"],
            sums["financed"],
            sums["depreciation_month"],
            None,
        )
        if rows
        else None,
        note="Basis: planned. An on-prem purchase is a capital purchase order: its value is what it commits to "
        "(upfront fee plus the price book's on-prem rate for every hour of its life), paid upfront or financed by the "
        "month "
        "(the payment schedule), and depreciated straight-line over its life (the depreciation table), apart from "
        "cloud spend. The price book's on-prem rate is capitalised whole; power and space priced per hour used "
        "(usd_per_node_hour_used) stay operating cost. Depreciation a month = capital value / life months.",
    )
    months = sorted(depreciation)
    dep_rows: list[DepreciationMonth] = []
    book = ZERO
    for m in months:
        book += bought.get(m, ZERO) - depreciation[m]
        dep_rows.append(DepreciationMonth(m, bought.get(m, CENTS), depreciation[m], book))
    dep_sums = column_sums(dep_rows, ("bought", "depreciation"))
    table = Table(
        "depreciation",
        "Depreciation of on-prem purchases by month (capital, apart from cloud spend)",
        (
            Column("month", "Month"),
            Column("bought", "Capital bought", "money"),
            Column("depreciation", "Depreciation", "money"),
            Column("net_book_value", "Net book value, end of month", "money"),
        ),
        tuple(dep_rows),
        total=DepreciationMonth("Total", dep_sums["bought"], dep_sums["depreciation"], None) if dep_rows else None,
        note="Straight-line from the month a purchase starts, for its life in months, to the cent (the months of a "
        "purchase add up to its capital value). The spend tables carry the same purchases as planned hourly cost "
        "(the on-prem column); this is the book view of them.",
    )
    return purchases, table


@dataclass(frozen=True)
class DepreciationMonth(Row):
    month: str
    bought: Decimal
    depreciation: Decimal
    net_book_value: Decimal | None
