"""How to plan (`PlanOptions`, the contract's: a plan records its options), and the error for planning inputs the
user must fix.

Its own module so that every planner step (data, what-ifs, the usage forecast) can name them without importing
each other.
"""

from __future__ import annotations

from quartermaster.errors import UsageError
from quartermaster.plan_contract import BANDS, PlanOptions

__all__ = ["BANDS", "PlanInputError", "PlanOptions", "parse_horizon"]


class PlanInputError(UsageError):
    """A planning input the user must fix (bad what-if, unknown scenario, no demand in the horizon)."""


def parse_horizon(text: str) -> int:
    """`8q`, `8` -> 8 quarters; `2y` -> 8."""
    raw = text.strip().lower()
    try:
        if raw.endswith("y"):
            return int(raw[:-1]) * 4
        return int(raw.removesuffix("q"))
    except ValueError:
        raise PlanInputError(f"horizon `{text}` is not a number of quarters; write e.g. `8q` or `2y`") from None
