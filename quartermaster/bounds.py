"""The one set of bounds for every number Quartermaster reads, whatever it comes from: the inventory (the model's
field limits), usage files (`qm meter`, `qm export focus --usage`), Prometheus answers (`qm usage pull`) and
command options. What `qm validate` refuses, the other readers refuse too, as a located error.

The bounds catch absurd values (a typo of a few extra zeros, a year 9999, a hostile file) without limiting real
fleets; each is declared once here or where its unit is declared (`names`, `units`) and imported from here.
"""

from __future__ import annotations

import datetime as dt

from quartermaster.names import MAX_ACCELERATORS, MAX_NODES, MAX_USD_PER_NODE_HOUR
from quartermaster.units import FIRST_DAY, LAST_DAY

__all__ = [
    "FIRST_DAY",
    "FIRST_HOUR",
    "LAST_DAY",
    "LAST_HOUR",
    "MAX_ACCELERATORS",
    "MAX_CSV_COLUMNS",
    "MAX_DRAWS",
    "MAX_IMPACT_DAYS",
    "MAX_NODES",
    "MAX_SOLVE_SECONDS",
    "MAX_SWEEP_POINTS",
    "MAX_USD_PER_NODE_HOUR",
    "MAX_WHAT_IF_FACTOR",
    "accelerators_problem",
    "calendar_problem",
]

FIRST_HOUR = dt.datetime.combine(FIRST_DAY, dt.time())
LAST_HOUR = dt.datetime.combine(LAST_DAY, dt.time())
"""The first and last usage hour a usage row may name (the model's `UsageHour`, `check_usage` and metering's SQL
check alike)."""
MAX_IMPACT_DAYS = 3 * 366
"""Days of usage history `qm diff --impact-days` may replay (three years)."""
MAX_DRAWS = 100_000
"""Monte-Carlo draws of demand a plan sweep may take (`qm plan --draws`)."""
MAX_SWEEP_POINTS = 10_000
"""Points of a sweep grid (the product of its axes' lengths): each is one solve."""
MAX_SOLVE_SECONDS = 86_400
"""Seconds a solver run may be given (`qm plan --time-limit`): a day."""
MAX_WHAT_IF_FACTOR = 11.0
"""Most a what-if may multiply a demand or a price by (+1000 %; all what-ifs on one target together): a bigger
scenario is a typo (`demand=+100000000%` planned $44.8 trillion)."""
MAX_CSV_COLUMNS = 64
"""Columns a usage file may have: it needs 6; a header of tens of thousands of columns is refused before it is
read."""


def accelerators_problem(value: float) -> str | None:
    """Why `value` cannot be a mean number of accelerators (NaN, infinite, negative, above MAX_ACCELERATORS), or
    None."""
    if value != value or value in (float("inf"), float("-inf")):
        return "is not a finite number"
    if value < 0:
        return "is negative"
    if value > MAX_ACCELERATORS:
        return f"is above {MAX_ACCELERATORS:,} accelerators (the inventory's bound)"
    return None


def calendar_problem(moment: dt.date | dt.datetime) -> str | None:
    """Why a date or hour is outside the calendar window the inventory may name, or None."""
    day = moment.date() if isinstance(moment, dt.datetime) else moment
    if FIRST_DAY <= day <= LAST_DAY:
        return None
    return f"is outside {FIRST_DAY.year}-{LAST_DAY.year}"
