"""How to plan (`PlanOptions`), and the error for planning inputs the user must fix.

Its own module so that every planner step (data, what-ifs, the usage forecast) can name them without importing
each other.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from quartermaster.errors import UsageError
from quartermaster.pricing import DEFAULT_IDLE_POLICY

# Load-duration bands (shares of a quarter's hours, low demand to high) used to turn p50/p90 into buckets.
# Finer at the top, where the on-demand / commitment trade-off is decided.
BANDS: tuple[tuple[float, float], ...] = (
    (0.0, 0.1),
    (0.1, 0.3),
    (0.3, 0.5),
    (0.5, 0.7),
    (0.7, 0.9),
    (0.9, 0.97),
    (0.97, 1.0),
)


class PlanInputError(UsageError):
    """A planning input the user must fix (bad what-if, unknown scenario, no demand in the horizon)."""


@dataclass(frozen=True)
class PlanOptions:
    """How to plan: horizon, scenario, what-ifs, solver settings."""

    horizon: int = 8
    """Quarters to plan."""
    start: str | None = None
    """First quarter; default: the quarter in progress where the actuals end (its closed part as metered, the rest
    planned: planner/actuals.py), else the earliest quarter with demand."""
    as_of: dt.date | None = None
    """The day the actuals end (`qm plan --as-of`): the usage history before it is metered, the rest is forecast and
    planned, and purchases can start from it; default: the end of the usage history."""
    scenario: str | None = None
    """Plan for one named scenario only (probability 1); default: all scenarios."""
    what_if: tuple[str, ...] = ()
    """Overrides: `demand=+20%`, `demand:<team>=-10%`, `price:<site>/<machine>[/<model>]=-10%`, `lose-site=<site>`."""
    explain_infeasible: bool = False
    """Add named, penalised slack variables so that a plan always exists and report which rules gave."""
    from_usage: bool = False
    """Derive demand from the usage history (its hours carried to each quarter by a robust trend, in bands)."""
    solver: str = "highs"
    """`highs` (default, in-process through highspy) or `cbc` (bundled with PuLP)."""
    time_limit_s: float = 120.0
    gap_rel: float = 1e-3
    """Stop when the plan is proven within this share of the best possible expected cost."""
    threads: int | None = None
    min_utilisation: float | None = None
    """Least expected utilisation of new commitments per offer and quarter (0-1); default none."""
    idle_policy: str = DEFAULT_IDLE_POLICY
    """How committed hours nobody uses are shared between teams (`pricing.IDLE_POLICIES`, as `qm meter`)."""
    credit_shares: tuple[float, ...] = ()
    """Shares of the post-horizon credit (0-1) to re-solve the plan with, beside the plan's whole credit, so the
    first quarter's purchases and the horizon cost show how much they rest on it (`qm plan`: 0 and 0.5)."""
    resolve_shadow_prices: bool = True
    """Re-solve the shadow prices the duals give only a lower bound of (`planner/marginal.py`); a sweep, which reads
    no shadow prices, leaves it off."""
    bands: tuple[tuple[float, float], ...] = BANDS
    """Load-duration bands for quantile demand and for demand derived from usage."""


def parse_horizon(text: str) -> int:
    """`8q`, `8` -> 8 quarters; `2y` -> 8."""
    raw = text.strip().lower()
    try:
        if raw.endswith("y"):
            return int(raw[:-1]) * 4
        return int(raw.removesuffix("q"))
    except ValueError:
        raise PlanInputError(f"horizon `{text}` is not a number of quarters; write e.g. `8q` or `2y`") from None
