"""Table `plan_caveats`: what the plan assumes that a reader should weigh before signing: the plan's own notes
(offers with no supply cap, how the forecast was made, hours read as an outage) and proposed quotas above their
pool today."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from quartermaster.reports.finance.table import Column, Row, Table

if TYPE_CHECKING:
    from quartermaster.plan_contract import PlanResult


@dataclass(frozen=True)
class Caveat(Row):
    caveat: str


def caveats_table(plan: PlanResult) -> Table:
    """The plan's notes, as `qm plan` prints them, then one line per flavor whose proposed quotas exceed its pool."""
    above = [
        f"proposed quotas above their pool: {flavor} {need} accelerators against a pool of {size} today; the "
        "proposal is not applied until the pool grows"
        for flavor, need, size in plan.quotas_above_pool()
    ]
    return Table(
        "plan_caveats",
        "What the plan assumes",
        (Column("caveat", "Caveat"),),
        tuple(Caveat(text) for text in (*plan.notes, *above)),
        note="From the plan: its notes as `qm plan` prints them, and the quotas it proposes that the pools of today "
        "cannot hold.",
    )
