"""The quota diff's data types: every figure as past / current / delta (`Change`), the rows, teams, flavors,
policy verdicts and approvals that `data.build_quota_diff` computes and the renderers format."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Literal

from quartermaster.budget_status import BudgetStatus
from quartermaster.model import Inventory
from quartermaster.pricing import cents

Status = Literal["pass", "warn", "fail"]
RenderDocuments = Callable[[Inventory, str], tuple[str, list[tuple[str, str]]]]
"""A cluster's rendered Kueue file as (header, [(`Kind/namespace/name`, YAML document)])."""
MARKER = "<!-- quartermaster-quota-diff -->"
APPROVAL_CHECKS = ("exposure-moves",)
"""Checks whose warning needs a named approver before the change merges: the PR is not "not blocked"."""


@dataclass(frozen=True)
class Change:
    """One value before (past) and after (current) the change."""

    past: Any
    current: Any

    @property
    def delta(self) -> Any:
        """current - past when both are numbers (a float difference rounded to 6 places, as the replay's figures;
        Decimal when either is Decimal); None when either is unknown or absent."""
        past, current = self.past, self.current
        if not (isinstance(past, (int, float, Decimal)) and isinstance(current, (int, float, Decimal))):
            return None
        if isinstance(past, Decimal) or isinstance(current, Decimal):
            return Decimal(str(current)) - Decimal(str(past))
        if isinstance(past, float) or isinstance(current, float):
            return round(current - past, 6)
        return current - past

    @property
    def pct(self) -> Decimal | None:
        """The delta as a percentage of past; None when past is 0 or unknown."""
        delta = self.delta
        if delta is None or not self.past:
            return None
        return Decimal(delta) * 100 / Decimal(self.past)

    @property
    def changed(self) -> bool:
        return bool(self.past != self.current)


@dataclass(frozen=True)
class QuotaRow:
    """One team's quota in one flavor that changed."""

    team: str
    cost_center: str
    cluster: str
    flavor: str
    accelerator: str
    provisioning: str
    nominal: Change
    borrowing_limit: Change
    lending_limit: Change
    flavor_capacity: Change
    flavor_left: Change
    """flavor_left: the flavor's capacity minus the sum of all teams' nominal quotas in it."""
    rate_usd_per_accelerator_month: Decimal | None
    """rate_usd_per_accelerator_month: the flavor's effective marginal rate (see the module docstring)."""
    monthly_usd: Decimal | None
    """monthly_usd: change of monthly exposure from this row (the quota used in full at the flavor's marginal
    rate); None if the flavor has no price."""
    recent_use: Decimal | None = None
    """recent_use: accelerators the team held in the flavor on average over the usage history's last
    `RECENT_DAYS` days (max of requested and used per hour, as metering charges); None without usage rows."""
    expected_monthly_usd: Decimal | None = None
    """expected_monthly_usd: expected change of monthly cost: the recent use carried to the new quota,
    (min(use, new) - min(use, old)) x rate; None without usage rows or a price."""


@dataclass(frozen=True)
class FlavorChange:
    """A flavor whose quotas, capacity or prices changed."""

    flavor: str
    cluster: str
    accelerator: str
    provisioning: str
    capacity: Change
    nominal: Change
    paid_anyway: Change
    monthly_usd: Change
    quota_usd: Decimal | None
    other_usd: Decimal | None
    """other_usd: cost change not from quotas: pool size, commitments or prices changed."""


@dataclass(frozen=True)
class Move:
    """A team's net change of accelerators of one kind in one cluster."""

    accelerator: str
    cluster: str
    delta: int


@dataclass(frozen=True)
class LimitChange:
    """A borrowing or lending limit that changed (None: no limit)."""

    flavor: str
    limit: Literal["borrowing", "lending"]
    value: Change


@dataclass(frozen=True)
class SettingChange:
    """A team field that moves money or sharing without a quota change (`data.MONEY_SETTINGS`), or the file that
    holds the team (`file`: None before for an added team), before and after."""

    setting: str
    value: Change


@dataclass(frozen=True)
class TeamChange:
    """One team the change touches, its moves and its monthly cost."""

    team: str
    cost_center: str
    owners: tuple[str, ...]
    status: Literal["added", "removed", "changed"]
    moves: tuple[Move, ...]
    limits: tuple[LimitChange, ...]
    monthly_usd: Change
    """monthly_usd: the team's monthly exposure before and after: its share of each flavor's cost by quota, plus
    its share of unowned capacity (a cut on paid-anyway capacity moves exposure to the other teams)."""
    expected_monthly_usd: Decimal | None = None
    """expected_monthly_usd: the sum of the team's rows' expected changes; None when any is unknown."""
    settings: tuple[SettingChange, ...] = ()
    """settings: its cost centre, cohort, fair-sharing weight or priority class changed, or it was added to, moved
    between or removed from files: each needs the finance approvers."""
    touched_by: tuple[str, ...] = ()
    """touched_by: why another's move reaches this team's ClusterQueues or cohort (`its cohort changes with speech`,
    `fair sharing turns on`, `cohort research changes`); its owners are named among the approvals."""

    @property
    def quota_changed(self) -> bool:
        """The team's own quotas change (or it is added or removed); else only its exposure moves."""
        return self.status != "changed" or bool(self.moves or self.limits)


@dataclass(frozen=True)
class ImpactRow:
    """What the change does to one team in one flavor over the replayed days (accelerator-hours)."""

    team: str
    flavor: str
    admitted: Change
    """admitted: accelerator-hours of the team's demand admitted (demand = admitted + waiting, the same both sides)."""
    waiting: Change
    hours_waiting: Change
    peak_waiting: Change
    """peak_waiting: the most accelerators left waiting in one hour."""
    borrowed: Change
    lent: Change
    author: bool
    """author: the team's own quota changed in this diff."""

    @property
    def starts_waiting(self) -> bool:
        """A team that did not wait before waits after the change."""
        return not self.waiting.past and bool(self.waiting.current)


@dataclass(frozen=True)
class Verdict:
    """The outcome of one policy check on one subject."""

    check: str
    status: Status
    subject: str
    message: str


@dataclass(frozen=True)
class Approval:
    """Someone who must approve the change, and why."""

    who: str
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class KueueDiff:
    """The unified diff of one cluster's rendered Kueue objects."""

    cluster: str
    diff: str


@dataclass(frozen=True)
class QuotaDiff:
    """Everything the PR comment shows."""

    base: str
    head: str
    teams: tuple[TeamChange, ...]
    rows: tuple[QuotaRow, ...]
    flavors: tuple[FlavorChange, ...]
    monthly_usd: Change
    """monthly_usd: the fleet's monthly exposure (every priced flavor) before and after."""
    unpriced: tuple[str, ...]
    """unpriced: flavors left out of the money figures because the price book has no price for them."""
    verdicts: tuple[Verdict, ...] = ()
    approvals: tuple[Approval, ...] = ()
    kueue: tuple[KueueDiff, ...] = ()
    kueue_note: str | None = None
    """kueue_note: why there is no Kueue diff, when there is none."""
    expected_monthly_usd: Decimal | None = None
    """expected_monthly_usd: the expected change of the fleet's monthly cost (sum of the rows'); None if unknown."""
    impact: tuple[ImpactRow, ...] = ()
    """impact: per team and flavor whose replayed hours differ, old quotas against new (`impact.replay`)."""
    impact_days: int = 0
    """impact_days: days of usage history replayed; 0 = not replayed (no usage rows, or switched off)."""
    basis: str = "exposure"
    """basis: the money figures' basis (`pricing.BASES`); expected_* fields are the usage-carried estimate."""
    budget_status: tuple[BudgetStatus, ...] = ()
    """budget_status: `budget_status.budget_status` of every cost centre whose charge changes: its exposure row (the
    head's quotas used in full, a month's exposure times the quarter's months) and, with a plan, its planned row,
    the same as the finance report's."""
    plan_label: str | None = None
    """plan_label: where the planned rows come from (`qm diff --plan DIR`); None: no plan was given."""
    finance_moves: tuple[str, ...] = ()
    """finance_moves: the money and sharing moves that need the finance approvers whatever they cost
    (`policy.finance_moves`); CODEOWNERS makes their approval binding."""

    @property
    def blocking(self) -> bool:
        """True when a policy failed: the PR must not merge as it is."""
        return any(v.status == "fail" for v in self.verdicts)

    @property
    def needs_approval(self) -> bool:
        """True when a check of APPROVAL_CHECKS warned or money or sharing moved (`finance_moves`): named approvers
        must approve before it merges."""
        return bool(self.finance_moves) or any(v.status == "warn" and v.check in APPROVAL_CHECKS for v in self.verdicts)

    @property
    def empty(self) -> bool:
        return not self.teams and not self.flavors and not self.finance_moves

    def to_json(self) -> dict[str, Any]:
        """Plain JSON data: money as strings of cents, every Change as past / current / delta, each impact row with
        `starts_waiting`."""
        out: dict[str, Any] = _plain(self)
        out["blocking"] = self.blocking
        out["needs_approval"] = self.needs_approval
        for row, plain in zip(self.impact, out["impact"], strict=True):
            plain["starts_waiting"] = row.starts_waiting
        return out


def _plain(value: Any) -> Any:
    if isinstance(value, Change):
        data = {"past": _plain(value.past), "current": _plain(value.current), "delta": _plain(value.delta)}
        if isinstance(value.past, Decimal) or isinstance(value.current, Decimal):
            data["pct"] = _plain(value.pct)
        return data
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Decimal):
        return str(cents(value))
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value
