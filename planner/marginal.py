"""The marginal accelerator by re-solve: what one more accelerator of non-preemptible load at an offer, every hour of
a quarter, costs the plan with its purchases fixed.

The fixed-integer LP's duals price it in one pass (`build_result.shadow_prices`), and they are exact where an offer's
cheapest way to serve one more accelerator is a pay-per-use tier with no supply cap. Elsewhere they need not be:
with each team kept to its quota's pools (`policy.placement: quota`), several capacity rows of a quarter are full at
once and teams have alternatives of equal cost, so the LP is degenerate and its optimal duals form a face, not a
point. HiGHS returns one vertex of it. By weak duality every optimal dual prices one more unit at most at what a
re-solve finds (the re-solve finds the largest value over that face), so a dual reading can only be too low: on the
example planned from 2027Q1, p5.48xlarge in 2028Q3 reads $3.23 an accelerator-hour where one more accelerator costs
$3.78. Those figures are re-solved here: the plan's data with a probe team whose demand is `MARGINAL_ACCELERATORS` at
that offer only, its LP with every purchase fixed (pay-per-use TPU slices as bought or more), minus the same LP
without it.

The cost bends as load grows (the next accelerator displaces a team with a dearer alternative, or needs a new TPU
slice), so a shadow price is the cost of one accelerator, not of a node: a whole node (8 accelerators) more at
a3-megagpu-8g in 2027Q1 costs $1.59 an accelerator-hour where the first accelerator costs $1.27.

In the quarter in progress the probe is in every hour of the quarter, its metered hours too: the plan's buckets of
that quarter mix metered and forecast hours, and the plan serves both. Its existing commitments cost the same used
or not, so the figure is the paid overflow one more accelerator causes where every pool the teams can reach is full
($0.00 on the example's H100 offers in 2026Q4; docs/reference/qm-plan.md works it).
"""

from __future__ import annotations

import math
from dataclasses import replace

import pandas as pd

from quartermaster.planner.data import PlanData
from quartermaster.planner.program import PlanModel, build_model
from quartermaster.planner.solve import solve
from quartermaster.units import Quarter

MARGINAL_ACCELERATORS = 1.0
"""The unit a shadow price is the cost of: one accelerator, every hour of the quarter."""
PROBE = "_marginal/probe"
"""The demand key of the probe (a team name no inventory can have: names start with a letter)."""
RESOLVE_BUDGET_COLUMNS = 300_000
"""How many LP columns the re-solves may take in all (the model's columns per re-solve): every offer and quarter of
the example (64 of 3,843 columns: 245,952), none of the enterprise bench's plan (331,950 columns, each re-solve
about as long as its own LP), whose figures stay the duals' lower bounds and say so."""


def purchases(model: PlanModel) -> dict[str, int]:
    """The solved model's integer decisions (commitment starts, capacity-block instances, TPU slices) by column."""
    return {model.lp.col_names[j]: round(model.value(j)) for j in model.integers().tolist()}


def fixed_cost(data: PlanData, bought: dict[str, int]) -> float | None:
    """The LP's cost with every purchase in `bought` fixed and pay-per-use TPU slices as bought or more; None when it
    has no plan."""
    model = build_model(data)
    lp, slices = model.lp, set(model.slices.values())
    for j in model.integers().tolist():
        whole = bought.get(lp.col_names[j], 0)
        lp.col_lower[j], lp.col_upper[j] = whole, math.inf if j in slices else whole
    report = solve(model, relax=True)
    return report.objective if report.outcome.has_plan else None


def with_probe(data: PlanData, offer: str, quarter: Quarter, accelerators: float) -> PlanData:
    """The data plus `accelerators` of non-preemptible demand in every hour of `quarter`, routed to `offer` only."""
    row = data.offers[data.offers["offer"] == offer].iloc[0]
    cells = data.demand[data.demand["quarter"] == quarter][["quarter", "scenario", "bucket", "weight"]]
    probe = cells.drop_duplicates().assign(
        demand_key=PROBE,
        team=PROBE,
        accelerator=row["accelerator"],
        site="",
        level=accelerators,
        preemptible_share=0.0,
    )
    demand = pd.concat([data.demand, probe[data.demand.columns]], ignore_index=True)
    routes = pd.concat([data.routes, pd.DataFrame([{"demand_key": PROBE, "offer": offer, "ratio": 1.0}])])
    return replace(data, demand=demand, routes=routes.reset_index(drop=True))


def marginal_usd_per_accelerator_hour(
    data: PlanData, bought: dict[str, int], base: float, offer: str, quarter: Quarter
) -> float | None:
    """USD per accelerator-hour of one more accelerator at `offer` in `quarter` (`base`: `fixed_cost` of the data);
    None when the probed LP has no plan."""
    again = fixed_cost(with_probe(data, offer, quarter, MARGINAL_ACCELERATORS), bought)
    return None if again is None else (again - base) / (MARGINAL_ACCELERATORS * data.hours[quarter])
