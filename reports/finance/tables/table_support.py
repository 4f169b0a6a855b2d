"""Small helpers the report's tables share."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import TYPE_CHECKING

from quartermaster.pricing import decimal_of
from quartermaster.units import Quarter

if TYPE_CHECKING:
    from quartermaster.model import Inventory
    from quartermaster.plan_contract import PurchaseRow

PCT = Decimal("0.0001")


def ratio(value: float | Decimal) -> Decimal:
    """A plan ratio (a float as solved) as Decimal from its shortest repr, not rounded (a view rounds it once,
    `pricing.format_pct`)."""
    return decimal_of(value)


def centre_name(inventory: Inventory, code: str) -> str:
    """The name of a cost centre (`policy.cost_center_names`), empty when it has none."""
    return inventory.policy.cost_center_names.get(code, "")


def commitment_term(row: PurchaseRow) -> str:
    return f"{row.term_months} months" if row.term_months else f"{row.node_weeks} node-weeks"


def active_quarters(order: Sequence[Quarter], row: PurchaseRow) -> Sequence[Quarter]:
    """The plan's quarters in which a purchase is active: from its start quarter, for its term (a capacity block:
    its start quarter)."""
    if row.start_quarter not in order:
        return []
    start = order.index(row.start_quarter)
    return order[start : start + (max(1, -(-row.term_months // 3)) if row.term_months else 1)]
