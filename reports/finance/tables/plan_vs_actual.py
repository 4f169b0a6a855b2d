"""Table `plan_vs_actual`: planned against metered cost per quarter and team, for the quarters with usage."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import numpy as np

from quartermaster.errors import ProblemsFound
from quartermaster.planned import team_costs
from quartermaster.pricing import DEFAULT_IDLE_POLICY, cents
from quartermaster.reports.finance.table import NAME_COLUMN, ZERO, Column, Row, Table, column_sums
from quartermaster.reports.finance.tables.common import PCT, centre_name
from quartermaster.reports.metering import Period, check_usage, inventory_records, meter, parse_period
from quartermaster.units import quarter_hours, quarter_of

if TYPE_CHECKING:
    import pandas as pd

    from quartermaster.model import Inventory
    from quartermaster.plan_result import PlanResult


@dataclass(frozen=True)
class PlanActualRow(Row):
    quarter: str
    plan: str
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
    """`qm meter` of one month: each team's charge (None: nothing metered)."""
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
    return out


def plan_vs_actual(
    inventory: Inventory, plan: PlanResult, previous: PlanResult | None, usage: pd.DataFrame | None
) -> Table:
    """Planned against metered cost per quarter and team, for every quarter of this plan (else of the previous plan)
    that has usage records.

    Metered: `qm meter` of each month with usage, with the plan's idle policy. Planned: the team's planned cost of
    the quarter times the share of the quarter's hours those months cover (the plan is quarterly)."""
    records, months = usage_months(inventory, usage)
    plans = [
        (p, label) for p, label in ((plan, "this plan"), (previous, "previous plan")) if p is not None and p.has_plan
    ]
    groups: dict[str, dict[str, Any]] = {}  # quarter -> plan, its label, months, hours, metered per team
    for month in months:
        q = quarter_of(month.start.date())
        source = next(((p, label) for p, label in plans if q in p.quarters), None)
        if source is None:
            continue
        metered = metered_by_team(inventory, records, month, source[0].options.get("idle_policy", DEFAULT_IDLE_POLICY))
        if metered is None:
            continue
        g = groups.setdefault(q, {"plan": source[0], "label": source[1], "months": [], "hours": 0, "metered": {}})
        g["months"].append(month.label)
        g["hours"] += month.hours
        for team, usd in metered.items():
            g["metered"][team] = g["metered"].get(team, ZERO) + usd
    centre = {t.name: t.cost_center for t in inventory.teams}
    rows: list[PlanActualRow] = []
    for q, g in sorted(groups.items(), key=lambda kv: parse_period(kv[0]).start):
        share = Decimal(g["hours"]) / Decimal(quarter_hours(q))
        planned = {team: cents(usd * share) for team, (_, usd) in team_costs(g["plan"], q).items()}
        for team in sorted(set(planned) | set(g["metered"]), key=lambda t: (t.startswith("_"), t)):
            p, m = planned.get(team, ZERO), g["metered"].get(team, ZERO)
            code = centre.get(team, "shared")
            rows.append(
                PlanActualRow(
                    q,
                    g["label"],
                    ", ".join(g["months"]),
                    team,
                    code,
                    centre_name(inventory, code),
                    p,
                    m,
                    m - p,
                    ((m - p) / p).quantize(PCT) if p else None,
                )
            )
    policies = sorted({g["plan"].options.get("idle_policy", DEFAULT_IDLE_POLICY) for g in groups.values()})
    spans = "; ".join(
        f"{label} covers {p.quarters[0]}" + (f" to {p.quarters[-1]}" if len(p.quarters) > 1 else "")
        for p, label in plans
    )
    found = f"usage records fall in {', '.join(m.label for m in months)}" if months else "there are no usage records"
    sums = column_sums(rows, ("planned", "metered", "variance"))
    return Table(
        "plan_vs_actual",
        "Plan vs actual per quarter",
        (
            Column("quarter", "Quarter"),
            Column("plan", "Plan"),
            Column("months", "Months with usage"),
            Column("team", "Team"),
            Column("cost_center", "Cost centre"),
            NAME_COLUMN,
            Column("planned", "Planned", "money"),
            Column("metered", "Metered", "money"),
            Column("variance", "Variance", "delta"),
            Column("variance_pct", "Variance %", "pct_change"),
        ),
        tuple(rows),
        note=f"Every quarter of this plan (else of the previous plan) with usage records: {', '.join(groups)}. "
        "Planned (basis: planned) is the plan's cost of the quarter prorated to the hours of the months with usage; "
        f"metered (basis: metered) is `qm meter` of the same months with the plan's idle policy "
        f"({', '.join(policies)}); variance = metered - planned. {found[0].upper()}{found[1:]}; {spans}."
        if rows
        else f"No overlap between usage and plan: {found}; {spans}. Plan vs actual appears once usage of a "
        "planned quarter is recorded (`qm meter`).",
        total=PlanActualRow("Total", "", "", "", "", "", sums["planned"], sums["metered"], sums["variance"], None)
        if rows
        else None,
    )
