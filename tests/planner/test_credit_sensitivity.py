"""The horizon assumption in view (issue 26, point 5): the plan re-solved with 0 % and 50 % of the post-horizon
credit, its horizon cost and the first quarter's purchases beside the plan's own."""

from __future__ import annotations

from decimal import Decimal

import pytest

from quartermaster.units import quarter_hours
from tests.planner.planning import curves, one_site, run

QUARTER = "2027Q1"
HOURS = quarter_hours(QUARTER)  # 2,160
YEAR = 8_760  # the hours of a 1-year term from 2027-01-01
TAIL = YEAR - HOURS  # 6,600 after the one-quarter horizon


def test_the_first_purchase_rests_on_the_credit_and_the_re_solves_show_it():
    """10 L4s every hour, on demand $10 a node-hour, a 1-year commitment $6. Horizon one quarter: the commitment's
    liability is 6 x 10 x 8,760 = $525,600; after the horizon its 10 nodes are credited at most the renewal, 6 x 10 x
    6,600 = $396,000 (on demand would be $660,000). With the whole credit it costs $129,600 < $216,000 on demand:
    bought. At 50 % it costs 525,600 - 198,000 = $327,600, at 0 % $525,600: both more than on demand, nothing bought,
    the horizon cost $216,000."""
    result = run(one_site(on_demand=10, commit_12=6), curves("ml", [QUARTER], level=10), credit_shares=(0.0, 0.5))
    on_demand = Decimal(10 * 10 * HOURS)
    by_share = {r.credit_share: r for r in result.credit_sensitivity}
    assert sorted(by_share) == [0.0, 0.5, 1.0]
    whole = by_share[1.0]
    assert whole.expected_cost_usd == result.expected_cost_usd == Decimal(6 * 10 * HOURS)
    assert whole.post_horizon_credit_usd == pytest.approx(Decimal(6 * 10 * TAIL), abs=Decimal("0.01"))
    assert whole.first_quarter_liability_usd == Decimal(6 * 10 * YEAR)
    for share in (0.0, 0.5):
        assert by_share[share].expected_cost_usd == on_demand
        assert by_share[share].first_quarter_liability_usd == 0
        assert by_share[share].objective_usd == on_demand
    assert [(p.credit_share, p.pricing_model, p.term_months, p.nodes) for p in result.credit_sensitivity_purchases] == [
        (1.0, "commit", 12, 10)
    ]


def test_a_plan_without_credit_shares_has_no_sensitivity():
    result = run(one_site(on_demand=10, commit_12=6), curves("ml", [QUARTER], level=10))
    assert result.credit_sensitivity == () == result.credit_sensitivity_purchases
