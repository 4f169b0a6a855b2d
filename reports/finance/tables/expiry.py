"""Table `commitment_expiry`: quarters in which commitments end, and sharp drops of committed spend or coverage."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING

from quartermaster.plan_figures import line_cents
from quartermaster.pricing import commitment_line, format_usd, last_quarter_of
from quartermaster.reports.finance.table import ZERO, Column, Row, Table
from quartermaster.units import LAST_QUARTER, Quarter

if TYPE_CHECKING:
    from quartermaster.model import Inventory

EXPIRY_SPEND_DROP = Decimal("0.20")
"""A quarter whose existing-commitment spend falls by this share or more from the quarter before is flagged."""
EXPIRY_COVERAGE_DROP = Decimal("0.10")
"""A quarter whose commitment coverage ($) falls by this much (10 percentage points) or more is flagged."""


@dataclass(frozen=True)
class ExpiryRow(Row):
    quarter: Quarter
    existing_before: Decimal | None
    existing: Decimal
    change: Decimal | None
    coverage_before: Decimal | None
    coverage: Decimal
    ending: str
    ending_before: Decimal
    warning: str


def expiry_table(inventory: Inventory, spend: Table, coverage: Table) -> Table:
    """Quarters in which the inventory's commitments end, and quarters in which existing-commitment spend or
    coverage falls sharply (EXPIRY_SPEND_DROP, EXPIRY_COVERAGE_DROP), with the commitments that end then.

    A commitment is listed in the first quarter it is no longer paid in (the one after `pricing.last_quarter_of`),
    with what it cost in the quarter before (`pricing.commitment_line`, the plan's existing-commitment lines)."""
    ending: dict[str, list[str]] = {}
    ending_before: dict[str, Decimal] = {}
    for c in sorted(inventory.commitments, key=lambda c: (c.end, c.name)):
        last = last_quarter_of(c)
        if last == LAST_QUARTER:
            continue  # paid to the calendar's end: it ends in none of the plan's quarters
        gone = last.next
        amount = line_cents(commitment_line(c, last, "planned"))
        ending.setdefault(gone, []).append(f"{c.name} (ends {c.end}; {format_usd(amount)} in {last})")
        ending_before[gone] = ending_before.get(gone, ZERO) + amount
    models = {c.key for c in spend.columns}
    existing = {
        r["quarter"]: r["existing-commitments"] if "existing-commitments" in models else ZERO for r in spend.rows
    }
    cover = {r["quarter"]: r["coverage"] for r in coverage.rows}
    quarters = [r["quarter"] for r in spend.rows]
    rows: list[ExpiryRow] = []
    for before, q in zip([None, *quarters], quarters, strict=False):
        was, now = (existing[before], cover[before]) if before else (None, None)
        fall = (was - existing[q]) / was if was else None
        points = now - cover[q] if now is not None else None
        warning = (fall is not None and fall >= EXPIRY_SPEND_DROP) or (
            points is not None and points >= EXPIRY_COVERAGE_DROP
        )
        if not (warning or q in ending):
            continue
        rows.append(
            ExpiryRow(
                q,
                was,
                existing[q],
                None if fall is None else -fall,
                now,
                cover[q],
                "; ".join(ending.get(q, ())) or "none (demand moved, not commitments)",
                ending_before.get(q, ZERO),
                "sharp drop" if warning else "",
            )
        )
    return Table(
        "commitment_expiry",
        "Commitments that end, and what that does to spend and coverage",
        (
            Column("quarter", "Quarter"),
            Column("existing_before", "Existing commitments, quarter before", "money"),
            Column("existing", "Existing commitments", "money"),
            Column("change", "Change", "pct"),
            Column("coverage_before", "Coverage ($), quarter before", "pct"),
            Column("coverage", "Coverage ($)", "pct"),
            Column("ending", "Commitments that end"),
            Column("ending_before", "Their cost, quarter before", "money"),
            Column("warning", "Warning"),
        ),
        tuple(rows),
        note=f"Basis: planned, a quarter's cost. A commitment is listed in the first quarter it is no longer paid in, "
        "with its cost in the quarter before (nodes x rate x its hours in that quarter). Warning when "
        "existing-commitment spend falls by "
        f"{EXPIRY_SPEND_DROP:.0%} or more from the quarter before, or commitment coverage ($) by "
        f"{EXPIRY_COVERAGE_DROP * 100:.0f} percentage points or more: demand those commitments served is then "
        "bought on demand or by the plan's new commitments.",
    )
