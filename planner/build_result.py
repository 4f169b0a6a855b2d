"""Step 4 of the planner: the solved model -> the typed plan that reports read (`plan_contract.PlanResult`).

Money is Decimal (USD, 6 decimal places as solved; quantise with `pricing.cents` only to show it); every
figure here is on the *planned* basis. Expected values weigh scenarios by probability and buckets by their
share of the quarter's hours.

Cost attribution (`cost_by_team`): a cost centre pays for the hours its teams are served, at the price of
what served them; committed hours at the contracts' average price (existing) or the cheapest new term
(new); this is the same charge its budget caps in the model (program.py). Commitment hours nobody uses, and
the difference between those rates and what the commitments cost (the quarter's idle), are shared between
the teams by the idle policy (`PlanOptions.idle_policy`, the rules `qm meter` uses: proportional to use by
default); only idle no team can take stays on the `pricing.IDLE_TEAM` line. `usage_usd + idle_share_usd = usd`
per team, and the teams' `usd` add up to the quarter's cost.

Budget status (`budget_status`): `plan_figures.planned_status`, `budget_status.budget_status` on the cost centres'
charges to the cent (`plan_figures.planned_charges`), the rows the finance report, `qm diff --plan` and the alert
rules show. The model's budget rule caps the charge for use only (idle shares depend on the solution), so a budget
the model kept can show as over here, which is what finance will see.
"""

from __future__ import annotations

import datetime as dt
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import replace
from decimal import Decimal
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from quartermaster import cycle_collector
from quartermaster.plan_contract import (
    CLOSED,
    EXISTING,
    NEW,
    ClosedCostRow,
    CommitmentUtilisationRow,
    KpiRow,
    MoveRow,
    OfferUtilisationRow,
    PlanResult,
    ProposedQuotaRow,
    PurchaseRow,
    QuarterCostRow,
    RelaxedRuleRow,
    RoutingRow,
    ShadowPriceRow,
    TeamCostRow,
    UnmetRow,
    rows_of,
)
from quartermaster.plan_figures import planned_status
from quartermaster.planner.actuals import covered_hours, term_end, term_hours
from quartermaster.planner.placement import served_on
from quartermaster.planner.program import (
    PAY_PER_USE,
    TIERS,
    PlanModel,
    on_demand_equivalent_price,
)
from quartermaster.planner.solve import SolveReport
from quartermaster.planner.tables import Budget, Cap, CommitOption, Demand, Existing, Offer, Pool, Team
from quartermaster.planner.tables import rows as table_rows
from quartermaster.pricing import (
    HOURS_PER_MONTH,
    HOURS_PER_WEEK,
    IDLE_COST_CENTER,
    IDLE_TEAM,
    PricedLine,
    PricingModel,
    amortised_usd_per_node_hour,
    decimal_of,
    idle_weights,
    known_usd,
    per_accelerator,
    usd,
)
from quartermaster.units import Quarter

TINY = 1e-6

# --- collecting the tables -------------------------------------------------------------------------


@cycle_collector.paused()
def collect(
    m: PlanModel, report: SolveReport, duals_report: SolveReport | None = None, relaxed: bool = False
) -> PlanResult:
    """Build a PlanResult from a solved model (values of the fixed-integer LP when duals were solved)."""
    d = m.data
    header = PlanResult(
        outcome=report.outcome,
        solver=report.solver,
        status=report.status,
        objective_usd=None,
        expected_cost_usd=None,
        baseline_on_demand_usd=None,
        gap=report.gap,
        solve_seconds=round(report.seconds, 3),
        quarters=tuple(d.quarters),
        note=report.note,
        notes=d.notes,
        options=d.options,
        relaxed=relaxed,
        actuals_until=d.actuals_until,
        forecast=d.forecast,
    )
    if not report.outcome.has_plan:
        return replace(header, relaxed_rules=_typed(RelaxedRuleRow, relaxed_rules(m)) if relaxed else ())
    od_price, _ = on_demand_equivalent_price(m)
    kpis, cost_by_quarter, team_costs, ledger = _costs(m, od_price)
    expected = sum((Decimal(r) for r in cost_by_quarter["usd"]), Decimal(0))
    baseline = sum((Decimal(r) for r in kpis["on_demand_equivalent_usd"]), Decimal(0))
    objective = duals_report.cost if duals_report and duals_report.objective is not None else report.cost
    shadow = shadow_prices(m) if duals_report and duals_report.outcome.has_plan else pd.DataFrame()
    credit = sum(m.value(v) for v in m.tail_credit.values())
    result = replace(
        header,
        objective_usd=usd(objective),
        expected_cost_usd=usd(expected),
        baseline_on_demand_usd=usd(baseline),
        notes=d.notes + uncapped_offers(m),
        post_horizon_credit_usd=usd(credit),
        baseline_stand_ins=d.baseline_stand_ins,
        purchase_schedule=_typed(PurchaseRow, purchase_schedule(m)),
        cost_by_quarter=_typed(QuarterCostRow, cost_by_quarter),
        cost_by_team=_typed(TeamCostRow, team_costs),
        kpis=_typed(KpiRow, kpis),
        shadow_prices=_typed(ShadowPriceRow, shadow),
        unmet_demand=_typed(UnmetRow, unmet_demand(m)),
        proposed_quotas=_typed(ProposedQuotaRow, proposed_quotas(m)),
        relaxed_rules=_typed(RelaxedRuleRow, relaxed_rules(m)),
        routing=_typed(RoutingRow, routing(m)),
        moves=_typed(MoveRow, moves(m)),
        commitment_utilisation=_typed(CommitmentUtilisationRow, commitment_utilisation(m)),
        offer_utilisation=_typed(OfferUtilisationRow, offer_utilisation(m)),
        closed_costs=_typed(ClosedCostRow, d.closed),
        ledger=ledger,
        placement=d.placement,
    )
    return replace(result, budget_status=planned_status(table_rows(d.budgets, Budget), result))


def uncapped_offers(m: PlanModel) -> tuple[str, ...]:
    """One sentence per offer and pricing model the plan buys from with no supply cap in the inventory."""
    capped = {(c.offer, c.pricing_model) for c in table_rows(m.data.caps, Cap)}
    used = {(j, t) for (_k, j, t, *_), x in m.used() if t in PAY_PER_USE and x > TINY}
    used |= {
        (j, _option(m, j, option).pricing_model) for (j, option, _q), var in m.commit.items() if round(m.value(var)) > 0
    }
    return tuple(
        f"{j} {t}: no supply cap in the inventory; the plan assumes any amount can be had"
        for j, t in sorted(used - capped)
    )


def _option(m: PlanModel, j: str, option: str) -> CommitOption:
    """Commitment option `option` at offer j."""
    return next(o for o in m.data.commit_options_by_offer[j] if o.option == option)


PlanRow = TypeVar("PlanRow")


def _typed(row_type: type[PlanRow], frame: pd.DataFrame) -> tuple[PlanRow, ...]:
    """A built table as the plan's typed rows."""
    return rows_of(row_type, frame.to_dict("records"))


PURCHASE_COLUMNS = [
    "site",
    "machine",
    "accelerator",
    "pricing_model",
    "term_months",
    "start_quarter",
    "start",
    "end",
    "nodes",
    "node_weeks",
    "accelerators",
    "usd_per_node_hour",
    "monthly_usd",
    "total_liability_usd",
    "in_horizon_usd",
    "upfront_usd",
    "usd_per_node_hour_used",
]


def purchase_schedule(m: PlanModel) -> pd.DataFrame:
    """What to commit to, where, when, for how long, and what it binds us to: each figure a priced line (node-hours
    at the option's rate, nodes at its upfront fee), as the cost lines of `_costs` are."""
    offers = m.data.offer_by_name
    rows: list[dict[str, object]] = []
    for (j, option, q), var in m.commit.items():
        units = round(m.value(var))
        if units <= 0:
            continue
        o = offers[j]
        opt = _option(m, j, option)
        nodes = units * o.nodes_per_unit
        start = m.data.purchase_day(q)
        end = term_end(start, opt.term_months)
        in_horizon = sum(covered_hours(start, end, qq, m.data.until) for qq in m.data.quarters)
        fee = _upfront_line(o, opt, nodes)
        rows.append(
            {
                "site": o.site,
                "machine": o.machine,
                "accelerator": o.accelerator,
                "pricing_model": opt.pricing_model,
                "term_months": opt.term_months,
                "start_quarter": q,
                "start": start.isoformat(),
                "end": end.isoformat(),
                "nodes": nodes,
                "node_weeks": 0,
                "accelerators": nodes * o.accelerators_per_node,
                "usd_per_node_hour": opt.usd_per_node_hour,
                "monthly_usd": usd(known_usd(_commitment_line(o, opt, nodes * HOURS_PER_MONTH))),
                "total_liability_usd": usd(
                    known_usd(_commitment_line(o, opt, nodes * term_hours(start, opt.term_months)), fee)
                ),
                "in_horizon_usd": usd(known_usd(_commitment_line(o, opt, nodes * in_horizon), fee)),
                "upfront_usd": usd(known_usd(fee)),
                "usd_per_node_hour_used": opt.usd_per_node_hour_used,
            }
        )
    for (j, q), var in m.capacity_block.items():  # one dated block per offer and quarter, paid up front (program.py)
        o = offers[j]
        instances, weeks = round(m.value(var)), m.data.block_weeks(q)
        block = _capacity_block_line(m, j, instances * weeks)
        start = m.data.purchase_day(q)
        end = start + dt.timedelta(weeks=weeks)
        total = usd(known_usd(block))
        if instances > 0:
            rows.append(
                {
                    "site": o.site,
                    "machine": o.machine,
                    "accelerator": o.accelerator,
                    "pricing_model": PricingModel.CAPACITY_BLOCK,
                    "term_months": 0,
                    "start_quarter": q,
                    "start": start.isoformat(),
                    "end": end.isoformat(),
                    "nodes": instances,
                    "node_weeks": weeks * instances,
                    "accelerators": instances * o.accelerators_per_node,
                    "usd_per_node_hour": block.rate,
                    "monthly_usd": usd(0),
                    "total_liability_usd": total,
                    "in_horizon_usd": total,
                    "upfront_usd": total,
                    "usd_per_node_hour_used": usd(0),
                }
            )
    frame = pd.DataFrame(rows, columns=PURCHASE_COLUMNS)
    return frame.sort_values(["start_quarter", "site", "machine", "pricing_model", "term_months", "start"]).reset_index(
        drop=True
    )


def _price_source(o: Offer, model: str, term_months: int = 0) -> str:
    return f"prices.csv {o.machine},{o.site},{model},{term_months}"


def _commitment_line(o: Offer, opt: CommitOption, node_hours: float) -> PricedLine:
    """Node-hours of a new commitment at its hourly rate (planned)."""
    source = _price_source(o, opt.pricing_model, opt.term_months)
    return PricedLine(decimal_of(node_hours), "node-hour", opt.usd_per_node_hour, "planned", source)


def _upfront_line(o: Offer, opt: CommitOption, nodes: float) -> PricedLine:
    """A new commitment's upfront fee: nodes at its fee per node (planned)."""
    source = f"{_price_source(o, opt.pricing_model, opt.term_months)} upfront"
    return PricedLine(decimal_of(nodes), "node", opt.upfront_usd_per_node, "planned", source)


def _pay_per_use_line(m: PlanModel, j: str, model: str, node_hours: float) -> PricedLine:
    """Node-hours served pay-per-use at the plan's price of that model (planned; a price what-if's where given)."""
    source = _price_source(m.data.offer_by_name[j], model)
    return PricedLine(decimal_of(node_hours), "node-hour", decimal_of(m.price[(j, model)]), "planned", source)


def _capacity_block_line(m: PlanModel, j: str, node_weeks: int) -> PricedLine:
    """A capacity block's node-hours (weeks of HOURS_PER_WEEK) at its price (planned)."""
    rate = decimal_of(m.price[(j, PricingModel.CAPACITY_BLOCK)])
    source = _price_source(m.data.offer_by_name[j], PricingModel.CAPACITY_BLOCK)
    return PricedLine(Decimal(HOURS_PER_WEEK * node_weeks), "node-hour", rate, "planned", source)


def _charge_line(m: PlanModel, j: str, tier: str, q: Quarter, node_hours: float) -> PricedLine:
    """A team's node-hours of one tier at offer j in quarter q at the rate its cost centre is charged
    (`PlanModel.charge_per_node_hour`, the rate its budget row caps): the price of a pay-per-use tier, existing
    commitments' cost over their node-hours, the cheapest new term's amortised rate plus its rate per hour used."""
    o = m.data.offer_by_name[j]
    if tier in PAY_PER_USE:
        source = _price_source(o, tier)
    elif tier == EXISTING:
        source = f"existing commitments at {o.site}/{o.machine}: their {q} cost over their node-hours"
    else:
        source = (
            f"cheapest new commitment at {o.site}/{o.machine}, upfront fee over its term, plus its rate per hour used"
        )
    rate = decimal_of(m.charge_per_node_hour(j, tier, q))
    return PricedLine(decimal_of(node_hours), "node-hour", rate, "planned", source)


def _active_new_nodes(m: PlanModel) -> dict[tuple[str, str, Quarter], float]:
    """(j, option, q) -> new nodes of that option active in q, on average over its open hours (a term that starts or
    ends inside the quarter counts the share of them it covers, as A_jq does)."""
    d = m.data
    qs = d.quarters
    out: dict[tuple[str, str, Quarter], float] = defaultdict(float)
    for (j, option, start), var in m.commit.items():
        units = round(m.value(var))
        if units <= 0:
            continue
        opt = _option(m, j, option)
        for q in qs[qs.index(start) : qs.index(start) + opt.term_quarters + 1]:
            share = d.active_share(start, opt.term_months, q)
            if share > 0:
                out[(j, option, q)] += units * d.offer_by_name[j].nodes_per_unit * share
    return out


EXISTING_LINE = "existing-commitments"
"""cost_by_quarter's pricing_model of the inventory's own commitments."""
# Lines of cost_by_quarter that are commitments paid whether used or not.
COMMITMENT_LINES = (EXISTING_LINE, PricingModel.COMMIT, PricingModel.ONPREM, PricingModel.CAPACITY_BLOCK)


def _share(part: float, whole: float) -> float:
    return round(part / whole, 6) if whole > TINY else 0.0


TEAM_COLUMNS = ["quarter", "team", "cost_center", "usage_usd", "idle_share_usd", "usd"]


def _idle_shares(
    use: dict[str, float], idle: float, cost_center: dict[str, str], policy: str
) -> dict[str, tuple[Decimal, float]]:
    """team -> (its share of the quarter's idle, that share in USD as solved): the idle (commitment hours nobody uses
    and the gap between what commitments cost and the rates teams are charged) shared by the idle policy; idle no
    team can take (nobody uses anything) stays with IDLE_TEAM."""
    weights = idle_weights(policy, {t: Decimal(str(x)) for t, x in use.items()}, sorted(cost_center))
    total = sum(weights.values(), Decimal(0))
    whole = float(total)
    if whole:
        return {t: (w / total, idle * float(w) / whole) for t, w in weights.items()}
    return {IDLE_TEAM: (Decimal(1), idle)} if abs(idle) > TINY else {}


def _team_rows(
    quarter: Quarter, use: dict[str, float], share: dict[str, float], cost_center: dict[str, str]
) -> list[dict[str, object]]:
    """Each team's planned use, its share of the quarter's idle (`_idle_shares`) and the total it bears; the
    IDLE_TEAM line last."""
    rows: list[dict[str, object]] = [
        {
            "quarter": quarter,
            "team": t,
            "cost_center": cost_center.get(t, t),
            "usage_usd": usd(use.get(t, 0.0)),
            "idle_share_usd": usd(share.get(t, 0.0)),
            "usd": usd(use.get(t, 0.0)) + usd(share.get(t, 0.0)),
        }
        for t in sorted((set(use) | set(share)) - {IDLE_TEAM})
    ]
    if IDLE_TEAM in share:
        rows.append(
            {
                "quarter": quarter,
                "team": IDLE_TEAM,
                "cost_center": IDLE_COST_CENTER,
                "usage_usd": usd(0),
                "idle_share_usd": usd(share[IDLE_TEAM]),
                "usd": usd(share[IDLE_TEAM]),
            }
        )
    return rows


def _with_closed(
    rows: list[dict[str, object]], quarter: Quarter, ledger: Sequence[PricedLine], cost_center: dict[str, str]
) -> list[dict[str, object]]:
    """A quarter's planned team rows with the closed part's metered charges (the ledger's metered charge lines) added
    (usage to usage, idle share to idle share), so a team's row of the quarter in progress is what it was metered
    plus what it is planned."""
    closed = [x for x in ledger if x.quarter == quarter and x.pricing_model == CLOSED]
    use = ledger_sums([x for x in closed if x.label == "metered use"], "charge", ("team",))
    idle = ledger_sums([x for x in closed if x.label == "metered idle share"], "charge", ("team",))
    by_team = {str(r["team"]): dict(r) for r in rows}
    for (team,), x in sorted(use.items()):
        row = by_team.setdefault(
            team,
            {
                "quarter": quarter,
                "team": team,
                "cost_center": IDLE_COST_CENTER if team == IDLE_TEAM else cost_center.get(team, team),
                "usage_usd": usd(0),
                "idle_share_usd": usd(0),
                "usd": usd(0),
            },
        )
        row["usage_usd"] = Decimal(str(row["usage_usd"])) + usd(x)
        row["idle_share_usd"] = Decimal(str(row["idle_share_usd"])) + usd(idle[(team,)])
        row["usd"] = Decimal(str(row["usage_usd"])) + Decimal(str(row["idle_share_usd"]))
    return [by_team[t] for t in sorted(by_team, key=lambda t: (t == IDLE_TEAM, t))]


def _costs(
    m: PlanModel, od_price: dict[str, float]
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, tuple[PricedLine, ...]]:
    """(kpis, cost_by_quarter, cost_by_team, ledger); `od_price` is each offer's on-demand-equivalent node-hour price.

    The ledger has two sides (`pricing.SIDES`), each adding up to every quarter's cost: its cost lines (what the plan
    pays: existing commitments, new commitments and their upfront fees, capacity blocks, pay-per-use hours, the closed
    part as metered) and its charge lines (each team's hours per offer and tier at the rate its cost centre is
    charged, its share of idle, its metered charge in the closed part). cost_by_quarter groups the cost side by
    pricing model and term; cost_by_team the charge side by team."""
    d = m.data
    offers = d.offer_by_name
    ledger: list[PricedLine] = []

    def book(line: PricedLine, label: str, q: Quarter, pricing_model: str, *, term_months: int = 0, **who: str) -> None:
        """Add a line to the ledger with what it is (label, pricing model and term), its quarter and, in `who`, its
        team, cost centre, flavor and month (charge lines: PricedLine.side given); its amount is quantity x rate
        unless booked."""
        ledger.append(
            replace(
                line,
                label=label,
                quarter=q,
                pricing_model=pricing_model,
                term_months=term_months,
                amount_usd=known_usd(line),
                **who,  # type: ignore[arg-type]  # str fields of PricedLine
            )
        )

    for e in table_rows(d.existing, Existing):
        paid = e.usd / e.usd_per_node_hour if e.usd_per_node_hour else decimal_of(e.nodes * d.hours[e.quarter])
        source = f"commitment {e.commitment}"
        line = PricedLine(paid, "node-hour", e.usd_per_node_hour, "planned", source, amount_usd=e.usd)
        book(line, "existing commitment", e.quarter, EXISTING_LINE)
    active = _active_new_nodes(m)
    available: dict[Quarter, float] = defaultdict(float)  # committed accelerator-hours per quarter
    upfront_paid: dict[Quarter, float] = defaultdict(float)  # upfront fees, in the quarter they are paid
    upfront_amortised: dict[Quarter, float] = defaultdict(float)  # the same fees spread over their terms' hours
    for (j, option, q), nodes in active.items():
        opt = _option(m, j, option)
        line = _commitment_line(offers[j], opt, nodes * d.hours[q])
        book(line, "new commitment", q, opt.pricing_model, term_months=opt.term_months)
        upfront_amortised[q] += (
            amortised_usd_per_node_hour(0.0, float(opt.upfront_usd_per_node), opt.term_months) * nodes * d.hours[q]
        )
        available[q] += nodes * d.hours[q] * offers[j].accelerators_per_node
    for (j, option, q), var in m.commit.items():  # an upfront fee is spent in the quarter its term starts
        opt = _option(m, j, option)
        fee = _upfront_line(offers[j], opt, round(m.value(var)) * offers[j].nodes_per_unit)
        if known_usd(fee):
            book(fee, "upfront fee", q, opt.pricing_model, term_months=opt.term_months)
            upfront_paid[q] += float(known_usd(fee))
    for (j, q), nodes in m.existing_nodes.items():
        available[q] += nodes * d.hours[q] * offers[j].accelerators_per_node
    for (j, q), var in m.capacity_block.items():
        node_weeks = round(m.value(var)) * d.block_weeks(q)
        book(_capacity_block_line(m, j, node_weeks), "capacity block", q, PricingModel.CAPACITY_BLOCK)
        available[q] += HOURS_PER_WEEK * node_weeks * offers[j].accelerators_per_node
    # accelerator-hours, and USD at on-demand-equivalent prices (FinOps coverage) and at charge rates (utilisation)
    served: dict[Quarter, float] = defaultdict(float)
    committed: dict[Quarter, float] = defaultdict(float)
    served_od: dict[Quarter, float] = defaultdict(float)
    covered_od: dict[Quarter, float] = defaultdict(float)
    commitment_used: dict[Quarter, float] = defaultdict(float)
    # node-hours per quarter, team, offer, tier
    team_hours: dict[tuple[Quarter, str, str, str], float] = defaultdict(float)
    pay_per_use: dict[tuple[Quarter, str, str], float] = defaultdict(float)  # node-hours per quarter, offer and model
    # new commitments' hours used, per quarter and offer
    used_hours: dict[tuple[Quarter, str], float] = defaultdict(float)
    for (k, j, t, q, s, b), x in sorted(m.used()):
        node_hours = m.cell_hours[(q, s, b)] * x
        a = offers[j].accelerators_per_node
        served[q] += node_hours * a
        served_od[q] += node_hours * od_price[j]
        if t in (EXISTING, NEW, PricingModel.CAPACITY_BLOCK):
            committed[q] += node_hours * a
            covered_od[q] += node_hours * od_price[j]
            commitment_used[q] += node_hours * m.charge_per_node_hour(j, t, q)
        if t in PAY_PER_USE and t != PricingModel.CAPACITY_BLOCK and not m.sliced(j, t):
            pay_per_use[(q, j, t)] += node_hours
        elif t == NEW and m.used_rate[j]:  # the rate per hour used, on its commitments' line (term 0)
            used_hours[(q, j)] += node_hours
        team_hours[(q, m.key_parts[k][0], j, t)] += node_hours
    for (j, t, q, s, b), var in m.slices.items():  # whole TPU slices: paid whole, used or not
        pay_per_use[(q, j, t)] += m.cell_hours[(q, s, b)] * round(m.value(var)) * offers[j].nodes_per_unit
    for (q, j, t), node_hours in pay_per_use.items():  # each offer's pay-per-use hours, priced once
        book(_pay_per_use_line(m, j, t, node_hours), "pay-per-use", q, t)
    for (q, j), node_hours in used_hours.items():
        terms = d.commit_options_by_offer[j][0]
        line = PricedLine(
            decimal_of(node_hours),
            "node-hour",
            decimal_of(m.used_rate[j]),
            "planned",
            f"{_price_source(offers[j], terms.pricing_model, terms.term_months)} per hour used",
        )
        book(line, "rate per hour used", q, terms.pricing_model)
    cc_of = {t.team: t.cost_center for t in table_rows(d.teams, Team)}
    for (q, team, j, t), node_hours in team_hours.items():  # each team's hours per offer and tier, priced once
        flavor = served_on(d.flavors, d.held.get(team, frozenset()), j, t)
        line = replace(_charge_line(m, j, t, q, node_hours), side="charge")
        tier = EXISTING_LINE if t == EXISTING else t
        book(line, "use", q, tier, team=team, cost_center=cc_of.get(team, team), flavor=flavor)
    unmet: dict[Quarter, float] = defaultdict(float)
    for (_k, q, s, b), var in m.unmet.items():
        unmet[q] += m.cell_hours[(q, s, b)] * m.value(var)
    od_equivalent = on_demand_baseline(m)
    demand = expected_demand(m)
    for r in rows_of(ClosedCostRow, d.closed.to_dict("records")):
        # qm meter's charge, carried over in USD (its own ledger prices it by block and pool)
        source = f"qm meter {r.period}, idle policy {d.options.idle_policy}"
        who = (r.team, r.cost_center, r.period)
        lines = [("metered", PricedLine(r.usd, "usd", Decimal(1), "metered", source))]
        for label, amount in (("metered use", r.usage_usd), ("metered idle share", r.idle_share_usd)):
            lines.append((label, PricedLine(amount, "usd", Decimal(1), "metered", source, side="charge")))
        for label, line in lines:
            book(line, label, r.quarter, CLOSED, team=who[0], cost_center=who[1], month=who[2])
    by_model = ledger_sums(ledger, "cost", ("quarter", "pricing_model", "term_months"))
    cost_rows = [
        {"quarter": q, "pricing_model": pm, "term_months": tm, "usd": usd(x)}
        for (q, pm, tm), x in by_model.items()
        if abs(x) > TINY
    ]
    cost_by_quarter = pd.DataFrame(cost_rows, columns=["quarter", "pricing_model", "term_months", "usd"])
    cost_by_quarter["_q"] = cost_by_quarter["quarter"].map(d.quarters.index)
    cost_by_quarter = cost_by_quarter.sort_values(["_q", "pricing_model", "term_months"]).drop(columns="_q")
    team_charge = ledger_sums([x for x in ledger if x.label == "use"], "charge", ("quarter", "team"))
    kpi_rows = []
    team_rows = []
    idle_lines: list[PricedLine] = []
    for q in d.quarters:
        cost = sum(x for (qq, _, _), x in by_model.items() if qq == q)
        commitment_cost = sum(x for (qq, pm, _), x in by_model.items() if qq == q and pm in COMMITMENT_LINES)
        od = od_equivalent[q] + d.closed_baseline.get(q, 0.0)
        kpi_rows.append(
            {
                "quarter": q,
                "cost_usd": usd(cost),
                "on_demand_equivalent_usd": usd(od),
                "savings_usd": usd(od - cost),
                "effective_savings_rate": round(1 - cost / od, 6) if od > TINY else 0.0,
                "coverage": _share(covered_od[q], served_od[q]),
                # amortised, as the use is charged (model.charge_rate): an upfront fee counts over its term's hours
                "utilisation": _share(commitment_used[q], commitment_cost - upfront_paid[q] + upfront_amortised[q]),
                "coverage_accelerator_hours": _share(committed[q], served[q]),
                "utilisation_accelerator_hours": _share(committed[q], available[q]),
                "served_accelerator_hours": round(served[q], 3),
                "unmet_accelerator_hours": round(unmet[q], 3),
                "demand_accelerator_hours": round(demand[q], 3),
            }
        )
        use = {team: x for (qq, team), x in sorted(team_charge.items()) if qq == q}
        closed = sum(x for (qq, pm, _), x in by_model.items() if qq == q and pm == CLOSED)
        idle = cost - closed - sum(use.values())
        shares = _idle_shares(use, idle, cc_of, d.options.idle_policy)
        for team, (share, amount) in shares.items():
            source = f"the {q} idle (commitment hours nobody uses, and charge rates below cost), idle policy "
            line = PricedLine(share, "share of idle", decimal_of(idle), "planned", source + d.options.idle_policy)
            idle_lines.append(
                replace(
                    line,
                    side="charge",
                    label="idle share",
                    quarter=q,
                    team=team,
                    cost_center=cc_of.get(team, IDLE_COST_CENTER),
                    pricing_model="idle",
                    amount_usd=decimal_of(amount),
                )
            )
        planned = _team_rows(q, use, {t: a for t, (_, a) in shares.items()}, cc_of)
        team_rows += _with_closed(planned, q, ledger, cc_of)
    kpis = pd.DataFrame(kpi_rows)
    cost_by_team = pd.DataFrame(team_rows, columns=TEAM_COLUMNS)
    return kpis, cost_by_quarter.reset_index(drop=True), cost_by_team, (*ledger, *idle_lines)


def ledger_sums(lines: Iterable[PricedLine], side: str, keys: tuple[str, ...]) -> dict[tuple[Any, ...], float]:
    """The lines of one side grouped by `keys` (PricedLine fields), their amounts added up as the solver's floats,
    in the ledger's order."""
    out: dict[tuple[Any, ...], float] = defaultdict(float)
    for line in lines:
        if line.side == side:
            out[tuple(getattr(line, k) for k in keys)] += float(known_usd(line))
    return out


def expected_demand(m: PlanModel) -> dict[Quarter, float]:
    """quarter -> its expected demand in accelerator-hours of the classes asked, served or not: the plan's input,
    whatever it buys or where it routes demand."""
    out: dict[Quarter, float] = defaultdict(float)
    for r in table_rows(m.data.demand, Demand):
        out[r.quarter] += m.cell_hours[(r.quarter, r.scenario, r.bucket)] * r.level
    return out


def on_demand_baseline(m: PlanModel) -> dict[Quarter, float]:
    """quarter -> its demand (all of it, served or not) at on-demand prices: each key's expected accelerator-hours
    at its class's on-demand rate (PlanData.baseline_rate), the same whatever the plan buys or where it routes."""
    d = m.data
    out: dict[Quarter, float] = defaultdict(float)
    for r in table_rows(d.demand, Demand):
        out[r.quarter] += (
            m.cell_hours[(r.quarter, r.scenario, r.bucket)] * r.level * d.baseline_rate.get(r.demand_key, 0.0)
        )
    return out


ROUTING_COLUMNS = [
    "quarter",
    "team",
    "accelerator",
    "site",
    "served_site",
    "machine",
    "served_accelerator",
    "tier",
    "accelerator_hours",
    "demand_accelerator_hours",
    "flavor",
]


def routing(m: PlanModel) -> pd.DataFrame:
    """Expected accelerator-hours each demand key is served on each offer and tier per quarter (read-only: the
    solved use u, as in _costs), in the offer's accelerators and in the asked class (divided by the route's ratio),
    and the flavor (pool) they run on (placement.served_on)."""
    d = m.data
    offers = d.offer_by_name
    ratio = {(k, j): rho for k, routes in m.routes.items() for j, rho in routes}
    hours: dict[tuple[Quarter, str, str, str], float] = defaultdict(float)
    for (k, j, t, q, s, b), x in m.used():
        if x > TINY:
            hours[(q, k, j, t)] += m.cell_hours[(q, s, b)] * x * offers[j].accelerators_per_node
    rows = []
    for (q, k, j, t), h in hours.items():
        parts, o = m.key_parts[k], offers[j]
        rows.append(
            {
                "quarter": q,
                "team": parts[0],
                "accelerator": parts[1],
                "site": parts[2] if len(parts) > 2 else "",
                "served_site": o.site,
                "machine": o.machine,
                "served_accelerator": o.accelerator,
                "tier": t,
                "accelerator_hours": round(h, 3),
                "demand_accelerator_hours": round(h / ratio[(k, j)], 3),
                "flavor": served_on(d.flavors, d.held.get(parts[0], frozenset()), j, t),
            }
        )
    frame = pd.DataFrame(rows, columns=ROUTING_COLUMNS)
    frame["_q"] = frame["quarter"].map(m.data.quarters.index)
    return frame.sort_values(["_q", *ROUTING_COLUMNS[1:8]]).drop(columns="_q").reset_index(drop=True)


MOVE_COLUMNS = [
    "team",
    "served_site",
    "machine",
    "served_accelerator",
    "flavor",
    "accelerator_hours",
    "quota_needed_accelerators",
    "saving_usd",
]


def moves(m: PlanModel) -> pd.DataFrame:
    """Each team served on a flavor where it holds no quota today (PlanData.held; the flavor as routing names it):
    its expected accelerator-hours there over the horizon and the most accelerators it runs there at once, in whole
    nodes (the quota it needs). saving_usd is left empty here: pipeline.py re-solves without the move to find it."""
    d = m.data
    offers = d.offer_by_name
    hours: dict[tuple[str, str, str], float] = defaultdict(float)
    peak: dict[tuple[str, str, str], dict[tuple[str, str, int], float]] = defaultdict(lambda: defaultdict(float))
    for (k, j, t, q, s, b), x in m.used():
        team = m.key_parts[k][0]
        held = d.held.get(team, frozenset())
        flavor = served_on(d.flavors, held, j, t)
        if flavor in held or x <= TINY:
            continue
        hours[(team, flavor, j)] += m.cell_hours[(q, s, b)] * x * offers[j].accelerators_per_node
        peak[(team, flavor, j)][(q, s, b)] += x
    rows = []
    for (team, flavor, j), h in sorted(hours.items()):
        o = offers[j]
        rows.append(
            {
                "team": team,
                "served_site": o.site,
                "machine": o.machine,
                "served_accelerator": o.accelerator,
                "flavor": flavor,
                "accelerator_hours": round(h, 3),
                "quota_needed_accelerators": math.ceil(max(peak[(team, flavor, j)].values()) - TINY)
                * o.accelerators_per_node,
                "saving_usd": None,
            }
        )
    return pd.DataFrame(rows, columns=MOVE_COLUMNS)


UTILISATION_COLUMNS = [
    "commitment",
    "site",
    "machine",
    "quarter",
    "assumed_utilisation",
    "metered_utilisation",
    "metered_hours",
    "expected_utilisation",
    "basis",
    "rise_by",
]


def commitment_utilisation(m: PlanModel) -> pd.DataFrame:
    """Each existing commitment's utilisation as the plan assumes it (the expected use of the existing tier at its
    site and machine over their node-hours, in the first quarter of the plan it is active in) beside the usage
    history's (PlanData.metered_utilisation); the expected figure is the metered one where there is history."""
    d = m.data
    used: dict[tuple[str, Quarter], float] = defaultdict(float)
    for (j, t, q, s, b), vars_ in m.by_tier.items():
        if t == EXISTING:
            used[(j, q)] += d.scenarios[s] * m.weight[(q, s, b)] * sum(m.value(v) for v in vars_)
    by_team: dict[tuple[str, str, Quarter], float] = defaultdict(float)  # (j, team, q) -> expected accelerators
    for (k, j, t, q, s, b), x in m.used():
        if t == EXISTING:
            by_team[(j, m.key_parts[k][0], q)] += (
                d.scenarios[s] * m.weight[(q, s, b)] * x * m.offers[j]["accelerators_per_node"]
            )
    rows = []
    for e in table_rows(d.existing.drop_duplicates("commitment"), Existing):
        o = d.offer_by_name.get(e.offer)
        if o is None:  # at a lost site
            continue
        assumed = _share(used[(e.offer, e.quarter)], m.existing_nodes[(e.offer, e.quarter)])
        metered, hours = d.metered_utilisation.get(e.commitment, (None, 0))
        rise = "" if metered is None or assumed <= metered else _rise_by(m, by_team, e.offer, e.quarter)
        rows.append(
            {
                "commitment": e.commitment,
                "site": o.site,
                "machine": o.machine,
                "quarter": e.quarter,
                "assumed_utilisation": assumed,
                "metered_utilisation": None if metered is None else round(metered, 6),
                "metered_hours": hours,
                "expected_utilisation": assumed if metered is None else round(metered, 6),
                "basis": "assumed" if metered is None else "metered",
                "rise_by": rise,
            }
        )
    return pd.DataFrame(rows, columns=UTILISATION_COLUMNS).sort_values("commitment").reset_index(drop=True)


def _rise_by(m: PlanModel, by_team: dict[tuple[str, str, Quarter], float], j: str, q: Quarter) -> str:
    """The teams whose planned accelerators on the existing commitments at j in q (on average) exceed what they held
    at j in the usage history, largest first: `team +N.N (move|forecast rise)`; a move where the team holds no quota
    in the pools that serve them."""
    d = m.data
    pools = set(d.flavors.get((j, EXISTING), ()))
    teams = {t for jj, t, qq in by_team if (jj, qq) == (j, q)}
    more = {t: by_team[(j, t, q)] - d.metered_team_use.get((j, t), 0.0) for t in teams}
    return "; ".join(
        f"{t} +{x:,.1f} ({'forecast rise' if pools & d.held.get(t, frozenset()) else 'move'})"
        for t, x in sorted(more.items(), key=lambda kv: (-kv[1], kv[0]))
        if x >= 0.05
    )


OFFER_UTILISATION_COLUMNS = [
    "site",
    "machine",
    "quarter",
    "committed_accelerator_hours",
    "used_accelerator_hours",
    "utilisation",
    "metered_utilisation",
]


def offer_utilisation(m: PlanModel) -> pd.DataFrame:
    """Per site and machine and quarter with committed capacity: its accelerator-hours (existing and new commitments,
    capacity blocks booked), the plan's expected use of them, their ratio, and the existing commitments' metered
    utilisation there (PlanData.metered_utilisation)."""
    d = m.data
    offers = d.offer_by_name
    committed: dict[tuple[str, Quarter], float] = defaultdict(float)
    for (j, q), nodes in m.existing_nodes.items():
        committed[(j, q)] += nodes * d.hours[q] * offers[j].accelerators_per_node
    for (j, _, q), nodes in _active_new_nodes(m).items():
        committed[(j, q)] += nodes * d.hours[q] * offers[j].accelerators_per_node
    for (j, q), var in m.capacity_block.items():
        weeks = round(m.value(var)) * d.block_weeks(q)
        committed[(j, q)] += HOURS_PER_WEEK * weeks * offers[j].accelerators_per_node
    used: dict[tuple[str, Quarter], float] = defaultdict(float)
    for (_k, j, t, q, s, b), x in m.used():
        if t in (EXISTING, NEW, PricingModel.CAPACITY_BLOCK):
            used[(j, q)] += m.cell_hours[(q, s, b)] * x * offers[j].accelerators_per_node
    metered: dict[str, float] = {}
    for e in table_rows(d.existing, Existing):
        figure = d.metered_utilisation.get(e.commitment, (None, 0))[0]
        if figure is not None:
            metered.setdefault(e.offer, figure)
    rows = [
        {
            "site": offers[j].site,
            "machine": offers[j].machine,
            "quarter": q,
            "committed_accelerator_hours": round(hours, 3),
            "used_accelerator_hours": round(used[(j, q)], 3),
            "utilisation": _share(used[(j, q)], hours),
            "metered_utilisation": None if j not in metered else round(metered[j], 6),
        }
        for (j, q), hours in committed.items()
        if hours > TINY
    ]
    frame = pd.DataFrame(rows, columns=OFFER_UTILISATION_COLUMNS)
    frame["_q"] = frame["quarter"].map(d.quarters.index)
    return frame.sort_values(["_q", "site", "machine"]).drop(columns="_q").reset_index(drop=True)


SHADOW_COLUMNS = ["site", "machine", "accelerator", "quarter", "usd_per_accelerator_hour", "method"]


# Rows that bound what an offer supplies; a unit of load that belongs to no demand key meets only these.
CAPACITY_FAMILIES = (
    "existing_commitments_cover",
    "new_commitments_cover",
    "capacity_block_window",
    "whole_slices_cover",
    "supply_cap",
    "min_utilisation",
    "last_quarter_new_use",
)


def shadow_prices(m: PlanModel) -> pd.DataFrame:
    """Marginal expected cost of one more accelerator of non-preemptible load at an offer, a whole quarter, per hour.

    From the fixed-integer LP: in each scenario and bucket, the cheapest reduced cost of a node of some
    tier other than spot, counting only the rows that bound the offer's supply (CAPACITY_FAMILIES; not a
    key's demand, spot share or budget), per accelerator; summed over scenarios and buckets (the costs
    are already probability- and hour-weighted) and divided by the quarter's hours.

    A pay-per-use TPU tier is bought in whole slices, fixed in that LP: the accelerator costs what making room in
    them costs (the dual of whole_slices_cover: 0 where they have room), at most the tier's price (pay-per-use is
    bought as it is needed, so one more slice is not ruled out).

    `method` says how far the figure holds: `dual` where, in every scenario and bucket, the cheapest tier is a
    pay-per-use tier with no supply cap (one more accelerator is bought there at its price: exact); `lower bound`
    elsewhere, since the LP is degenerate where capacity rows are full and any optimal dual is only a lower bound of
    what one more unit costs (`marginal`: the pipeline re-solves those).

    A tier with no capacity in the quarter (no new commitment active, no capacity-block week booked)
    cannot serve the extra accelerator and is left out: the dual of its full, empty row is degenerate
    (any value between 0 and the dearest tier's price is optimal) and priced the accelerator at what a
    neighbouring offer costs ($1.5694 for a3-highgpu-8g where a re-solve costs $11.07). A
    pay-per-use tier no key needs (pruned, see model._dominated_pay_per_use) has no column but can still
    serve it, at its price.
    """
    lp, u, d = m.lp, m.u, m.data
    new_active = {(j, q) for (j, _, q), nodes in _active_new_nodes(m).items() if nodes > 0}
    blocks = {key for key, var in m.capacity_block.items() if round(m.value(var)) > 0}
    # per group of u columns (j, t, q, s, b): its offer, tier, cell and (offer, quarter)
    j_of, t_of, c_of = u.group_offer, u.group_tier, u.group_cell
    n_cells = len(m.cells)
    quarter_of_cell = [q for q, _, _ in m.cells]
    offer_quarter = [(m.offer_names[j], quarter_of_cell[c]) for j, c in zip(j_of.tolist(), c_of.tolist(), strict=True)]
    tier = np.array(TIERS, dtype=object)[t_of]
    # every key's u of a tier meets the same capacity rows, so the first stands for the tier
    first = u.column[u.by_group[u.group_start[:-1]]]
    idle = np.array(
        [
            (t == NEW and jq not in new_active) or (t == PricingModel.CAPACITY_BLOCK and jq not in blocks)
            for t, jq in zip(tier.tolist(), offer_quarter, strict=True)
        ],
        dtype=bool,
    )
    counted = np.flatnonzero((tier != "spot") & ~idle)
    # each u's part of its reduced cost from the capacity rows: sum of coefficient x dual over them
    priced = lp.transposed_times(np.where(lp.rows_of(*CAPACITY_FAMILIES), m.pi, 0.0))
    reduced = lp.cost[first[counted]] - priced[first[counted]]
    hours = np.array([m.cell_hours[c] for c in m.cells])
    price = np.array([[m.price.get((j, t), 0.0) for t in TIERS] for j in m.offer_names])
    sliced = np.array([[m.sliced(j, t) for t in TIERS] for j in m.offer_names], dtype=bool)
    # a sliced tier: room in the slices bought (made by moving load), or a node of one more at its price
    in_slices = sliced[j_of[counted], t_of[counted]]
    slice_cost = hours[c_of[counted]] * price[j_of[counted], t_of[counted]]
    reduced[in_slices] = np.minimum(reduced[in_slices], slice_cost[in_slices])
    cheapest = np.full(len(m.offer_names) * n_cells, np.inf)  # by (offer, cell)
    np.minimum.at(cheapest, j_of[counted] * n_cells + c_of[counted], reduced)
    caps = table_rows(d.caps, Cap)
    capped = {(c.offer, c.pricing_model) for c in caps if c.max_nodes <= 0}
    any_cap = {(c.offer, c.pricing_model) for c in caps}
    has_group = np.zeros((len(m.offer_names), len(TIERS), n_cells), dtype=bool)
    has_group[j_of, t_of, c_of] = True
    open_price = np.full(len(m.offer_names) * n_cells, np.inf)  # the cheapest pay-per-use tier with no supply cap
    for (j, t), p in m.price.items():
        if t in ("spot", PricingModel.CAPACITY_BLOCK):
            continue
        at = m.offer_code[j]
        if (j, t) not in capped:  # pay-per-use tiers pruned for every key (idle): their price
            pruned = np.flatnonzero(~has_group[at, TIERS.index(t)])
            where = at * n_cells + pruned
            cheapest[where] = np.minimum(cheapest[where], hours[pruned] * p)
        if (j, t) not in any_cap and not m.sliced(j, t):
            span = slice(at * n_cells, (at + 1) * n_cells)
            open_price[span] = np.minimum(open_price[span], hours * p)
    offers = d.offer_by_name
    total: dict[tuple[str, Quarter], float] = defaultdict(float)
    exact: dict[tuple[str, Quarter], bool] = {}
    for at in np.flatnonzero(np.isfinite(cheapest)).tolist():
        j = m.offer_names[at // n_cells]
        jq = (j, quarter_of_cell[at % n_cells])
        total[jq] += per_accelerator(float(cheapest[at]), offers[j].accelerators_per_node)
        bought_open = math.isclose(float(cheapest[at]), float(open_price[at]), rel_tol=1e-9, abs_tol=1e-9)
        exact[jq] = exact.get(jq, True) and bought_open
    rows = []
    for (j, q), cost in total.items():
        o = offers[j]
        rows.append(
            {
                "site": o.site,
                "machine": o.machine,
                "accelerator": o.accelerator,
                "quarter": q,
                "usd_per_accelerator_hour": usd(cost / m.data.hours[q]),
                "method": "dual" if exact[(j, q)] else "lower bound",
            }
        )
    frame = pd.DataFrame(rows, columns=SHADOW_COLUMNS)
    frame["_q"] = frame["quarter"].map(m.data.quarters.index)
    return frame.sort_values(["_q", "site", "machine"]).drop(columns="_q").reset_index(drop=True)


def unmet_demand(m: PlanModel) -> pd.DataFrame:
    """Demand the plan leaves unserved (never dropped silently)."""
    hours: dict[tuple[str, Quarter], float] = defaultdict(float)
    peak: dict[tuple[str, Quarter], float] = defaultdict(float)
    for (k, q, s, b), var in m.unmet.items():
        x = m.value(var)
        if x > TINY:
            hours[(k, q)] += m.cell_hours[(q, s, b)] * x
            peak[(k, q)] = max(peak[(k, q)], x)
    rows = []
    for (k, q), h in hours.items():
        parts = m.key_parts[k]
        rows.append(
            {
                "team": parts[0],
                "accelerator": parts[1],
                "site": parts[2] if len(parts) > 2 else "",
                "quarter": q,
                "expected_accelerator_hours": round(h, 3),
                "peak_accelerators": round(peak[(k, q)], 3),
            }
        )
    frame = pd.DataFrame(
        rows, columns=["team", "accelerator", "site", "quarter", "expected_accelerator_hours", "peak_accelerators"]
    )
    frame["_q"] = frame["quarter"].map(m.data.quarters.index)
    return frame.sort_values(["_q", "team", "accelerator", "site"]).drop(columns="_q").reset_index(drop=True)


def proposed_quotas(m: PlanModel) -> pd.DataFrame:
    """Quotas per team and flavor for the plan's first quarter, in whole nodes (TPU: whole slices).

    Guaranteed flavor: the offer's committed capacity (existing and new, the whole nodes the quarter has on
    average) is split between the teams that may run there in proportion to their expected demand there (their
    keys routed to the offer, in its accelerators), in whole units by largest remainder: the nominals add up
    to the capacity and each is its exact share rounded down or up. Not in proportion to the load the solution
    happens to route there: committed capacity costs every team the same, so that split is arbitrary (it gave
    llm-pretrain 4 of its 64 reserved H100s in the example while its demand went elsewhere).
    Pay-per-use flavor: the team's peak planned use of the tier, rounded up to whole units. Each on the flavor the
    team's hours of the tier run on (placement.served_on; committed capacity: its existing tier's, else its new).
    Borrowing limit (guaranteed flavor): the team's peak demand there beyond its nominals, rounded up to whole
    units, at most the rest of the capacity; propose.py caps it further at what the cohort can lend.
    pool_accelerators and fits_pool: the flavor's pool today, and whether the flavor's nominals fit in it.
    """
    d = m.data
    offers = d.offer_by_name
    q0 = d.quarters[0]
    tier_load: dict[tuple[str, str, str], dict[tuple[str, int], float]] = defaultdict(lambda: defaultdict(float))
    for (k, j, t, _q, s, b), x in m.use_in(q0):
        if t in PAY_PER_USE:
            tier_load[(m.key_parts[k][0], j, t)][(s, b)] += x * offers[j].accelerators_per_node
    demand: dict[tuple[str, str], dict[tuple[str, int], float]] = defaultdict(lambda: defaultdict(float))
    for r in table_rows(d.demand[d.demand["quarter"] == q0], Demand):
        for j, rho in m.routes.get(r.demand_key, []):
            demand[(r.team, j)][(r.scenario, r.bucket)] += float(r.level) * rho
    active = _active_new_nodes(m)
    rows: dict[tuple[str, str], dict[str, Any]] = {}

    def add(team: str, j: str, flavor: str, nominal: int, borrowing: int) -> None:
        o = offers[j]
        row = rows.setdefault(
            (team, flavor),
            {
                "team": team,
                "flavor": flavor,
                "site": o.site,
                "machine": o.machine,
                "quarter": q0,
                "nominal": 0,
                "borrowing_limit": 0,
            },
        )
        row["nominal"] += nominal
        row["borrowing_limit"] += borrowing

    # the same tables by offer (and team), each in its own order
    active_by_offer: dict[str, list[float]] = defaultdict(list)
    for (jj, _, q), n in active.items():
        if q == q0:
            active_by_offer[jj].append(n)
    demand_by_offer: dict[str, list[tuple[str, dict[tuple[str, int], float]]]] = defaultdict(list)
    for (t, jj), cells in demand.items():
        demand_by_offer[jj].append((t, cells))
    load_by_team: dict[tuple[str, str], list[tuple[str, dict[tuple[str, int], float]]]] = defaultdict(list)
    teams_by_offer: dict[str, set[str]] = defaultdict(set)
    for (tt, jj, t), cells in tier_load.items():
        load_by_team[(tt, jj)].append((t, cells))
        teams_by_offer[jj].add(tt)
    for j in sorted({j for _, j in demand} | {j for _, j, _ in tier_load}):
        o = offers[j]
        unit = o.accelerators_per_node * o.nodes_per_unit  # accelerators of a node, or of a TPU slice
        nodes = m.existing_nodes.get((j, q0), 0.0) + sum(active_by_offer.get(j, []))
        units = math.floor(nodes / o.nodes_per_unit + TINY)
        mean = {
            t: sum(d.scenarios[s] * m.weight[(q0, s, b)] * x for (s, b), x in cells.items())
            for t, cells in demand_by_offer.get(j, [])
        }
        share = largest_remainder(units, {t: x for t, x in mean.items() if x > TINY})
        guaranteed = EXISTING if m.existing_nodes.get((j, q0), 0.0) > 0 else NEW
        for team in sorted(set(mean) | teams_by_offer.get(j, set())):
            tiers = {
                t: _whole(max(cells.values()), unit)
                for t, cells in load_by_team.get((team, j), [])
                if max(cells.values()) > TINY
            }
            nominal = share.get(team, 0) * unit
            peak = max(demand[(team, j)].values(), default=0.0)
            borrowing = min(max(0, _whole(peak - nominal - sum(tiers.values()), unit)), units * unit - nominal)
            held = d.held.get(team, frozenset())
            if nominal or borrowing:
                add(team, j, served_on(d.flavors, held, j, guaranteed), nominal, borrowing)
            for t, n in sorted(tiers.items()):
                add(team, j, served_on(d.flavors, held, j, t), n, 0)
    frame = pd.DataFrame(
        list(rows.values()), columns=["team", "flavor", "site", "machine", "quarter", "nominal", "borrowing_limit"]
    )
    size = {p.pool: p.accelerators for p in table_rows(d.pools, Pool)}
    total = frame.groupby("flavor")["nominal"].transform("sum")
    frame["pool_accelerators"] = [int(size.get(f, 0)) for f in frame["flavor"]]
    frame["fits_pool"] = [f in size and n <= size[f] for f, n in zip(frame["flavor"], total, strict=True)]
    return frame.sort_values(["team", "flavor"]).reset_index(drop=True)


def _whole(accelerators: float, unit: int) -> int:
    """Accelerators rounded up to whole units (nodes, TPU slices); 0 for none."""
    return max(0, math.ceil(accelerators / unit - TINY)) * unit


def largest_remainder(units: int, weights: dict[str, float]) -> dict[str, int]:
    """`units` whole units split in proportion to `weights`: each gets its exact share rounded down, and the units
    left over go to the largest remainders (ties by name)."""
    whole = sum(weights.values())
    if units <= 0 or whole <= 0:
        return {}
    exact = {k: units * w / whole for k, w in weights.items()}
    out = {k: math.floor(x) for k, x in exact.items()}
    for k in sorted(exact, key=lambda k: (-(exact[k] - out[k]), k))[: units - sum(out.values())]:
        out[k] += 1
    return out


RULE_UNITS = {"budget_overrun": "usd", "supply_cap_excess": "nodes", "utilisation_shortfall": "nodes"}


def relaxed_rules(m: PlanModel) -> pd.DataFrame:
    """The business rules that had to give (explain-infeasible slacks above zero)."""
    rows = []
    for key, var in sorted(m.slack.items()):
        x = m.value(var)
        if x > TINY:
            rows.append(
                {
                    "rule": key[0],
                    "where": "/".join(key[1:]),
                    "amount": round(x, 6),
                    "unit": RULE_UNITS[key[0]],
                    "variable": m.lp.col_names[var],
                }
            )
    return pd.DataFrame(rows, columns=["rule", "where", "amount", "unit", "variable"])
