"""Purchases as finance books them: tables `payment_schedule` (what every purchase pays in each calendar month: the
cash), `capital_purchases` and `capital_assets` (the plan's on-prem purchases and the on-prem assets already held, as
capital) and `depreciation` (the books of both by month: depreciation, interest, operating cost, net book value).

How a purchase is booked (its capital and operating parts, present value, interest, depreciation) is
`quartermaster.books`; these tables show and add up its amounts.

A purchase's liability is its rate times the hours of its term, from start to end (a 48-month term from 2027-01-01
has 35,064 hours: 1,461 days, a leap day included), plus its upfront fee. The "a month" figure elsewhere is a
730-hour month (`pricing.HOURS_PER_MONTH`), so 48 of them cover 35,040 hours; the payment schedule pays each
calendar month's own hours, so its months add up to the liability exactly.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING

from quartermaster.books import Booking, asset_bookings, monthly_payments, plan_bookings
from quartermaster.plan_figures import purchase_cents
from quartermaster.pricing import SPEND_RULE, format_pct
from quartermaster.reports.finance.table import CENTS, Column, Row, Table, column_sums

if TYPE_CHECKING:
    from quartermaster.model import Inventory
    from quartermaster.plan_contract import PlanResult, PurchaseRow


ZERO = Decimal(0)


def term_hours(row: PurchaseRow) -> int:
    """Hours from a purchase's start to its end."""
    return (row.end - row.start).days * 24


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
            upfront[start] = upfront.get(start, ZERO) + purchase_cents(r).upfront
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
    """start_quarter: a quarter, or `Total` on the total row: text, not a `Quarter`."""
    site: str
    machine: str
    nodes: int | None
    life_months: int | None
    financing: str
    capital: Decimal
    upfront: Decimal
    financed: Decimal
    interest: Decimal
    depreciation_month: Decimal
    operating_month: Decimal


@dataclass(frozen=True)
class CapitalAsset(Row):
    commitment: str
    start: str
    machine: str
    nodes: int | None
    life_months: int | None
    financing: str
    capital: Decimal
    upfront: Decimal
    financed: Decimal
    interest: Decimal
    depreciation_month: Decimal
    operating_month: Decimal


def _financing(b: Booking) -> str:
    if not b.payments or not any(b.payments.values()):
        return "paid upfront"
    return "part upfront, the rest financed monthly" if b.upfront else "financed: paid monthly over its life"


def _values(b: Booking) -> tuple[int, int, str, Decimal, Decimal, Decimal, Decimal, Decimal, Decimal]:
    """The columns a purchase and an asset share, from Nodes to Operating cost a month."""
    return (
        b.nodes,
        b.life_months,
        _financing(b),
        b.capital,
        b.upfront,
        b.financed,
        b.interest_total,
        b.depreciation_month,
        b.operating_month,
    )


VALUE_COLUMNS = (
    Column("nodes", "Nodes", "int"),
    Column("life_months", "Life (months)", "int"),
    Column("financing", "Paid"),
    Column("capital", "Capital value", "money"),
    Column("upfront", "Paid upfront", "money"),
    Column("financed", "Financed, present value", "money"),
    Column("interest", "Interest over its life", "money"),
    Column("depreciation_month", "Depreciation a month", "money"),
    Column("operating_month", "Operating cost a month", "money"),
)
SUMMED = ("capital", "upfront", "financed", "interest", "depreciation_month", "operating_month")


def _rate_note(inventory: Inventory) -> str:
    rate = inventory.policy.financing_rate
    split = bool(inventory.onprem_costs)
    return (
        "Basis: planned; the books, not spend. The capital part of an on-prem rate (hardware, installation) is "
        "capitalised, the operating part (power, space, support) is operating cost by month"
        + (
            " (the price book's parts, each with its source in the source trail)"
            if split
            else " (the price book gives no parts: the whole rate is capitalised)"
        )
        + ". A financed purchase, paid by the month, is capitalised at the present value of its capital payments at "
        f"the stated financing rate of {format_pct(rate)} a year (compounded monthly, each month's payment at its "
        "end); "
        "the rest of those payments is interest, shown apart. Depreciation a month = capital value / life months, "
        "straight-line from the month it starts."
    )


def _capital_table(
    rows: Sequence[Row], total: Row | None, name: str, title: str, first: tuple[Column, ...], note: str
) -> Table:
    return Table(name, title, (*first, *VALUE_COLUMNS), tuple(rows), total=total if rows else None, note=note)


def capital_tables(inventory: Inventory, plan: PlanResult) -> tuple[Table, Table, Table]:
    """(capital_purchases, capital_assets, depreciation): the plan's on-prem purchases and the assets held, as
    capital, and the books of both by month."""
    purchases = plan_bookings(inventory, plan)
    assets = asset_bookings(inventory)
    p_rows = [CapitalPurchase(r.start_quarter, r.site, r.machine, *_values(b)) for r, b in purchases]
    held = {c.name: c for c in inventory.commitments}
    a_rows = [CapitalAsset(name, f"{held[name].start:%Y-%m}", held[name].machine, *_values(b)) for name, b in assets]
    p_sums = column_sums(p_rows, SUMMED)
    a_sums = column_sums(a_rows, SUMMED)
    note = _rate_note(inventory)
    purchases_table = _capital_table(
        p_rows,
        CapitalPurchase("Total", "", "", sum(r.nodes or 0 for r in p_rows), None, "", *p_sums.values()),
        "capital_purchases",
        "The plan's on-prem purchases as capital",
        (Column("start_quarter", "Start"), Column("site", "Site"), Column("machine", "Machine")),
        note,
    )
    assets_table = _capital_table(
        a_rows,
        CapitalAsset("Total", "", "", sum(r.nodes or 0 for r in a_rows), None, "", *a_sums.values()),
        "capital_assets",
        "On-prem assets held as capital",
        (Column("commitment", "Commitment"), Column("start", "Start"), Column("machine", "Machine")),
        "The inventory's on-prem purchases already made, booked as the plan's are, from their start. " + note,
    )
    return purchases_table, assets_table, books_table([b for _, b in purchases] + [b for _, b in assets])


@dataclass(frozen=True)
class DepreciationMonth(Row):
    month: str
    bought: Decimal
    depreciation: Decimal
    interest: Decimal
    operating: Decimal
    net_book_value: Decimal | None
    liability: Decimal | None


def books_table(bookings: list[Booking]) -> Table:
    """Table `depreciation`: by month, the capital bought, its depreciation, the interest and operating cost of the
    bookings, the net book value and the financed liability at the month's end."""
    parts: dict[str, dict[str, Decimal]] = {k: {} for k in ("bought", "depreciation", "interest", "operating")}
    owed: dict[int, dict[str, Decimal]] = {}
    for i, b in enumerate(bookings):
        parts["bought"][b.first_month] = parts["bought"].get(b.first_month, ZERO) + b.capital
        for key, by_month in (("depreciation", b.depreciation), ("interest", b.interest), ("operating", b.operating)):
            for m, usd in by_month.items():
                parts[key][m] = parts[key].get(m, ZERO) + usd
        owed[i] = b.liability
    months = sorted(set().union(*(set(v) for v in parts.values())))
    rows: list[DepreciationMonth] = []
    book_value = ZERO
    last: dict[int, Decimal] = {i: b.financed for i, b in enumerate(bookings)}
    for m in months:
        book_value += parts["bought"].get(m, ZERO) - parts["depreciation"].get(m, ZERO)
        for i in owed:
            if m in owed[i]:
                last[i] = owed[i][m]
            elif m < bookings[i].first_month:
                last[i] = ZERO
        started = [i for i in owed if bookings[i].first_month <= m]
        rows.append(
            DepreciationMonth(
                m,
                parts["bought"].get(m, CENTS),
                parts["depreciation"].get(m, CENTS),
                parts["interest"].get(m, CENTS),
                parts["operating"].get(m, CENTS),
                book_value,
                sum((last[i] for i in started), CENTS),
            )
        )
    sums = column_sums(rows, ("bought", "depreciation", "interest", "operating"))
    return Table(
        "depreciation",
        "On-prem capital by month: the books (depreciation, interest and operating cost)",
        (
            Column("month", "Month"),
            Column("bought", "Capital bought", "money"),
            Column("depreciation", "Depreciation", "money"),
            Column("interest", "Interest", "money"),
            Column("operating", "Operating cost", "money"),
            Column("net_book_value", "Net book value, end of month", "money"),
            Column("liability", "Financed, owed at month end", "money"),
        ),
        tuple(rows),
        total=DepreciationMonth(
            "Total", sums["bought"], sums["depreciation"], sums["interest"], sums["operating"], None, None
        )
        if rows
        else None,
        note="Basis: planned; the books of the on-prem purchases and assets held, not spend. Depreciation is "
        "straight-line from the month a purchase starts, for its life in months, to the cent (a purchase's months add "
        "up to its capital value); interest is the financed amount owed times the monthly rate, the last month "
        "clearing it; the operating cost is the operating part for each month's own hours. " + SPEND_RULE,
    )
