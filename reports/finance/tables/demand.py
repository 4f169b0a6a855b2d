"""Table `demand_vs_capacity`: demand against today's pools and the plan's new commitments, per accelerator and
site."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING

from quartermaster.capacity import pool_accelerators
from quartermaster.reports.finance.table import ZERO, Column, Row, Table
from quartermaster.reports.finance.tables.table_support import active_quarters
from quartermaster.units import Quarter

if TYPE_CHECKING:
    from quartermaster.model import Inventory
    from quartermaster.plan_contract import PlanResult


@dataclass(frozen=True)
class DemandRow(Row):
    accelerator: str
    site: str
    p50: Decimal
    p90: Decimal
    pools: int
    new_committed: int


def _capacity(inventory: Inventory) -> dict[tuple[str, str], int]:
    """Accelerators of today's pools per (accelerator, site)."""
    out: dict[tuple[str, str], int] = {}
    for pool in inventory.pools:
        machine = inventory.machine_by_name.get(pool.machine)
        if machine is None:
            continue
        key = (machine.accelerator, inventory.cluster_of_pool[pool.name].site)
        out[key] = out.get(key, 0) + pool_accelerators(inventory, pool)
    return out


def _new_committed(plan: PlanResult, quarter: Quarter) -> dict[tuple[str, str], int]:
    """Accelerators of planned new commitments active in the quarter, per (accelerator, site)."""
    order = list(plan.quarters)
    out: dict[tuple[str, str], int] = {}
    for r in plan.purchase_schedule:
        if quarter in active_quarters(order, r):
            key = (r.accelerator, r.site)
            out[key] = out.get(key, 0) + r.accelerators
    return out


def demand_vs_capacity(inventory: Inventory, plan: PlanResult, quarter: Quarter) -> Table:
    demand: dict[tuple[str, str], tuple[Decimal, Decimal]] = {}
    for d in inventory.demand:
        if d.period == quarter and not d.scenario:
            key = (d.accelerator, d.site or "any site")
            p50, p90 = demand.get(key, (ZERO, ZERO))
            demand[key] = (p50 + Decimal(str(d.p50)), p90 + Decimal(str(d.p90 if d.p90 is not None else d.p50)))
    capacity = _capacity(inventory)
    new = _new_committed(plan, quarter)
    rows = tuple(
        DemandRow(
            acc, site, *demand.get((acc, site), (ZERO, ZERO)), capacity.get((acc, site), 0), new.get((acc, site), 0)
        )
        for acc, site in sorted(set(demand) | set(capacity) | set(new))
    )
    return Table(
        "demand_vs_capacity",
        f"Demand vs capacity per accelerator and site, {quarter}",
        (
            Column("accelerator", "Accelerator"),
            Column("site", "Site"),
            Column("p50", "Demand p50", "number"),
            Column("p90", "Demand p90", "number"),
            Column("pools", "Pools today", "int"),
            Column("new_committed", "New commitments", "int"),
        ),
        rows,
        note="Demand in average concurrent accelerators (the demand forecast; rows without a site may run at any "
        "site the team may use). Pools today: accelerators of the inventory's pools at their largest size; new "
        "commitments: accelerators the plan buys that are active in the quarter. The rest is bought on demand, "
        "on spot or as flex-start.",
    )
