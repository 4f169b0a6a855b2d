"""Splitting money into cent-rounded lines that add up exactly to a cent-rounded total."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from decimal import ROUND_FLOOR, Decimal
from typing import TypeVar

from quartermaster.units import CENT, cents

K = TypeVar("K", bound=Hashable)


def allocate_cents(amounts: Mapping[K, Decimal], total: Decimal) -> dict[K, Decimal]:
    """Round every amount to the cent so that the rounded amounts sum to `cents(total)`.

    Largest-remainder rounding: floor each amount to the cent, then hand the cents still missing to the
    amounts with the largest remainders (ties broken by key order; removed from the smallest if the floors
    already overshoot). `amounts` should add up to `total` before rounding; the method then moves each line
    by less than a cent.
    """
    target = cents(total)
    floors = {k: v.quantize(CENT, rounding=ROUND_FLOOR) for k, v in amounts.items()}
    missing = int((target - sum(floors.values(), Decimal(0))) / CENT)
    order = sorted(amounts, key=lambda k: (-(amounts[k] - floors[k]), str(k)))
    if not order:
        return {}
    step = CENT if missing >= 0 else -CENT
    ranked = order if missing >= 0 else list(reversed(order))
    for i in range(abs(missing)):
        key = ranked[i % len(ranked)]
        floors[key] += step
    return floors


def split_cents(amount: Decimal, weights: Mapping[K, Decimal]) -> dict[K, Decimal]:
    """Share a cent amount between keys in proportion to `weights`; the shares sum exactly to `amount`."""
    positive = {k: w for k, w in weights.items() if w > 0}
    if not positive:
        return {}
    whole = sum(positive.values(), Decimal(0))
    return allocate_cents({k: amount * w / whole for k, w in positive.items()}, amount)
