"""Table `commitments_to_approve`: the purchases that start in the report's quarter and how each is paid."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from quartermaster.reports.finance.table import Column, Row, Table
from quartermaster.reports.finance.tables.payments import PAYMENT_COLUMNS, Payment


@dataclass(frozen=True)
class Commitment(Row):
    """A new commitment (or capacity block) the plan asks finance to approve, and how it is paid (`Payments`)."""

    site: str
    machine: str
    pricing_model: str
    term: str
    nodes: int
    accelerators: int
    payment: Payment
    upfront: Decimal | None
    monthly: Decimal | None
    over_term: Decimal
    """over_term: what is paid by the hour over the term (liability - upfront)."""
    liability: Decimal
    in_horizon: Decimal
    """in_horizon: the part of the liability inside the plan's horizon (in the plan's expected cost)."""


def approve_table(approve: tuple[Commitment, ...]) -> Table:
    """The commitments to approve as a table (the summary's, for the workbook and CSV)."""
    return Table(
        "commitments_to_approve",
        "Commitments to approve",
        (
            Column("site", "Site"),
            Column("machine", "Machine"),
            Column("pricing_model", "Pricing"),
            Column("term", "Term"),
            Column("nodes", "Nodes", "int"),
            Column("accelerators", "Accelerators", "int"),
            *PAYMENT_COLUMNS,
        ),
        approve,
        note="Basis: planned. Paid upfront: when bought; paid monthly: a month during the term; paid over the term: "
        "all of those hourly payments; upfront + over the term = total liability, every hour of the term, what finance "
        "commits to; of which in the plan's horizon: the part the plan's quarters pay (in their spend); the rest falls "
        "after the horizon.",
    )
