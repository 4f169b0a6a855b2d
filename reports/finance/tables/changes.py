"""Tables `changes_cost` and `changes_purchases`: this plan against the previous one."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING

from quartermaster.plan_figures import purchase_cents, quarter_cost
from quartermaster.reports.finance.table import ZERO, Column, Row, Table, column_sums
from quartermaster.units import Quarter

if TYPE_CHECKING:
    from quartermaster.plan_contract import PlanResult, PurchaseRow


@dataclass(frozen=True)
class CostChange(Row):
    quarter: str
    """quarter: a quarter, or `Total` (`Total, quarters both plans cover`) on the total row: text, not a `Quarter`."""
    previous: Decimal | None
    current: Decimal | None
    delta: Decimal | None


@dataclass(frozen=True)
class PurchaseChange(Row):
    start_quarter: Quarter
    site: str
    machine: str
    pricing_model: str
    change: str
    nodes_before: int
    nodes_after: int | None
    liability_delta: Decimal | None


def _purchase_change(a: PurchaseRow | None, b: PurchaseRow | None, start: Quarter, quarters: Sequence[Quarter]) -> str:
    """What happened to a purchase between the previous plan (`a`) and this one (`b`)."""
    if a is None:
        return "added"
    if b is None:
        return (
            "dropped"
            if start in quarters
            else "before this plan's horizon"
            if start < quarters[0]
            else "beyond this plan's horizon"
        )
    if a.nodes != b.nodes:
        return "resized"
    changed = [
        f"{label} {getattr(a, k)} -> {getattr(b, k)}"
        for k, label in (
            ("node_weeks", "node-weeks"),
            ("usd_per_node_hour", "USD / node-hour"),
            ("start", "from"),
            ("end", "until"),
        )
        if str(getattr(a, k)) != str(getattr(b, k))
    ]
    return "; ".join(changed) or "liability changed"


def changes_tables(plan: PlanResult, previous: PlanResult, quarters: Sequence[Quarter]) -> list[Table]:
    """Cost per quarter and purchases, this plan against the previous one. The plans may cover different
    horizons: a quarter only one of them covers has no change, and a purchase the previous plan starts after
    this plan's horizon is "beyond this plan's horizon", not dropped."""
    both = [q for q in quarters if q in previous.quarters]
    rows: list[CostChange] = []
    for q in quarters:
        cost_now = quarter_cost(plan, q)
        cost_before = quarter_cost(previous, q) if q in both else None
        rows.append(CostChange(q, cost_before, cost_now, None if cost_before is None else cost_now - cost_before))
    span = f"{previous.quarters[0]} to {previous.quarters[-1]}" if previous.quarters else "no quarters"
    sums = column_sums([r for r in rows if r.quarter in both], ("previous", "current", "delta"))
    cost = Table(
        "changes_cost",
        "What changed since the previous plan: cost per quarter",
        (
            Column("quarter", "Quarter"),
            Column("previous", "Previous plan", "money"),
            Column("current", "This plan", "money"),
            Column("delta", "Change", "delta"),
        ),
        tuple(rows),
        total=CostChange(
            "Total, quarters both plans cover" if len(both) < len(quarters) else "Total",
            sums["previous"],
            sums["current"],
            sums["delta"],
        ),
        note=f"Basis: planned. The previous plan covers {span}; this plan {quarters[0]} to {quarters[-1]}."
        + (" A quarter only this plan covers has no previous figure." if len(both) < len(quarters) else ""),
    )

    def keyed(p: PlanResult) -> dict[tuple[Quarter, str, str, str, str], PurchaseRow]:
        return {
            (r.start_quarter, r.site, r.machine, r.pricing_model, str(r.term_months)): r for r in p.purchase_schedule
        }

    now, before = keyed(plan), keyed(previous)
    changes = []
    for key in sorted(set(now) | set(before)):
        a, b = before.get(key), now.get(key)
        liab_a = purchase_cents(a).liability if a else ZERO
        liab_b = purchase_cents(b).liability if b else ZERO
        if a and b and a.nodes == b.nodes and liab_a == liab_b:
            continue
        change = _purchase_change(a, b, key[0], quarters)
        beyond = change.endswith("this plan's horizon")
        changes.append(
            PurchaseChange(
                key[0],
                key[1],
                key[2],
                key[3],
                change,
                a.nodes if a else 0,
                None if beyond else b.nodes if b else 0,
                None if beyond else liab_b - liab_a,
            )
        )
    purchases = Table(
        "changes_purchases",
        "What changed since the previous plan: purchases",
        (
            Column("start_quarter", "Start"),
            Column("site", "Site"),
            Column("machine", "Machine"),
            Column("pricing_model", "Pricing"),
            Column("change", "Change"),
            Column("nodes_before", "Nodes before", "int"),
            Column("nodes_after", "Nodes after", "int"),
            Column("liability_delta", "Liability change", "delta"),
        ),
        tuple(changes),
        note="Basis: planned. Resized: the node count changed; otherwise the change names what differs "
        "(node-weeks of a capacity block, price, dates). Before or beyond this plan's horizon: the previous plan "
        "buys it in a quarter this plan does not cover, so this plan says nothing about it.",
    )
    return [cost, purchases]
