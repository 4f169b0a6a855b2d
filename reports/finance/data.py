"""The quarterly planning report as data: every figure computed here, once, as Decimal money with
past / current / delta; renderers only format (STYLE habit 13).

Sources: the planner's result (`planner.PlanResult`: kpis, cost_by_quarter, cost_by_team, purchase_schedule,
unmet_demand, budgets), the inventory (demand forecast, pools, prices, budgets) and optionally a previous plan.
FinOps measures follow PLANNING.md §2.2: savings vs all on-demand = on-demand equivalent - cost; effective
savings rate = 1 - cost / on-demand equivalent; commitment coverage = on-demand-equivalent spend covered by
commitments / all on-demand-equivalent spend; commitment utilisation = commitment spend used / commitment spend
(both in dollars; the accelerator-hour versions are shown beside them, labelled); budget variance = forecast -
budget.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import asdict, astuple, dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from quartermaster.capacity import pool_accelerators
from quartermaster.demand import equivalence_ratio, quantile_at
from quartermaster.errors import ProblemsFound
from quartermaster.model import Inventory
from quartermaster.plan_result import EXISTING, NEW
from quartermaster.pricing import (
    COMMITTED_MODELS,
    DEFAULT_IDLE_POLICY,
    IDLE_TEAM,
    PAY_PER_USE_MODELS,
    PricingModel,
    allocate_cents,
    break_even,
    cents,
    cheapest_accelerator_hour,
    cheapest_on_demand_per_accelerator,
)
from quartermaster.reports.metering import check_usage, inventory_records, meter, parse_period
from quartermaster.units import next_quarters, quarter_hours, quarter_of

if TYPE_CHECKING:
    import pandas as pd

    from quartermaster.plan_result import PlanResult, PurchaseRow

Kind = Literal["text", "money", "rate", "delta", "pct", "signed_pct", "number", "int"]
"""Column kinds: `rate` is money per unit (USD per accelerator-hour), shown to 4 decimals."""
ZERO = Decimal(0)


@dataclass(frozen=True)
class Amount:
    """A figure now, in the previous plan (None without one) and the change."""

    current: Decimal
    previous: Decimal | None = None

    @property
    def delta(self) -> Decimal | None:
        return None if self.previous is None else self.current - self.previous

    def to_dict(self) -> dict[str, Any]:
        return {"current": self.current, "previous": self.previous, "delta": self.delta}


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    kind: Kind = "text"


@dataclass(frozen=True)
class Table:
    """One table of the report: the same object feeds the HTML page, a workbook sheet and a CSV file."""

    name: str
    title: str
    columns: tuple[Column, ...]
    rows: tuple[dict[str, Any], ...]
    note: str = ""
    total: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "note": self.note,
            "columns": [asdict(c) for c in self.columns],
            "rows": list(self.rows),
            "total": self.total,
        }


Payment = Literal["all upfront", "partial upfront", "no upfront"]


def payment_of(row: PurchaseRow) -> Payment:
    """How a purchase is paid, from the plan's own figures (its contract shape): `all upfront` (a capacity block's
    price, EC2 `CapacityBlockOffering.UpfrontFee`; an all-upfront reservation), `partial upfront` (a fee when bought
    and a rate every hour of the term) or `no upfront` (a rate every hour of the term)."""
    if not row.upfront_usd:
        return "no upfront"
    return "partial upfront" if row.usd_per_node_hour and row.term_months else "all upfront"


@dataclass(frozen=True)
class Payments:
    """A purchase's payments to the cent: `upfront` when bought (None: none), `monthly` a month over its term (None:
    none), `over_term` all of its hourly payments (liability - upfront), `liability` and the part `in_horizon`; each
    column adds up over the plan's purchases to the plan's own total (`_purchase_payments`)."""

    payment: Payment
    upfront: Decimal | None
    monthly: Decimal | None
    over_term: Decimal
    liability: Decimal
    in_horizon: Decimal


@dataclass(frozen=True)
class Commitment:
    """A new commitment (or capacity block) the plan asks finance to approve, and how it is paid (`Payments`)."""

    site: str
    machine: str
    pricing_model: str
    term: str
    nodes: int
    accelerators: int
    payment: Payment
    upfront: Decimal | None
    monthly: Decimal | None
    over_term: Decimal
    """over_term: what is paid by the hour over the term (liability - upfront)."""
    liability: Decimal
    in_horizon: Decimal
    """in_horizon: the part of the liability inside the plan's horizon (in the plan's expected cost)."""


@dataclass(frozen=True)
class NewPurchases:
    """All new purchases of the plan: what they bind to over their whole terms and what of it falls inside the
    horizon, to the cent as `qm plan` prints them; the credit for the capacity they leave after the horizon (None:
    a plan written before the planner recorded it)."""

    liability: Decimal
    in_horizon: Decimal
    post_horizon_credit: Decimal | None


@dataclass(frozen=True)
class Summary:
    quarter: str
    next_four: tuple[str, ...]
    spend_quarter: Amount
    spend_next_four: Amount
    on_demand_quarter: Amount
    savings_quarter: Amount
    savings_next_four: Amount
    savings_rate: Amount
    coverage: Amount
    utilisation: Amount
    approve: tuple[Commitment, ...]
    approve_liability: Decimal
    approve_monthly: Decimal
    """approve_monthly: the monthly payments of the commitments to approve, each during its own term."""
    approve_upfront: Decimal
    """approve_upfront: what the purchases to approve cost when bought (capacity blocks, upfront fees)."""
    approve_in_horizon: Decimal
    """approve_in_horizon: the part of approve_liability inside the plan's horizon."""
    purchases: NewPurchases
    p90_cost: Decimal
    unmet_hours: Decimal
    budget_total: Decimal | None
    budget_variance: Decimal | None
    expiry_warnings: tuple[dict[str, Any], ...] = ()
    """expiry_warnings: the rows of the commitment expiry table that cross its threshold."""
    budget_centres: tuple[int, int] = (0, 0)
    """budget_centres: (cost centres with a budget this quarter, cost centres with planned cost): the headline
    budget figure covers only the first."""


@dataclass(frozen=True)
class ChartSeries:
    name: str
    values: tuple[float, ...]


@dataclass(frozen=True)
class Chart:
    """Numbers for one chart (plain floats: charts are pictures, the tables keep the exact money)."""

    name: str
    title: str
    categories: tuple[str, ...]
    series: tuple[ChartSeries, ...]
    unit: str
    kind: Literal["stacked", "grouped", "lines", "band"]
    """kind: `band` draws lines and shades the area between the first and the last series."""
    y_title: str = ""
    """y_title: the y axis's title: what is measured, its unit and basis."""
    caption: str = ""
    """caption: a sentence under the chart saying what it shows."""


@dataclass(frozen=True)
class ReportData:
    """Everything the quarterly planning report shows."""

    title: str
    quarter: str
    plan_outcome: str
    plan_quarters: tuple[str, ...]
    has_previous: bool
    summary: Summary
    tables: tuple[Table, ...]
    charts: tuple[Chart, ...] = field(default=())
    what_if: tuple[str, ...] = ()
    """what_if: the plan's what-if overrides (`demand=+20%`); empty for a plan of the forecast as written."""

    def table(self, name: str) -> Table:
        return next(t for t in self.tables if t.name == name)

    def chart(self, name: str) -> Chart:
        return next(c for c in self.charts if c.name == name)

    def to_json(self, generated: dt.date | None = None) -> str:
        """Sorted, indented JSON; money as decimal strings; `generated` the day the report was written (None:
        not recorded, as in golden files)."""

        def plain(obj: Any) -> Any:
            if isinstance(obj, (Decimal, dt.date)):
                return str(obj)
            if isinstance(obj, Amount):
                return plain(obj.to_dict())
            if isinstance(obj, (Table,)):
                return plain(obj.to_dict())
            if hasattr(obj, "__dataclass_fields__"):
                return {k: plain(getattr(obj, k)) for k in obj.__dataclass_fields__}
            if isinstance(obj, dict):
                return {str(k): plain(v) for k, v in obj.items()}
            if isinstance(obj, (list, tuple)):
                return [plain(v) for v in obj]
            return obj

        return json.dumps({**plain(self), "generated": plain(generated)}, indent=2, sort_keys=True) + "\n"


# --- building ---------------------------------------------------------------------------------------


def _decimal(value: Any) -> Decimal:
    """A plan figure as Decimal (None: 0)."""
    return ZERO if value is None else value if isinstance(value, Decimal) else Decimal(str(value))


def _ratio(value: Any) -> Decimal:
    return Decimal(str(round(float(value), 6)))


def _rows(rows: tuple[Any, ...], quarter: str | None = None) -> list[dict[str, Any]]:
    """A plan table's rows as dicts, those of `quarter` only when given."""
    return [asdict(r) for r in rows if quarter is None or r.quarter == quarter]


def _kpi(plan: PlanResult, quarter: str) -> dict[str, Any] | None:
    hit = _rows(plan.kpis, quarter)
    return hit[0] if hit else None


def quarter_cost(plan: PlanResult, quarter: str) -> Decimal:
    """The plan's cost of a quarter, to the cent (the figure report and FOCUS export reconcile to)."""
    kpi = _kpi(plan, quarter)
    return cents(_decimal(kpi["cost_usd"])) if kpi else ZERO


def _sum_cost(plan: PlanResult, quarters: list[str], column: str = "cost_usd") -> Decimal:
    return sum((cents(_decimal(k[column])) for q in quarters if (k := _kpi(plan, q))), ZERO)


def _commitment_term(row: PurchaseRow) -> str:
    return f"{row.term_months} months" if row.term_months else f"{row.node_weeks} node-weeks"


def build_report(
    inventory: Inventory,
    plan: PlanResult,
    quarter: str | None = None,
    previous: PlanResult | None = None,
    revision: str | None = None,
    usage: pd.DataFrame | None = None,
) -> ReportData:
    """The report for `quarter` (default: the plan's first quarter) of a solved plan; `revision` is the
    inventory's git revision (`sources.inventory_revision`), None when not known; `usage`: checked usage records
    (`metering.read_usage`, e.g. pulled from Prometheus) for plan vs actual in place of the inventory's own."""
    if not plan.has_plan:
        raise ProblemsFound(f"the plan has no solution (outcome `{plan.outcome}`); fix the plan before reporting on it")
    quarters = list(plan.quarters)
    quarter = quarter or quarters[0]
    if quarter not in quarters:
        raise ProblemsFound(f"the plan covers {quarters[0]}..{quarters[-1]}, not {quarter}; pick a quarter inside it")
    four = next_quarters(quarter, 4)
    four_in = [q for q in four if q in quarters]

    def amount(fn: Any) -> Amount:
        return Amount(fn(plan), fn(previous) if previous is not None and previous.has_plan else None)

    kpi = _kpi(plan, quarter) or {}
    spend_q = amount(lambda p: quarter_cost(p, quarter))
    spend_4 = amount(lambda p: _sum_cost(p, four_in))
    od_q = amount(lambda p: _sum_cost(p, [quarter], "on_demand_equivalent_usd"))
    savings_q = amount(lambda p: _sum_cost(p, [quarter], "on_demand_equivalent_usd") - quarter_cost(p, quarter))
    savings_4 = amount(lambda p: _sum_cost(p, four_in, "on_demand_equivalent_usd") - _sum_cost(p, four_in))

    def kpi_ratio(name: str) -> Any:
        return lambda p: _ratio((_kpi(p, quarter) or {}).get(name, 0))

    payments = _purchase_payments(plan)
    approve_rows = [r for r in plan.purchase_schedule if r.start_quarter == quarter]
    approve = tuple(
        Commitment(r.site, r.machine, r.pricing_model, _commitment_term(r), r.nodes, r.accelerators, *astuple(paid))
        for r, paid in zip(plan.purchase_schedule, payments, strict=True)
        if r.start_quarter == quarter
    )
    tables: list[Table] = [
        _source_trail(inventory, plan, revision),
        _approve(approve),
        _break_even(inventory, plan, approve_rows),
    ]
    spend = _spend_by_quarter(plan, quarters)
    tables.append(spend)
    teams, centres = _by_team(inventory, plan, previous, quarter)
    tables += [centres, teams, _plan_vs_actual(inventory, plan, previous, usage)]
    coverage = _coverage(plan, quarters)
    expiry = _expiry(inventory, spend, coverage)
    tables += [coverage, expiry]
    tables.append(_purchases(plan, payments))
    demand = _demand_vs_capacity(inventory, plan, quarter)
    tables += [demand, _routing(inventory, plan)]
    exposure = _p90_exposure(inventory, quarters)
    risk, p90_cost = _risk(plan, quarter, exposure[quarter])
    tables.append(risk)
    tables.append(_cost_band(inventory, plan, quarters, exposure))
    tables.append(_unmet(plan))
    budget = _budgets(inventory, plan, quarter)
    tables.append(budget)
    if previous is not None and previous.has_plan:
        tables += _changes(plan, previous, quarters)
    budget_total = budget.total["budget"] if budget.total else None
    summary = Summary(
        quarter,
        tuple(four_in),
        spend_q,
        spend_4,
        od_q,
        savings_q,
        savings_4,
        amount(kpi_ratio("effective_savings_rate")),
        amount(kpi_ratio("coverage")),
        amount(kpi_ratio("utilisation")),
        approve,
        sum((c.liability for c in approve), ZERO),
        cents(sum((c.monthly for c in approve if c.monthly is not None), ZERO)),
        cents(sum((c.upfront for c in approve if c.upfront is not None), ZERO)),
        sum((c.in_horizon for c in approve), ZERO),
        NewPurchases(
            cents(plan.new_commitment_liability_usd),
            cents(plan.new_commitment_in_horizon_usd),
            None if plan.post_horizon_credit_usd is None else cents(plan.post_horizon_credit_usd),
        ),
        p90_cost,
        Decimal(str(round(float(kpi.get("unmet_accelerator_hours", 0)), 1))),
        budget_total,
        budget.total["variance"] if budget.total else None,
        tuple(r for r in expiry.rows if r["warning"]),
        (len(budget.rows), len({cc for cc, _ in _team_costs(plan, quarter).values()})),
    )
    charts = _charts(plan, quarters, tables)
    return ReportData(
        f"Accelerator capacity plan {quarter}",
        quarter,
        plan.outcome,
        tuple(quarters),
        previous is not None,
        summary,
        tuple(tables),
        charts,
        tuple(plan.options.get("what_if") or ()),
    )


def _purchase_payments(plan: PlanResult) -> list[Payments]:
    """Each purchase's payments in plan order, from its own figures (`upfront_usd`, `monthly_usd`), to the cent:
    liability and in-horizon rounded so that each column adds up to the plan's own total to the cent
    (`PlanResult.new_commitment_liability_usd`, what `qm plan` prints), and upfront + over the term = liability."""
    rows = plan.purchase_schedule
    liability = allocate_cents(
        {i: r.total_liability_usd for i, r in enumerate(rows)}, plan.new_commitment_liability_usd
    )
    inside = allocate_cents({i: r.in_horizon_usd for i, r in enumerate(rows)}, plan.new_commitment_in_horizon_usd)
    out: list[Payments] = []
    for i, r in enumerate(rows):
        payment = payment_of(r)
        upfront = liability[i] if payment == "all upfront" else cents(r.upfront_usd)
        out.append(
            Payments(
                payment, upfront or None, cents(r.monthly_usd) or None, liability[i] - upfront, liability[i], inside[i]
            )
        )
    return out


PAYMENT_COLUMNS = (
    Column("payment", "Payment"),
    Column("upfront", "Paid upfront", "money"),
    Column("monthly", "Paid monthly, a month", "money"),
    Column("over_term", "Paid over the term", "money"),
    Column("liability", "Total liability", "money"),
    Column("in_horizon", "Of which in the plan's horizon", "money"),
)
"""How a purchase is paid (`Payments`), in the commitments to approve and the purchase schedule."""


def _approve(approve: tuple[Commitment, ...]) -> Table:
    """The commitments to approve as a table (the summary's, for the workbook and CSV)."""
    return Table(
        "commitments_to_approve",
        "Commitments to approve",
        (
            Column("site", "Site"),
            Column("machine", "Machine"),
            Column("pricing_model", "Pricing"),
            Column("term", "Term"),
            Column("nodes", "Nodes", "int"),
            Column("accelerators", "Accelerators", "int"),
            *PAYMENT_COLUMNS,
        ),
        tuple(asdict(c) for c in approve),
        note="Basis: planned. Paid upfront: when bought; paid monthly: a month during the term; paid over the term: "
        "all of those hourly payments; upfront + over the term = total liability, every hour of the term, what finance "
        "commits to; of which in the plan's horizon: the part the plan's quarters pay (in their spend); the rest falls "
        "after the horizon.",
    )


def _break_even(inventory: Inventory, plan: PlanResult, approve_rows: list[PurchaseRow]) -> Table:
    """Per commitment to approve: break-even utilisation (`pricing.break_even`, its contract shape included) and the
    plan's expected utilisation over the quarters it is active."""
    order = list(plan.quarters)
    quantum = Decimal("0.0001")
    rows: list[dict[str, Any]] = []
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
        start = order.index(r.start_quarter)
        active = order[start : start + (max(1, -(-r.term_months // 3)) if r.term_months else 1)]
        utilisation = [Decimal(str(k.utilisation_accelerator_hours)) for k in plan.kpis if k.quarter in active]
        expected = (sum(utilisation, ZERO) / len(utilisation)).quantize(quantum) if utilisation else None
        ratio = None if even.utilisation is None else even.utilisation.quantize(quantum)
        rows.append(
            {
                "site": r.site,
                "machine": r.machine,
                "pricing_model": r.pricing_model,
                "committed_rate": even.committed_rate.quantize(quantum),
                "used_rate": even.used_rate.quantize(quantum),
                "on_demand_rate": None if even.on_demand_rate is None else even.on_demand_rate.quantize(quantum),
                "on_demand_basis": even.on_demand_basis,
                "break_even": ratio,
                "expected": expected,
                "quarters": f"{active[0]} to {active[-1]}" if len(active) > 1 else active[0],
                "verdict": "no on-demand alternative"
                if even.on_demand_rate is None
                else "never: used hours cost more than on demand"
                if ratio is None or expected is None
                else "above break-even"
                if expected >= ratio
                else "below break-even",
            }
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
            Column("quarters", "Averaged over"),
            Column("verdict", "Verdict"),
        ),
        tuple(rows),
        note="Basis: planned, price book. Committed rate: paid every hour of the term, an upfront fee spread over the "
        "term at 730 hours a month; a rate per hour used is paid on top. Break-even utilisation = committed rate / "
        "(on-demand rate - rate per hour used), the on-demand rate of what the commitment replaces (the same machine "
        "and site on demand; else the cheapest on-demand price of the accelerator; else of the accelerators it is "
        "worth under policy.equivalence): below it, the used hours would cost less on demand. Expected utilisation: "
        "the plan's commitment utilisation in accelerator-hours (all commitments together; the plan does not split "
        "it per commitment), averaged over the quarters of the plan in which the commitment is active.",
    )


def _source_trail(inventory: Inventory, plan: PlanResult, revision: str | None) -> Table:
    """What the report was built from: inventory revision, price-book dates, the plan's options and solve."""
    dated = sorted(p.as_of for p in inventory.prices if p.as_of is not None)
    undated = len(inventory.prices) - len(dated)
    prices = (
        f"{len(inventory.prices)} prices, read {dated[0]} to {dated[-1]}"
        if dated
        else f"{len(inventory.prices)} prices, none dated"
    ) + (f"; {undated} undated" if undated else "")
    o = plan.options
    what_if = ", ".join(o.get("what_if") or ()) or "none: the demand forecast and price book as written"
    minimum = o.get("min_utilisation")
    options = "; ".join(
        [
            f"scenario {o['scenario']}" if o.get("scenario") else "all demand scenarios / quantiles",
            "demand derived from the usage history" if o.get("from_usage") else "demand from demand.csv",
            f"idle policy {o.get('idle_policy', DEFAULT_IDLE_POLICY)}",
            "new commitments charged their whole liability, less a credit for the capacity they leave after the horizon"
            if "charge_full_term" not in o  # a plan written before the horizon rule had this option
            else "new commitments charged their whole term"
            if o["charge_full_term"]
            else "new commitments charged for the part of their term inside the horizon",
            f"least utilisation of new commitments {float(minimum):.0%}"
            if minimum is not None
            else "no least utilisation of new commitments",
        ]
    )
    gap = "not reported" if plan.gap is None else f"{plan.gap:.4%}"
    tolerance = o.get("gap_rel")
    solve = (
        f"{plan.solver}: status {plan.status}, outcome {plan.outcome}, MILP gap {gap}"
        + (f" (tolerance {float(tolerance):.2%})" if tolerance is not None else "")
        + f", {plan.solve_seconds:.1f} s"
        + (f", time limit {float(o['time_limit_s']):g} s" if o.get("time_limit_s") else "")
    )
    rows = [
        ("Inventory revision", revision or "not recorded"),
        ("Price book", prices),
        ("Plan horizon", f"{plan.quarters[0]} to {plan.quarters[-1]} ({len(plan.quarters)} quarters)"),
        ("What-ifs", what_if),
        ("Plan options", options),
        ("Solver", solve),
        (
            "Relaxed rules",
            f"{len(plan.relaxed_rules)} business rule(s) had to give (explain-infeasible mode)"
            if plan.relaxed
            else "none",
        ),
    ]
    return Table(
        "source_trail",
        "Sources and plan settings",
        (Column("item", "Item"), Column("value", "Value")),
        tuple({"item": item, "value": value} for item, value in rows),
        note="Inventory revision: the git commit of the inventory folder. MILP gap: how far the plan's expected "
        "cost may be above the best possible, as the solver proved it.",
    )


MODEL_LABEL = {
    "existing-commitments": "existing commitments",
    PricingModel.COMMIT: "new commitments",
    PricingModel.ONPREM: "on-prem",
    PricingModel.CAPACITY_BLOCK: "capacity blocks",
    PricingModel.ON_DEMAND: "on-demand",
    PricingModel.FLEX_START: "flex-start",
    PricingModel.SPOT: "spot",
}
MODEL_ORDER = ["existing-commitments", *COMMITTED_MODELS, *PAY_PER_USE_MODELS]


def _spend_by_quarter(plan: PlanResult, quarters: list[str]) -> Table:
    """Quarter x pricing model, each row's parts rounded so they add up to the quarter's cost to the cent."""
    present = {r.pricing_model for r in plan.cost_by_quarter}
    models = [m for m in MODEL_ORDER if m in present] + sorted(present - set(MODEL_ORDER))
    rows: list[dict[str, Any]] = []
    for q in quarters:
        raw = {
            m: sum((r.usd for r in plan.cost_by_quarter if r.quarter == q and r.pricing_model == m), ZERO)
            for m in models
        }
        total = quarter_cost(plan, q)
        rows.append({"quarter": q, **allocate_cents(raw, total), "total": total})
    columns = (
        Column("quarter", "Quarter"),
        *(Column(m, MODEL_LABEL.get(m, m), "money") for m in models),
        Column("total", "Total", "money"),
    )
    return Table(
        "spend_by_quarter",
        "Spend by quarter and pricing model",
        columns,
        tuple(rows),
        total={"quarter": "All quarters", **{m: sum((r[m] for r in rows), ZERO) for m in [*models, "total"]}},
    )


def _team_costs(plan: PlanResult, quarter: str) -> dict[str, tuple[str, Decimal]]:
    rows = _rows(plan.cost_by_team, quarter)
    rounded = allocate_cents({r["team"]: _decimal(r["usd"]) for r in rows}, quarter_cost(plan, quarter))
    return {r["team"]: (r["cost_center"], rounded[r["team"]]) for r in rows}


NAME_COLUMN = Column("cost_center_name", "Cost centre name")


def _centre_name(inventory: Inventory, code: str) -> str:
    """The name of a cost centre (`policy.cost_center_names`), empty when it has none."""
    return inventory.policy.cost_center_names.get(code, "")


def _usage_months(inventory: Inventory, usage: pd.DataFrame | None) -> tuple[Any, list[Any]]:
    """The usage records (`usage`, else the inventory's own, checked) and the calendar months they fall in, in
    order."""
    records: pd.DataFrame | None = usage
    issues: list[Any] = []
    if usage is None and inventory.usage:
        records, issues = check_usage(inventory_records(inventory), inventory, "usage.csv")
    if issues:
        raise ProblemsFound(f"plan vs actual: {issues[0].format()} ({len(issues)} problem(s); `qm meter` lists them)")
    if records is None or records.empty:
        return records, []
    months = np.unique(records["hour"].to_numpy().astype("datetime64[M]"))  # sorted: 2026-10, 2026-11, ...
    return records, [parse_period(str(month)) for month in months]


def _plan_vs_actual(
    inventory: Inventory, plan: PlanResult, previous: PlanResult | None, usage: pd.DataFrame | None
) -> Table:
    """Planned against metered cost per quarter and team, for every quarter of this plan (else of the previous plan)
    that has usage records.

    Metered: `qm meter` of each month with usage, with the plan's idle policy. Planned: the team's planned cost of
    the quarter times the share of the quarter's hours those months cover (the plan is quarterly)."""
    records, months = _usage_months(inventory, usage)
    plans = [
        (p, label) for p, label in ((plan, "this plan"), (previous, "previous plan")) if p is not None and p.has_plan
    ]
    groups: dict[str, dict[str, Any]] = {}  # quarter -> plan, its label, months, hours, metered per team
    for month in months:
        q = quarter_of(month.start.date())
        source = next(((p, label) for p, label in plans if q in p.quarters), None)
        if source is None:
            continue
        policy = source[0].options.get("idle_policy", DEFAULT_IDLE_POLICY)
        result, problems = meter(inventory, records, month, policy)
        if problems:
            raise ProblemsFound(
                f"plan vs actual: {problems[0].format()} ({len(problems)} problem(s); `qm meter` lists them)"
            )
        if result is None:
            continue
        g = groups.setdefault(q, {"plan": source[0], "label": source[1], "months": [], "hours": 0, "metered": {}})
        g["months"].append(month.label)
        g["hours"] += month.hours
        for charge in result.teams:
            g["metered"][charge.team] = g["metered"].get(charge.team, ZERO) + charge.total
    centre = {t.name: t.cost_center for t in inventory.teams}
    rows: list[dict[str, Any]] = []
    for q, g in sorted(groups.items(), key=lambda kv: parse_period(kv[0]).start):
        share = Decimal(g["hours"]) / Decimal(quarter_hours(q))
        planned = {team: cents(usd * share) for team, (_, usd) in _team_costs(g["plan"], q).items()}
        for team in sorted(set(planned) | set(g["metered"]), key=lambda t: (t.startswith("_"), t)):
            p, m = planned.get(team, ZERO), g["metered"].get(team, ZERO)
            code = centre.get(team, "shared")
            rows.append(
                {
                    "quarter": q,
                    "plan": g["label"],
                    "months": ", ".join(g["months"]),
                    "team": team,
                    "cost_center": code,
                    "cost_center_name": _centre_name(inventory, code),
                    "planned": p,
                    "metered": m,
                    "variance": m - p,
                    "variance_pct": ((m - p) / p).quantize(Decimal("0.0001")) if p else None,
                }
            )
    policies = sorted({g["plan"].options.get("idle_policy", DEFAULT_IDLE_POLICY) for g in groups.values()})
    spans = "; ".join(
        f"{label} covers {p.quarters[0]}" + (f" to {p.quarters[-1]}" if len(p.quarters) > 1 else "")
        for p, label in plans
    )
    found = f"usage records fall in {', '.join(m.label for m in months)}" if months else "there are no usage records"
    return Table(
        "plan_vs_actual",
        "Plan vs actual per quarter",
        (
            Column("quarter", "Quarter"),
            Column("plan", "Plan"),
            Column("months", "Months with usage"),
            Column("team", "Team"),
            Column("cost_center", "Cost centre"),
            NAME_COLUMN,
            Column("planned", "Planned", "money"),
            Column("metered", "Metered", "money"),
            Column("variance", "Variance", "delta"),
            Column("variance_pct", "Variance %", "signed_pct"),
        ),
        tuple(rows),
        note=f"Every quarter of this plan (else of the previous plan) with usage records: {', '.join(groups)}. "
        "Planned (basis: planned) is the plan's cost of the quarter prorated to the hours of the months with usage; "
        f"metered (basis: metered) is `qm meter` of the same months with the plan's idle policy "
        f"({', '.join(policies)}); variance = metered - planned. {found[0].upper()}{found[1:]}; {spans}."
        if rows
        else f"No overlap between usage and plan: {found}; {spans}. Plan vs actual appears once usage of a "
        "planned quarter is recorded (`qm meter`).",
        total={
            "quarter": "Total",
            "planned": sum((r["planned"] for r in rows), ZERO),
            "metered": sum((r["metered"] for r in rows), ZERO),
            "variance": sum((r["variance"] for r in rows), ZERO),
        }
        if rows
        else None,
    )


def _idle_shares(plan: PlanResult, quarter: str) -> dict[str, Decimal]:
    """Each team's share of the quarter's idle, to the cent (a plan written before idle was shared has none)."""
    rows = _rows(plan.cost_by_team, quarter)
    return {r["team"]: cents(_decimal(r.get("idle_share_usd"))) for r in rows}


def _by_team(inventory: Inventory, plan: PlanResult, previous: PlanResult | None, quarter: str) -> tuple[Table, Table]:
    now = _team_costs(plan, quarter)
    before = _team_costs(previous, quarter) if previous is not None and previous.has_plan else {}
    four = [q for q in next_quarters(quarter, 4) if q in plan.quarters]
    four_cost: dict[str, Decimal] = {}
    for q in four:
        for team, (_, usd) in _team_costs(plan, q).items():
            four_cost[team] = four_cost.get(team, ZERO) + usd
    idle = _idle_shares(plan, quarter)
    policy = plan.options.get("idle_policy", DEFAULT_IDLE_POLICY)
    label = {IDLE_TEAM: "unused commitments (no team to share them)"}
    team_rows: list[dict[str, Any]] = []
    for team in sorted(set(now) | set(before), key=lambda t: (t.startswith("_"), t)):
        cc, usd = now.get(team, before.get(team, ("", ZERO)))
        prev = before[team][1] if team in before else (ZERO if before else None)
        team_rows.append(
            {
                "team": label.get(team, team),
                "cost_center": "shared" if cc.startswith("_") else cc,
                "cost_center_name": _centre_name(inventory, cc),
                "current": now.get(team, ("", ZERO))[1],
                "idle_share": idle.get(team, ZERO),
                "previous": prev,
                "delta": None if prev is None else now.get(team, ("", ZERO))[1] - prev,
                "next_four": four_cost.get(team, ZERO),
            }
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

    def total(rows: list[dict[str, Any]], first: str) -> dict[str, Any]:
        out: dict[str, Any] = {first: "Total"}
        for c in money_cols:
            values = [r[c.key] for r in rows if r[c.key] is not None]
            out[c.key] = sum(values, ZERO)
        return out

    teams = Table(
        "teams",
        f"Cost by team, {quarter}",
        (Column("team", "Team"), Column("cost_center", "Cost centre"), NAME_COLUMN, *money_cols),
        tuple(team_rows),
        total=total(team_rows, "team"),
        note="Basis: planned. Teams pay for the accelerator-hours they are planned to use at the rate of what "
        f"serves them, plus a share of the committed hours nobody uses (idle policy: {policy}, the rule of "
        "`qm meter`).",
    )
    centres: dict[str, dict[str, Any]] = {}
    for r in team_rows:
        row = centres.setdefault(
            r["cost_center"],
            {
                "cost_center": r["cost_center"],
                "cost_center_name": r["cost_center_name"],
                **{c.key: ZERO for c in money_cols},
            },
        )
        for c in money_cols:
            row[c.key] = None if r[c.key] is None or row[c.key] is None else row[c.key] + r[c.key]
    centre_rows = sorted(centres.values(), key=lambda r: (r["cost_center"] == "shared", r["cost_center"]))
    return teams, Table(
        "cost_centers",
        f"Cost by cost centre, {quarter}",
        (Column("cost_center", "Cost centre"), NAME_COLUMN, *money_cols),
        tuple(centre_rows),
        total=total(centre_rows, "cost_center"),
    )


def _coverage(plan: PlanResult, quarters: list[str]) -> Table:
    rows: list[dict[str, Any]] = []
    for q in quarters:
        k = _kpi(plan, q) or {}
        rows.append(
            {
                "quarter": q,
                "cost": cents(_decimal(k.get("cost_usd"))),
                "on_demand": cents(_decimal(k.get("on_demand_equivalent_usd"))),
                "savings": cents(_decimal(k.get("on_demand_equivalent_usd"))) - cents(_decimal(k.get("cost_usd"))),
                "esr": _ratio(k.get("effective_savings_rate", 0)),
                "coverage": _ratio(k.get("coverage", 0)),
                "utilisation": _ratio(k.get("utilisation", 0)),
                "coverage_hours": _ratio(k.get("coverage_accelerator_hours", 0)),
                "utilisation_hours": _ratio(k.get("utilisation_accelerator_hours", 0)),
                "served": Decimal(str(round(float(k.get("served_accelerator_hours", 0))))),
            }
        )
    return Table(
        "coverage",
        "Commitment coverage, utilisation and savings",
        (
            Column("quarter", "Quarter"),
            Column("cost", "Cost", "money"),
            Column("on_demand", "All on-demand", "money"),
            Column("savings", "Savings", "money"),
            Column("esr", "Effective savings rate", "pct"),
            Column("coverage", "Coverage ($)", "pct"),
            Column("utilisation", "Utilisation ($)", "pct"),
            Column("coverage_hours", "Coverage (acc-h)", "pct"),
            Column("utilisation_hours", "Utilisation (acc-h)", "pct"),
            Column("served", "Served accelerator-hours", "number"),
        ),
        tuple(rows),
        note="Basis: planned. Coverage ($): share of the served demand's on-demand-equivalent spend that "
        "commitments cover. Utilisation ($): share of commitment spend that is used. The (acc-h) columns measure "
        "the same in accelerator-hours. Effective savings rate: 1 - cost / all-on-demand cost (FinOps Foundation)."
        + "".join(f" Baseline: {note}." for note in plan.baseline_stand_ins),
    )


EXPIRY_SPEND_DROP = Decimal("0.20")
"""A quarter whose existing-commitment spend falls by this share or more from the quarter before is flagged."""
EXPIRY_COVERAGE_DROP = Decimal("0.10")
"""A quarter whose commitment coverage ($) falls by this much (10 percentage points) or more is flagged."""


def _expiry(inventory: Inventory, spend: Table, coverage: Table) -> Table:
    """Quarters in which the inventory's commitments end, and quarters in which existing-commitment spend or
    coverage falls sharply (EXPIRY_SPEND_DROP, EXPIRY_COVERAGE_DROP), with the commitments that end then.

    A commitment ends in the quarter of its `end` (the first day after its term)."""
    ending: dict[str, list[str]] = {}
    for c in sorted(inventory.commitments, key=lambda c: (c.end, c.name)):
        ending.setdefault(quarter_of(c.end), []).append(f"{c.name} (ends {c.end})")
    existing = {r["quarter"]: r.get("existing-commitments", ZERO) for r in spend.rows}
    cover = {r["quarter"]: r["coverage"] for r in coverage.rows}
    quarters = [r["quarter"] for r in spend.rows]
    rows: list[dict[str, Any]] = []
    for before, q in zip([None, *quarters], quarters, strict=False):
        was, now = (existing[before], cover[before]) if before else (None, None)
        fall = (was - existing[q]) / was if was else None
        points = now - cover[q] if now is not None else None
        warning = (fall is not None and fall >= EXPIRY_SPEND_DROP) or (
            points is not None and points >= EXPIRY_COVERAGE_DROP
        )
        if not (warning or q in ending):
            continue
        rows.append(
            {
                "quarter": q,
                "existing_before": was,
                "existing": existing[q],
                "change": None if fall is None else (-fall).quantize(Decimal("0.0001")),
                "coverage_before": now,
                "coverage": cover[q],
                "ending": "; ".join(ending.get(q, ())) or "none (demand moved, not commitments)",
                "warning": "sharp drop" if warning else "",
            }
        )
    return Table(
        "commitment_expiry",
        "Commitments that end, and what that does to spend and coverage",
        (
            Column("quarter", "Quarter"),
            Column("existing_before", "Existing commitments, quarter before", "money"),
            Column("existing", "Existing commitments", "money"),
            Column("change", "Change", "pct"),
            Column("coverage_before", "Coverage ($), quarter before", "pct"),
            Column("coverage", "Coverage ($)", "pct"),
            Column("ending", "Commitments that end"),
            Column("warning", "Warning"),
        ),
        tuple(rows),
        note=f"Basis: planned, a quarter's cost. Warning when existing-commitment spend falls by "
        f"{EXPIRY_SPEND_DROP:.0%} or more from the quarter before, or commitment coverage ($) by "
        f"{EXPIRY_COVERAGE_DROP * 100:.0f} percentage points or more: demand those commitments served is then "
        "bought on demand or by the plan's new commitments.",
    )


def _purchases(plan: PlanResult, payments: list[Payments]) -> Table:
    """The plan's purchases and how each is paid (`Payments`), with the totals per payment kind."""
    used = any(r.usd_per_node_hour_used for r in plan.purchase_schedule)
    rows = [
        {
            "start_quarter": r.start_quarter,
            "site": r.site,
            "machine": r.machine,
            "accelerator": r.accelerator,
            "pricing_model": r.pricing_model,
            "term": _commitment_term(r),
            "start": r.start,
            "end": r.end,
            "nodes": r.nodes,
            "accelerators": r.accelerators,
            "usd_per_node_hour": r.usd_per_node_hour,
            **({"usd_per_node_hour_used": r.usd_per_node_hour_used} if used else {}),
            **asdict(paid),
        }
        for r, paid in zip(plan.purchase_schedule, payments, strict=True)
    ]
    return Table(
        "purchase_schedule",
        "Purchase schedule",
        (
            Column("start_quarter", "Start"),
            Column("site", "Site"),
            Column("machine", "Machine"),
            Column("accelerator", "Accelerator"),
            Column("pricing_model", "Pricing"),
            Column("term", "Term"),
            Column("start", "From"),
            Column("end", "Until"),
            Column("nodes", "Nodes", "int"),
            Column("accelerators", "Accelerators", "int"),
            Column("usd_per_node_hour", "USD / node-hour", "money"),
            *((Column("usd_per_node_hour_used", "Plus USD / node-hour used", "money"),) if used else ()),
            *PAYMENT_COLUMNS,
        ),
        tuple(rows),
        total={
            "start_quarter": "Totals by payment",
            **{
                k: cents(sum((r[k] for r in rows if r[k] is not None), ZERO))  # $0.00, not $0, without any
                for k in ("upfront", "monthly", "over_term", "liability", "in_horizon")
            },
        },
        note="Basis: planned, each purchase's own contract: paid upfront when bought (a capacity block's whole price, "
        "a commitment's upfront fee), then its hourly rate every hour of its term (paid monthly; all of it: paid over "
        "the term)"
        + (", and a rate per node-hour used on top, as used (not in the liability)" if used else "")
        + ". Totals: all upfront payments; the monthly payments added up (each runs only during its own term, From "
        "to Until); all hourly payments; total liability (= upfront + over the term) and the part of it inside the "
        "plan's horizon (the rest is paid after the horizon); as `qm plan` prints them.",
    )


def _capacity(inventory: Inventory) -> dict[tuple[str, str], int]:
    """Accelerators of today's pools per (accelerator, site)."""
    out: dict[tuple[str, str], int] = {}
    for pool in inventory.pools:
        machine = inventory.machine_by_name.get(pool.machine)
        if machine is None:
            continue
        key = (machine.accelerator, inventory.cluster_of_pool[pool.name].site)
        out[key] = out.get(key, 0) + pool_accelerators(inventory, pool)
    return out


def _new_committed(plan: PlanResult, quarter: str) -> dict[tuple[str, str], int]:
    """Accelerators of planned new commitments active in the quarter, per (accelerator, site)."""
    order = list(plan.quarters)
    out: dict[tuple[str, str], int] = {}
    for r in _rows(plan.purchase_schedule):
        start = order.index(r["start_quarter"]) if r["start_quarter"] in order else -1
        months = int(r["term_months"])
        length = max(1, -(-months // 3)) if months else 1
        if 0 <= start <= order.index(quarter) < start + length:
            key = (r["accelerator"], r["site"])
            out[key] = out.get(key, 0) + int(r["accelerators"])
    return out


def _demand_vs_capacity(inventory: Inventory, plan: PlanResult, quarter: str) -> Table:
    demand: dict[tuple[str, str], list[Decimal]] = {}
    for d in inventory.demand:
        if d.period == quarter and not d.scenario:
            key = (d.accelerator, d.site or "any site")
            p50, p90 = demand.setdefault(key, [ZERO, ZERO])
            demand[key] = [p50 + Decimal(str(d.p50)), p90 + Decimal(str(d.p90 if d.p90 is not None else d.p50))]
    capacity = _capacity(inventory)
    new = _new_committed(plan, quarter)
    keys = sorted(set(demand) | set(capacity) | set(new))
    rows: list[dict[str, Any]] = []
    for acc, site in keys:
        p50, p90 = demand.get((acc, site), [ZERO, ZERO])
        rows.append(
            {
                "accelerator": acc,
                "site": site,
                "p50": p50,
                "p90": p90,
                "pools": capacity.get((acc, site), 0),
                "new_committed": new.get((acc, site), 0),
            }
        )
    return Table(
        "demand_vs_capacity",
        f"Demand vs capacity per accelerator and site, {quarter}",
        (
            Column("accelerator", "Accelerator"),
            Column("site", "Site"),
            Column("p50", "Demand p50", "number"),
            Column("p90", "Demand p90", "number"),
            Column("pools", "Pools today", "int"),
            Column("new_committed", "New commitments", "int"),
        ),
        tuple(rows),
        note="Demand in average concurrent accelerators (demand.csv; rows without a site may run at any site the "
        "team may use). Pools today: accelerators of the inventory's pools at their largest size; new "
        "commitments: accelerators the plan buys that are active in the quarter. The rest is bought on demand, "
        "on spot or as flex-start.",
    )


def _routing_prices(inventory: Inventory, row: dict[str, Any]) -> dict[str, Any]:
    """Why a group of demand ran where it did: the equivalence rate and the price per accelerator-hour of the option
    used against the asked accelerator's cheapest price of the same kind (committed for commitments), else on demand.
    Prices from the price book through `pricing`; spare hours of existing commitments cost nothing more."""
    asked, served, tier = row["accelerator"], row["served_accelerator"], row["tier"]
    ratio = equivalence_ratio(inventory.policy.equivalence, asked, served) or 1.0  # served per asked accelerator
    models = COMMITTED_MODELS if tier in (EXISTING, NEW) else (tier,)
    found = (
        None
        if tier == EXISTING
        else cheapest_accelerator_hour(inventory, models, machine=row["machine"], sites=[row["served_site"]])
    )
    served_rate = ZERO if tier == EXISTING else found[0] if found else None
    sites = [row["site"]] if row["site"] else None
    alternative = cheapest_accelerator_hour(
        inventory, models, accelerator=asked, sites=sites
    ) or cheapest_accelerator_hour(inventory, (PricingModel.ON_DEMAND,), accelerator=asked, sites=sites)
    per_asked = None if served_rate is None else served_rate * Decimal(repr(ratio))
    if tier == EXISTING:
        reason = f"spare hours of existing {served} commitments, already paid"
    elif alternative is None:
        reason = f"no {asked} price of this kind in the price book"
    elif per_asked is not None and per_asked < alternative[0]:
        reason = f"cheaper per {asked}-hour"
    else:
        reason = (
            f"not cheaper per {asked}-hour: the cheaper {asked} capacity could not serve it (caps, whole nodes, terms)"
        )
    quantum = Decimal("0.0001")
    return {
        "equivalence": f"1 {served} = {1 / ratio:g} {asked} (policy.equivalence)",
        "served_rate": None if served_rate is None else served_rate.quantize(quantum),
        "served_rate_asked": None if per_asked is None else per_asked.quantize(quantum),
        "asked_rate": alternative[0].quantize(quantum) if alternative else None,
        "asked_basis": alternative[1] if alternative else "none",
        "reason": reason,
    }


def _routing(inventory: Inventory, plan: PlanResult) -> Table:
    """Demand the plan served on another accelerator class (policy.equivalence) or site than asked, per quarter,
    added up over teams, with the reason (`_routing_prices`); from the plan's routing table."""
    groups: dict[tuple[str, ...], dict[str, Any]] = {}
    for r in plan.routing:
        if r.served_accelerator == r.accelerator and (not r.site or r.served_site == r.site):
            continue
        key = (r.quarter, r.accelerator, r.site, r.served_accelerator, r.served_site, r.machine, r.tier)
        g = groups.setdefault(
            key,
            {
                "quarter": r.quarter,
                "accelerator": r.accelerator,
                "site": r.site or "any site",
                "teams": set(),
                "served_accelerator": r.served_accelerator,
                "served_site": r.served_site,
                "machine": r.machine,
                "tier": r.tier,
                "demand_hours": ZERO,
                "served_hours": ZERO,
            },
        )
        g["teams"].add(r.team)
        g["demand_hours"] += Decimal(repr(r.demand_accelerator_hours))
        g["served_hours"] += Decimal(repr(r.accelerator_hours))
    order = list(plan.quarters)
    rows = [
        {
            **g,
            "teams": ", ".join(sorted(g["teams"])),
            "site": g["site"],
            "served_on": f"{g['served_accelerator']} at {g['served_site']} ({g['machine']})",
            "demand_hours": g["demand_hours"].quantize(Decimal("0.1")),
            "served_hours": g["served_hours"].quantize(Decimal("0.1")),
            **_routing_prices(inventory, {**g, "site": "" if g["site"] == "any site" else g["site"]}),
        }
        for key, g in sorted(groups.items(), key=lambda kv: (order.index(kv[0][0]), kv[0][1:]))
    ]
    recorded = bool(plan.routing) or not any(k.served_accelerator_hours for k in plan.kpis)
    return Table(
        "routing",
        "Where demand was routed: served on another accelerator or site than asked",
        (
            Column("quarter", "Quarter"),
            Column("accelerator", "Asked"),
            Column("site", "Asked site"),
            Column("teams", "Teams"),
            Column("served_on", "Served on"),
            Column("tier", "Pricing"),
            Column("demand_hours", "Asked accelerator-hours", "number"),
            Column("served_hours", "Its accelerator-hours", "number"),
            Column("equivalence", "Equivalence"),
            Column("served_rate", "USD / its accelerator-hour", "rate"),
            Column("served_rate_asked", "USD / asked accelerator-hour", "rate"),
            Column("asked_rate", "Asked accelerator, USD / hour", "rate"),
            Column("asked_basis", "Asked at"),
            Column("reason", "Why"),
        ),
        tuple(rows),
        note="Basis: planned, expected accelerator-hours (the plan's routing table) and price book. The plan serves "
        "demand on any accelerator policy.equivalence makes worth the same: one B200 worth 2.2 H100-80GB does 2.2 "
        "H100-hours of work, so an hour of it costs per asked accelerator-hour its price / 2.2. Compared with the "
        "asked accelerator's cheapest price of the same kind anywhere in the price book (committed prices for "
        "commitments; else on demand; a team's residency may rule some out). Pricing `existing`: spare hours of the "
        "inventory's commitments, paid whether used or not; `new-commitment`: the plan's new commitments, at the "
        "cheapest committed price of that machine. Demand pinned to a site is always served there."
        if recorded
        else "This plan was written before the planner recorded where it served each demand; run "
        "`qm plan` again to see where demand was routed.",
    )


def _p90_exposure(inventory: Inventory, quarters: list[str]) -> dict[str, list[dict[str, Any]]]:
    """Per quarter and accelerator: if every team ran at its p90 for the whole quarter, the accelerators above p50
    (`extra`), bought on demand at the cheapest on-demand `rate` of the accelerator: the `exposure` (None without an
    on-demand price)."""
    rates = cheapest_on_demand_per_accelerator(inventory)
    extra: dict[str, dict[str, Decimal]] = {q: {} for q in quarters}
    for d in inventory.demand:
        if d.period in extra and not d.scenario and d.p90 is not None:
            by_acc = extra[d.period]
            by_acc[d.accelerator] = by_acc.get(d.accelerator, ZERO) + Decimal(str(d.p90)) - Decimal(str(d.p50))
    return {
        q: [
            {
                "accelerator": acc,
                "extra": more,
                "rate": rates.get(acc),
                "exposure": cents(more * quarter_hours(q) * rates[acc]) if acc in rates else None,
            }
            for acc, more in sorted(by_acc.items())
        ]
        for q, by_acc in extra.items()
    }


def _risk(plan: PlanResult, quarter: str, rows: list[dict[str, Any]]) -> tuple[Table, Decimal]:
    """The p90 exposure of the report's quarter (`_p90_exposure`'s rows of it) and the cost at p90 demand."""
    exposure = sum((r["exposure"] for r in rows if r["exposure"] is not None), ZERO)
    expected = quarter_cost(plan, quarter)
    table = Table(
        "risk",
        f"Risk: p90 demand in {quarter}",
        (
            Column("accelerator", "Accelerator"),
            Column("extra", "p90 - p50 accelerators", "number"),
            Column("rate", "On-demand USD / accelerator-hour", "money"),
            Column("exposure", "Extra cost at p90", "money"),
        ),
        tuple(rows),
        total={"accelerator": "Total", "exposure": exposure},
        note=f"Expected cost {expected:,} USD; at p90 demand all quarter ({quarter_hours(quarter):,} hours) the extra "
        "accelerators are bought on demand, the most the plan's recourse would cost.",
    )
    return table, expected + exposure


FLEXIBLE_MODELS = tuple(m for m in PAY_PER_USE_MODELS if m != PricingModel.CAPACITY_BLOCK)
"""Spend that shrinks when demand does (capacity blocks and commitments are paid whether used or not)."""


def _cost_band(
    inventory: Inventory, plan: PlanResult, quarters: list[str], exposure: dict[str, list[dict[str, Any]]]
) -> Table:
    """Cost per quarter at p10, expected and at p90 demand (basis: exposure).

    p90: the risk table's figure (`exposure`, the accelerator-hours above p50 bought on demand). p10: each demand
    row's Q(0.1) of the planner's own fit (`demand.quantile_at`: the given p10, else the lognormal through p50
    and p90, p50^2 / p90); the accelerator-hours below p50 are taken off at the cheapest on-demand rate, at most the
    quarter's on-demand, spot and flex-start spend (commitments and capacity blocks are paid whether used or not)."""
    rates = cheapest_on_demand_per_accelerator(inventory)
    below = dict.fromkeys(quarters, ZERO)
    for d in inventory.demand:
        if d.period in below and not d.scenario and d.accelerator in rates:
            p10 = Decimal(repr(quantile_at(d.quantiles, 0.1)))
            below[d.period] += (Decimal(str(d.p50)) - p10) * quarter_hours(d.period) * rates[d.accelerator]
    flexible = dict.fromkeys(quarters, ZERO)
    for r in plan.cost_by_quarter:
        if r.quarter in flexible and r.pricing_model in FLEXIBLE_MODELS:
            flexible[r.quarter] += r.usd
    rows: list[dict[str, Any]] = []
    for q in quarters:
        expected = quarter_cost(plan, q)
        p90 = expected + sum((r["exposure"] for r in exposure[q] if r["exposure"] is not None), ZERO)
        rows.append(
            {"quarter": q, "p10": expected - cents(min(below[q], flexible[q])), "expected": expected, "p90": p90}
        )
    return Table(
        "cost_band",
        "Cost per quarter at p10 and p90 demand",
        (
            Column("quarter", "Quarter"),
            Column("p10", "At p10 demand", "money"),
            Column("expected", "Expected (planned)", "money"),
            Column("p90", "At p90 demand", "money"),
        ),
        tuple(rows),
        note="Basis: exposure around the planned cost. At p90 demand: the accelerator-hours above p50 bought on "
        "demand at the cheapest on-demand rate (the risk table). At p10 demand (the given p10, else that of the "
        "planner's lognormal fit through p50 and p90: p50 x p50 / p90): the accelerator-hours below p50 no longer "
        "bought, at the cheapest on-demand rate, at most the quarter's on-demand, spot and flex-start spend; "
        "commitments and capacity blocks are paid anyway.",
    )


def _unmet(plan: PlanResult) -> Table:
    rows = [
        {
            "quarter": r["quarter"],
            "team": r["team"],
            "accelerator": r["accelerator"],
            "site": r["site"] or "any",
            "hours": Decimal(str(r["expected_accelerator_hours"])),
            "peak": Decimal(str(r["peak_accelerators"])),
        }
        for r in _rows(plan.unmet_demand)
    ]
    return Table(
        "unmet_demand",
        "Unmet demand",
        (
            Column("quarter", "Quarter"),
            Column("team", "Team"),
            Column("accelerator", "Accelerator"),
            Column("site", "Site"),
            Column("hours", "Expected accelerator-hours", "number"),
            Column("peak", "Peak accelerators", "number"),
        ),
        tuple(rows),
        note="Demand the plan cannot serve within supply caps, residency and budgets (never dropped silently).",
    )


def _budgets(inventory: Inventory, plan: PlanResult, quarter: str) -> Table:
    """Forecast - budget per cost centre with a budget (policy.budgets)."""
    forecast: dict[str, Decimal] = {}
    for _team, (cc, usd) in _team_costs(plan, quarter).items():
        forecast[cc] = forecast.get(cc, ZERO) + usd
    rows: list[dict[str, Any]] = []
    for b in sorted(inventory.policy.budgets, key=lambda b: b.cost_center):
        if b.quarter != quarter:
            continue
        spend = forecast.get(b.cost_center, ZERO)
        rows.append(
            {
                "cost_center": b.cost_center,
                "cost_center_name": _centre_name(inventory, b.cost_center),
                "budget": cents(b.usd),
                "forecast": spend,
                "variance": spend - cents(b.usd),
                "used": (spend / b.usd).quantize(Decimal("0.0001")) if b.usd else None,
            }
        )
    total = None
    if rows:
        budget, spend = sum((r["budget"] for r in rows), ZERO), sum((r["forecast"] for r in rows), ZERO)
        total = {
            "cost_center": "Total",
            "budget": budget,
            "forecast": spend,
            "variance": spend - budget,
            "used": (spend / budget).quantize(Decimal("0.0001")) if budget else None,
        }
    return Table(
        "budget_variance",
        f"Budget variance by cost centre, {quarter}",
        (
            Column("cost_center", "Cost centre"),
            NAME_COLUMN,
            Column("budget", "Budget", "money"),
            Column("forecast", "Forecast", "money"),
            Column("variance", "Variance", "delta"),
            Column("used", "Of budget", "pct"),
        ),
        tuple(rows),
        total=total,
        note="Variance = forecast - budget; negative is under budget. Budgets from policy.budgets.",
    )


def _purchase_change(a: dict[str, Any] | None, b: dict[str, Any] | None, start: str, quarters: list[str]) -> str:
    """What happened to a purchase between the previous plan (`a`) and this one (`b`)."""
    if a is None:
        return "added"
    if b is None:
        return (
            "dropped"
            if start in quarters
            else "before this plan's horizon"
            if start < quarters[0]
            else "beyond this plan's horizon"
        )
    if int(a["nodes"]) != int(b["nodes"]):
        return "resized"
    changed = [
        f"{label} {a[k]} -> {b[k]}"
        for k, label in (
            ("node_weeks", "node-weeks"),
            ("usd_per_node_hour", "USD / node-hour"),
            ("start", "from"),
            ("end", "until"),
        )
        if str(a[k]) != str(b[k])
    ]
    return "; ".join(changed) or "liability changed"


def _changes(plan: PlanResult, previous: PlanResult, quarters: list[str]) -> list[Table]:
    """Cost per quarter and purchases, this plan against the previous one. The plans may cover different
    horizons: a quarter only one of them covers has no change, and a purchase the previous plan starts after
    this plan's horizon is "beyond this plan's horizon", not dropped."""
    both = [q for q in quarters if q in previous.quarters]
    rows: list[dict[str, Any]] = []
    for q in quarters:
        cost_now = quarter_cost(plan, q)
        cost_before = quarter_cost(previous, q) if q in both else None
        rows.append(
            {
                "quarter": q,
                "previous": cost_before,
                "current": cost_now,
                "delta": None if cost_before is None else cost_now - cost_before,
            }
        )
    span = f"{previous.quarters[0]} to {previous.quarters[-1]}" if previous.quarters else "no quarters"
    cost = Table(
        "changes_cost",
        "What changed since the previous plan: cost per quarter",
        (
            Column("quarter", "Quarter"),
            Column("previous", "Previous plan", "money"),
            Column("current", "This plan", "money"),
            Column("delta", "Change", "delta"),
        ),
        tuple(rows),
        total={
            "quarter": "Total, quarters both plans cover" if len(both) < len(quarters) else "Total",
            **{k: sum((r[k] for r in rows if r["quarter"] in both), ZERO) for k in ("previous", "current", "delta")},
        },
        note=f"Basis: planned. The previous plan covers {span}; this plan {quarters[0]} to {quarters[-1]}."
        + (" A quarter only this plan covers has no previous figure." if len(both) < len(quarters) else ""),
    )

    def keyed(p: PlanResult) -> dict[tuple[str, ...], dict[str, Any]]:
        return {
            (r["start_quarter"], r["site"], r["machine"], r["pricing_model"], str(r["term_months"])): r
            for r in _rows(p.purchase_schedule)
        }

    now, before = keyed(plan), keyed(previous)
    changes = []
    for key in sorted(set(now) | set(before)):
        a, b = before.get(key), now.get(key)
        liab_a = cents(_decimal(a["total_liability_usd"])) if a else ZERO
        liab_b = cents(_decimal(b["total_liability_usd"])) if b else ZERO
        if a and b and int(a["nodes"]) == int(b["nodes"]) and liab_a == liab_b:
            continue
        change = _purchase_change(a, b, key[0], quarters)
        beyond = change.endswith("this plan's horizon")
        changes.append(
            {
                "start_quarter": key[0],
                "site": key[1],
                "machine": key[2],
                "pricing_model": key[3],
                "change": change,
                "nodes_before": int(a["nodes"]) if a else 0,
                "nodes_after": None if beyond else int(b["nodes"]) if b else 0,
                "liability_delta": None if beyond else liab_b - liab_a,
            }
        )
    purchases = Table(
        "changes_purchases",
        "What changed since the previous plan: purchases",
        (
            Column("start_quarter", "Start"),
            Column("site", "Site"),
            Column("machine", "Machine"),
            Column("pricing_model", "Pricing"),
            Column("change", "Change"),
            Column("nodes_before", "Nodes before", "int"),
            Column("nodes_after", "Nodes after", "int"),
            Column("liability_delta", "Liability change", "delta"),
        ),
        tuple(changes),
        note="Basis: planned. Resized: the node count changed; otherwise the change names what differs "
        "(node-weeks of a capacity block, price, dates). Before or beyond this plan's horizon: the previous plan "
        "buys it in a quarter this plan does not cover, so this plan says nothing about it.",
    )
    return [cost, purchases]


def _charts(plan: PlanResult, quarters: list[str], tables: list[Table]) -> tuple[Chart, ...]:
    spend = next(t for t in tables if t.name == "spend_by_quarter")
    models = [c for c in spend.columns if c.kind == "money" and c.key != "total"]
    coverage = next(t for t in tables if t.name == "coverage")
    demand = next(t for t in tables if t.name == "demand_vs_capacity")
    band = next(t for t in tables if t.name == "cost_band")
    accelerators = sorted({r["accelerator"] for r in demand.rows})

    def per_accelerator_total(key: str) -> tuple[float, ...]:
        return tuple(float(sum((r[key] for r in demand.rows if r["accelerator"] == a), ZERO)) for a in accelerators)

    return (
        Chart(
            "spend",
            "Spend by quarter and pricing model",
            tuple(quarters),
            tuple(ChartSeries(c.label, tuple(float(r[c.key]) for r in spend.rows)) for c in models),
            "USD",
            "stacked",
            "USD per quarter (planned)",
            "Basis: planned. Each bar is a quarter's expected cost, split by pricing model.",
        ),
        Chart(
            "coverage",
            "Coverage, utilisation and effective savings rate",
            tuple(quarters),
            (
                ChartSeries("coverage ($)", tuple(float(r["coverage"]) for r in coverage.rows)),
                ChartSeries("utilisation ($)", tuple(float(r["utilisation"]) for r in coverage.rows)),
                ChartSeries("effective savings rate", tuple(float(r["esr"]) for r in coverage.rows)),
            ),
            "%",
            "lines",
            "% of USD (planned)",
            "Basis: planned. Coverage and utilisation measured in dollars (FinOps Foundation), as in the table.",
        ),
        Chart(
            "demand",
            f"Demand vs capacity per accelerator, all sites, {demand.title.rsplit(', ', 1)[-1]}",
            tuple(accelerators),
            (
                ChartSeries("demand p50", per_accelerator_total("p50")),
                ChartSeries("demand p90", per_accelerator_total("p90")),
                ChartSeries("pools today", per_accelerator_total("pools")),
                ChartSeries("new commitments", per_accelerator_total("new_committed")),
            ),
            "accelerators",
            "grouped",
            "Accelerators (average concurrent)",
            "All sites together per accelerator: demand without a site may run at any site the team may use, so "
            "it is compared with the capacity of every site. The table below splits both by site.",
        ),
        Chart(
            "band",
            "Cost per quarter, p10 to p90 demand",
            tuple(quarters),
            tuple(
                ChartSeries(label, tuple(float(r[key]) for r in band.rows))
                for key, label in (
                    ("p10", "at p10 demand"),
                    ("expected", "expected (planned)"),
                    ("p90", "at p90 demand"),
                )
            ),
            "USD",
            "band",
            "USD per quarter (exposure)",
            "Shaded: from the cost at p10 demand to the cost at p90 demand (basis: exposure); the line between is "
            "the planned cost. How each bound is estimated: the table below.",
        ),
    )
