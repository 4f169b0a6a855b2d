"""Table `bridge`: from the last metered month, scaled to a quarter, to the plan's first quarter
(`reports.cost_bridge`)."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from quartermaster.reports.cost_bridge import build_bridge
from quartermaster.reports.finance.table import Column, Row, Table
from quartermaster.reports.finance.tables.plan_vs_actual import usage_months

if TYPE_CHECKING:
    import pandas as pd

    from quartermaster.model import Inventory
    from quartermaster.plan_contract import PlanResult

NOTE = (
    "Basis: metered (first row), planned (last row); the lines between explain the difference and add up to it to "
    "the cent. The first row meters the hours the usage history covers in its last month and scales them to the "
    "quarter's hours. Demand change: the quarter's demand (served or not, in the accelerator types asked) against "
    "the hours metered, at the month's pay-per-use rate: it depends on demand alone, not on the horizon, a "
    "utilisation floor or a price what-if; work moved between accelerator types: hours served on another type "
    "under the equivalence policy (an H100-hour of work on a B200 node is 1 / 2.2 B200-hours), at the same rate; "
    "demand not served: the plan's unmet demand; placement change: the plan's pay-per-use hours at its own average "
    "rate instead (spot, other sites and machines); price changes: the plan's price what-ifs; hours moved onto paid "
    "capacity: pay-per-use hours avoided by commitments and capacity blocks, less the idle they fill; commitments "
    "expiring: the existing commitments' spend (with their idle), as some end; commitments bought: the plan's new "
    "commitments and capacity blocks; idle change: paid capacity nobody uses, on commitments and, metered, on the "
    "minimum nodes of on-demand pools. How each line is computed: the finance documentation, bridge from actuals."
)


@dataclass(frozen=True)
class BridgeRow(Row):
    item: str
    usd: Decimal


def bridge_table(inventory: Inventory, plan: PlanResult, usage: pd.DataFrame | None) -> Table:
    """The bridge from the last month with usage to the plan's first quarter; empty without usage."""
    records: Any
    records, months = usage_months(inventory, usage)
    lines = build_bridge(inventory, plan, records, months[-1]) if months else None
    return Table(
        "bridge",
        f"From actuals to the plan: {months[-1].label} to {plan.quarters[0]}" if lines else "From actuals to the plan",
        (Column("item", "Item"), Column("usd", "USD", "money")),
        tuple(BridgeRow(line.item, line.usd) for line in lines or ()),
        note=NOTE if lines else "No usage records: the bridge starts from the last metered month (`qm meter`).",
    )
