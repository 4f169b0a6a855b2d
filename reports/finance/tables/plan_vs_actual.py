"""Table `plan_vs_actual`: each plan's figure against the metered cost per month and team, for the months with usage."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import numpy as np

from quartermaster.errors import ProblemsFound
from quartermaster.metering import (
    Period,
    check_usage,
    coverage_label,
    covered_month,
    inventory_records,
    meter,
    parse_period,
)
from quartermaster.plan_figures import closed_charges, prorated_open_charges
from quartermaster.pricing import IDLE_COST_CENTER, IDLE_TEAM
from quartermaster.reports.finance.table import NAME_COLUMN, ZERO, Column, Row, Table, column_sums
from quartermaster.reports.finance.tables.table_support import centre_name
from quartermaster.units import Quarter, quarter_bounds, quarter_of

if TYPE_CHECKING:
    import pandas as pd

    from quartermaster.model import Inventory
    from quartermaster.plan_contract import PlanResult


@dataclass(frozen=True)
class PlanActualRow(Row):
    quarter: str
    """quarter: a quarter, or `Total` on the total row: text, not a `Quarter`."""
    plan: str
    basis: str
    months: str
    team: str
    cost_center: str
    cost_center_name: str
    planned: Decimal
    metered: Decimal
    variance: Decimal
    variance_pct: Decimal | None


def usage_months(inventory: Inventory, usage: pd.DataFrame | None) -> tuple[Any, list[Period]]:
    """The usage records (`usage`, else the inventory's own, checked) and the calendar months they fall in, in
    order."""
    records: pd.DataFrame | None = usage
    issues: list[Any] = []
    if usage is None and inventory.usage:
        records, issues = check_usage(inventory_records(inventory), inventory, "usage.csv")
    if issues:
        raise ProblemsFound(f"plan vs actual: {issues[0].format()} ({len(issues)} problem(s); `qm meter` lists them)")
    if records is None or records.empty:
        return records, []
    months = np.unique(records["hour"].to_numpy().astype("datetime64[M]"))  # sorted: 2026-10, 2026-11, ...
    return records, [parse_period(str(month)) for month in months]


def metered_by_team(inventory: Inventory, records: Any, month: Period, policy: str) -> dict[str, Decimal] | None:
    """`qm meter` of one period: each team's charge, and idle no team could take on IDLE_TEAM (None: nothing
    metered)."""
    result, problems = meter(inventory, records, month, policy)
    if problems:
        raise ProblemsFound(
            f"plan vs actual: {problems[0].format()} ({len(problems)} problem(s); `qm meter` lists them)"
        )
    if result is None:
        return None
    out: dict[str, Decimal] = {}
    for charge in result.teams:
        out[charge.team] = out.get(charge.team, ZERO) + charge.total
    if result.unallocated_idle:
        out[IDLE_TEAM] = result.unallocated_idle
    return out


CLOSED_BASIS = "metered (closed when planned)"
PLANNED_BASIS = "planned (prorated)"


def planned_by_team(plan: PlanResult, quarter: Quarter, period: Period) -> tuple[dict[str, Decimal], str]:
    """What a plan says of `period` (in `quarter`) per team, and its basis: the plan's closed part as metered when
    the period was closed when it was made (`PlanResult.closed_costs`, to the cent); else its planned open part of
    the quarter (the quarter's charge less its closed part) prorated to the period's hours."""
    closed = closed_charges(plan, quarter, period.start, period.end)
    if closed:
        return closed, CLOSED_BASIS
    until = dt.datetime.fromisoformat(plan.actuals_until) if plan.actuals_until else None
    start, end = (dt.datetime.combine(d, dt.time()) for d in quarter_bounds(quarter))
    open_from = max(start, until) if until else start
    share = Decimal(period.hours) / Decimal(int((end - open_from).total_seconds()) // 3600)
    return prorated_open_charges(plan, quarter, share), PLANNED_BASIS


def plan_vs_actual(
    inventory: Inventory, plan: PlanResult, previous: PlanResult | None, usage: pd.DataFrame | None
) -> Table:
    """Each plan's figure for every month with usage records in its quarters against `qm meter`'s, per team: this
    plan's closed months are its metered figures (equal to the cent), and the previous plan's forecast of the same
    months is the variance that matters.

    Metered: `qm meter` of each month with usage (of the part the history covers when it begins or ends inside the
    month: `covered_month`, and the month's label says so), with the plan's idle policy. Planned: `planned_by_team`
    of the same part."""
    records, months = usage_months(inventory, usage)
    plans = [
        (p, label) for p, label in ((plan, "this plan"), (previous, "previous plan")) if p is not None and p.has_plan
    ]
    centre = {t.name: t.cost_center for t in inventory.teams} | {IDLE_TEAM: IDLE_COST_CENTER}
    rows: list[PlanActualRow] = []
    covered: list[str] = []
    metered_cache: dict[tuple[str, str], dict[str, Decimal] | None] = {}
    for month in months:
        q = quarter_of(month.start.date())
        for p, label in plans:
            if q not in p.quarters:
                continue
            policy = p.options.idle_policy
            part = covered_month(records, month)  # a month the history covers in part: that part, said so
            if (month.label, policy) not in metered_cache:
                metered_cache[(month.label, policy)] = metered_by_team(inventory, records, part, policy)
            metered = metered_cache[(month.label, policy)]
            if metered is None:
                continue
            planned, basis = planned_by_team(p, q, part)
            covered.append(q)
            for team in sorted(set(planned) | set(metered), key=lambda t: (t.startswith("_"), t)):
                pl, m = planned.get(team, ZERO), metered.get(team, ZERO)
                code = centre.get(team, "shared")
                rows.append(
                    PlanActualRow(
                        q,
                        label,
                        basis,
                        coverage_label(month, part),
                        team,
                        code,
                        centre_name(inventory, code),
                        pl,
                        m,
                        m - pl,
                        (m - pl) / pl if pl else None,  # exact: every view rounds it once (format_pct)
                    )
                )
    policies = sorted({p.options.idle_policy for p, _ in plans})
    spans = "; ".join(
        f"{label} covers {p.quarters[0]}"
        + (f" to {p.quarters[-1]}" if len(p.quarters) > 1 else "")
        + (f", actuals to {p.actuals_until[:16].replace('T', ' ')}" if p.actuals_until else "")
        for p, label in plans
    )
    found = f"usage records fall in {', '.join(m.label for m in months)}" if months else "there are no usage records"
    sums = {
        label: column_sums([r for r in rows if r.plan == label], ("planned", "metered", "variance"))
        for _, label in plans
    }
    # the total of one plan's rows: the previous plan's where it has any (its forecast is the variance that matters)
    total = next((label for label in ("previous plan", "this plan") if any(r.plan == label for r in rows)), None)
    return Table(
        "plan_vs_actual",
        "Plan vs actual per month",
        (
            Column("quarter", "Quarter"),
            Column("plan", "Plan"),
            Column("basis", "Plan's figure"),
            Column("months", "Month"),
            Column("team", "Team"),
            Column("cost_center", "Cost centre"),
            NAME_COLUMN,
            Column("planned", "Plan", "money"),
            Column("metered", "Metered", "money"),
            Column("variance", "Variance", "delta"),
            Column("variance_pct", "Variance %", "pct_change"),
        ),
        tuple(rows),
        note=f"Every month with usage records in a quarter of this plan or of the previous plan "
        f"({', '.join(dict.fromkeys(covered))}), compared with each plan that covers it. A plan's figure is "
        f"`{CLOSED_BASIS}` for a month that had closed when the plan was made (the plan holds `qm meter`'s charge "
        f"for it, so it equals the metered figure to the cent), else `{PLANNED_BASIS}`: the plan's cost of the "
        "quarter's open part prorated to the month's hours (basis: planned). The variance that matters is the "
        "previous plan's forecast against the actuals (`qm report --previous DIR`). Metered (basis: metered) is "
        f"`qm meter` of the same month with the plan's idle policy ({', '.join(policies)}); variance = metered - "
        f"the plan's figure. {found[0].upper()}{found[1:]}; {spans}."
        if rows
        else f"No overlap between usage and plan: {found}; {spans}. Plan vs actual appears once usage of a "
        "planned quarter is recorded (`qm meter`).",
        total=None
        if total is None
        else PlanActualRow(
            "Total",
            total,
            "",
            "",
            "",
            "",
            "",
            sums[total]["planned"],
            sums[total]["metered"],
            sums[total]["variance"],
            None,
        ),
    )
