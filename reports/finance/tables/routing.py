"""Table `routing`: demand the plan served on another accelerator class or site than asked, and why."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING

from quartermaster.demand_quantiles import equivalence_ratio
from quartermaster.plan_contract import EXISTING, NEW
from quartermaster.pricing import (
    COMMITTED_MODELS,
    PricingModel,
    cheapest_accelerator_hour,
    decimal_of,
    shown_quantity,
    shown_rate,
)
from quartermaster.reports.finance.table import ZERO, Column, Row, Table
from quartermaster.units import Quarter

if TYPE_CHECKING:
    from quartermaster.model import Inventory
    from quartermaster.plan_contract import PlanResult


@dataclass
class _Group:
    quarter: Quarter
    accelerator: str
    site: str
    served_accelerator: str
    served_site: str
    machine: str
    tier: str
    teams: set[str] = field(default_factory=set)
    demand_hours: Decimal = ZERO
    served_hours: Decimal = ZERO


@dataclass(frozen=True)
class RoutingLine(Row):
    quarter: Quarter
    accelerator: str
    site: str
    teams: str
    served_on: str
    served_accelerator: str
    tier: str
    demand_hours: Decimal
    served_hours: Decimal
    equivalence: str
    served_rate: Decimal | None
    served_rate_asked: Decimal | None
    asked_rate: Decimal | None
    asked_basis: str
    reason: str


def _routing_line(inventory: Inventory, g: _Group) -> RoutingLine:
    """Why a group of demand ran where it did: the equivalence rate and the price per accelerator-hour of the option
    used against the asked accelerator's cheapest price of the same kind (committed for commitments), else on demand.
    Prices from the price book through `pricing`; spare hours of existing commitments cost nothing more."""
    asked, served, tier = g.accelerator, g.served_accelerator, g.tier
    ratio = equivalence_ratio(inventory.policy.equivalence, asked, served) or 1.0  # served per asked accelerator
    models = COMMITTED_MODELS if tier in (EXISTING, NEW) else (tier,)
    found = (
        None
        if tier == EXISTING
        else cheapest_accelerator_hour(inventory, models, machine=g.machine, sites=[g.served_site])
    )
    served_rate = ZERO if tier == EXISTING else found[0] if found else None
    sites = [g.site] if g.site else None
    alternative = cheapest_accelerator_hour(
        inventory, models, accelerator=asked, sites=sites
    ) or cheapest_accelerator_hour(inventory, (PricingModel.ON_DEMAND,), accelerator=asked, sites=sites)
    per_asked = None if served_rate is None else served_rate * decimal_of(ratio)
    if tier == EXISTING:
        reason = f"spare hours of existing {served} commitments, already paid"
    elif alternative is None:
        reason = f"no {asked} price of this kind in the price book"
    elif per_asked is not None and per_asked < alternative[0]:
        reason = f"cheaper per {asked}-hour"
    else:
        reason = (
            f"not cheaper per {asked}-hour: the cheaper {asked} capacity could not serve it (caps, whole nodes, terms)"
        )
    return RoutingLine(
        g.quarter,
        g.accelerator,
        g.site or "any site",
        ", ".join(sorted(g.teams)),
        f"{g.served_accelerator} at {g.served_site} ({g.machine})",
        g.served_accelerator,
        g.tier,
        shown_quantity(g.demand_hours),
        shown_quantity(g.served_hours),
        f"1 {served} = {1 / ratio:g} {asked} (equivalence policy)",
        None if served_rate is None else shown_rate(served_rate),
        None if per_asked is None else shown_rate(per_asked),
        shown_rate(alternative[0]) if alternative else None,
        alternative[1] if alternative else "none",
        reason,
    )


def routing_table(inventory: Inventory, plan: PlanResult) -> Table:
    """Demand the plan served on another accelerator class (policy.equivalence) or site than asked, per quarter,
    added up over teams, with the reason (`_routing_line`); from the plan's routing table."""
    groups: dict[tuple[str, ...], _Group] = {}
    for r in plan.routing:
        if r.served_accelerator == r.accelerator and (not r.site or r.served_site == r.site):
            continue
        key = (r.quarter, r.accelerator, r.site, r.served_accelerator, r.served_site, r.machine, r.tier)
        g = groups.setdefault(key, _Group(*key))
        g.teams.add(r.team)
        g.demand_hours += decimal_of(r.demand_accelerator_hours)
        g.served_hours += decimal_of(r.accelerator_hours)
    order = plan.quarters
    rows = tuple(
        _routing_line(inventory, g)
        for _, g in sorted(groups.items(), key=lambda kv: (order.index(kv[0][0]), kv[0][1:]))
    )
    recorded = bool(plan.routing) or not any(k.served_accelerator_hours for k in plan.kpis)
    return Table(
        "routing",
        "Where demand was routed: served on another accelerator or site than asked",
        (
            Column("quarter", "Quarter"),
            Column("accelerator", "Asked"),
            Column("site", "Asked site"),
            Column("teams", "Teams"),
            Column("served_on", "Served on"),
            Column("tier", "Pricing"),
            Column("demand_hours", "Asked accelerator-hours", "number"),
            Column("served_hours", "Its accelerator-hours", "number"),
            Column("equivalence", "Equivalence"),
            Column("served_rate", "USD / its accelerator-hour", "rate"),
            Column("served_rate_asked", "USD / asked accelerator-hour", "rate"),
            Column("asked_rate", "Asked accelerator, USD / hour", "rate"),
            Column("asked_basis", "Asked at"),
            Column("reason", "Why"),
        ),
        rows,
        note="Basis: planned, expected accelerator-hours (the plan's routing table) and price book. The plan serves "
        "demand on any accelerator the inventory's equivalence policy makes worth the same: one B200 worth 2.2 "
        "H100-80GB does 2.2 H100-hours of work, so an hour of it costs per asked accelerator-hour its price / "
        "2.2. Compared with the asked accelerator's cheapest price of the same kind anywhere in the price book "
        "(committed prices for commitments; else on demand; a team's residency may rule some out). Pricing "
        "`existing`: spare hours of the inventory's commitments, paid whether used or not; `new-commitment`: the "
        "plan's new commitments, at the cheapest committed price of that machine. Demand pinned to a site is "
        "always served there."
        if recorded
        else "This plan was written before the planner recorded where it served each demand; run "
        "`qm plan` again to see where demand was routed.",
    )
