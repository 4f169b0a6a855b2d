"""The plan as a contract: the solved plan as typed data (`PlanResult`), the object the finance report, the FOCUS
export and `qm plan` read, written to and read back from a folder exactly.

It lives in the core and imports neither the solver (PuLP, HiGHS) nor pandas: the planner writes it, everything
else reads it, and loading a written plan costs no solver start-up (tests/core/test_plan_contract.py checks this).

Every table is a tuple of frozen rows with units in the field names: money (`*_usd`, `usd_per_*`) is Decimal
USD with 6 decimals as solved (quantise with `pricing.cents` only to show it), quantities are int or float,
and every figure is on the *planned* basis. `PlanResult.frame(name)` gives a table as a pandas DataFrame for
those who want one (pandas is imported then).

A plan folder's `plan.json` is the plan: written and read by pydantic from these types (`PlanResult` and its rows),
whose JSON Schema (`plan_schema`, committed as docs/reference/plan.schema.json by `qm schema`) describes it. It
carries its format version (`PLAN_FORMAT_VERSION`); a plan of another version is refused, naming both. The CSV
files beside it are its tables for spreadsheets, written, never read back.
"""

from __future__ import annotations

import contextlib
import csv
import datetime as dt
import enum
import functools
import json
import typing
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Final, Literal

from pydantic import ConfigDict, TypeAdapter, ValidationError

from quartermaster.budget_status import BudgetStatus
from quartermaster.pricing import DEFAULT_IDLE_POLICY, PricedLine
from quartermaster.units import Quarter, cached_quarter, quarter_bounds

if TYPE_CHECKING:
    import pandas as pd


class Outcome(enum.StrEnum):
    """What the solver produced."""

    OPTIMAL = "optimal"  # proven within the gap tolerance
    FEASIBLE = "feasible"  # a plan, but the solver stopped (time limit) before proving the gap
    INFEASIBLE = "infeasible"  # no plan satisfies every business rule
    UNBOUNDED = "unbounded"
    NO_SOLUTION = "no-solution"  # stopped without any plan (time limit, solver error)

    @property
    def has_plan(self) -> bool:
        return self in (Outcome.OPTIMAL, Outcome.FEASIBLE)


EXISTING = "existing"
"""RoutingRow.tier of hours served by the inventory's own commitments."""
NEW = "new-commitment"
"""RoutingRow.tier of hours served by commitments the plan buys."""


@dataclass(frozen=True)
class PurchaseRow:
    """A commitment, or a capacity block (contiguous, dated, paid up front), that the plan buys."""

    site: str
    machine: str
    accelerator: str
    pricing_model: str
    """pricing_model: `commit`, `onprem` or `capacity-block`."""
    term_months: int
    """term_months: the commitment's term; 0 for a capacity block (dated by start and end)."""
    start_quarter: Quarter
    start: dt.date
    end: dt.date
    nodes: int
    node_weeks: int
    """node_weeks: a capacity block's instances x weeks; 0 for commitments."""
    accelerators: int
    usd_per_node_hour: Decimal
    monthly_usd: Decimal
    total_liability_usd: Decimal
    """total_liability_usd: what the purchase commits to over its whole term: every hour from start to end."""
    in_horizon_usd: Decimal
    """in_horizon_usd: the part of the liability inside the planning horizon."""
    upfront_usd: Decimal = Decimal(0)
    """upfront_usd: paid when bought (in total_liability_usd and in_horizon_usd): a capacity block's whole price (its
    monthly_usd is 0), a commitment's upfront fee (all or partial upfront; monthly_usd is the rest, by the hour)."""
    usd_per_node_hour_used: Decimal = Decimal(0)
    """usd_per_node_hour_used: a commitment's rate per node-hour used, beside usd_per_node_hour paid every hour; not in
    the liability, which does not depend on use."""


CLOSED = "metered"
"""QuarterCostRow.pricing_model of the closed part of the quarter in progress: what `qm meter` charged for it."""


@dataclass(frozen=True)
class ClosedCostRow:
    """What a team was charged in the closed part of the quarter in progress (before actuals_until), month by month,
    as `qm meter` charges it with the plan's idle policy: basis metered, fixed in the plan, never re-planned."""

    quarter: Quarter
    period: str
    """period: the calendar month (`2026-10`), or the hours of a month cut by actuals_until (`2026-11-01 00:00..
    2026-11-15 13:00`)."""
    start: str
    end: str
    """start, end: the period's first hour and the hour after its last (ISO, UTC)."""
    team: str
    """team: the team, or IDLE_TEAM for idle no team could take."""
    cost_center: str
    usage_usd: Decimal
    idle_share_usd: Decimal
    usd: Decimal
    """usd: usage_usd + idle_share_usd, to the cent as `qm meter` shows it."""
    accelerator_hours: float
    """accelerator_hours: the hours the team was charged for (held: the larger of used and requested)."""


@dataclass(frozen=True)
class QuarterCostRow:
    """Cost of one quarter under one pricing model (`existing-commitments` for the inventory's own)."""

    quarter: Quarter
    pricing_model: str
    term_months: int
    usd: Decimal


@dataclass(frozen=True)
class TeamCostRow:
    """What a team bears in a quarter: its planned use plus its share of idle (the idle policy)."""

    quarter: Quarter
    team: str
    cost_center: str
    usage_usd: Decimal
    idle_share_usd: Decimal
    usd: Decimal
    """usd: usage_usd + idle_share_usd; the teams' usd add up to the quarter's cost."""


@dataclass(frozen=True)
class KpiRow:
    """FinOps measures of one quarter (coverage and utilisation in dollars, as the FinOps Foundation defines
    them; the accelerator-hour versions beside them)."""

    quarter: Quarter
    cost_usd: Decimal
    on_demand_equivalent_usd: Decimal
    """on_demand_equivalent_usd: the quarter's demand at on-demand prices (its part of baseline_on_demand_usd)."""
    savings_usd: Decimal
    effective_savings_rate: float
    coverage: float
    """coverage: on-demand-equivalent spend of the demand commitments serve / that of all served demand."""
    utilisation: float
    """utilisation: commitment spend used / commitment spend, both amortised (an upfront fee spread over its term's
    hours, as its use is charged), so a fee paid in one quarter does not make that quarter look idle."""
    coverage_accelerator_hours: float
    utilisation_accelerator_hours: float
    served_accelerator_hours: float
    unmet_accelerator_hours: float
    demand_accelerator_hours: float | None = None
    """demand_accelerator_hours: the quarter's expected demand, served or not, in the accelerator classes asked: an
    input of the plan, the same under any horizon, utilisation floor or price what-if (the bridge's demand line);
    None in a plan written before this column."""


@dataclass(frozen=True)
class ShadowPriceRow:
    """USD of one more accelerator-hour of non-preemptible load at a site, machine and quarter."""

    site: str
    machine: str
    accelerator: str
    quarter: Quarter
    usd_per_accelerator_hour: Decimal
    method: str = "unknown"
    """method: how the figure was found: `dual` (the fixed LP's duals, exact there: one more accelerator is bought
    pay-per-use at its price), `re-solve` (the plan re-solved with one more accelerator, purchases fixed),
    `lower bound` (the duals of a degenerate LP, not re-solved: one more costs at least this) or `unknown` (a plan
    written before this column, whose figures may be any of these)."""


@dataclass(frozen=True)
class UnmetRow:
    """Demand the plan does not serve."""

    team: str
    accelerator: str
    site: str
    quarter: Quarter
    expected_accelerator_hours: float
    peak_accelerators: float


@dataclass(frozen=True)
class ProposedQuotaRow:
    """The quota the plan proposes for a team in a flavor, for its first quarter."""

    team: str
    flavor: str
    site: str
    machine: str
    quarter: Quarter
    nominal: int
    borrowing_limit: int
    pool_accelerators: int = 0
    """pool_accelerators: the flavor's pool today, in accelerators (0: no pool yet, a `new:` flavor)."""
    fits_pool: bool = True
    """fits_pool: the flavor's proposed nominals add up to at most pool_accelerators; if not, `qm plan --propose`
    leaves the flavor alone and says how far the pool must grow."""


@dataclass(frozen=True)
class RelaxedRuleRow:
    """A business rule that had to give (explain-infeasible mode)."""

    rule: str
    where: str
    amount: float
    unit: str
    variable: str


@dataclass(frozen=True)
class RoutingRow:
    """Expected accelerator-hours of one demand key (team, accelerator class, site) served on one offer (site,
    machine) by one tier in a quarter: where the plan put the demand."""

    quarter: Quarter
    team: str
    accelerator: str
    """accelerator: the class the demand asks for."""
    site: str
    """site: the site the demand asks for; empty = any site the team may use."""
    served_site: str
    machine: str
    served_accelerator: str
    tier: str
    """tier: `EXISTING` (the inventory's commitments), `NEW` (commitments the plan buys), or a pay-per-use pricing
    model."""
    accelerator_hours: float
    """accelerator_hours: of the machine's accelerators (served_accelerator)."""
    demand_accelerator_hours: float
    """demand_accelerator_hours: the same in the asked class: accelerator_hours / the equivalence ratio."""
    flavor: str = ""
    """flavor: the pool (Kueue ResourceFlavor) the hours run on: one where the team holds quota, else the first
    serving the tier there (a move), else `new:<site>/<machine>/<tier>`; empty in a plan written before the
    planner recorded it."""


@dataclass(frozen=True)
class MoveRow:
    """Demand the plan serves on a flavor where the team holds no quota today (policy.placement `cohort` or
    `anywhere`, or a team with no quota anywhere): what moves, the quota it needs and what it saves."""

    team: str
    served_site: str
    machine: str
    served_accelerator: str
    flavor: str
    """flavor: the pool (Kueue ResourceFlavor) the team would run on, where it holds no quota today (routing's
    flavor), or `new:<site>/<machine>/<tier>` when no pool serves that tier there yet."""
    accelerator_hours: float
    """accelerator_hours: expected, over the horizon, of the machine's accelerators."""
    quota_needed_accelerators: int
    """quota_needed_accelerators: the most accelerators the plan runs the team there at once, in whole nodes: the
    nominal quota (or, in a cohort's pool, the borrowing limit) the team needs in the flavor; it holds none today."""
    saving_usd: Decimal | None
    """saving_usd: how much more the plan's objective (objective_usd) is when the team may not make this one move,
    the rest unchanged (re-solved); None for a team with no quota anywhere (it has nowhere else to run). Moves
    interact, so the savings need not add up to placement_saving_usd."""


@dataclass(frozen=True)
class CommitmentUtilisationRow:
    """An existing commitment's utilisation as the plan assumes it and as the usage history meters it."""

    commitment: str
    site: str
    machine: str
    quarter: Quarter
    """quarter: the plan's first quarter in which the commitment is active (assumed_utilisation's)."""
    assumed_utilisation: float
    """assumed_utilisation: the plan's expected use of the commitments at its site and machine in that quarter over
    their node-hours (commitments at one site and machine are used as one block, as `qm meter` does)."""
    metered_utilisation: float | None
    """metered_utilisation: from the usage history: accelerator-hours held at the site and machine (the larger of used
    and requested), at most the committed accelerators each hour, over the committed accelerator-hours, in the hours
    of the history the commitment was active; None when the history has none of its hours."""
    metered_hours: int
    """metered_hours: the hours of usage history that metered_utilisation covers."""
    expected_utilisation: float
    """expected_utilisation: metered_utilisation where there is history, else assumed_utilisation."""
    basis: str
    """basis: `metered` or `assumed`: which of the two expected_utilisation is."""
    rise_by: str = ""
    """rise_by: when assumed_utilisation is above metered_utilisation, whose hours raise it: each team whose planned
    accelerators on the existing commitments there (on average over the quarter) exceed what it held there in the
    usage history, largest first, with how many more and why (`move`: it holds no quota in the commitment's pools;
    `forecast rise`: it does); empty otherwise, or in a plan written before the planner recorded it."""


@dataclass(frozen=True)
class OfferUtilisationRow:
    """Committed capacity at one site and machine in a quarter (existing and new commitments, capacity blocks) and the
    plan's expected use of it: what a break-even verdict there reads."""

    site: str
    machine: str
    quarter: Quarter
    committed_accelerator_hours: float
    used_accelerator_hours: float
    """used_accelerator_hours: expected, over scenarios and hours, of the committed tiers (existing, new, capacity
    block)."""
    utilisation: float
    """utilisation: used over committed accelerator-hours (0 with none committed)."""
    metered_utilisation: float | None
    """metered_utilisation: the existing commitments' utilisation there in the usage history
    (CommitmentUtilisationRow.metered_utilisation); None without history or existing commitments."""


@dataclass(frozen=True)
class CreditSensitivityRow:
    """The plan re-solved counting only a share of the post-horizon credit: its horizon cost and what it buys in the
    first quarter open to purchases (credit_share 1 is the plan itself)."""

    credit_share: float
    """credit_share: the share of the post-horizon credit the objective counts (1 = the plan)."""
    expected_cost_usd: Decimal
    """expected_cost_usd: the horizon cost (spend inside the horizon) as shown: the sum of its quarters' costs, each
    to the cent (the one rounding rule, quartermaster/plan_figures.py); for share 1 the plan's own horizon cost."""
    objective_usd: Decimal
    post_horizon_credit_usd: Decimal
    """post_horizon_credit_usd: the credit counted: credit_share x the credit the re-solved plan earns."""
    new_commitment_liability_usd: Decimal
    """new_commitment_liability_usd: every new purchase's whole liability, each to the cent, over the horizon."""
    first_quarter: Quarter
    first_quarter_liability_usd: Decimal
    """first_quarter_liability_usd: the whole liability of the purchases that start in first_quarter, each to the
    cent."""


@dataclass(frozen=True)
class CreditSensitivityPurchaseRow:
    """A purchase the plan, re-solved at a share of the post-horizon credit, starts in the first quarter open."""

    credit_share: float
    site: str
    machine: str
    pricing_model: str
    term_months: int
    nodes: int
    node_weeks: int
    total_liability_usd: Decimal


@dataclass(frozen=True)
class ForecastRow:
    """The demand forecast from the usage history for a team and accelerator class in the part of a quarter after the
    history's end (the quarter in progress; every quarter with `--from-usage`)."""

    quarter: Quarter
    team: str
    accelerator: str
    method: str
    """method: how the forecast read the usage history (planner/usage_forecast.py METHODS), chosen on the history's
    total over teams at horizon_days."""
    horizon_days: float
    """horizon_days: from the history's end to the middle of the forecast part, the scale the forecast is carried to."""
    tried_at_horizon: bool
    """tried_at_horizon: whether the methods could be tried on the history's own days horizon_days ahead; a method
    other than the lookback is carried only where it forecast them at least as well as the lookback there."""
    forecast_hours: int
    """forecast_hours: the quarter's hours after the history's end."""
    metered_accelerators: float
    """metered_accelerators: the mean accelerators requested over the history's hours with use."""
    p10_accelerators: float
    expected_accelerators: float
    p90_accelerators: float
    """p10_accelerators, expected_accelerators, p90_accelerators: the forecast part's band: its days' means at the
    10th and 90th percentile, and its mean."""
    crps_accelerators: float | None
    """crps_accelerators: the method's mean CRPS forecasting each day of the history a day ahead from the days before
    it (total over teams), the score it was chosen by; None when the history is too short to try it."""
    lookback_crps_accelerators: float | None
    """lookback_crps_accelerators: the same for the lookback method (the cloud recommenders')."""


ROWS: dict[str, type] = {
    "purchase_schedule": PurchaseRow,
    "cost_by_quarter": QuarterCostRow,
    "cost_by_team": TeamCostRow,
    "kpis": KpiRow,
    "shadow_prices": ShadowPriceRow,
    "unmet_demand": UnmetRow,
    "proposed_quotas": ProposedQuotaRow,
    "budget_status": BudgetStatus,
    "relaxed_rules": RelaxedRuleRow,
    "routing": RoutingRow,
    "moves": MoveRow,
    "commitment_utilisation": CommitmentUtilisationRow,
    "offer_utilisation": OfferUtilisationRow,
    "credit_sensitivity": CreditSensitivityRow,
    "credit_sensitivity_purchases": CreditSensitivityPurchaseRow,
    "forecast": ForecastRow,
    "closed_costs": ClosedCostRow,
    "ledger": PricedLine,
}
"""Each table of a plan and the type of its rows, in the order they are written."""
RETIRED = ("budgets",)
"""Tables a plan no longer has (`budgets`: the planner's own budget table, replaced by `budget_status`): `write`
removes their CSVs from the folder, so that it holds one answer."""


# Load-duration bands (shares of a quarter's hours, low demand to high) used to turn p50/p90 into buckets.
# Finer at the top, where the on-demand / commitment trade-off is decided.
BANDS: tuple[tuple[float, float], ...] = (
    (0.0, 0.1),
    (0.1, 0.3),
    (0.3, 0.5),
    (0.5, 0.7),
    (0.7, 0.9),
    (0.9, 0.97),
    (0.97, 1.0),
)


Solver = Literal["highs", "cbc"]
SOLVERS: tuple[Solver, ...] = ("highs", "cbc")
"""The MILP solvers a plan can be made with: HiGHS (in-process through highspy) and CBC (bundled with PuLP)."""


@dataclass(frozen=True)
class PlanOptions:
    """How to plan: horizon, scenario, what-ifs, solver settings. Part of the contract: every plan records the
    options it was made with (`PlanResult.options`)."""

    horizon: int = 8
    """Quarters to plan."""
    start: Quarter | None = None
    """First quarter; default: the quarter in progress where the actuals end (its closed part as metered, the rest
    planned: planner/actuals.py), else the earliest quarter with demand."""
    as_of: dt.date | None = None
    """The day the actuals end (`qm plan --as-of`): the usage history before it is metered, the rest is forecast and
    planned, and purchases can start from it; default: the end of the usage history."""
    scenario: str | None = None
    """Plan for one named scenario only (probability 1); default: all scenarios."""
    what_if: tuple[str, ...] = ()
    """Overrides: `demand=+20%`, `demand:<team>=-10%`, `price:<site>/<machine>[/<model>]=-10%`, `lose-site=<site>`."""
    explain_infeasible: bool = False
    """Add named, penalised slack variables so that a plan always exists and report which rules gave."""
    from_usage: bool = False
    """Derive demand from the usage history (its hours carried to each quarter by a robust trend, in bands)."""
    solver: Solver = "highs"
    """`highs` (default, in-process through highspy) or `cbc` (bundled with PuLP)."""
    time_limit_s: float = 120.0
    """Seconds each solver run may take (branch-and-bound: what is left of them, at least 1)."""
    gap_rel: float = 1e-3
    """Stop when the plan is proven within this share of the best possible expected cost."""
    threads: int | None = None
    """Threads the solver may use; default: the solver's choice."""
    min_utilisation: float | None = None
    """Least expected utilisation of new commitments per offer and quarter (0-1); default none."""
    idle_policy: str = DEFAULT_IDLE_POLICY
    """How committed hours nobody uses are shared between teams (`pricing.IDLE_POLICIES`, as `qm meter`)."""
    credit_shares: tuple[float, ...] = ()
    """Shares of the post-horizon credit (0-1) to re-solve the plan with, beside the plan's whole credit, so the
    first quarter's purchases and the horizon cost show how much they rest on it (`qm plan`: 0 and 0.5)."""
    resolve_shadow_prices: bool = True
    """Re-solve the shadow prices the duals give only a lower bound of (`planner/marginal.py`); a sweep, which reads
    no shadow prices, leaves it off."""
    bands: tuple[tuple[float, float], ...] = BANDS
    """Load-duration bands for quantile demand and for demand derived from usage."""


PLAN_FORMAT_VERSION: Final = 1
"""The format of plan.json this version of Quartermaster writes and reads (`PlanResult.format_version`); it moves
when a field is added, removed or changes meaning, so that a plan is never read as something it is not."""


@dataclass(frozen=True)
class PlanResult:
    """A solved plan: outcome, headline figures and typed tables."""

    outcome: Outcome
    solver: str
    status: str
    objective_usd: Decimal | None
    """What the plan minimised: spend inside the horizon, except that new commitments count their whole liability,
    less post_horizon_credit_usd, plus the penalties of unmet demand (and of relaxed rules)."""
    expected_cost_usd: Decimal | None
    """Expected spend inside the horizon: each quarter's share of every commitment, pay-per-use, existing."""
    baseline_on_demand_usd: Decimal | None
    """The horizon's demand, served or not, at the price book's on-demand prices (each demand key at the cheapest
    on-demand rate of its class where it may run by residency): the same whatever the plan buys, where it routes
    demand, and under every placement, horizon or price what-if (build_result.on_demand_baseline)."""
    gap: float | None
    solve_seconds: float
    quarters: tuple[Quarter, ...]
    options: PlanOptions
    """The options the plan was made with."""
    note: str = ""
    notes: tuple[str, ...] = ()
    """What the reader should know about the plan's inputs (e.g. usage hours left out as outages)."""
    relaxed: bool = False
    """True when business rules had to give (see relaxed_rules)."""
    baseline_stand_ins: tuple[str, ...] = ()
    """For each demand key with no on-demand price where it may run: which price stands in for it in the baseline."""
    purchase_schedule: tuple[PurchaseRow, ...] = ()
    cost_by_quarter: tuple[QuarterCostRow, ...] = ()
    cost_by_team: tuple[TeamCostRow, ...] = ()
    kpis: tuple[KpiRow, ...] = ()
    shadow_prices: tuple[ShadowPriceRow, ...] = ()
    unmet_demand: tuple[UnmetRow, ...] = ()
    proposed_quotas: tuple[ProposedQuotaRow, ...] = ()
    budget_status: tuple[BudgetStatus, ...] = ()
    """budget_status: every budget of the plan's quarters against its cost centre's planned charge
    (`budget_status.budget_status`, basis planned: `plan_figures.planned_charges`), the rows the finance report
    shows."""
    relaxed_rules: tuple[RelaxedRuleRow, ...] = field(default=())
    routing: tuple[RoutingRow, ...] = ()
    moves: tuple[MoveRow, ...] = ()
    commitment_utilisation: tuple[CommitmentUtilisationRow, ...] = ()
    offer_utilisation: tuple[OfferUtilisationRow, ...] = ()
    credit_sensitivity: tuple[CreditSensitivityRow, ...] = ()
    """credit_sensitivity: the plan (credit_share 1) and its re-solves at PlanOptions.credit_shares."""
    credit_sensitivity_purchases: tuple[CreditSensitivityPurchaseRow, ...] = ()
    forecast: tuple[ForecastRow, ...] = ()
    """forecast: the demand forecast from the usage history, per quarter, team and accelerator, where the plan's
    demand is forecast from it (its part of the quarter in progress after actuals_until)."""
    closed_costs: tuple[ClosedCostRow, ...] = ()
    """closed_costs: the closed part of the quarter in progress as `qm meter` charges it, per month and team (in
    cost_by_quarter as the `metered` line and in cost_by_team)."""
    ledger: tuple[PricedLine, ...] = ()
    """ledger: the plan's priced lines (`pricing.PricedLine`), whose group-bys are its money tables: the cost side
    (what is paid, by quarter, pricing model and term) adds up to cost_by_quarter, the charge side (each team's use
    at its charge rate, its share of idle, its metered charge in the closed part) to cost_by_team; both to every
    quarter's cost (`quartermaster.ledger`)."""
    actuals_until: str | None = None
    """actuals_until: the end of the actuals (ISO date and time: the usage history's end, or `qm plan --as-of`), None
    without any: the quarter in progress (the first, by default) is metered before it and planned after it."""
    placement: str = "quota"
    """placement: where teams' demand could be served (policy.placement or a what-if; placement.py)."""
    placement_saving_usd: Decimal | None = None
    """placement_saving_usd: the objective of the same plan with every team kept to its quota's pools, less this
    plan's (re-solved); None when the plan makes no move it could avoid."""
    post_horizon_credit_usd: Decimal | None = None
    """Expected on-demand cost that new committed capacity left after the horizon avoids, as far as demand uses
    it and at most what the cheapest new commitment would cost for it (model.py, horizon end)."""
    format_version: Literal[1] = PLAN_FORMAT_VERSION
    """format_version: the format of plan.json (PLAN_FORMAT_VERSION); a reader refuses a plan of another version."""

    __pydantic_config__: ClassVar[ConfigDict] = ConfigDict(
        extra="forbid", use_attribute_docstrings=True, title="Quartermaster plan (plan.json)"
    )

    @property
    def has_plan(self) -> bool:
        return self.outcome.has_plan

    @property
    def savings_rate(self) -> float | None:
        if not self.baseline_on_demand_usd or self.expected_cost_usd is None:
            return None
        return float(1 - self.expected_cost_usd / self.baseline_on_demand_usd)

    @property
    def new_commitment_liability_usd(self) -> Decimal:
        """What the new commitments and capacity blocks bind to over their whole terms."""
        return sum((p.total_liability_usd for p in self.purchase_schedule), Decimal(0))

    @property
    def new_commitment_in_horizon_usd(self) -> Decimal:
        """The part of that liability inside the horizon (in expected_cost_usd)."""
        return sum((p.in_horizon_usd for p in self.purchase_schedule), Decimal(0))

    @property
    def first_open_quarter(self) -> Quarter | None:
        """The first quarter in which a purchase can start: the first with a day left after actuals_until (the
        quarter in progress, unless the actuals end on its last day)."""
        if self.actuals_until is None:
            return self.quarters[0] if self.quarters else None
        until = dt.datetime.fromisoformat(self.actuals_until)
        first_day = until.date() if until.time() == dt.time() else until.date() + dt.timedelta(days=1)
        return next((q for q in self.quarters if quarter_bounds(q)[1] > first_day), None)

    def closed_in(self, quarter: Quarter) -> tuple[ClosedCostRow, ...]:
        """The closed part's rows of a quarter (none for a quarter that started after actuals_until)."""
        return tuple(r for r in self.closed_costs if r.quarter == quarter)

    def kpi(self, quarter: Quarter) -> KpiRow | None:
        """The quarter's FinOps measures, or None outside the plan."""
        return next((k for k in self.kpis if k.quarter == quarter), None)

    def quotas_above_pool(self) -> tuple[tuple[str, int, int], ...]:
        """(flavor, proposed nominals added up, pool accelerators) of each flavor whose proposed quotas do not fit its
        pool today (`fits_pool`), by flavor."""
        above = sorted({(q.flavor, q.pool_accelerators) for q in self.proposed_quotas if not q.fits_pool})
        return tuple(
            (flavor, sum(q.nominal for q in self.proposed_quotas if q.flavor == flavor), size) for flavor, size in above
        )

    def frame(self, table: str) -> pd.DataFrame:
        """One table as a DataFrame with one column per row field (also when it has no rows)."""
        import pandas as pd

        return pd.DataFrame([asdict(r) for r in getattr(self, table)], columns=[f.name for f in fields(ROWS[table])])

    def write(self, out_dir: str | Path) -> list[Path]:
        """Write plan.json (the plan: every field and table) and one CSV per table; return the paths."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths = []
        for table in ROWS:
            path = out / f"{table}.csv"
            with path.open("w", newline="") as f:
                writer = csv.writer(f, lineterminator="\n")
                writer.writerow(f.name for f in fields(ROWS[table]))
                writer.writerows(_values(r) for r in getattr(self, table))
            paths.append(path)
        for table in RETIRED:
            (out / f"{table}.csv").unlink(missing_ok=True)
        doc = _plan_file().dump_python(self, mode="json")
        (out / "plan.json").write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
        return [out / "plan.json", *paths]


@functools.cache
def _plan_file() -> TypeAdapter[PlanResult]:
    """pydantic's reader and writer of plan.json, built from PlanResult and its rows (once: it takes a moment)."""
    return TypeAdapter(PlanResult)


def plan_schema() -> dict[str, Any]:
    """The JSON Schema of plan.json as `PlanResult.write` writes it (money as decimal strings, dates as ISO dates)."""
    schema = _plan_file().json_schema(mode="serialization")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["description"] = (
        f"A plan folder's plan.json, format version {PLAN_FORMAT_VERSION}: what `qm plan --out` writes and every "
        "reader of a plan reads. Generated from quartermaster/plan_contract.py by `qm schema`; do not edit."
    )
    return schema


def plan_schema_json() -> str:
    """The plan's schema as stable, sorted JSON text."""
    return json.dumps(plan_schema(), indent=2, sort_keys=True) + "\n"


def load_result(out_dir: str | Path) -> PlanResult:
    """Read a plan written by `PlanResult.write` from its plan.json: every field and row back with its type, equal
    to what was written. A plan of another format version is refused with both versions named."""
    with not_what_was_written("plan.json"):
        doc = json.loads((Path(out_dir) / "plan.json").read_text())
        if not isinstance(doc, dict):
            raise ValueError(f"a JSON {type(doc).__name__}, not an object")
        version = doc.get("format_version")
        if version != PLAN_FORMAT_VERSION:
            written = "no format version (a plan of qm 0.1)" if version is None else f"format version {version!r}"
            raise ValueError(f"{written}; this qm reads format version {PLAN_FORMAT_VERSION}")
        try:
            return _plan_file().validate_python(doc)
        except ValidationError as error:
            first = error.errors()[0]
            where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first["loc"]).lstrip(".")
            got = "" if first["type"] == "missing" else f" (got {first['input']!r:.60})"
            more = f"; and {error.error_count() - 1} more" if error.error_count() > 1 else ""
            raise ValueError(f"{where or 'the plan'}: {first['msg']}{got}{more}") from None


@contextlib.contextmanager
def not_what_was_written(name: str) -> Iterator[None]:
    """Raise a file's content that is not what `PlanResult.write` wrote (a field missing or unknown, a value of the
    wrong kind) as a ValueError naming the file, the one error (with OSError) readers of a plan folder catch."""
    try:
        yield
    except (KeyError, TypeError, ArithmeticError, ValueError) as error:
        raise ValueError(f"{name}: {error}") from error
    except RecursionError:  # a hostile file nested deeper than Python's stack
        raise ValueError(
            f"{name}: nested deeper than any plan (a plan's values are at most a few levels deep)"
        ) from None


def rows_of(row_type: type, records: Sequence[Mapping[Any, Any]]) -> tuple[Any, ...]:
    """Typed rows from plain records (numbers as numpy or Python values, text from a CSV)."""
    hints = typing.get_type_hints(row_type)
    return tuple(row_type(**{name: _cast(hints[name], value) for name, value in rec.items()}) for rec in records)


def _values(row: Any) -> tuple[Any, ...]:
    """A row's field values in field order, as they are (`dataclasses.astuple` would deep-copy them)."""
    return tuple(getattr(row, f.name) for f in fields(row))


def _cast(kind: Any, value: Any) -> Any:
    args = typing.get_args(kind)
    if type(None) in args:  # `X | None`: None (an empty CSV cell) or X
        if value is None or (isinstance(value, float) and value != value) or value == "":
            return None
        kind = next(a for a in args if a is not type(None))
    if kind is Decimal:
        return value if isinstance(value, Decimal) else Decimal(str(value))
    if kind is bool:
        return value if isinstance(value, bool) else str(value) == "True"
    if kind is dt.date:
        return value if isinstance(value, dt.date) else dt.date.fromisoformat(str(value))
    if kind in (int, float):
        return kind(float(value)) if kind is int else float(value)
    if kind is Quarter:
        return cached_quarter(str(value))
    return str(value)
