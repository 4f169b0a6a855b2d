"""Tables `moves`, `proposed_quotas`, `commitment_utilisation` and `credit_sensitivity`: where the plan runs a team
on a flavor where it holds no quota today, the quotas the plan proposes beside today's, each commitment's assumed
against metered utilisation, and the plan re-solved at a share of its post-horizon credit (the planner's rows on
`PlanResult`)."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING

from quartermaster.plan_figures import to_cent
from quartermaster.pricing import shown_quantity
from quartermaster.reports.finance.table import Column, Row, Table
from quartermaster.reports.finance.tables.table_support import ratio
from quartermaster.units import Quarter

if TYPE_CHECKING:
    from quartermaster.model import Inventory
    from quartermaster.plan_contract import PlanResult


@dataclass(frozen=True)
class MoveLine(Row):
    team: str
    served_on: str
    flavor: str
    accelerator_hours: Decimal
    quota_needed: int
    saving: Decimal | None


@dataclass(frozen=True)
class ProposedQuotaLine(Row):
    team: str
    flavor: str
    served_on: str
    nominal_today: int
    nominal: int
    borrowing_today: str
    borrowing: int
    pool: int
    fits_pool: str


@dataclass(frozen=True)
class UtilisationLine(Row):
    commitment: str
    site: str
    machine: str
    quarter: Quarter
    assumed: Decimal
    metered: Decimal | None
    metered_hours: int
    expected: Decimal
    basis: str
    rise_by: str


@dataclass(frozen=True)
class CreditLine(Row):
    credit_share: Decimal
    horizon_cost: Decimal
    credit: Decimal
    liability: Decimal
    first_quarter: Quarter
    first_quarter_liability: Decimal
    first_quarter_purchases: str
    """first_quarter_purchases: what the plan buys in first_quarter, as text."""


def moves_table(plan: PlanResult) -> Table:
    rows = tuple(
        MoveLine(
            m.team,
            f"{m.served_accelerator} at {m.served_site} ({m.machine})",
            m.flavor,
            shown_quantity(m.accelerator_hours),
            m.quota_needed_accelerators,
            to_cent(m.saving_usd),
        )
        for m in plan.moves
    )
    saving = (
        ""
        if plan.placement_saving_usd is None
        else f" Together they save {to_cent(plan.placement_saving_usd):,} USD (re-solved)."
    )
    return Table(
        "moves",
        f"Moves: demand served where the team holds no quota today (placement policy: {plan.placement})",
        (
            Column("team", "Team"),
            Column("served_on", "Served on"),
            Column("flavor", "Flavor"),
            Column("accelerator_hours", "Accelerator-hours over the horizon", "number"),
            Column("quota_needed", "Quota it needs", "int"),
            Column("saving", "Saving if allowed", "money"),
        ),
        rows,
        note="Basis: planned. A flavor is a pool and the pricing model its nodes are bought at (one Kueue "
        "ResourceFlavor); each move needs the team's quota (or, in its cohort's pool, a borrowing limit) in the "
        "flavor, as the proposed quotas below list; the saving is how much more the plan costs when that one move "
        "is not allowed, re-solved (moves interact, so the savings need not add up)." + saving
        if rows
        else f"None: every team runs on flavors where it holds quota today (placement policy: {plan.placement}).",
    )


def proposed_quotas_table(inventory: Inventory, plan: PlanResult) -> Table:
    """The plan's proposed quotas (proposed_quotas.csv) beside each team's quota today."""
    today = {(t.name, q.flavor): q for t in inventory.teams for q in t.quotas}
    in_cohort = {t.name for t in inventory.teams if t.cohort is not None}
    rows = []
    for p in plan.proposed_quotas:
        held = today.get((p.team, p.flavor))
        borrowing = (
            "-"
            if held is None
            else "0 (no cohort)"
            if p.team not in in_cohort
            else "no limit"
            if held.borrowing_limit is None
            else str(held.borrowing_limit)
        )
        rows.append(
            ProposedQuotaLine(
                p.team,
                p.flavor,
                f"{p.machine} at {p.site}",
                0 if held is None else held.nominal,
                p.nominal,
                borrowing,
                p.borrowing_limit,
                p.pool_accelerators,
                "yes" if p.fits_pool else "no",
            )
        )
    quarter = plan.proposed_quotas[0].quarter if plan.proposed_quotas else ""
    return Table(
        "proposed_quotas",
        f"Proposed quotas for {quarter}: what the plan's use asks of each team's quota, beside today's"
        if rows
        else "Proposed quotas",
        (
            Column("team", "Team"),
            Column("flavor", "Flavor"),
            Column("served_on", "Machine at site"),
            Column("nominal_today", "Nominal today", "int"),
            Column("nominal", "Proposed nominal", "int"),
            Column("borrowing_today", "Borrowing limit today"),
            Column("borrowing", "Proposed borrowing limit", "int"),
            Column("pool", "Pool today (accelerators)", "int"),
            Column("fits_pool", "Fits the pool"),
        ),
        tuple(rows),
        note="Basis: planned, in accelerators, for the plan's first quarter (the plan's proposed quotas). Committed "
        "capacity is split between the teams that may run there in proportion to their expected demand; a "
        "pay-per-use flavor gets the team's peak planned use. `qm plan --propose` writes the proposals that fit their "
        "pool into the team files; a flavor that does not fit says how far its pool must grow."
        if rows
        else "None: the plan proposes no quotas (it has no plan, or was written before it proposed them).",
    )


def utilisation_table(plan: PlanResult) -> Table:
    rows = tuple(
        UtilisationLine(
            u.commitment,
            u.site,
            u.machine,
            u.quarter,
            ratio(u.assumed_utilisation),
            None if u.metered_utilisation is None else ratio(u.metered_utilisation),
            u.metered_hours,
            ratio(u.expected_utilisation),
            u.basis,
            u.rise_by or "-",
        )
        for u in plan.commitment_utilisation
    )
    return Table(
        "commitment_utilisation",
        "Commitment utilisation: assumed by the plan against metered",
        (
            Column("commitment", "Commitment"),
            Column("site", "Site"),
            Column("machine", "Machine"),
            Column("quarter", "Quarter"),
            Column("assumed", "Assumed by the plan", "pct"),
            Column("metered", "Metered", "pct"),
            Column("metered_hours", "Metered hours", "int"),
            Column("expected", "Expected", "pct"),
            Column("basis", "Expected from"),
            Column("rise_by", "Assumed above metered by"),
        ),
        rows,
        note="Assumed: the plan's use of the commitment's node-hours in the quarter (planned). Metered: the usage "
        "history's held accelerator-hours over the committed ones while it was active (metered). Expected: metered "
        "where there is history, else assumed. Where the plan assumes more than was metered, the teams whose "
        "planned accelerators there exceed what they held in the history (on average over the quarter), largest "
        "first: a move (the team holds no quota in the commitment's pools) or a forecast rise."
        if rows
        else "Not recorded: the plan has no existing commitments, or was written before the planner recorded their "
        "utilisation (run `qm plan` again).",
    )


def credit_table(plan: PlanResult) -> Table:
    bought: dict[float, list[str]] = {}
    for p in plan.credit_sensitivity_purchases:
        bought.setdefault(p.credit_share, []).append(f"{p.nodes} x {p.machine} {p.pricing_model} at {p.site}")
    rows = tuple(
        CreditLine(
            ratio(c.credit_share),
            to_cent(c.expected_cost_usd),
            to_cent(c.post_horizon_credit_usd),
            to_cent(c.new_commitment_liability_usd),
            c.first_quarter,
            to_cent(c.first_quarter_liability_usd),
            "; ".join(bought.get(c.credit_share, ())) or "none",
        )
        for c in sorted(plan.credit_sensitivity, key=lambda c: c.credit_share)
    )
    return Table(
        "credit_sensitivity",
        "The post-horizon credit as an assumption: the plan at 0 %, 50 % and 100 % of it",
        (
            Column("credit_share", "Share of the credit counted", "pct"),
            Column("horizon_cost", "Horizon cost", "money"),
            Column("credit", "Credit counted", "money"),
            Column("liability", "New purchases' liability", "money"),
            Column("first_quarter", "First quarter open"),
            Column("first_quarter_liability", "Its purchases' liability", "money"),
            Column("first_quarter_purchases", "What it buys then"),
        ),
        rows,
        note="Basis: planned. The plan credits new capacity left after the horizon with the on-demand cost it would "
        "avoid, assuming demand stays at the last quarter's level for the rest of each term; each row re-solves the "
        "plan counting only that share of the credit (100 %: the plan itself)."
        if rows
        else "Not recorded: the plan was written before the planner re-solved it at shares of the credit (run "
        "`qm plan` again).",
    )
