"""One answer for the all-on-demand baseline (issue 26, point 4): a quarter's demand at on-demand prices where its
teams run today, the same whatever the plan buys, however long its horizon, under any placement or what-if but
one that changes demand (which moves it in proportion: 20 % more demand, a baseline 20 % higher)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from tests.planner.planning import curves, price, run
from tests.planner.test_placement import DEMAND, HERE, HOURS, MACHINE, QUARTER, two_sites

BASELINE = Decimal(2 * 100 * HOURS)  # 16 H100s = 2 nodes, on demand HERE (where ml holds quota) at $100


@pytest.mark.parametrize(
    ("what_if", "want_baseline", "want_cost"),
    [
        ((), BASELINE, Decimal(2 * 100 * HOURS)),  # served HERE on demand: no saving
        (("placement=anywhere",), BASELINE, Decimal(2 * 80 * HOURS)),  # moved THERE: the move's saving is the saving
        (("demand=+20%",), BASELINE * Decimal("1.2"), Decimal(2 * 100 * HOURS) * Decimal("1.2")),
        (("price:gcp-us-central1/a3-megagpu-8g=-50%",), BASELINE, Decimal(2 * 50 * HOURS)),  # the price book's
    ],
)
def test_the_baseline_is_the_demand_at_on_demand_prices_where_teams_run_today(what_if, want_baseline, want_cost):
    result = run(two_sites(), DEMAND, what_if=what_if)
    assert result.baseline_on_demand_usd == pytest.approx(want_baseline, abs=Decimal("0.01"))
    assert result.expected_cost_usd == pytest.approx(want_cost, abs=Decimal("0.01"))
    assert result.kpi(QUARTER).savings_usd == pytest.approx(want_baseline - want_cost, abs=Decimal("0.01"))


def test_the_baseline_does_not_depend_on_what_the_plan_buys_or_the_horizon():
    """A 1-year commitment at $60 a node-hour serves the 2 nodes; the baseline stays 2 x $100 an hour in each of the
    quarters, with a horizon of one quarter or of two."""
    b = two_sites().add("prices", **price(MACHINE, "commit", 60, 12, site=HERE))
    one = run(b, DEMAND)
    two = run(b, curves("ml", [QUARTER, "2027Q2"], level=16, accelerator="H100-80GB"))
    assert one.purchase_schedule and one.kpi(QUARTER).on_demand_equivalent_usd == pytest.approx(BASELINE)
    assert two.kpi(QUARTER).on_demand_equivalent_usd == one.kpi(QUARTER).on_demand_equivalent_usd


def test_a_team_with_no_on_demand_price_in_its_pools_is_priced_where_it_may_run():
    """ml's pool HERE has no on-demand price (a commitment only): the cheapest on demand it may run at, THERE at
    $80, stands in, and a note says so."""
    b = two_sites()
    b.data["prices"] = [p for p in b.data["prices"] if p["site"] != HERE]
    b.add("prices", **price(MACHINE, "commit", 60, 12, site=HERE))
    result = run(b, DEMAND)
    assert result.baseline_on_demand_usd == pytest.approx(Decimal(2 * 80 * HOURS), abs=Decimal("0.01"))
    assert result.baseline_stand_ins == (
        "ml/H100-80GB: no on-demand price in the pools it holds quota in; the cheapest on-demand price where it may "
        "run, $10.0000 per accelerator-hour, stands in",
    )
