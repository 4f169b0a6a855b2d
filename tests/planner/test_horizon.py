"""The horizon end (issue 15, point 1): whole liabilities charged, capacity after the horizon credited as far as
demand uses it, and decisions that do not hang on where the horizon stops."""

from __future__ import annotations

from decimal import Decimal

import pytest

from quartermaster.loader import load
from quartermaster.planner import PlanOptions, plan
from quartermaster.units import next_quarters, quarter_hours
from tests.paths import INVENTORY
from tests.planner.planning import curves, one_site, run

HORIZON = ["2027Q1", "2027Q2", "2027Q3", "2027Q4"]
THREE_YEARS = next_quarters("2027Q4", 12)  # a 3-year term started in 2027Q4: 2027Q4..2030Q3


def last_quarter_demand(after: float | None):
    """10 L4s in 2027Q4 only; then, if `after` is given, a forecast of `after` for 2028 (else none)."""
    demand = curves("ml", HORIZON + (["2028Q1", "2028Q2", "2028Q3", "2028Q4"] if after is not None else []), level=10.0)
    demand.loc[demand["quarter"] < "2027Q4", "level"] = 0.0
    demand.loc[demand["quarter"] > "2027Q4", "level"] = after or 0.0
    return demand


def test_a_commitment_is_not_bought_in_the_last_quarter_for_a_tail_nobody_uses():
    """On demand $10, 3-year commitment $4.40 per node-hour; the forecast says the work stops after 2027Q4.
    The old rule charged only 2027Q4's 2,208 hours of the term ($4.40 < $10) and bought 10 nodes for 3 years;
    their whole liability is 4.40 x 10 x 26,304 hours against $10 x 10 x 2,208 on demand, and the 2028
    forecast of 0 (held flat after it) leaves nothing to credit: all on demand."""
    result = run(one_site(on_demand=10, commit_36=4.4), last_quarter_demand(after=0.0), horizon=4)
    assert result.purchase_schedule == ()
    assert result.expected_cost_usd == result.objective_usd == Decimal(10 * 10 * quarter_hours("2027Q4"))
    assert result.post_horizon_credit_usd == 0


def test_a_last_quarter_commitment_whose_tail_serves_demand_that_goes_on_costs_its_in_horizon_part():
    """The same, with no forecast after 2027Q4 (its demand held flat): 10 nodes for 3 years are charged their
    whole liability, 4.40 x 10 x the term's hours, and credited for each of the 11 quarters after the horizon
    what the nodes would cost on demand ($10 x 10 an hour) but at most the cheapest new commitment, $4.40 x 10:
    the objective keeps exactly the 2027Q4 part."""
    result = run(one_site(on_demand=10, commit_36=4.4), last_quarter_demand(after=None), horizon=4)
    [bought] = result.purchase_schedule
    assert (bought.start_quarter, bought.term_months, bought.nodes) == ("2027Q4", 36, 10)
    tail_hours = sum(quarter_hours(q) for q in THREE_YEARS[1:])
    assert result.post_horizon_credit_usd == pytest.approx(Decimal("4.4") * 10 * tail_hours, abs=Decimal("0.01"))
    in_horizon = Decimal("4.4") * 10 * quarter_hours("2027Q4")
    assert result.objective_usd == pytest.approx(in_horizon, abs=Decimal("0.01"))
    assert result.expected_cost_usd == pytest.approx(in_horizon, abs=Decimal("0.01"))
    # the summary's two figures side by side: every hour of the term, and the 2027Q4 part; the rest is credited
    assert result.new_commitment_liability_usd == Decimal("4.4") * 10 * sum(quarter_hours(q) for q in THREE_YEARS)
    assert result.new_commitment_in_horizon_usd == in_horizon
    assert result.new_commitment_liability_usd - in_horizon == pytest.approx(
        result.post_horizon_credit_usd, abs=Decimal("0.01")
    )


@pytest.mark.slow
def test_the_example_first_quarter_does_not_change_from_8_to_12_quarters():
    """Issue 15: with --horizon 12q the old rule dropped the 2027Q2 TPU purchase; the first quarter's decisions
    must not hang on the horizon (the forecast ends in 2028Q4 and is held flat after it in both)."""
    inventory = load(INVENTORY, run_checks=False).inventory

    def first_quarter(horizon: int) -> list[tuple]:
        result = plan(inventory, PlanOptions(horizon=horizon))
        return [
            (p.site, p.machine, p.pricing_model, p.term_months, p.nodes, p.node_weeks)
            for p in result.purchase_schedule
            if p.start_quarter == "2027Q1"
        ]

    eight = first_quarter(8)
    assert eight and eight == first_quarter(12)
