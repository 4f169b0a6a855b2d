"""The quarter in progress: its closed part is metered, its open part is planned, and purchases start on the first
open day.

A plan whose first quarter began before the end of the actuals (`actuals_until`: the usage history's last hour's
end, or `PlanOptions.as_of`) splits it there:

- the **closed part**, from the quarter's first day (or the usage history's first day, if later: the part before
  it is neither metered nor planned, and the plan's notes say so) to `actuals_until`, is what `qm meter` charges
  for it, month by month (`closed_ledger`: the metering function itself, with the plan's idle policy), fixed and
  never re-planned: its cost per team joins the quarter's cost, and each cost centre's budget row keeps only what
  the closed part has left of it;
- the **open part**, from `actuals_until` to the quarter's end, is all the model sees of the quarter: its hours
  (`open_hours`), its demand (the usage forecast from `actuals_until`), the existing commitments active in it;
- a commitment, on-prem order or capacity block bought in the quarter starts on its **first open day**
  (`purchase_day`: the day `actuals_until` falls on when it is midnight, else the day after), its term and
  liability from that day; it is active in each quarter for the share of the quarter's (open) hours its term covers
  (`active_share`), and a capacity block there lasts the whole weeks from that day to the quarter's end
  (`block_weeks`).

A quarter that starts after `actuals_until` is planned whole, from its first day.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Sequence
from decimal import Decimal

import pandas as pd

from quartermaster.metering import Period, check_usage, inventory_records, meter
from quartermaster.model import Inventory
from quartermaster.planner.options import PlanInputError
from quartermaster.pricing import HOURS_PER_WEEK, IDLE_COST_CENTER, IDLE_TEAM
from quartermaster.units import Quarter, add_months, quarter_bounds

CLOSED_COLUMNS = [
    "quarter",
    "period",
    "start",
    "end",
    "team",
    "cost_center",
    "usage_usd",
    "idle_share_usd",
    "usd",
    "accelerator_hours",
]


def known_on(inventory: Inventory, as_of: dt.date | None) -> Inventory:
    """The inventory as it was known at the start of `as_of` (`qm plan --as-of`): its usage rows before that day;
    unchanged when `as_of` is None. The day must fall inside the usage history, after its first hour and at most at
    its end (the actuals cannot end where nothing was metered)."""
    if as_of is None:
        return inventory
    if not inventory.usage:
        raise PlanInputError(
            f"--as-of {as_of}: the inventory has no usage history (usage.csv) whose actuals could end then; "
            "leave --as-of out or add the metered usage"
        )
    cut = dt.datetime.combine(as_of, dt.time())
    first = min(u.hour for u in inventory.usage)
    end = max(u.hour for u in inventory.usage) + dt.timedelta(hours=1)
    if not first < cut <= end:
        raise PlanInputError(
            f"--as-of {as_of}: outside the usage history ({first:%Y-%m-%d %H:%M} to {end:%Y-%m-%d %H:%M}); "
            f"give a day after {first:%Y-%m-%d} and at most {end:%Y-%m-%d}, or leave --as-of out to end the actuals "
            "where the history ends"
        )
    return inventory.model_copy(update={"usage": [u for u in inventory.usage if u.hour < cut]})


def _moment(day: dt.date) -> dt.datetime:
    return dt.datetime.combine(day, dt.time())


def open_start(quarter: Quarter, until: dt.datetime | None) -> dt.datetime:
    """The first moment of the quarter that is open (planned): its first day, or `until` if that is later."""
    start = _moment(quarter_bounds(quarter)[0])
    return start if until is None else max(start, until)


def open_hours(quarter: Quarter, until: dt.datetime | None) -> int:
    """H_q: the quarter's hours from open_start to its end (all of them when it starts after `until`)."""
    end = _moment(quarter_bounds(quarter)[1])
    return max(0, int((end - open_start(quarter, until)).total_seconds()) // 3600)


def purchase_day(quarter: Quarter, until: dt.datetime | None) -> dt.date:
    """The day a purchase made in the quarter starts: its first day, or in the quarter in progress the first open day
    (the day `until` falls on when it is midnight, else the day after)."""
    moment = open_start(quarter, until)
    return moment.date() if moment.time() == dt.time() else moment.date() + dt.timedelta(days=1)


def term_end(start: dt.date, months: int) -> dt.date:
    """The day after the last of a term of `months` started on `start`."""
    return add_months(start, months)


def term_hours(start: dt.date, months: int) -> int:
    """Hours of a term started on `start`, to its end: what its liability counts."""
    return (term_end(start, months) - start).days * 24


def covered_hours(start: dt.date, end: dt.date, quarter: Quarter, until: dt.datetime | None) -> int:
    """Hours of [start, end) inside the quarter's open part."""
    q_end = _moment(quarter_bounds(quarter)[1])
    first = max(_moment(start), open_start(quarter, until))
    return max(0, int((min(_moment(end), q_end) - first).total_seconds()) // 3600)


@functools.lru_cache(maxsize=65536)
def active_share(start: dt.date, months: int, quarter: Quarter, until: dt.datetime | None) -> float:
    """The share of the quarter's open hours that a term of `months` started on `start` covers (1 for every quarter a
    term started on a quarter's first day covers whole)."""
    hours = open_hours(quarter, until)
    return covered_hours(start, term_end(start, months), quarter, until) / hours if hours else 0.0


@functools.lru_cache(maxsize=65536)
def bought_share(bought_in: Quarter, months: int, quarter: Quarter, until: dt.datetime | None) -> float:
    """active_share of a term of `months` bought in quarter `bought_in` (from its purchase_day), in `quarter`: cached,
    since the model asks it for every commitment column and quarter."""
    return active_share(purchase_day(bought_in, until), months, quarter, until)


def block_weeks(quarter: Quarter, until: dt.datetime | None) -> int:
    """W_q: the whole weeks from the quarter's purchase day to its end, the length of the capacity block booked in
    it."""
    days = (quarter_bounds(quarter)[1] - purchase_day(quarter, until)).days
    return max(0, days) * 24 // HOURS_PER_WEEK


def closed_periods(
    quarter: Quarter, until: dt.datetime, since: dt.datetime | None = None
) -> list[tuple[str, dt.datetime, dt.datetime]]:
    """The closed part of a quarter in progress, month by month: (label, start, end), from the quarter's first day or
    the usage history's first day `since` if that is later (before it nothing was metered: `uncovered_notes`); a
    month cut by `since` or `until` is labelled by its dates."""
    start = max(_moment(quarter_bounds(quarter)[0]), since or dt.datetime.min)
    end = min(until, _moment(quarter_bounds(quarter)[1]))
    out = []
    while start < end:
        month_end = _moment(add_months(start.date().replace(day=1), 1))
        stop = min(month_end, end)
        whole = start.day == 1 and start.time() == dt.time() and stop == month_end
        out.append((f"{start:%Y-%m}" if whole else f"{start:%Y-%m-%d %H:%M}..{stop:%Y-%m-%d %H:%M}", start, stop))
        start = stop
    return out


def closed_ledger(
    inventory: Inventory, quarters: Sequence[Quarter], until: dt.datetime | None, policy: str
) -> pd.DataFrame:
    """Each team's metered charge (usage, idle share, total; accelerator-hours charged) in the closed part of every
    quarter of `quarters` that began before `until`, month by month (CLOSED_COLUMNS): `qm meter`'s own function
    with the plan's idle policy, so the plan's closed months equal `qm meter`'s to the cent. Idle nobody can take
    (no team used anything) is on the IDLE_TEAM line, as in the plan's own cost by team."""
    rows: list[dict[str, object]] = []
    begun = [q for q in quarters if until is not None and _moment(quarter_bounds(q)[0]) < until]
    if not begun or until is None:
        return pd.DataFrame(rows, columns=CLOSED_COLUMNS)
    records, issues = check_usage(inventory_records(inventory), inventory, "usage.csv")
    if issues:
        raise PlanInputError(f"the closed part of the quarter in progress cannot be metered: {issues[0].format()}")
    since = history_start(inventory)
    for q in begun:
        for label, start, end in closed_periods(q, until, since):
            result, problems = meter(inventory, records, Period(label, start, end), policy)
            if problems:
                raise PlanInputError(f"{label} cannot be metered: {problems[0].format()}")
            if result is None:
                continue
            for t in result.teams:
                rows.append(
                    {
                        "quarter": q,
                        "period": label,
                        "start": start.isoformat(),
                        "end": end.isoformat(),
                        "team": t.team,
                        "cost_center": t.cost_center,
                        "usage_usd": t.usage_cost,
                        "idle_share_usd": t.idle_share,
                        "usd": t.total,
                        "accelerator_hours": float(t.charged_hours),
                    }
                )
            if result.unallocated_idle:
                rows.append(
                    {
                        "quarter": q,
                        "period": label,
                        "start": start.isoformat(),
                        "end": end.isoformat(),
                        "team": IDLE_TEAM,
                        "cost_center": IDLE_COST_CENTER,
                        "usage_usd": Decimal(0),
                        "idle_share_usd": result.unallocated_idle,
                        "usd": result.unallocated_idle,
                        "accelerator_hours": 0.0,
                    }
                )
    return pd.DataFrame(rows, columns=CLOSED_COLUMNS)


def history_start(inventory: Inventory) -> dt.datetime | None:
    """The usage history's first day, midnight UTC of its first record (a day with a record is covered, as `qm meter`
    checks and `covered_month` reads it); None without usage."""
    first = min((u.hour for u in inventory.usage), default=None)
    return None if first is None else _moment(first.date())


def uncovered_notes(quarters: Sequence[Quarter], since: dt.datetime | None) -> tuple[str, ...]:
    """What the plan says of a quarter in progress whose usage history begins after its first day: the part before
    the history is neither metered nor planned (never billed as idle), so the quarter's cost leaves it out."""
    notes = []
    for q in quarters:
        start, end = (_moment(d) for d in quarter_bounds(q))
        if since is not None and start < since < end:
            days = (since - start).total_seconds() / 86_400
            gap = f"{start:%Y-%m-%d %H:%M}..{since:%Y-%m-%d %H:%M}"
            notes.append(
                f"{q}: the usage history begins {since:%Y-%m-%d %H:%M} UTC, so {gap} ({days:g} days) is neither "
                "metered nor planned: the quarter's cost and plan vs actual cover the rest of it; add the earlier "
                "usage records to count that part"
            )
    return tuple(notes)


def closed_demand(inventory: Inventory, quarters: Sequence[Quarter], until: dt.datetime | None) -> pd.DataFrame:
    """Accelerator-hours requested per quarter, team and accelerator class in the closed part of each quarter of
    `quarters` that began before `until` (the demand the quarter had, as the forecast reads usage): its part of the
    all-on-demand baseline."""
    columns = ["quarter", "team", "accelerator", "accelerator_hours"]
    rows: dict[tuple[Quarter, str, str], float] = {}
    if until is not None:
        begun = {q: _moment(quarter_bounds(q)[0]) for q in quarters if _moment(quarter_bounds(q)[0]) < until}
        for u in inventory.usage:
            pool = inventory.pool_by_name.get(u.flavor)
            q = next((q for q, start in begun.items() if start <= u.hour < until), None)
            if pool is None or q is None or u.hour >= _moment(quarter_bounds(q)[1]):
                continue
            key = (q, u.team, inventory.machine_by_name[pool.machine].accelerator)
            rows[key] = rows.get(key, 0.0) + float(u.accelerators_requested)
    return pd.DataFrame([(*k, v) for k, v in sorted(rows.items())], columns=columns)
