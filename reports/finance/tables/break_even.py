"""Table `break_even`: break-even and expected utilisation of the commitments to approve."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING

from quartermaster.errors import ProblemsFound
from quartermaster.pricing import break_even, decimal_of, shown_rate
from quartermaster.reports.finance.table import ZERO, Column, Row, Table
from quartermaster.reports.finance.tables.table_support import active_quarters
from quartermaster.units import Quarter

if TYPE_CHECKING:
    from quartermaster.model import Inventory
    from quartermaster.plan_contract import PlanResult, PurchaseRow


@dataclass(frozen=True)
class BreakEvenRow(Row):
    site: str
    machine: str
    pricing_model: str
    committed_rate: Decimal
    used_rate: Decimal
    on_demand_rate: Decimal | None
    on_demand_basis: str
    break_even: Decimal | None
    expected: Decimal | None
    expected_of: str
    metered: Decimal | None
    quarters: str
    """quarters: the quarters `expected` is averaged over, as text (`2027Q1 to 2027Q4`, or one quarter)."""
    verdict: str


def break_even_table(inventory: Inventory, plan: PlanResult, approve_rows: list[PurchaseRow]) -> Table:
    """Per commitment to approve: break-even utilisation (`pricing.break_even`, its contract shape included) and the
    plan's expected utilisation over the quarters it is active."""
    order = list(plan.quarters)
    rows: list[BreakEvenRow] = []
    for r in approve_rows:
        if r.machine not in inventory.machine_by_name:
            raise ProblemsFound(
                f"the plan buys {r.machine} at {r.site}, a machine the inventory no longer has; run "
                "`qm plan` again on this inventory"
            )
        even = break_even(
            inventory,
            r.machine,
            r.site,
            r.usd_per_node_hour,
            r.upfront_usd / r.nodes,
            r.term_months,
            r.usd_per_node_hour_used,
        )
        active = active_quarters(order, r)
        expected, expected_of, metered = _expected(plan, r, active)
        ratio = even.utilisation
        rows.append(
            BreakEvenRow(
                r.site,
                r.machine,
                r.pricing_model,
                shown_rate(even.committed_rate),
                shown_rate(even.used_rate),
                None if even.on_demand_rate is None else shown_rate(even.on_demand_rate),
                even.on_demand_basis,
                ratio,
                expected,
                expected_of,
                metered,
                f"{active[0]} to {active[-1]}" if len(active) > 1 else active[0],
                "no on-demand alternative"
                if even.on_demand_rate is None
                else "never: used hours cost more than on demand"
                if ratio is None or expected is None
                else "above break-even"
                if expected >= ratio
                else "below break-even",
            )
        )
    return Table(
        "break_even",
        "Break-even and expected utilisation of the commitments to approve",
        (
            Column("site", "Site"),
            Column("machine", "Machine"),
            Column("pricing_model", "Pricing"),
            Column("committed_rate", "Committed USD / accelerator-hour", "rate"),
            Column("used_rate", "Plus USD / accelerator-hour used", "rate"),
            Column("on_demand_rate", "On-demand USD / accelerator-hour", "rate"),
            Column("on_demand_basis", "On-demand price of"),
            Column("break_even", "Break-even utilisation", "pct"),
            Column("expected", "Expected utilisation", "pct"),
            Column("expected_of", "Expected of"),
            Column("metered", "Metered today", "pct"),
            Column("quarters", "Averaged over"),
            Column("verdict", "Verdict"),
        ),
        tuple(rows),
        note="Basis: planned, price book. Committed rate: paid every hour of the term, an upfront fee spread over the "
        "term at 730 hours a month; a rate per hour used is paid on top. Break-even utilisation = committed rate / "
        "(on-demand rate - rate per hour used), the on-demand rate of what the commitment replaces (the same machine "
        "and site on demand; else the cheapest on-demand price of the accelerator; else of the accelerators it is "
        "worth under the inventory's equivalence policy): below it, the used hours would cost less on demand. "
        "Expected utilisation: the plan's use of the committed capacity at the commitment's own site and machine "
        "(existing and new commitments, capacity blocks), in accelerator-hours over the quarters of the plan in which "
        "it is active (a plan written before the planner recorded each site and machine's has only all commitments "
        "together, and says so). Metered today: the existing commitments' utilisation there in the usage history "
        "(metered), where there are any.",
    )


def _expected(
    plan: PlanResult, r: PurchaseRow, active: Sequence[Quarter]
) -> tuple[Decimal | None, str, Decimal | None]:
    """The expected utilisation of the committed capacity where `r` is bought over its active quarters, what it is
    of, and the metered utilisation there."""
    own = [u for u in plan.offer_utilisation if (u.site, u.machine) == (r.site, r.machine) and u.quarter in active]
    if own:
        committed = sum((decimal_of(u.committed_accelerator_hours) for u in own), ZERO)
        used = sum((decimal_of(u.used_accelerator_hours) for u in own), ZERO)
        metered = next((decimal_of(u.metered_utilisation) for u in own if u.metered_utilisation is not None), None)
        return (used / committed if committed else None), f"{r.machine} at {r.site}", metered
    utilisation = [decimal_of(k.utilisation_accelerator_hours) for k in plan.kpis if k.quarter in active]
    expected = sum(utilisation, ZERO) / len(utilisation) if utilisation else None
    return expected, "all commitments (a plan written before it recorded each site and machine's)", None
