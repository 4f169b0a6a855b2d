"""Ledgers: the priced lines (`pricing.PricedLine`) every money figure is a group-by of.

Two ledgers hold every dollar a person sees:

- the **plan's** (`PlanResult.ledger`, `ledger.csv` beside the plan's other tables), basis planned, with the closed
  part of the quarter in progress carried over from `qm meter` (basis metered);
- **`qm meter`'s** (`MeterResult.ledger`, `ledger.csv` of `qm meter --out`), basis metered.

Each has two sides (`pricing.SIDES`): its cost lines say what is paid for, its charge lines who bears it, and both
add up to the same total, quarter by quarter (month by month for `qm meter`). A table is `group_by` over one side,
its figures exact; they are rounded to the cent once, where they are shown (`quartermaster.plan_figures`).
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from quartermaster.pricing import PricedLine, Side, known_usd


def group_by(lines: Iterable[PricedLine], side: Side, *keys: str, **where: Any) -> dict[tuple[Any, ...], Decimal]:
    """The lines of `side` whose fields equal `where`, grouped by the fields `keys`, their amounts added up exactly
    (a line without a rate is a ValueError naming its source, never $0), in the order the groups first appear."""
    out: dict[tuple[Any, ...], Decimal] = {}
    for line in lines:
        if line.side == side and all(getattr(line, k) == v for k, v in where.items()):
            key = tuple(getattr(line, k) for k in keys)
            out[key] = out.get(key, Decimal(0)) + known_usd(line)
    return out


def total(lines: Iterable[PricedLine], side: Side, **where: Any) -> Decimal:
    """The amounts of the lines of `side` whose fields equal `where`, added up exactly."""
    return group_by(lines, side, **where).get((), Decimal(0))
