"""Table `source_trail`: what the report was built from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from quartermaster.pricing import DEFAULT_IDLE_POLICY
from quartermaster.reports.finance.table import Column, Row, Table

if TYPE_CHECKING:
    from quartermaster.model import Inventory
    from quartermaster.plan_result import PlanResult


@dataclass(frozen=True)
class SourceRow(Row):
    item: str
    value: str


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
    what_if = ", ".join(o.get("what_if") or ()) or "none: the demand forecast and price book as written"
    minimum = o.get("min_utilisation")
    options = "; ".join(
        [
            f"scenario {o['scenario']}" if o.get("scenario") else "all demand scenarios / quantiles",
            "demand derived from the usage history" if o.get("from_usage") else "demand from demand.csv",
            f"idle policy {o.get('idle_policy', DEFAULT_IDLE_POLICY)}",
            "new commitments charged their whole liability, less a credit for the capacity they leave after the horizon"
            if "charge_full_term" not in o  # a plan written before the horizon rule had this option
            else "new commitments charged their whole term"
            if o["charge_full_term"]
            else "new commitments charged for the part of their term inside the horizon",
            f"least utilisation of new commitments {float(minimum):.0%}"
            if minimum is not None
            else "no least utilisation of new commitments",
        ]
    )
    gap = "not reported" if plan.gap is None else f"{plan.gap:.4%}"
    tolerance = o.get("gap_rel")
    solve = (
        f"{plan.solver}: status {plan.status}, outcome {plan.outcome}, MILP gap {gap}"
        + (f" (tolerance {float(tolerance):.2%})" if tolerance is not None else "")
        + f", {plan.solve_seconds:.1f} s"
        + (f", time limit {float(o['time_limit_s']):g} s" if o.get("time_limit_s") else "")
    )
    rows = [
        ("Inventory revision", revision or "not recorded"),
        ("Price book", prices),
        ("Plan horizon", f"{plan.quarters[0]} to {plan.quarters[-1]} ({len(plan.quarters)} quarters)"),
        ("What-ifs", what_if),
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
