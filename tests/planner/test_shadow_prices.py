"""Shadow prices against a re-solve (issue 15, point 5; issue 26): one more accelerator of non-preemptible load at
each offer of the example, that only that offer can serve, every hour of a quarter, with every purchase fixed,
costs what the plan's shadow price says.

The example is planned as `qm plan` plans it, each team kept to its quota's pools (`placement: quota`, the default).
There the fixed LP is degenerate (several capacity rows full at once, teams with alternatives of equal cost) and its
duals read below the re-solve (p5.48xlarge in 2028Q3: $3.23 against $3.78 for one more accelerator); those figures
are re-solved by the planner (`planner/marginal.py`, method `re-solve`), the rest are the duals' (method `dual`). The
re-solve here is the test's own (the probe and the fixed LP written again), so it checks the planner's wiring; the
last test checks the method itself against a figure worked by hand."""

from __future__ import annotations

import math
from dataclasses import replace
from decimal import Decimal

import pandas as pd
import pytest

from quartermaster.loader import load
from quartermaster.planner import PlanOptions, marginal, plan
from quartermaster.planner.build_result import collect
from quartermaster.planner.data import PlanData, build_data
from quartermaster.planner.pipeline import resolve_shadow_prices
from quartermaster.planner.program import build_model
from quartermaster.planner.solve import fix_integers_and_resolve, solve
from quartermaster.units import quarter_bounds
from tests.paths import INVENTORY
from tests.planner.planning import EXACT, MACHINE, curves, one_site, with_cud

QUARTER = "2027Q1"
QUARTERS = ["2027Q1", "2028Q4"]
OPTIONS = PlanOptions(start="2027Q1")  # placement: quota, the default


@pytest.fixture(scope="module")
def example():
    """The example planned with default options: its data, the fixed purchases, their re-solve's cost, the prices."""
    inventory = load(INVENTORY, run_checks=False).inventory
    data = build_data(inventory, OPTIONS)
    model = build_model(data)
    report = solve(model)
    duals = fix_integers_and_resolve(model)
    read = collect(model, report, duals)  # the duals' figures alone
    purchases = {model.lp.col_names[j]: round(model.value(j)) for j in model.integers().tolist()}
    return inventory, data, purchases, re_solve(data, purchases), plan(inventory, OPTIONS), read


def re_solve(data: PlanData, purchases: dict[str, int]) -> float:
    """The cost of `data` with every purchase fixed and pay-per-use slices as bought or more, as needed (so a
    fraction of a TPU chip the plan leaves unmet rather than buy a slice for it is bought here, probe or not)."""
    model = build_model(data)
    lp, slices = model.lp, set(model.slices.values())
    for j in model.integers().tolist():
        bought = purchases[lp.col_names[j]]
        lp.col_lower[j], lp.col_upper[j] = bought, math.inf if j in slices else bought
    return solve(model, relax=True).objective


def with_probe(data: PlanData, offer: pd.Series, quarter: str, extra: float) -> PlanData:
    """The data plus `extra` accelerators of non-preemptible demand in every hour of `quarter`, routed to `offer`
    only."""
    cells = data.demand[data.demand["quarter"] == quarter][["quarter", "scenario", "bucket", "weight"]]
    probe = cells.drop_duplicates().assign(
        demand_key="probe/x",
        team="probe",
        accelerator=offer["accelerator"],
        site="",
        level=extra,
        preemptible_share=0.0,
    )
    demand = pd.concat([data.demand, probe[data.demand.columns]], ignore_index=True)
    routes = pd.concat(
        [data.routes, pd.DataFrame([{"demand_key": "probe/x", "offer": offer["offer"], "ratio": 1.0}])],
        ignore_index=True,
    )
    return replace(data, demand=demand, routes=routes)


EXAMPLE_OFFERS = sorted(build_data(load(INVENTORY, run_checks=False).inventory, OPTIONS).offers["offer"])


@pytest.mark.parametrize("quarter", QUARTERS)
@pytest.mark.parametrize("offer", EXAMPLE_OFFERS)
def test_the_shadow_price_is_what_one_more_accelerator_costs_in_a_re_solve(example, offer, quarter):
    _, data, purchases, cost, result, read = example
    row = data.offers.set_index("offer").loc[offer]
    again = re_solve(with_probe(data, data.offers[data.offers["offer"] == offer].iloc[0], quarter, 1.0), purchases)
    per_accelerator_hour = (again - cost) / data.hours[quarter]  # one accelerator, every hour of the quarter

    def at(rows):
        return next(r for r in rows if (r.site, r.machine, r.quarter) == (row["site"], row["machine"], quarter))

    shown, dual = at(result.shadow_prices), at(read.shadow_prices)
    assert float(shown.usd_per_accelerator_hour) == pytest.approx(per_accelerator_hour, abs=1e-4)
    # the duals' reading is a lower bound of it (weak duality), exact where the planner kept it
    assert float(dual.usd_per_accelerator_hour) <= per_accelerator_hour + 1e-4
    assert shown.method == ("dual" if dual.method == "dual" else "re-solve")


def test_under_quota_placement_the_duals_read_low_where_capacity_is_full(example):
    """Why the planner re-solves: p5.48xlarge in 2028Q3, whose capacity block and on-demand pool the teams holding
    quota there fill, reads $3.23 from the duals where one more accelerator costs $3.78 (the degenerate duals); an
    offer priced by its own on-demand tier (Standard_ND96isr_H100_v5, on demand only) is exact and not re-solved."""
    _, _, _, _, result, read = example
    low = {(r.machine, r.quarter): r for r in read.shadow_prices}
    shown = {(r.machine, r.quarter): r for r in result.shadow_prices}
    p5 = ("p5.48xlarge", "2028Q3")
    assert low[p5].method == "lower bound" and shown[p5].method == "re-solve"
    assert shown[p5].usd_per_accelerator_hour - low[p5].usd_per_accelerator_hour > Decimal("0.10")
    nd = ("Standard_ND96isr_H100_v5", "2027Q1")
    assert low[nd].method == shown[nd].method == "dual"
    assert shown[nd].usd_per_accelerator_hour == low[nd].usd_per_accelerator_hour


def test_an_offer_with_no_new_commitment_is_priced_at_its_cheapest_pay_per_use_tier(example):
    """Issue 15: a3-highgpu-8g in 2027Q1 has no new commitment (its tier's capacity is 0) and reported $1.5694, the
    degenerate dual of that empty tier; one more accelerator there is bought at its cheapest pay-per-use price."""
    inventory, _, purchases, _, result, _ = example
    prices = [
        Decimal(p.usd_per_node_hour) / 8
        for p in inventory.prices
        if (p.site, p.machine) == ("gcp-us-east4", "a3-highgpu-8g") and p.pricing_model in ("on-demand", "flex-start")
    ]
    assert not any(n for name, n in purchases.items() if "a3_highgpu_8g" in name and QUARTER in name)
    reported = next(
        r.usd_per_accelerator_hour for r in result.shadow_prices if (r.machine, r.quarter) == ("a3-highgpu-8g", QUARTER)
    )
    assert reported == pytest.approx(min(prices), abs=Decimal("0.000001"))


@pytest.fixture(scope="module")
def in_progress():
    """The example planned as `qm plan` plans it by default: from the quarter in progress where the usage ends."""
    inventory = load(INVENTORY, run_checks=False).inventory
    data = build_data(inventory, PlanOptions())
    model = build_model(data)
    solve(model)
    purchases = {model.lp.col_names[j]: round(model.value(j)) for j in model.integers().tolist()}
    return data, purchases, re_solve(data, purchases), plan(inventory, PlanOptions())


@pytest.mark.parametrize("offer", EXAMPLE_OFFERS)
def test_in_the_quarter_in_progress_a_shadow_price_is_one_more_accelerator_in_its_open_hours(in_progress, offer):
    """Issue 26, point 7, and issue 34: the quarter in progress (2026Q4, metered to 1 November) is planned in its
    open part only (November and December; October is closed, as metered), so its figure is one more accelerator in
    every open hour, with its existing commitments free to absorb it (docs/reference/qm-plan.md): its own re-solve."""
    data, purchases, cost, result = in_progress
    quarter = result.quarters[0]
    start, end = (pd.Timestamp(d) for d in quarter_bounds(quarter))
    assert result.actuals_until is not None and start < pd.Timestamp(result.actuals_until) < end  # in progress
    row = data.offers.set_index("offer").loc[offer]
    again = re_solve(with_probe(data, data.offers[data.offers["offer"] == offer].iloc[0], quarter, 1.0), purchases)
    shown = next(
        r for r in result.shadow_prices if (r.site, r.machine, r.quarter) == (row["site"], row["machine"], quarter)
    )
    assert float(shown.usd_per_accelerator_hour) == pytest.approx((again - cost) / data.hours[quarter], abs=1e-4)


def test_one_more_accelerator_costs_on_demand_in_the_hours_a_full_commitment_overflows():
    """Hand-worked (one L4 per node, so nodes = accelerators): 5 committed nodes (paid whether used or not), on demand
    at $10 a node-hour, no other offer; demand 3 accelerators in half the quarter's hours and 8 in the other half. One
    more accelerator fits the commitment's idle nodes in the quiet half (3 + 1 <= 5: $0) and goes on demand in the busy
    half (8 > 5: $10), so it costs 0.5 x $0 + 0.5 x $10 = $5.00 an accelerator-hour. planner/marginal.py's re-solve
    and the plan's reported figure both say so."""
    inventory = with_cud(one_site(on_demand=10), count=5, usd_per_node_hour="6").build()
    demand = curves("ml", [QUARTER], hourly=[3.0, 8.0])  # two buckets of weight 0.5
    options = PlanOptions(start=QUARTER, horizon=1, **EXACT)
    data = build_data(inventory, options, demand_curves=demand)
    model = build_model(data)
    solve(model)
    bought = marginal.purchases(model)
    base = marginal.fixed_cost(data, bought)
    assert base is not None
    [offer] = data.offers[data.offers["machine"] == MACHINE]["offer"]
    assert marginal.marginal_usd_per_accelerator_hour(data, bought, base, offer, QUARTER) == pytest.approx(5.0)
    [shown] = plan(inventory, options, demand_curves=demand).shadow_prices
    assert (shown.machine, shown.quarter, shown.usd_per_accelerator_hour) == (MACHINE, QUARTER, Decimal("5.000000"))


def test_with_no_room_for_a_re_solve_the_base_plan_is_not_solved_either(example, monkeypatch):
    """At enterprise size the re-solve budget holds no re-solve: the lower bounds stay, and the fixed plan's own
    LP (marginal.fixed_cost, a whole build and solve) is not paid for nothing."""
    _, data, _, _, _, read = example
    model = build_model(data)
    assert any(r.method == "lower bound" for r in read.shadow_prices)
    monkeypatch.setattr(marginal, "RESOLVE_BUDGET_COLUMNS", model.lp.num_cols - 1)  # room for 0 re-solves
    solved = []
    monkeypatch.setattr(marginal, "fixed_cost", lambda *args: solved.append(args))
    assert resolve_shadow_prices(data, model, read) is read
    assert solved == []
