"""The library entry point: `plan(inventory, options) -> PlanResult` runs data -> model -> solve -> results."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pandas as pd

from quartermaster.model import Inventory
from quartermaster.plan_result import Outcome, PlanResult
from quartermaster.planner.data import build_data
from quartermaster.planner.model import build_model
from quartermaster.planner.options import PlanOptions
from quartermaster.planner.results import collect
from quartermaster.planner.solve import fix_integers_and_resolve, solve


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
    progress(f"Solving ({len(model.prob.variables()):,} variables, {model.prob.numConstraints():,} constraints)")
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
    return replace(result, relaxed=bool(result.relaxed_rules))
