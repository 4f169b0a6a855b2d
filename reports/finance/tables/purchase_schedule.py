"""Table `purchase_schedule`: the plan's purchases and how each is paid."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING

from quartermaster.reports.finance.table import Column, Row, Table, column_sums
from quartermaster.reports.finance.tables.capital import term_hours
from quartermaster.reports.finance.tables.payments import PAYMENT_COLUMNS, Payment, Payments
from quartermaster.reports.finance.tables.table_support import commitment_term

if TYPE_CHECKING:
    from quartermaster.plan_contract import PlanResult


@dataclass(frozen=True)
class PurchaseLine(Row):
    start_quarter: str
    """start_quarter: a quarter, or `Totals by payment` on the total row: text, not a `Quarter`."""
    approve: str
    """approve: `now` for a purchase that starts in the first quarter open to purchases (the quarter in progress,
    from its first open day), else `later`."""
    site: str
    machine: str
    accelerator: str
    pricing_model: str
    term: str
    start: dt.date | None
    end: dt.date | None
    nodes: int | None
    accelerators: int | None
    hours: int | None
    usd_per_node_hour: Decimal | None
    usd_per_node_hour_used: Decimal | None
    payment: Payment | str
    upfront: Decimal | None
    monthly: Decimal | None
    over_term: Decimal
    liability: Decimal
    in_horizon: Decimal


PAID = ("upfront", "monthly", "over_term", "liability", "in_horizon")


def purchase_schedule(plan: PlanResult, payments: list[Payments]) -> Table:
    """The plan's purchases and how each is paid (`Payments`), with the totals per payment kind."""
    used = any(r.usd_per_node_hour_used for r in plan.purchase_schedule)
    rows = tuple(
        PurchaseLine(
            r.start_quarter,
            "now" if r.start_quarter == plan.first_open_quarter else "later",
            r.site,
            r.machine,
            r.accelerator,
            r.pricing_model,
            commitment_term(r),
            r.start,
            r.end,
            r.nodes,
            r.accelerators,
            term_hours(r),
            r.usd_per_node_hour,
            r.usd_per_node_hour_used,
            paid.payment,
            paid.upfront,
            paid.monthly,
            paid.over_term,
            paid.liability,
            paid.in_horizon,
        )
        for r, paid in zip(plan.purchase_schedule, payments, strict=True)
    )
    sums = column_sums(rows, PAID)
    bought = (
        Column("start_quarter", "Start"),
        Column("approve", "To approve"),
        Column("site", "Site"),
        Column("machine", "Machine"),
        Column("accelerator", "Accelerator"),
        Column("pricing_model", "Pricing"),
        Column("term", "Term"),
        Column("start", "From"),
        Column("end", "Until"),
        Column("nodes", "Nodes", "int"),
        Column("accelerators", "Accelerators", "int"),
        Column("hours", "Hours in term", "int"),
        Column("usd_per_node_hour", "USD / node-hour", "money"),
        *((Column("usd_per_node_hour_used", "Plus USD / node-hour used", "money"),) if used else ()),
    )
    return Table(
        "purchase_schedule",
        "Purchase schedule",
        (*bought, *PAYMENT_COLUMNS),
        rows,
        total=PurchaseLine(
            "Totals by payment",
            "",
            "",
            "",
            "",
            "",
            "",
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            "",
            **sums,
        ),
        # on the page: what is bought, then how it is paid, each row named by its start, site and machine
        parts=(
            tuple(c.key for c in bought),
            ("start_quarter", "site", "machine", "pricing_model", *(c.key for c in PAYMENT_COLUMNS)),
        ),
        note=f"To approve: now for the purchases that start in {plan.first_open_quarter} (the first quarter open to "
        "purchases; in the quarter in progress, from its first open day after the actuals end), later for the "
        "rest. Basis: planned, each purchase's own contract: paid upfront when bought (a capacity block's whole price, "
        "a commitment's upfront fee), then its hourly rate every hour of its term (paid monthly; all of it: paid over "
        "the term)"
        + (", and a rate per node-hour used on top, as used (not in the liability)" if used else "")
        + ". Total liability = upfront + USD / node-hour x nodes x hours in term (from From to Until, leap days "
        "included); paid monthly is a 730-hour month, so it times the term's months differs from the liability by "
        "the calendar's extra hours (the payment schedule pays each calendar month's own hours). Totals: all upfront "
        "payments; the monthly payments added up (each runs only during its own term, From "
        "to Until); all hourly payments; total liability (= upfront + over the term) and the part of it inside the "
        "plan's horizon (the rest is paid after the horizon); as `qm plan` prints them.",
    )
