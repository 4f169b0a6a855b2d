"""Policy checks on a quota change, each a small function returning verdicts (pass / warn / fail).

- `over-capacity` fails when a changed flavor's nominal quotas exceed its capacity (warns instead with
  `policy.allow_oversubscription`).
- `over-budget` fails when a touched cost centre's planned charge (`qm diff --plan DIR`, the finance report's budget
  status) is above a `policy.budgets` entry; its exposure is named beside it and gates nothing (without a plan, an
  exposure over budget warns and finance approves).
- `finance-approval` warns when the change adds more than `policy.finance_approval_usd_per_month`.
- `borrowing` warns on a borrowing limit above what the rest of the cohort tree can lend (new or changed).
- `spot-share` fails when a changed team's spot quota share is above `policy.max_spot_share`.
- `waiting` fails when the replay of the last days' demand leaves a team waiting in more than
  `policy.max_waiting_share` of the replayed hours, and more hours than before.
- `exposure-moves` warns when the change moves monthly exposure onto cost centres whose teams' quotas do not change:
  the owners of those teams must approve (the PR is then "needs approval", not "not blocked").

The approvers are the owners of every team whose quotas change and of every team of a cost centre whose charge
changes, and finance when a money check did not pass or a money section changed.

Every check also says when it passed, so the comment shows what was checked. Checks read the head
inventory and look only at what the change touches (changed teams, their flavors and cost centres).
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

from quartermaster.budget_status import BudgetStatus
from quartermaster.capacity import borrowable, flavor_capacity, nominal_by_flavor
from quartermaster.model import Inventory
from quartermaster.pricing import CENT, Provisioning, format_pct, format_usd
from quartermaster.reports.quota_diff.codeowners import FINANCE_SECTIONS
from quartermaster.reports.quota_diff.types import Approval, Change, QuotaDiff, SettingChange, Status, Verdict

CHECKS: dict[str, str] = {
    "over-capacity": "quotas fit the flavors' capacity",
    "over-budget": "cost centres stay within budget",
    "finance-approval": "the change stays below the finance approval threshold",
    "borrowing": "borrowing limits are within what the cohort can lend",
    "spot-share": "teams' spot share stays within policy",
    "waiting": "no team is left waiting more than policy allows",
    "exposure-moves": "no cost centre's exposure moves without its owners",
}
FINANCE_REASONS = {
    "over-budget": "over budget ({})",
    "finance-approval": "above the finance approval threshold",
}
Check = Callable[[Inventory, Inventory, QuotaDiff, dict[str, Change]], list[Verdict]]


def verdicts(
    base: Inventory, head: Inventory, diff: QuotaDiff, *, team_monthly: dict[str, Change]
) -> tuple[Verdict, ...]:
    """Run every check; failures first, then warnings, then passes."""
    found: list[Verdict] = []
    for check in (
        check_over_capacity,
        check_over_budget,
        check_finance_approval,
        check_borrowing,
        check_spot_share,
        check_waiting,
        check_exposure_moves,
    ):
        found.extend(check(base, head, diff, team_monthly))
    order = {"fail": 0, "warn": 1, "pass": 2}
    return tuple(sorted(found, key=lambda v: (order[v.status], v.check, v.subject)))


def centre_monthly(base: Inventory, head: Inventory, team_monthly: dict[str, Change]) -> dict[str, Change]:
    """Each cost centre's monthly exposure before and after, each side with its own team -> cost-centre mapping
    (a team moving from CC-1001 to CC-3001 leaves one and joins the other): its teams' added up (None when any is
    unknown)."""
    past: dict[str, list[Decimal | None]] = {}
    current: dict[str, list[Decimal | None]] = {}
    for name, change in team_monthly.items():
        for side, value, out in ((base, change.past, past), (head, change.current, current)):
            team = side.team_by_name.get(name)
            if team is not None:
                out.setdefault(team.cost_center, []).append(value)

    def total(values: list[Decimal | None]) -> Decimal | None:
        return None if any(v is None for v in values) else sum((v for v in values if v is not None), Decimal(0))

    return {cc: Change(total(past.get(cc, [])), total(current.get(cc, []))) for cc in sorted({*past, *current})}


def touched_centres(base: Inventory, head: Inventory, diff: QuotaDiff) -> list[str]:
    """The cost centres of the teams the change touches, on either side (a cost-centre move touches both)."""
    return sorted(
        {t.cost_center for side in (base, head) for c in diff.teams if (t := side.team_by_name.get(c.team)) is not None}
    )


def check_over_capacity(base: Inventory, head: Inventory, diff: QuotaDiff, _: dict[str, Change]) -> list[Verdict]:
    """Per changed flavor: the sum of nominal quotas is at most the pool's capacity."""
    capacity, nominal = flavor_capacity(head), nominal_by_flavor(head)
    status: Status = "warn" if head.policy.allow_oversubscription else "fail"
    out = []
    for flavor in diff.flavors:
        if flavor.flavor not in capacity or nominal.get(flavor.flavor, 0) <= capacity[flavor.flavor]:
            continue
        over = nominal[flavor.flavor] - capacity[flavor.flavor]
        out.append(
            Verdict(
                "over-capacity",
                status,
                flavor.flavor,
                f"{flavor.flavor} in {flavor.cluster}: nominal quotas sum to {nominal[flavor.flavor]} "
                f"but the flavor has {capacity[flavor.flavor]} {flavor.accelerator} ({over} over)",
            )
        )
    return out or [Verdict("over-capacity", "pass", "", f"{len(diff.flavors)} changed flavor(s) within capacity")]


def check_over_budget(base: Inventory, head: Inventory, diff: QuotaDiff, _: dict[str, Change]) -> list[Verdict]:
    """Per budget of a touched cost centre, the gate is its planned row of `diff.budget_status` (the plan's charge,
    the finance report's figure): over budget fails. The exposure row (the quotas used in full) is named beside it,
    labelled exposure, and gates nothing. Without a plan there is no planned row: an exposure over budget warns
    (finance approves) and says to pass `--plan`."""
    exposure = {(r.cost_center, r.quarter): r for r in diff.budget_status if r.basis == "exposure"}
    planned = {(r.cost_center, r.quarter): r for r in diff.budget_status if r.basis == "planned"}
    out = []
    for centre in touched_centres(base, head, diff):
        budgets = sorted(b.quarter for b in head.policy.budgets if b.cost_center == centre)
        if budgets and not any((centre, q) in planned or (centre, q) in exposure for q in budgets):
            out.append(Verdict("over-budget", "warn", centre, f"{centre}: a flavor has no price; budget not checked"))
        for quarter in budgets:
            subject = f"{centre} {quarter}"
            plan, exposed = planned.get((centre, quarter)), exposure.get((centre, quarter))
            beside = "" if exposed is None else f"; exposure {_row(exposed)}, not gated"
            if plan is not None:
                status: Status = "fail" if plan.over else "pass"
                verb = f"is over the budget by {format_usd(plan.variance)}" if plan.over else "within the budget"
                message = f"{subject}: planned {_row(plan)} {verb}{beside}"
                out.append(Verdict("over-budget", status, subject, message))
            elif exposed is not None:
                message = f"{subject}: no plan (`qm diff --plan DIR`), so no planned charge to gate on{beside}" + (
                    ": over the budget, finance approves" if exposed.over else ""
                )
                out.append(Verdict("over-budget", "warn" if exposed.over else "pass", subject, message))
    return out or [Verdict("over-budget", "pass", "", "no budget applies to the changed teams")]


def _row(row: BudgetStatus) -> str:
    """`$182,297.08 of $1,500,000.00 (12.2%)`: a budget row's charge, budget and share, rounded once."""
    return f"{format_usd(row.usd)} of {format_usd(row.budget_usd)} ({_share(row.used)})"


def _plain(value: Decimal) -> str:
    """A Decimal without trailing zeros: `5`, `36`, `2.5`."""
    return f"{value.normalize():f}"


def _share(used: Decimal | None) -> str:
    return "-" if used is None else format_pct(used)


def check_finance_approval(base: Inventory, head: Inventory, diff: QuotaDiff, _: dict[str, Change]) -> list[Verdict]:
    """The change's monthly cost increase is at most the finance approval threshold."""
    threshold = head.policy.finance_approval_usd_per_month
    delta = diff.monthly_usd.delta
    if threshold is None:
        return [Verdict("finance-approval", "pass", "", "no finance approval threshold is set")]
    if delta > threshold:
        return [
            Verdict(
                "finance-approval",
                "warn",
                "monthly cost",
                f"+{format_usd(delta)}/month is above {format_usd(threshold)}/month: needs finance approval",
            )
        ]
    return [
        Verdict(
            "finance-approval",
            "pass",
            "monthly cost",
            f"{'+' if delta >= 0 else '-'}{format_usd(abs(delta))}/month is within {format_usd(threshold)}/month",
        )
    ]


def _borrowing_gaps(inventory: Inventory) -> dict[tuple[str, str], tuple[int, int]]:
    """(team, flavor) -> (borrowing limit, lendable) where the limit is above what the rest of its cohort tree
    can lend (others' lending limits, or nominal, and the tree's cohort quotas)."""
    can = borrowable(inventory)
    out = {}
    for team in inventory.teams:
        for q in team.quotas:
            lendable = can.get((team.name, q.flavor), 0)
            if team.cohort is not None and q.borrowing_limit is not None and q.borrowing_limit > lendable:
                out[(team.name, q.flavor)] = (q.borrowing_limit, lendable)
    return out


def check_borrowing(base: Inventory, head: Inventory, diff: QuotaDiff, _: dict[str, Change]) -> list[Verdict]:
    """Borrowing limits that the cohort tree cannot honour, new or changed by this change."""
    before, after = _borrowing_gaps(base), _borrowing_gaps(head)
    out = [
        Verdict(
            "borrowing",
            "warn",
            f"{team}/{flavor}",
            f"{team} may borrow {limit} in {flavor} but the rest of its cohort tree can lend only {can}",
        )
        for (team, flavor), (limit, can) in sorted(after.items())
        if before.get((team, flavor)) != (limit, can)
    ]
    return out or [Verdict("borrowing", "pass", "", "every borrowing limit can be lent by the cohort")]


def check_spot_share(base: Inventory, head: Inventory, diff: QuotaDiff, _: dict[str, Change]) -> list[Verdict]:
    """A changed team's nominal quota on spot pools is at most `policy.max_spot_share` of its quota."""
    limit = head.policy.max_spot_share
    out = []
    for change in diff.teams:
        team = head.team_by_name.get(change.team)
        total = sum(q.nominal for q in team.quotas) if team else 0
        if not team or not total:
            continue
        spot = sum(
            q.nominal
            for q in team.quotas
            if (pool := head.pool_by_name.get(q.flavor)) is not None and pool.provisioning == Provisioning.SPOT
        )
        if spot > total * limit:
            out.append(
                Verdict(
                    "spot-share",
                    "fail",
                    change.team,
                    f"{change.team}: {spot} of {total} accelerators are spot ({spot * 100 / total:.1f} %), "
                    f"above policy.max_spot_share {limit * 100:g} %",
                )
            )
    return out or [Verdict("spot-share", "pass", "", f"changed teams within the {limit * 100:g} % spot limit")]


def setting_reason(team: str, change: SettingChange) -> str:
    """`speech: cost_center CC-1001 -> CC-2003`, `speech: added in teams/speech.yaml`, `speech: moved from A to B`,
    `speech: removed from teams/speech.yaml`."""
    past, current = change.value.past, change.value.current
    if change.setting == "file":
        if past is None:
            return f"{team}: added in {current}"
        return f"{team}: removed from {past}" if current is None else f"{team}: moved from {past} to {current}"
    return f"{team}: {change.setting} {'none' if past is None else past} -> {'none' if current is None else current}"


def _waiting_hours(diff: QuotaDiff) -> dict[str, tuple[int, int]]:
    """Per team of the replay, (hours waiting before, after): its most-waiting flavor's (a lower bound of the hours
    in which any of its demand waits)."""
    out: dict[str, tuple[int, int]] = {}
    for row in diff.impact:
        was, now = out.get(row.team, (0, 0))
        out[row.team] = (max(was, int(row.hours_waiting.past)), max(now, int(row.hours_waiting.current)))
    return out


def check_waiting(base: Inventory, head: Inventory, diff: QuotaDiff, _: dict[str, Change]) -> list[Verdict]:
    """No team waits, in the replay of the last days' demand, more than `policy.max_waiting_share` of the replayed
    hours and more than before the change."""
    if not diff.impact_days:
        return [Verdict("waiting", "pass", "", "not replayed: no usage history")]
    limit = Decimal(str(head.policy.max_waiting_share))
    hours = diff.impact_days * 24
    out = [
        Verdict(
            "waiting",
            "fail",
            team,
            f"{team} would wait {now} of the last {hours} hours ({_share(Decimal(now) / hours)}; before the change "
            f"{was}), above policy.max_waiting_share {_plain(limit * 100)} % ({_plain(limit * hours)} hours)",
        )
        for team, (was, now) in sorted(_waiting_hours(diff).items())
        if now > was and Decimal(now) > limit * hours
    ]
    return out or [
        Verdict(
            "waiting",
            "pass",
            "",
            f"no team waits more than {_plain(limit * 100)} % of the last {hours} hours more than before",
        )
    ]


def moved_centres(base: Inventory, head: Inventory, team_monthly: dict[str, Change]) -> dict[str, Change]:
    """Cost centres whose monthly exposure changes by a cent or more, with the change."""
    return {
        cc: m
        for cc, m in centre_monthly(base, head, team_monthly).items()
        if m.past is not None and m.current is not None and abs(m.current - m.past) >= CENT
    }


def check_exposure_moves(
    base: Inventory, head: Inventory, diff: QuotaDiff, team_monthly: dict[str, Change]
) -> list[Verdict]:
    """Chargeback that moves onto a cost centre none of whose teams' quotas change needs its owners' approval."""
    authors = {t.cost_center for t in diff.teams if t.quota_changed}
    out = [
        Verdict(
            "exposure-moves",
            "warn",
            cc,
            f"{cc}'s monthly exposure moves by {'+' if m.delta > 0 else '-'}{format_usd(abs(m.delta))} "
            f"({format_usd(m.past)} -> {format_usd(m.current)}) though its teams' quotas do not change; its owners "
            "must approve",
        )
        for cc, m in sorted(moved_centres(base, head, team_monthly).items())
        if cc not in authors
    ]
    return out or [Verdict("exposure-moves", "pass", "", "no exposure moves onto cost centres whose quotas stay")]


def finance_moves(base: Inventory, head: Inventory, diff: QuotaDiff) -> tuple[str, ...]:
    """What moves money or sharing whatever its cost, and so needs the finance approvers: an inventory section other
    than teams changed (`FINANCE_SECTIONS`), a team's money or sharing setting changed, a team added, removed or moved
    between files (`setting_reason`)."""
    sections = [f"changes {s}" for s in FINANCE_SECTIONS if s != "team_terms" and getattr(base, s) != getattr(head, s)]
    settings = [setting_reason(t.team, s) for t in diff.teams for s in t.settings]
    shown = {t.team for t in diff.teams for s in t.settings if s.setting == "file"}
    added = [f"{t.team}: {t.status}" for t in diff.teams if t.status != "changed" and t.team not in shown]
    return tuple([*sections, *settings, *added])


def approvals(
    base: Inventory,
    head: Inventory,
    diff: QuotaDiff,
    found: tuple[Verdict, ...],
    team_monthly: dict[str, Change] | None = None,
) -> tuple[Approval, ...]:
    """Everyone the change reaches, each with why: the owners of every team whose quotas or settings change, of
    every team a sharing move reaches (`TeamChange.touched_by`) and of every team of a cost centre whose charge
    changes, on either side (`moved_centres`); then the finance approvers when a money check did not pass or
    anything of `finance_moves` happened. The finance approvers are the base's (a change cannot name its own
    judges), or the head's when the base has none. CODEOWNERS makes the finance approvers' approval binding
    (`codeowners`: every file but a team file under `teams/` is theirs, and a team's money and sharing settings
    live in such files)."""
    reasons: dict[str, list[str]] = {}

    def ask(who: str, why: str) -> None:
        if why not in reasons.setdefault(who, []):
            reasons[who].append(why)

    for team in diff.teams:
        if team.quota_changed or team.settings:
            for owner in team.owners:
                ask(owner, f"owner of {team.team}")
        elif team.touched_by:
            for owner in team.owners:
                ask(owner, f"owner of {team.team} ({'; '.join(team.touched_by)})")
    for cc, m in sorted(moved_centres(base, head, team_monthly or {}).items()):
        why = f"cost centre {cc} exposure {'+' if m.delta > 0 else '-'}{format_usd(abs(m.delta))}/month"
        for member in (t for side in (head, base) for t in side.teams if t.cost_center == cc):
            for owner in member.owners:
                ask(owner, why)
    money = [v for v in found if v.check in ("finance-approval", "over-budget") and v.status != "pass"]
    moves = finance_moves(base, head, diff)
    if money or moves:
        for approver in base.policy.finance_approvers or head.policy.finance_approvers:
            for v in money:
                ask(approver, FINANCE_REASONS[v.check].format(v.subject))
            for why in moves:
                ask(approver, why)
    return tuple(Approval(who, tuple(why)) for who, why in reasons.items())
