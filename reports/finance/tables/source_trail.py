"""Table `source_trail`: what the report was built from."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING

from quartermaster.pricing import format_pct, onprem_split
from quartermaster.reports.finance.table import Column, Row, Table
from quartermaster.units import quarter_bounds

if TYPE_CHECKING:
    from quartermaster.model import Inventory
    from quartermaster.plan_contract import PlanResult


@dataclass(frozen=True)
class SourceRow(Row):
    item: str
    value: str


def demand_sources(plan: PlanResult) -> str:
    """Where each quarter's demand comes from: the usage history (metered to its end, then forecast) or demand.csv."""
    forecast = {r.quarter: r.forecast_hours for r in plan.forecast}
    until = dt.datetime.fromisoformat(plan.actuals_until) if plan.actuals_until else None
    parts = []
    for q in plan.quarters:
        if q not in forecast:
            parts.append(f"{q}: usage.csv" if plan.options.from_usage else f"{q}: demand.csv")
        elif until is not None and dt.datetime.combine(quarter_bounds(q)[0], dt.time()) < until:
            parts.append(
                f"{q}: usage.csv as metered to {until:%Y-%m-%d %H:%M}, forecast from usage.csv for the rest "
                f"({forecast[q]:,} hours)"
            )
        else:
            parts.append(f"{q}: forecast from usage.csv")
    return "; ".join(_runs(parts))


def _runs(parts: list[str]) -> list[str]:
    """`quarter: source` items with consecutive quarters of the same source joined into `first to last: source`."""
    out: list[tuple[str, str, str]] = []
    for part in parts:
        quarter, source = part.split(": ", 1)
        if out and out[-1][2] == source:
            out[-1] = (out[-1][0], quarter, source)
        else:
            out.append((quarter, quarter, source))
    return [f"{a}: {source}" if a == b else f"{a} to {b}: {source}" for a, b, source in out]


def forecast_statements(plan: PlanResult) -> list[tuple[str, str]]:
    """Per quarter forecast from the usage history: its method, its score against the lookback method's (forecasting
    the history's own days), how far it was tried, and its band (PlanResult.forecast, totals over teams)."""
    out = []
    for q in sorted({r.quarter for r in plan.forecast}):
        rows = [r for r in plan.forecast if r.quarter == q]
        first = rows[0]
        horizon = f"{first.horizon_days:.1f} days"
        score = (
            "the usage history is too short to score it"
            if first.crps_accelerators is None or first.lookback_crps_accelerators is None
            else f"mean CRPS {first.crps_accelerators:.2f} accelerators forecasting each day of the usage history a "
            f"day ahead, the lookback's {first.lookback_crps_accelerators:.2f}"
        )
        held = (
            f"a method other than the lookback is carried {horizon} ahead only where it forecast the history's days "
            "that far ahead as well as the lookback"
            if first.tried_at_horizon
            else f"no day of the history can be forecast {horizon} ahead, so no trend or recent level is carried "
            "that far"
        )
        total = {f: sum(getattr(r, f"{f}_accelerators") for r in rows) for f in ("metered", "p10", "expected", "p90")}
        out.append(
            (
                f"Forecast, {q}",
                f"{first.method} ({score}; {held}): {total['expected']:,.1f} accelerators expected over its "
                f"{first.forecast_hours:,} forecast hours (the usage history's mean {total['metered']:,.1f}), band "
                f"p10 {total['p10']:,.1f} to p90 {total['p90']:,.1f} (each team's days' means at their 10th and 90th "
                "percentile, added up)",
            )
        )
    return out


def onprem_parts(inventory: Inventory) -> list[tuple[str, str]]:
    """The capital and operating parts of each on-prem rate, item by item with their sources, and the financing rate
    the capital tables discount financed purchases at."""
    rows = []
    for machine, site in dict.fromkeys((c.machine, c.site) for c in inventory.onprem_costs):
        split = onprem_split(inventory, machine, site)
        if split is not None:
            rows.append((f"Capital and operating parts, {machine} at {site}", "; ".join(split.sources)))
    rate = inventory.policy.financing_rate
    return [*rows, ("Financing rate of on-prem purchases", f"{format_pct(rate)} a year, compounded monthly")]


def source_trail(inventory: Inventory, plan: PlanResult, revision: str | None) -> Table:
    """Inventory revision, price-book dates, the plan's options and solve."""
    dated = sorted(p.as_of for p in inventory.prices if p.as_of is not None)
    undated = len(inventory.prices) - len(dated)
    prices = (
        f"{len(inventory.prices)} prices, read {dated[0]} to {dated[-1]}"
        if dated
        else f"{len(inventory.prices)} prices, none dated"
    ) + (f"; {undated} undated" if undated else "")
    o = plan.options
    what_if = ", ".join(o.what_if) or "none: the demand forecast and price book as written"
    minimum = o.min_utilisation
    options = "; ".join(
        [
            f"scenario {o.scenario}" if o.scenario else "all demand scenarios / quantiles",
            f"idle policy {o.idle_policy}",
            "new commitments charged their whole liability, less a credit for the capacity they leave after the "
            "horizon",
            f"least utilisation of new commitments {minimum:.0%}"
            if minimum is not None
            else "no least utilisation of new commitments",
        ]
    )
    gap = "not reported" if plan.gap is None else f"{plan.gap:.4%}"
    solve = (
        f"{plan.solver}: status {plan.status}, outcome {plan.outcome}, MILP gap {gap} (tolerance {o.gap_rel:.2%})"
        f", {plan.solve_seconds:.1f} s, time limit {o.time_limit_s:g} s"
    )
    rows = [
        ("Inventory revision", revision or "not recorded"),
        ("Price book", prices),
        *onprem_parts(inventory),
        ("Plan horizon", f"{plan.quarters[0]} to {plan.quarters[-1]} ({len(plan.quarters)} quarters)"),
        ("What-ifs", what_if),
        ("Demand", demand_sources(plan)),
        *forecast_statements(plan),
        ("Plan options", options),
        ("Solver", solve),
        (
            "Relaxed rules",
            f"{len(plan.relaxed_rules)} business rule(s) had to give (explain-infeasible mode)"
            if plan.relaxed
            else "none",
        ),
    ]
    return Table(
        "source_trail",
        "Sources and plan settings",
        (Column("item", "Item"), Column("value", "Value")),
        tuple(SourceRow(item, value) for item, value in rows),
        note="Inventory revision: the git commit of the inventory folder. MILP gap: how far the plan's expected "
        "cost may be above the best possible, as the solver proved it.",
    )
