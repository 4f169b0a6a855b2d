"""The bridge from actuals to the plan: why the first planned quarter costs what it does, starting from the last
metered month.

Start S: the last month with usage, metered (`qm meter`, the plan's idle policy, the inventory's price book) over the
hours the usage history covers (the whole month, or up to the history's end when it ends inside the month), scaled to
the quarter's hours (k = hours of the quarter / hours covered). End E: the plan's cost of the quarter. Each side splits
into hours and money by what the hours run on: paid capacity (commitments and capacity blocks, paid whether used or
not: used hours Hc, their cost with their idle C, of which idle Ic) and pay-per-use (hours Hp, cost P, average rate
p = P / Hp); H = Hc + Hp, in accelerator-hours of the machines that ran them. Metered, a pool outside any commitment
keeps its minimum nodes: their idle Io is paid whether used or not but is no commitment; the plan keeps none (Io1 = 0).
The plan's quarter in progress has a closed part (before actuals_until), metered in the plan (its `metered` cost
line, X1 over Hx hours): the plan's other figures are of the open part, so the metered side's are scaled to the open
hours (k' = (quarter hours - Hx) / hours covered), and a line compares the closed part with the run-rate over its
hours (X1 - S0 x Hx / hours covered, 0 when the closed part is the metered month). With the metered side's values
(0) and the plan's (1), D1 the plan's demand of the quarter in the accelerator classes
asked (served or not) and A1 its served hours counted in the classes asked:

    demand change              = (D1 - H0) x p0             demand alone, at the month's rates, placement and types
    work moved between types   = (H1 - A1) x p0             hours served on another accelerator type (equivalence)
    demand not served          = -(D1 - A1) x p0            the plan's unmet demand
    placement change           = Hp1 x (p1 - p0) - price    the pay-per-use hours run elsewhere (spot, other sites)
    price changes              = the plan's price what-ifs on its pay-per-use hours (0 without one)
    hours onto paid capacity   = -(Hc1 - Hc0) x p0 - (Ic1 - Ic0)   pay-per-use avoided, less the idle they fill
    commitments expiring       = C1 - C0                    the existing commitments' spend, as some end
    commitments bought         = N1                         the plan's new commitments and capacity blocks
    idle change                = Ic1 - (Ic0 + Io0)          paid capacity nobody uses, on commitments and pools

They add up to E - S exactly ((H1 - Hp1 - Hc1) p0 = 0, (Hc0 - H0) p0 = -P0 and S = C0 + P0 + Io0). The demand change
is rounded to the cent on its own, so that it depends on the quarter's demand and the metered month alone (not on the
horizon, a utilisation floor or a price what-if); the other lines are rounded so that all add up to the difference of
the cent figures shown (`plan_figures.shares_of`). Without pay-per-use hours in the month, p0 is the month's average
rate of all used hours. Idle of the plan (Ic1) is split between existing and new commitments in proportion to their
cost (the plan does not record which idles). A plan written before it recorded its demand (KpiRow.demand_accelerator
_hours) counts its served hours in the classes asked plus its unmet demand instead.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from quartermaster.metering import MeterResult, Period, coverage_label, covered_month, meter
from quartermaster.plan_contract import CLOSED, EXISTING, NEW
from quartermaster.plan_figures import quarter_cost, shares_of, to_cent
from quartermaster.pricing import (
    IDLE_TEAM,
    PricingModel,
    accelerator_hour_price,
    decimal_of,
)
from quartermaster.units import Quarter, quarter_bounds, quarter_hours

if TYPE_CHECKING:
    from quartermaster.model import Inventory
    from quartermaster.plan_contract import PlanResult

ZERO = Decimal(0)
PAID_TIERS = (EXISTING, NEW, PricingModel.CAPACITY_BLOCK)
"""Routing tiers whose hours run on capacity paid whether used or not."""
NEW_MODELS = (PricingModel.COMMIT, PricingModel.ONPREM, PricingModel.CAPACITY_BLOCK)
"""Plan cost lines of purchases the plan makes."""
_PRICE = re.compile(
    r"^price:(?P<site>[^/]+)/(?P<machine>[^/=]+)(?:/(?P<model>[^=]+))?=(?P<pct>[-+]?[0-9]+(?:\.[0-9]+)?)%$"
)


@dataclass(frozen=True)
class BridgeLine:
    """One line of the bridge: what it is and its USD (the first and last lines are the two ends)."""

    item: str
    usd: Decimal


@dataclass(frozen=True)
class _Side:
    paid_hours: Decimal
    paid_cost: Decimal
    """paid_cost: commitments (and capacity blocks) with their idle."""
    idle: Decimal
    """idle: the commitments' idle."""
    pool_idle: Decimal
    """pool_idle: the idle minimum nodes of pools outside any commitment (metered only)."""
    flexible_hours: Decimal
    flexible_cost: Decimal


def _metered_side(result: MeterResult, scale: Decimal) -> _Side:
    paid = [x for x in result.lines if x.category == "Committed"]
    flexible = [x for x in result.lines if x.category != "Committed"]
    idle = sum((x.cost for x in result.idle if x.block.startswith("commitment:")), ZERO)
    return _Side(
        sum((x.accelerator_hours for x in paid), ZERO) * scale,
        (sum((x.cost for x in paid), ZERO) + idle) * scale,
        idle * scale,
        (result.idle_cost - idle) * scale,
        sum((x.accelerator_hours for x in flexible), ZERO) * scale,
        sum((x.cost for x in flexible), ZERO) * scale,
    )


def _closed_hours(plan: PlanResult, quarter: Quarter) -> int:
    """Hours of the quarter before the plan's actuals_until: its closed part, metered in the plan (0 without one)."""
    if plan.actuals_until is None:
        return 0
    start, end = (dt.datetime.combine(day, dt.time()) for day in quarter_bounds(quarter))
    until = min(max(dt.datetime.fromisoformat(plan.actuals_until), start), end)
    return int((until - start).total_seconds()) // 3600


def _price_effect(inventory: Inventory, plan: PlanResult, quarter: Quarter) -> Decimal:
    """What the plan's `price:` what-ifs change on its pay-per-use hours of the quarter: hours x book rate x change."""
    out = ZERO
    for what_if in plan.options.what_if:
        m = _PRICE.match(str(what_if))
        if m is None:
            continue
        for r in plan.routing:
            if r.quarter != quarter or r.tier in PAID_TIERS or (r.served_site, r.machine) != (m["site"], m["machine"]):
                continue
            if m["model"] and r.tier != m["model"]:
                continue
            rate = accelerator_hour_price(inventory, r.machine, r.served_site, r.tier)
            if rate is not None:
                out += decimal_of(r.accelerator_hours) * rate * Decimal(m["pct"]) / 100
    return out


def build_bridge(
    inventory: Inventory, plan: PlanResult, records: Any, month: Period, quarter: Quarter | None = None
) -> tuple[BridgeLine, ...] | None:
    """The bridge from `month` (metered from `records`) to `quarter` (default: the plan's first), or None when the
    month has nothing metered."""
    quarter = quarter or plan.quarters[0]
    covered = covered_month(records, month)
    result, problems = meter(inventory, records, covered, plan.options.idle_policy)
    if problems or result is None or not covered.hours:
        return None
    scale = Decimal(quarter_hours(quarter)) / Decimal(covered.hours)
    closed_hours = _closed_hours(plan, quarter)
    m = _metered_side(result, Decimal(quarter_hours(quarter) - closed_hours) / Decimal(covered.hours))
    by_model: dict[str, Decimal] = {}
    for row in plan.cost_by_quarter:
        if row.quarter == quarter:
            by_model[row.pricing_model] = by_model.get(row.pricing_model, ZERO) + row.usd
    closed = by_model.pop(CLOSED, ZERO)
    existing = by_model.get("existing-commitments", ZERO)
    bought = sum((by_model.get(k, ZERO) for k in NEW_MODELS), ZERO)
    flexible_cost = sum((v for k, v in by_model.items() if k != "existing-commitments" and k not in NEW_MODELS), ZERO)
    paid_hours = flexible_hours = asked_hours = ZERO
    for r in plan.routing:
        if r.quarter == quarter:
            hours = decimal_of(r.accelerator_hours)
            asked_hours += decimal_of(r.demand_accelerator_hours)
            if r.tier in PAID_TIERS:
                paid_hours += hours
            else:
                flexible_hours += hours
    kpi = plan.kpi(quarter)
    if kpi is not None and kpi.demand_accelerator_hours is not None:
        demand = decimal_of(kpi.demand_accelerator_hours)
    else:  # a plan written before it recorded its demand: what it served, in the classes asked, and what it did not
        demand = asked_hours + sum(
            (decimal_of(u.expected_accelerator_hours) for u in plan.unmet_demand if u.quarter == quarter), ZERO
        )
    idle = sum(
        (
            t.idle_share_usd + (t.usage_usd if t.team == IDLE_TEAM else ZERO)
            for t in plan.cost_by_team
            if t.quarter == quarter
        ),
        ZERO,
    )
    used0 = m.paid_hours + m.flexible_hours
    p0 = m.flexible_cost / m.flexible_hours if m.flexible_hours else (m.paid_cost - m.idle) / used0 if used0 else ZERO
    p1 = flexible_cost / flexible_hours if flexible_hours else p0
    price = _price_effect(inventory, plan, quarter)
    demand_change = to_cent((demand - used0) * p0)
    closed_line = closed - result.total_cost * closed_hours / Decimal(covered.hours)
    raw = {
        **({"closed months as metered, against the run-rate": closed_line} if closed_hours else {}),
        "work moved between accelerator types": (paid_hours + flexible_hours - asked_hours) * p0,
        "demand not served": -(demand - asked_hours) * p0,
        "placement change": flexible_hours * (p1 - p0) - price,
        "price changes": price,
        "hours moved onto paid capacity": -(paid_hours - m.paid_hours) * p0 - (idle - m.idle),
        "commitments expiring": existing - m.paid_cost,
        "commitments bought": bought,
        "idle change": idle - m.idle - m.pool_idle,
    }
    start = to_cent(result.total_cost * scale)
    end = quarter_cost(plan, quarter)
    lines = {"demand change": demand_change, **shares_of(raw, end - start - demand_change)}
    period = coverage_label(month, covered)
    return (
        BridgeLine(
            f"{period} metered, scaled to a quarter ({quarter_hours(quarter):,} / {covered.hours:,} hours)", start
        ),
        *(BridgeLine(item, usd) for item, usd in lines.items()),
        BridgeLine(f"{quarter} planned", end),
    )
