"""The plan's proposed quotas as edits to the inventory: `qm plan --propose`.

The planner sizes quotas to the capacity it plans, which may be more than a pool has today (it may book
more capacity blocks, or buy on-prem systems). A flavor's proposal is applied only when it fits the pool as
the inventory has it; otherwise the flavor is left as it is and the reason says how big the pool must grow
(the plan's proposed_quotas.csv flags it too: `fits_pool`). Within an applied flavor every team gets the
proposed nominal (0 when the plan gives it none), a lending limit cut to its new nominal where it was higher,
and, if it is in a cohort, the proposed borrowing limit cut to what the rest of its cohort tree can lend after
the change (capacity.borrowable).
"""

from __future__ import annotations

from quartermaster.capacity import borrowable, flavor_capacity
from quartermaster.edit import QuotaChange
from quartermaster.model import Inventory, Quota
from quartermaster.plan_contract import ProposedQuotaRow


def proposed_changes(
    inventory: Inventory, proposed: tuple[ProposedQuotaRow, ...]
) -> tuple[list[QuotaChange], list[str]]:
    """Quota changes that apply the proposal where it fits, and one sentence per flavor left alone."""
    capacity = flavor_capacity(inventory)
    skipped: list[str] = []
    wanted: dict[str, dict[str, tuple[int, int]]] = {}  # flavor -> team -> (nominal, borrowing)
    for flavor in sorted({r.flavor for r in proposed}):
        rows = {r.team: (r.nominal, r.borrowing_limit) for r in proposed if r.flavor == flavor}
        total = sum(n for n, _ in rows.values())
        if flavor not in capacity:
            skipped.append(
                f"{flavor}: the plan uses capacity that no pool has yet ({total} accelerators); "
                "add a pool for it to the inventory"
            )
        elif total > capacity[flavor]:
            skipped.append(
                f"{flavor}: the proposal needs {total} accelerators but the pool has {capacity[flavor]}; "
                "grow the pool to what the plan provisions, then propose again"
            )
        else:
            wanted[flavor] = rows
    after = _with_nominals(inventory, wanted)
    can = borrowable(after)
    changes: list[QuotaChange] = []
    for flavor, rows in wanted.items():
        for team in inventory.teams:
            current = next((q for q in team.quotas if q.flavor == flavor), None)
            nominal, borrowing = rows.get(team.name, (0, 0))
            if current is None and nominal == 0:
                continue
            borrowing = min(borrowing, can.get((team.name, flavor), 0))
            lending = current.lending_limit if current is not None else None
            change = QuotaChange(
                team.name,
                flavor,
                nominal=nominal,
                borrowing_limit=borrowing if team.cohort is not None and borrowing > 0 else None,
                lending_limit=nominal if lending is not None and lending > nominal else None,
            )
            unchanged = (
                current is not None
                and current.nominal == nominal
                and change.borrowing_limit in (None, current.borrowing_limit)
                and change.lending_limit is None
            )
            if not unchanged:
                changes.append(change)
    return changes, skipped


def _with_nominals(inventory: Inventory, wanted: dict[str, dict[str, tuple[int, int]]]) -> Inventory:
    """The inventory with the proposed nominals of the applied flavors (lending limits cut to them), to ask what
    each cohort tree can lend after the change."""
    teams = []
    for team in inventory.teams:
        quotas = [q for q in team.quotas if q.flavor not in wanted]
        for flavor, rows in wanted.items():
            current = next((q for q in team.quotas if q.flavor == flavor), None)
            nominal = rows.get(team.name, (0, 0))[0]
            lending = None if current is None or current.lending_limit is None else min(current.lending_limit, nominal)
            quotas.append(Quota(flavor=flavor, nominal=nominal, lending_limit=lending))
        teams.append(team.model_copy(update={"quotas": tuple(quotas)}))
    return inventory.model_copy(update={"teams": tuple(teams)})
