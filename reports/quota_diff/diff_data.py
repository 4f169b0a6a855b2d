"""The quota diff as data: what changed between two inventories, what it costs, which policies it breaks.

Everything a renderer shows is computed here; renderers only format. Every figure comes as past / current
/ delta (`Change`). Money is Decimal, quantised to cents only when rendered or serialised.

Pricing a quota change (see `pricing` for a flavor's cost curve): within one flavor f, with N_b and N_h
the sums of nominal quotas before and after,

    quota_usd(f) = variable_h(N_h) - variable_h(N_b)            # priced on the new pools and prices
    rate(f)      = quota_usd(f) / (N_h - N_b)                   # the effective marginal rate
                   (if N_h = N_b: the rate of the last accelerator in use, 0 inside paid-anyway capacity)
    row_usd      = (nominal_h - nominal_b) of the team * rate(f)   # rows of a flavor sum to quota_usd(f)
    other_usd(f) = monthly_h(N_h) - monthly_b(N_b) - quota_usd(f)  # pools, commitments or prices changed

A team's monthly cost before the change is its share of each flavor's monthly cost in proportion to its
nominal quota; after the change it is that plus its rows. The fleet's monthly cost is the sum over flavors.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import difflib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Literal

from quartermaster.budget_status import BudgetStatus, budget_status
from quartermaster.capacity import cohort_root, nominal_by_flavor
from quartermaster.model import Inventory, Quota, Team
from quartermaster.plan_contract import PlanResult
from quartermaster.plan_figures import planned_status
from quartermaster.pricing import CENT, DEFAULT_IDLE_POLICY, HOURS_PER_MONTH, idle_weights
from quartermaster.reports.quota_diff.impact import (
    IMPACT_DAYS,
    TeamImpact,
    flavor_trees,
    recent_demand,
    replay,
    replay_instant,
)
from quartermaster.reports.quota_diff.policy import (
    approvals,
    centre_monthly,
    finance_moves,
    touched_centres,
    verdicts,
)
from quartermaster.reports.quota_diff.quota_cost import FlavorEconomics, flavor_economics
from quartermaster.reports.quota_diff.types import (
    Change,
    FlavorChange,
    ImpactRow,
    KueueDiff,
    LimitChange,
    Move,
    QuotaDiff,
    QuotaRow,
    RenderDocuments,
    SettingChange,
    TeamChange,
)
from quartermaster.units import Quarter, quarter_hours

# --- building ---------------------------------------------------------------------------------------

IMPACT_TOLERANCE = 0.05
"""Accelerator-hours below which a replayed difference is rounding, not impact."""
RECENT_DAYS = 30
"""Days of usage history whose mean use the expected change carries to the new quota."""
MONEY_SETTINGS = ("cost_center", "cohort", "fair_sharing_weight", "priority_class")
"""Team fields that move money or sharing without any quota change: who pays for the team (its cost centre), whom
it borrows from and lends to (its cohort), by what weight (fair sharing) and whose borrowed work it may preempt (its
priority class, shown with its value: a class whose value changes moves every team that uses it). A change of any,
like a team added, removed or moved between files, needs the finance approvers."""
TeamFiles = Mapping[str, str]
"""Team name -> the file that holds it, relative to its inventory folder."""


@dataclass
class _Side:
    inventory: Inventory
    economics: dict[str, FlavorEconomics]
    totals: dict[str, int]
    quotas: dict[tuple[str, str], Quota] = field(default_factory=dict)

    @classmethod
    def of(cls, inventory: Inventory) -> _Side:
        quotas = {(t.name, q.flavor): q for t in inventory.teams for q in t.quotas}
        return cls(inventory, flavor_economics(inventory), nominal_by_flavor(inventory), quotas)

    def monthly(self, flavor: str) -> Decimal | None:
        econ = self.economics.get(flavor)
        return Decimal(0) if econ is None else econ.monthly_usd(self.totals.get(flavor, 0))


def build_quota_diff(
    base: Inventory,
    head: Inventory,
    *,
    base_label: str = "base",
    head_label: str = "head",
    render_documents: RenderDocuments | None = None,
    impact_days: int = IMPACT_DAYS,
    team_files: tuple[TeamFiles, TeamFiles] | None = None,
    plan: PlanResult | None = None,
    plan_label: str | None = None,
) -> QuotaDiff:
    """Compare two inventories: the rows, teams, flavors, money and the teams' money and sharing settings (with
    `team_files` of both sides, also teams added to or moved between files); then the budget status of the cost
    centres it touches (with `plan`, a plan written by `qm plan`, their planned rows beside the exposure rows), the
    policies and the approvers."""
    b, h = _Side.of(base), _Side.of(head)
    use = recent_use(head)
    changed_keys = sorted(
        k for k in set(b.quotas) | set(h.quotas) if _quota_tuple(b.quotas.get(k)) != _quota_tuple(h.quotas.get(k))
    )
    flavors = _flavor_changes(b, h, {f for _, f in changed_keys})
    by_flavor = {f.flavor: f for f in flavors}
    rows = tuple(
        sorted(
            (_row(b, h, team, flavor, by_flavor[flavor], use) for team, flavor in changed_keys),
            key=lambda r: (r.team, r.cluster, r.flavor),
        )
    )
    teams = _team_changes(b, h, rows, _setting_changes(base, head, team_files))
    unpriced = tuple(sorted({f for s in (b, h) for f, e in s.economics.items() if s.monthly(f) is None}))
    past = sum((m for f in b.economics if (m := b.monthly(f)) is not None), Decimal(0))
    current = sum((m for f in h.economics if (m := h.monthly(f)) is not None), Decimal(0))
    diff = QuotaDiff(
        base_label,
        head_label,
        teams,
        rows,
        flavors,
        Change(past, current),
        unpriced,
        expected_monthly_usd=_sum_known(r.expected_monthly_usd for r in rows),
    )
    kueue, note = _kueue_diffs(base, head, render_documents) if render_documents else ((), None)
    demand = recent_demand(head, impact_days) if impact_days > 0 else []
    if demand:
        diff = dataclasses.replace(
            diff, impact=_impact(base, head, demand, {r.team for r in rows}), impact_days=impact_days
        )
    team_monthly = _team_monthly(b, h)
    diff = dataclasses.replace(
        diff,
        budget_status=_budget_status(base, head, diff, team_monthly, plan),
        plan_label=plan_label if plan else None,
    )
    found = verdicts(base, head, diff, team_monthly=team_monthly)
    return dataclasses.replace(
        diff,
        verdicts=found,
        approvals=approvals(base, head, diff, found, team_monthly),
        finance_moves=finance_moves(base, head, diff),
        kueue=kueue,
        kueue_note=note,
    )


def _budget_status(
    base: Inventory, head: Inventory, diff: QuotaDiff, team_monthly: dict[str, Change], plan: PlanResult | None
) -> tuple[BudgetStatus, ...]:
    """The budget rows (`budget_status.budget_status`) of the cost centres the change touches: on the exposure basis (a
    month's exposure after the change x the quarter's months), and on the planned basis when a plan is given;
    grouped by cost centre and quarter, planned first (the basis the over-budget check gates on)."""
    touched = set(touched_centres(base, head, diff))
    monthly = centre_monthly(base, head, team_monthly)
    quarters = {b.quarter for b in head.policy.budgets if b.cost_center in touched}
    exposure: dict[tuple[str, Quarter], Decimal] = {
        (cc, q): m.current * Decimal(quarter_hours(q)) / HOURS_PER_MONTH
        for cc in touched
        if (m := monthly.get(cc)) is not None and m.current is not None
        for q in quarters
    }
    priced = {cc for cc, _ in exposure}
    rows = [*budget_status(head.policy.budgets, exposure, "exposure", quarters)]
    if plan is not None:
        rows += planned_status(head.policy.budgets, plan)
    order = {"planned": 0, "exposure": 1}
    return tuple(
        sorted(
            (r for r in rows if r.cost_center in touched and (r.basis != "exposure" or r.cost_center in priced)),
            key=lambda r: (r.cost_center, r.quarter, order[r.basis]),
        )
    )


def _quota_tuple(q: Quota | None) -> tuple[int, int | None, int | None]:
    return (0, None, None) if q is None else (q.nominal, q.borrowing_limit, q.lending_limit)


def _flavor_changes(b: _Side, h: _Side, quota_flavors: set[str]) -> tuple[FlavorChange, ...]:
    names = quota_flavors | {f for f in set(b.economics) | set(h.economics) if b.economics.get(f) != h.economics.get(f)}
    out = []
    for flavor in sorted(names):
        econ = h.economics.get(flavor) or b.economics.get(flavor)
        if econ is None:
            continue  # a quota for a flavor no side has: the loader reports the reference
        n_b, n_h = b.totals.get(flavor, 0), h.totals.get(flavor, 0)
        past, current = b.monthly(flavor), h.monthly(flavor)
        v_h, v_b = econ.variable_usd(n_h), econ.variable_usd(n_b)
        quota_usd = None if v_h is None or v_b is None else v_h - v_b
        other = None if past is None or current is None or quota_usd is None else current - past - quota_usd

        def size(side: _Side, attr: str, flavor: str = flavor) -> int:
            e = side.economics.get(flavor)
            return 0 if e is None else int(getattr(e, attr))

        out.append(
            FlavorChange(
                flavor,
                econ.cluster,
                econ.accelerator,
                econ.provisioning,
                Change(size(b, "capacity"), size(h, "capacity")),
                Change(n_b, n_h),
                Change(size(b, "paid_anyway"), size(h, "paid_anyway")),
                Change(past, current),
                quota_usd,
                other,
            )
        )
    return tuple(out)


def _flavor_rate(h: _Side, flavor: FlavorChange) -> Decimal | None:
    econ = h.economics.get(flavor.flavor)
    if econ is None:  # the pool is gone: its quotas go with it at no marginal cost
        return Decimal(0)
    net = flavor.nominal.delta
    if net == 0:
        return econ.last_unit_rate(flavor.nominal.current)
    return None if flavor.quota_usd is None else flavor.quota_usd / net


def recent_use(inventory: Inventory, days: int = RECENT_DAYS) -> dict[tuple[str, str], Decimal] | None:
    """Mean accelerators each team held in each flavor over the last `days` days of the usage history (hours
    without a row count as 0), or None when the inventory has no usage rows."""
    if not inventory.usage:
        return None
    end = max(u.hour for u in inventory.usage)
    start = end - dt.timedelta(days=days) + dt.timedelta(hours=1)
    held: dict[tuple[str, str], Decimal] = {}
    for u in inventory.usage:
        if u.hour >= start:
            key = (u.team, u.flavor)
            held[key] = held.get(key, Decimal(0)) + Decimal(str(max(u.accelerators_requested, u.accelerators_used)))
    return {key: total / (days * 24) for key, total in held.items()}


def _impact(
    base: Inventory, head: Inventory, demand: list[tuple[dt.datetime, str, str, float]], authors: set[str]
) -> tuple[ImpactRow, ...]:
    """The replay with the old quotas and with the new, for the teams and flavors whose hours differ. Each
    flavor's quota tree is separate, so only flavors whose tree the change touches are replayed."""
    at, flavors = replay_instant(demand), {row[2] for row in demand}
    old, new = (flavor_trees(base, flavors, at), flavor_trees(head, flavors, at)) if at else ({}, {})
    changed = {f for f in flavors if old[f] != new[f]}
    demand = [row for row in demand if row[2] in changed]
    before, after = replay(base, demand, old), replay(head, demand, new)
    out = []
    for key in sorted(set(before) | set(after)):
        b, h = before.get(key), after.get(key)

        def change(attr: str, b: TeamImpact | None = b, h: TeamImpact | None = h) -> Change:
            return Change(getattr(b, attr) if b else 0.0, getattr(h, attr) if h else 0.0)

        row = ImpactRow(
            key[0],
            key[1],
            admitted=change("admitted"),
            waiting=change("waiting"),
            hours_waiting=change("hours_waiting"),
            peak_waiting=change("peak_waiting"),
            borrowed=change("borrowed"),
            lent=change("lent"),
            author=key[0] in authors,
        )
        if any(
            abs(c.current - c.past) > IMPACT_TOLERANCE
            for c in (row.waiting, row.hours_waiting, row.peak_waiting, row.borrowed, row.lent)
        ):
            out.append(row)
    return tuple(out)


def _sum_known(values: Iterable[Decimal | None]) -> Decimal | None:
    known = list(values)
    return None if any(v is None for v in known) else sum((v for v in known if v is not None), Decimal(0))


def _row(
    b: _Side, h: _Side, team: str, flavor_name: str, flavor: FlavorChange, use: dict[tuple[str, str], Decimal] | None
) -> QuotaRow:
    qb, qh = b.quotas.get((team, flavor_name)), h.quotas.get((team, flavor_name))
    owner = h.inventory.team_by_name.get(team) or b.inventory.team_by_name[team]
    nominal = Change(qb.nominal if qb else 0, qh.nominal if qh else 0)
    rate = _flavor_rate(h, flavor)
    left = Change(flavor.capacity.past - flavor.nominal.past, flavor.capacity.current - flavor.nominal.current)
    return QuotaRow(
        team,
        owner.cost_center,
        flavor.cluster,
        flavor_name,
        flavor.accelerator,
        flavor.provisioning,
        nominal,
        Change(qb.borrowing_limit if qb else None, qh.borrowing_limit if qh else None),
        Change(qb.lending_limit if qb else None, qh.lending_limit if qh else None),
        flavor.capacity,
        left,
        rate,
        None if rate is None else nominal.delta * rate,
        None if use is None else use.get((team, flavor_name), Decimal(0)),
        _expected(use, team, flavor_name, nominal, rate),
    )


def _expected(
    use: dict[tuple[str, str], Decimal] | None, team: str, flavor: str, nominal: Change, rate: Decimal | None
) -> Decimal | None:
    """The team's recent use carried to the new quota, priced at the flavor's rate (None if either is unknown)."""
    if use is None or rate is None:
        return None
    held = use.get((team, flavor), Decimal(0))
    return (min(held, Decimal(nominal.current)) - min(held, Decimal(nominal.past))) * rate


def _showback(side: _Side, team: Team) -> Decimal | None:
    """A team's share of each flavor's monthly cost, in proportion to its nominal quota."""
    total = Decimal(0)
    for quota in team.quotas:
        if quota.nominal == 0 or quota.flavor not in side.economics:
            continue
        monthly = side.monthly(quota.flavor)
        if monthly is None:
            return None
        total += monthly * quota.nominal / side.totals[quota.flavor]
    return total


def _unowned_monthly(side: _Side) -> Decimal:
    """Paid capacity no quota shares: flavors whose quotas sum to 0 (their paid-anyway cost) and commitments
    no pool consumes, per month."""
    idle_flavors = sum(
        (e.fixed_usd_per_month or Decimal(0) for f, e in side.economics.items() if side.totals.get(f, 0) == 0),
        Decimal(0),
    )
    consumed = {p.commitment for p in side.inventory.pools}
    idle_commitments = sum(
        (c.count * c.usd_per_node_hour * HOURS_PER_MONTH for c in side.inventory.commitments if c.name not in consumed),
        Decimal(0),
    )
    return idle_flavors + idle_commitments


def _idle_shares(side: _Side) -> dict[str, Decimal]:
    """The side's unowned capacity shared between its teams by the default idle policy (proportional to each
    team's exposure), as metering and the plan share idle."""
    unowned = _unowned_monthly(side)
    if not unowned:
        return {}
    exposure = {t.name: e for t in side.inventory.teams if (e := _showback(side, t)) is not None}
    weights = idle_weights(DEFAULT_IDLE_POLICY, exposure, sorted(exposure))
    whole = sum(weights.values(), Decimal(0))
    return {team: unowned * w / whole for team, w in weights.items()} if whole else {}


def _team_monthly(b: _Side, h: _Side) -> dict[str, Change]:
    """Every team's monthly exposure on each side: its share of each flavor's cost by quota plus its share of
    unowned capacity (`_idle_shares`). A cut on paid-anyway capacity costs the fleet nothing, but moves the
    exposure to the teams that keep the capacity."""
    idle_b, idle_h = _idle_shares(b), _idle_shares(h)

    def monthly_of(side: _Side, idle: dict[str, Decimal], name: str) -> Decimal | None:
        team = side.inventory.team_by_name.get(name)
        if team is None:
            return Decimal(0)
        share = _showback(side, team)
        return None if share is None else share + idle.get(name, Decimal(0))

    return {
        name: Change(monthly_of(b, idle_b, name), monthly_of(h, idle_h, name))
        for name in sorted(set(b.inventory.team_by_name) | set(h.inventory.team_by_name))
    }


def _setting(inventory: Inventory, team: Team, setting: str) -> object:
    """A MONEY_SETTINGS value as the diff shows it: a priority class with its value (`training (500)`)."""
    value = getattr(team, setting)
    if setting == "priority_class" and value is not None:
        priority = inventory.priority_class_by_name.get(value)
        return value if priority is None else f"{value} ({priority.value})"
    return value


def _setting_changes(
    base: Inventory, head: Inventory, files: tuple[TeamFiles, TeamFiles] | None
) -> dict[str, tuple[SettingChange, ...]]:
    """Per team of either side, its MONEY_SETTINGS that changed and, given the files, the file it was added to,
    moved into or removed from."""
    out = {}
    for name in sorted(set(base.team_by_name) | set(head.team_by_name)):
        old, new = base.team_by_name.get(name), head.team_by_name.get(name)
        found = [
            SettingChange(setting, change)
            for setting in (MONEY_SETTINGS if old and new else ())
            if (change := Change(_setting(base, old, setting), _setting(head, new, setting))).changed  # type: ignore[arg-type]
        ]
        if files is not None:
            where = Change(files[0].get(name) if old else None, files[1].get(name) if new else None)
            if where.changed:
                found.append(SettingChange("file", where))
        if found:
            out[name] = tuple(found)
    return out


def _reached(b: _Side, h: _Side, settings: dict[str, tuple[SettingChange, ...]]) -> dict[str, list[str]]:
    """Team -> why its ClusterQueues or its cohort's sharing change with another's move, though its own settings do
    not: a team's cohort, weight or priority class reaches every team of the cohort trees it leaves and joins; fair
    sharing switched on or off changes every cohort member's preemption; a cohort added, removed or changed (parent,
    weight, quotas) reaches every team of its tree."""
    out: dict[str, list[str]] = {}
    sides = (b.inventory, h.inventory)

    def tell(trees: set[str | None], why: str, mover: str | None = None) -> None:
        for side in sides:
            for team in side.teams:
                reached = team.name != mover and team.cohort and cohort_root(side, team.cohort) in trees
                if reached and why not in out.setdefault(team.name, []):
                    out[team.name].append(why)

    for name, changes in settings.items():
        for s in changes:
            if s.setting in ("cohort", "fair_sharing_weight", "priority_class"):
                trees = {
                    cohort_root(side, t.cohort)
                    for side in sides
                    if (t := side.team_by_name.get(name)) is not None and t.cohort
                }
                what = "priority" if s.setting == "priority_class" else "cohort"
                why = f"its cohort changes with {name}" if what == "cohort" else f"{name}'s priority changes"
                tell(trees, why, name)
    if b.inventory.fair_sharing != h.inventory.fair_sharing:
        everything = {cohort_root(side, t.cohort) for side in sides for t in side.teams if t.cohort}
        tell(everything, f"fair sharing turns {'on' if h.inventory.fair_sharing else 'off'}")
    old, new = b.inventory.cohort_by_name, h.inventory.cohort_by_name
    for cohort in sorted(c for c in set(old) | set(new) if old.get(c) != new.get(c)):
        trees = {cohort_root(side, cohort) for side in sides if cohort in side.cohort_by_name}
        tell(trees, f"cohort {cohort} changes")
    return out


def _team_changes(
    b: _Side, h: _Side, rows: tuple[QuotaRow, ...], settings: dict[str, tuple[SettingChange, ...]]
) -> tuple[TeamChange, ...]:
    """The teams with a quota row, added or removed, with a money or sharing setting changed, the teams such a
    change reaches (`_reached`), and every team whose exposure moves by a cent or more."""
    monthly = _team_monthly(b, h)
    moved = {
        name
        for name, m in monthly.items()
        if m.past is not None and m.current is not None and abs(m.current - m.past) >= CENT
    }
    neighbours = _reached(b, h, settings)
    names = sorted(
        {r.team for r in rows}
        | (set(b.inventory.team_by_name) ^ set(h.inventory.team_by_name))
        | moved
        | set(settings)
        | (set(neighbours) & (set(b.inventory.team_by_name) | set(h.inventory.team_by_name)))
    )
    out = []
    for name in names:
        team = h.inventory.team_by_name.get(name) or b.inventory.team_by_name[name]
        status: Literal["added", "removed", "changed"] = (
            "added"
            if name not in b.inventory.team_by_name
            else "removed"
            if name not in h.inventory.team_by_name
            else "changed"
        )
        mine = [r for r in rows if r.team == name]
        net: dict[tuple[str, str], int] = {}
        for r in mine:
            net[(r.accelerator, r.cluster)] = net.get((r.accelerator, r.cluster), 0) + r.nominal.delta
        moves = tuple(Move(a, c, d) for (a, c), d in sorted(net.items()) if d)
        limits = tuple(
            change
            for r in mine
            if r.nominal.past and r.nominal.current
            for change in (
                LimitChange(r.flavor, "borrowing", r.borrowing_limit),
                LimitChange(r.flavor, "lending", r.lending_limit),
            )
            if change.value.changed
        )
        expected = _sum_known(r.expected_monthly_usd for r in mine)
        out.append(
            TeamChange(
                name,
                team.cost_center,
                team.owners,
                status,
                moves,
                limits,
                monthly[name],
                expected,
                settings.get(name, ()),
                tuple(neighbours.get(name, ())),
            )
        )
    return tuple(out)


def _kueue_diffs(base: Inventory, head: Inventory, render: RenderDocuments) -> tuple[tuple[KueueDiff, ...], None]:
    """Per cluster, the unified diff of the rendered Kueue objects (clusters without a change left out).

    Objects are compared one by one (so a 1,000-team file costs no more than its changed objects): changed
    objects first, then added, then removed, RBAC (Namespace, Role, RoleBinding) last. Each hunk header names
    its object (`ClusterQueue/llm-pretrain`) and its line numbers are the file's.
    """
    out = []
    for cluster in sorted(set(base.cluster_by_name) | set(head.cluster_by_name)):
        old_head, old_docs = render(base, cluster) if cluster in base.cluster_by_name else ("", [])
        new_head, new_docs = render(head, cluster) if cluster in head.cluster_by_name else ("", [])
        old, new = _documents_at(old_head, old_docs), _documents_at(new_head, new_docs)
        changed = [
            key
            for key in [*new, *(k for k in old if k not in new)]
            if old.get(key, ("", 0))[0] != new.get(key, ("", 0))[0]
        ]
        if not changed:
            continue
        changed.sort(
            key=lambda key: (key.split("/")[0] in _RBAC, 0 if key in old and key in new else 1 if key in new else 2)
        )
        lines = [f"--- a/{cluster}.yaml\n", f"+++ b/{cluster}.yaml\n"]
        for key in changed:
            (before, old_at), (after, new_at) = old.get(key, ("", 0)), new.get(key, ("", 0))
            diff = difflib.unified_diff(before.splitlines(), after.splitlines(), n=3, lineterm="")
            for line in list(diff)[2:]:  # past the per-object file names
                hunk = _HUNK.match(line)
                if hunk:
                    line = f"@@ -{_shift(hunk['old'], old_at)} +{_shift(hunk['new'], new_at)} @@ {_label(key)}"
                lines.append(line + "\n")
        out.append(KueueDiff(cluster, "".join(lines)))
    return tuple(out), None


_RBAC = ("Namespace", "Role", "RoleBinding")
_HUNK = re.compile(r"^@@ -(?P<old>[0-9]+(?:,[0-9]+)?) \+(?P<new>[0-9]+(?:,[0-9]+)?) @@$")


def _documents_at(header: str, documents: list[tuple[str, str]]) -> dict[str, tuple[str, int]]:
    """key -> (document, the 0-based line of the file where it starts)."""
    at, out = header.count("\n"), {}
    for key, text in documents:
        out[key] = (text, at)
        at += text.count("\n")
    return out


def _shift(span: str, offset: int) -> str:
    """A hunk's `start,count` with its start moved from the object's lines to the file's."""
    start, _, count = span.partition(",")
    return f"{int(start) + offset if int(start) else offset}{',' + count if count else ''}"


def _label(key: str) -> str:
    """`Kind/name` of an object key `Kind/namespace/name` (a namespaced object shows its namespace too)."""
    kind, *rest = key.split("/")
    return f"{kind}/{rest[-1]}" + (f" in {rest[0]}" if len(rest) == 2 else "")
