"""The library entry point: `plan(inventory, options) -> PlanResult` runs data -> model -> solve -> build_result."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import pandas as pd

from quartermaster.model import Inventory
from quartermaster.plan_contract import CreditSensitivityPurchaseRow, CreditSensitivityRow, Outcome, PlanResult
from quartermaster.plan_figures import horizon_cost, purchase_liability
from quartermaster.planner import marginal
from quartermaster.planner.build_result import collect
from quartermaster.planner.data import PlanData, build_data
from quartermaster.planner.options import PlanOptions
from quartermaster.planner.placement import Tier, offer_key, served_on, tiers_of
from quartermaster.planner.program import TIERS, PlanModel, build_model
from quartermaster.planner.solve import fix_integers_and_resolve, solve
from quartermaster.pricing import cents, usd


def plan(
    inventory: Inventory,
    options: PlanOptions | None = None,
    *,
    demand_curves: pd.DataFrame | None = None,
    write_lp: Path | None = None,
    progress: Callable[[str], None] = lambda _: None,
) -> PlanResult:
    """Plan commitments for an inventory.

    When no plan satisfies every business rule, the problem is solved again with named, penalised slacks
    (as `--explain-infeasible` does) so that the result says which rules had to give; its outcome stays
    `infeasible`. Raises PlanInputError for inputs the user must fix.
    """
    options = options or PlanOptions()
    progress("Reading demand, prices and commitments")
    data = build_data(inventory, options, demand_curves)
    progress("Building the model")
    model = build_model(data)
    if write_lp is not None:
        model.prob.writeLP(str(write_lp))
    progress(f"Solving ({model.lp.num_cols:,} variables, {model.lp.num_rows:,} constraints)")
    report = solve(model)
    if report.outcome in (Outcome.INFEASIBLE, Outcome.UNBOUNDED) and not options.explain_infeasible:
        progress("No plan satisfies every rule; finding which rules have to give")
        elastic = build_model(data.with_options(replace(options, explain_infeasible=True)))
        elastic_report = solve(elastic)
        if elastic_report.outcome.has_plan:
            duals = fix_integers_and_resolve(elastic)
            return replace(collect(elastic, elastic_report, duals, relaxed=True), outcome=report.outcome)
        return collect(model, report)
    if not report.outcome.has_plan:
        return collect(model, report, relaxed=options.explain_infeasible)
    progress("Pricing the marginal accelerator (shadow prices)")
    duals = fix_integers_and_resolve(model)
    result = collect(model, report, duals, relaxed=options.explain_infeasible)
    result = replace(result, relaxed=bool(result.relaxed_rules))
    needs = any(r.method == "lower bound" for r in result.shadow_prices)
    if needs and options.resolve_shadow_prices and not result.relaxed:
        progress("Re-solving the marginal accelerator where the duals give only a lower bound")
        result = resolve_shadow_prices(data, model, result)
    if result.moves:
        progress(f"Pricing {len(result.moves)} move(s) of teams beyond their quota's pools")
        result = price_moves(data, result)
    if options.credit_shares:
        progress("Re-solving with less of the post-horizon credit")
        result = credit_sensitivity(data, result)
    return result


def credit_sensitivity(data: PlanData, result: PlanResult) -> PlanResult:
    """The plan and its re-solves counting only options.credit_shares of the post-horizon credit: horizon cost and
    the first open quarter's purchases of each (a re-solve with no plan is left out)."""
    first = result.first_open_quarter
    if first is None:
        return result
    rows, purchases = [], []
    solved = [(1.0, result)]
    for share in sorted(set(data.options.credit_shares) - {1.0}):
        model = build_model(replace(data, credit_share=share))
        report = solve(model)
        if report.outcome.has_plan:
            solved.append((share, collect(model, report)))
    for share, r in sorted(solved, key=lambda x: x[0]):
        if r.expected_cost_usd is None or r.objective_usd is None or r.post_horizon_credit_usd is None:
            continue
        bought = [p for p in r.purchase_schedule if p.start_quarter == first]
        rows.append(
            CreditSensitivityRow(
                credit_share=share,
                expected_cost_usd=horizon_cost(r),
                objective_usd=r.objective_usd,
                post_horizon_credit_usd=usd(Decimal(str(share)) * r.post_horizon_credit_usd),
                new_commitment_liability_usd=purchase_liability(r)[0],
                first_quarter=first,
                first_quarter_liability_usd=sum((cents(p.total_liability_usd) for p in bought), Decimal(0)),
            )
        )
        purchases += [
            CreditSensitivityPurchaseRow(
                share, p.site, p.machine, p.pricing_model, p.term_months, p.nodes, p.node_weeks, p.total_liability_usd
            )
            for p in bought
        ]
    return replace(result, credit_sensitivity=tuple(rows), credit_sensitivity_purchases=tuple(purchases))


def _relaxed_objective(data: PlanData, placed: dict[str, frozenset[Tier] | None] | None = None) -> Decimal | None:
    """The objective of the plan's LP relaxation, with the teams' placements in `placed` (PlanData.placed) instead."""
    if placed is not None:
        data = replace(data, placed={**data.placed, **placed})
    report = solve(build_model(data), relax=True)
    return usd(report.objective) if report.outcome.has_plan and report.objective is not None else None


def resolve_shadow_prices(data: PlanData, model: PlanModel, result: PlanResult) -> PlanResult:
    """The shadow prices the duals give only a lower bound of, re-solved (`marginal`), the plan's first open quarter
    first, then quarter by quarter, while the re-solves' columns stay within `marginal.RESOLVE_BUDGET_COLUMNS`; the
    rest keep their lower bound and say so."""
    first = result.first_open_quarter
    order = sorted(
        (i for i, r in enumerate(result.shadow_prices) if r.method == "lower bound"),
        key=lambda i: (result.shadow_prices[i].quarter != first, data.quarters.index(result.shadow_prices[i].quarter)),
    )
    room = marginal.RESOLVE_BUDGET_COLUMNS // max(model.lp.num_cols, 1)
    if not order[:room]:  # nothing to re-solve, or no room for one: the base plan's own solve is not worth paying
        return result
    bought = marginal.purchases(model)
    base = marginal.fixed_cost(data, bought)
    if base is None:
        return result
    rows = list(result.shadow_prices)
    for i in order[:room]:
        r = rows[i]
        cost = marginal.marginal_usd_per_accelerator_hour(data, bought, base, offer_key(r.site, r.machine), r.quarter)
        if cost is not None:
            rows[i] = replace(r, usd_per_accelerator_hour=usd(cost), method="re-solve")
    return replace(result, shadow_prices=tuple(rows))


def price_moves(data: PlanData, result: PlanResult) -> PlanResult:
    """Each move's saving (the plan re-solved without that team's hours on that flavor) and the whole placement's
    (re-solved with every team that holds quota kept to the flavors where it does).

    Both are differences of the LP relaxation's objective (whole nodes aside): taking a flavor away can only raise
    it, so a saving is never negative, and it does not carry the rounding of two separate whole-node plans (up to
    gap_rel of the objective each, more than many single moves save)."""
    base = _relaxed_objective(data)
    if base is None:
        return result
    every = frozenset((j, t) for j in data.offer_by_name for t in TIERS)
    priced = []
    for move in result.moves:
        saving = None
        held = data.held.get(move.team, frozenset())
        if held:
            placed = data.placed.get(move.team)
            moved = frozenset((j, t) for j, t in every if served_on(data.flavors, held, j, t) == move.flavor)
            without = _relaxed_objective(data, {move.team: (every if placed is None else placed) - moved})
            saving = None if without is None else without - base
        priced.append(replace(move, saving_usd=saving))
    kept: dict[str, frozenset[Tier] | None] = {t: tiers_of(data.flavors, held) for t, held in data.held.items() if held}
    moved_teams = {m.team for m in result.moves if data.held.get(m.team)}
    total = _relaxed_objective(data, kept) if moved_teams else None
    return replace(result, moves=tuple(priced), placement_saving_usd=None if total is None else total - base)
