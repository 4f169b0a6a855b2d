"""Tables `teams` and `cost_centers`: what each team and cost centre bears in the report's quarter (basis: planned),
against the previous plan and over the next four quarters."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING

from quartermaster.plan_figures import idle_shares, team_costs
from quartermaster.pricing import IDLE_TEAM, SPEND_RULE
from quartermaster.reports.finance.table import NAME_COLUMN, ZERO, Column, Row, Table, column_sums
from quartermaster.reports.finance.tables.table_support import centre_name
from quartermaster.units import Quarter, next_quarters

if TYPE_CHECKING:
    from quartermaster.model import Inventory
    from quartermaster.plan_contract import PlanResult

SHARED = "shared"
"""How the cost centre of the shared line of unused commitments is shown."""


@dataclass(frozen=True)
class TeamRow(Row):
    team: str
    cost_center: str
    cost_center_name: str
    current: Decimal
    idle_share: Decimal
    previous: Decimal | None
    delta: Decimal | None
    next_four: Decimal


@dataclass(frozen=True)
class CentreRow(Row):
    cost_center: str
    cost_center_name: str
    current: Decimal
    idle_share: Decimal
    previous: Decimal | None
    delta: Decimal | None
    next_four: Decimal


def _centre_of(code: str) -> str:
    return SHARED if code.startswith("_") else code


def by_team(
    inventory: Inventory, plan: PlanResult, previous: PlanResult | None, quarter: Quarter
) -> tuple[Table, Table]:
    """(teams, cost_centers): a cost centre's row is the sum of its teams' rows; every total is its rows' sum."""
    now = team_costs(plan, quarter)
    before = team_costs(previous, quarter) if previous is not None and previous.has_plan else {}
    four_cost: dict[str, Decimal] = {}
    for q in (q for q in next_quarters(quarter, 4) if q in plan.quarters):
        for team, (_, usd) in team_costs(plan, q).items():
            four_cost[team] = four_cost.get(team, ZERO) + usd
    idle = idle_shares(plan, quarter)
    policy = plan.options.idle_policy
    label = {IDLE_TEAM: "unused commitments (no team to share them)"}
    team_rows: list[TeamRow] = []
    for team in sorted(set(now) | set(before), key=lambda t: (t.startswith("_"), t)):
        cc, _ = now.get(team, before.get(team, ("", ZERO)))
        current = now.get(team, ("", ZERO))[1]
        prev = before[team][1] if team in before else (ZERO if before else None)
        team_rows.append(
            TeamRow(
                label.get(team, team),
                _centre_of(cc),
                centre_name(inventory, cc),
                current,
                idle.get(team, ZERO),
                prev,
                None if prev is None else current - prev,
                four_cost.get(team, ZERO),
            )
        )
    money_cols: tuple[Column, ...] = (
        Column("current", f"{quarter}", "money"),
        Column("idle_share", "of which idle share", "money"),
        Column("previous", "Previous plan", "money"),
        Column("delta", "Change", "delta"),
        Column("next_four", "Next four quarters", "money"),
    )
    if not before:
        money_cols = (money_cols[0], money_cols[1], money_cols[4])

    def summed(rows: list[TeamRow]) -> tuple[Decimal, Decimal, Decimal | None, Decimal | None, Decimal]:
        """The money columns added up, in their order; previous and change None without a previous plan."""
        s = column_sums(rows, ("current", "idle_share", "previous", "delta", "next_four"))
        return (
            s["current"],
            s["idle_share"],
            s["previous"] if before else None,
            s["delta"] if before else None,
            s["next_four"],
        )

    teams = Table(
        "teams",
        f"Cost by team, {quarter}",
        (Column("team", "Team"), Column("cost_center", "Cost centre"), NAME_COLUMN, *money_cols),
        tuple(team_rows),
        total=TeamRow("Total", "", "", *summed(team_rows)),
        note="Basis: planned. Teams pay for the accelerator-hours they are planned to use at the rate of what "
        f"serves them, plus a share of the committed hours nobody uses (idle policy: {policy}, the rule of "
        f"`qm meter`). {SPEND_RULE}",
    )
    centres: dict[str, list[TeamRow]] = {}
    for r in team_rows:
        centres.setdefault(r.cost_center, []).append(r)
    centre_rows = [
        CentreRow(code, rows[0].cost_center_name, *summed(rows))
        for code, rows in sorted(centres.items(), key=lambda kv: (kv[0] == SHARED, kv[0]))
    ]
    return teams, Table(
        "cost_centers",
        f"Cost by cost centre, {quarter}",
        (Column("cost_center", "Cost centre"), NAME_COLUMN, *money_cols),
        tuple(centre_rows),
        total=CentreRow("Total", "", *summed(team_rows)),
        note=f"Basis: planned. Each cost centre's row adds up its teams' rows (table teams). {SPEND_RULE}",
    )
