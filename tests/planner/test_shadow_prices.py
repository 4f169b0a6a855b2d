"""Shadow prices against a re-solve (issue 15, point 5): more non-preemptible load at each offer of the example, that
only that offer can serve, with every purchase fixed, costs what the plan's shadow price says.

A shadow price is a marginal cost: in 2027Q1 a whole node (8 accelerators) costs it at every offer; in 2028Q4 a
node crosses idle committed capacity at some offers (part of it free, the rest on demand), so the re-solve adds
a hundredth of an accelerator there, and at TPU offers, whose pay-per-use nodes come in whole slices.

The example is planned with `placement=anywhere` (issue 26): with each team kept to its quota's pools (the default)
the duals of several full capacity rows are degenerate and read up to a third below the re-solve; not yet fixed."""

from __future__ import annotations

import math
from dataclasses import replace
from decimal import Decimal

import pandas as pd
import pytest

from quartermaster.loader import load
from quartermaster.planner import PlanOptions
from quartermaster.planner.data import PlanData, build_data
from quartermaster.planner.model import build_model
from quartermaster.planner.results import collect
from quartermaster.planner.solve import fix_integers_and_resolve, solve
from tests.paths import INVENTORY

QUARTER = "2027Q1"
CASES = [("2027Q1", 8.0), ("2028Q4", 0.01)]  # (quarter, accelerators added)
OPTIONS = PlanOptions(start="2027Q1", what_if=("placement=anywhere",))


@pytest.fixture(scope="module")
def example():
    """The example planned with default options: its data, the fixed purchases, their re-solve's cost, the prices."""
    inventory = load(INVENTORY, run_checks=False).inventory
    data = build_data(inventory, OPTIONS)
    model = build_model(data)
    report = solve(model)
    duals = fix_integers_and_resolve(model)
    result = collect(model, report, duals)
    purchases = {model.lp.col_names[j]: round(model.value(j)) for j in model.integers().tolist()}
    return inventory, data, purchases, re_solve(data, purchases), result


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


@pytest.mark.parametrize(("quarter", "extra"), CASES)
@pytest.mark.parametrize("offer", EXAMPLE_OFFERS)
def test_the_shadow_price_is_what_more_load_costs_in_a_re_solve(example, offer, quarter, extra):
    _, data, purchases, cost, result = example
    row = data.offers.set_index("offer").loc[offer]
    if row["nodes_per_unit"] > 1:  # whole TPU slices: the marginal bends where the slices bought fill up
        extra = 0.01
    again = re_solve(with_probe(data, data.offers[data.offers["offer"] == offer].iloc[0], quarter, extra), purchases)
    per_accelerator_hour = (again - cost) / (extra * data.hours[quarter])
    reported = next(
        r.usd_per_accelerator_hour
        for r in result.shadow_prices
        if (r.site, r.machine, r.quarter) == (row["site"], row["machine"], quarter)
    )
    assert float(reported) == pytest.approx(per_accelerator_hour, abs=1e-4)


def test_an_offer_with_no_new_commitment_is_priced_at_its_cheapest_pay_per_use_tier(example):
    """Issue 15: a3-highgpu-8g in 2027Q1 has no new commitment (its tier's capacity is 0) and reported $1.5694, the
    degenerate dual of that empty tier; one more accelerator there is bought at its cheapest pay-per-use price."""
    inventory, _, purchases, _, result = example
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
