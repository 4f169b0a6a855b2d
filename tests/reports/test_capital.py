"""Issue 26, point 6: purchases as finance books them. One on-prem DGX B200 bought for 48 months from 2027-01-01 at
$24.50 a node-hour, financed (no upfront), and one with a $100,000 upfront fee."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from quartermaster.plan_result import Outcome, PlanResult, PurchaseRow
from quartermaster.reports.finance.tables.capital import capital_tables, payment_schedule
from quartermaster.reports.finance.tables.payments import purchase_payments
from quartermaster.reports.finance.tables.purchase_schedule import purchase_schedule

D = Decimal
RATE = D("24.50")
START, END = dt.date(2027, 1, 1), dt.date(2031, 1, 1)
HOURS = (END - START).days * 24  # 1,461 days (29 Feb 2028 included) = 35,064 hours


NO_FEE = D(0)


def dgx(upfront: Decimal = NO_FEE) -> PurchaseRow:
    return PurchaseRow(
        site="onprem-sjc",
        machine="dgx-b200",
        accelerator="B200",
        pricing_model="onprem",
        term_months=48,
        start_quarter="2027Q1",
        start=START,
        end=END,
        nodes=1,
        node_weeks=0,
        accelerators=8,
        usd_per_node_hour=RATE,
        monthly_usd=RATE * 730,
        total_liability_usd=RATE * HOURS + upfront,
        in_horizon_usd=RATE * 2160,
        upfront_usd=upfront,
    )


def plan_of(*rows: PurchaseRow) -> PlanResult:
    return PlanResult(
        Outcome.OPTIMAL, "highs", "Optimal", D(0), D(0), D(0), 0.0, 0.0, ("2027Q1",), {}, purchase_schedule=rows
    )


def test_the_liability_is_the_term_s_hours_and_the_monthly_figure_a_730_hour_month() -> None:
    # issue 26: "$17,885 a month, $859,068 liability", 48 x 17,885 = 858,480: the 730-hour month against the
    # term's 35,064 hours; the 24 hours of 29 February 2028 cost 24 x $24.50 = $588
    plan = plan_of(dgx())
    liability = RATE * HOURS
    assert liability == D("859068.00") and D("858480.00") == 48 * RATE * 730
    assert liability - 48 * RATE * 730 == (HOURS - 48 * 730) * RATE == D("588.00")
    table = purchase_schedule(plan, purchase_payments(plan))
    [row] = table.rows
    assert (row["hours"], row["monthly"], row["liability"]) == (HOURS, RATE * 730, liability)
    # the payment schedule pays each calendar month's own hours, adding up to the liability exactly
    schedule = payment_schedule(plan)
    months = {r["month"]: r["hourly"] for r in schedule.rows}
    assert len(months) == 48
    assert months["2027-01"] == 31 * 24 * RATE  # $18,228.00
    assert months["2027-02"] == 28 * 24 * RATE  # $16,464.00
    assert months["2028-02"] == 29 * 24 * RATE  # $17,052.00, the leap February
    assert sum(months.values()) == schedule.total["total"] == liability  # type: ignore[index]


def test_an_on_prem_purchase_is_capital_depreciated_over_its_life_apart_from_cloud_spend() -> None:
    financed, part_upfront = dgx(), dgx(D("100000"))
    purchases, depreciation = capital_tables(plan_of(financed, part_upfront))
    first, second = purchases.rows
    assert first["financing"] == "financed: paid monthly over its life"
    assert (first["capital"], first["upfront"], first["financed"]) == (RATE * HOURS, D(0), RATE * HOURS)
    assert first["depreciation_month"] == (RATE * HOURS / 48).quantize(D("0.01"))  # $17,897.25
    assert second["financing"] == "part upfront, the rest financed monthly"
    assert (second["upfront"], second["financed"]) == (D("100000.00"), RATE * HOURS)
    # straight-line: 48 months from 2027-01, each purchase's months add up to its capital value
    assert depreciation.rows[0]["month"] == "2027-01" and len(depreciation.rows) == 48
    capital = RATE * HOURS * 2 + 100000
    assert sum(r["depreciation"] for r in depreciation.rows) == capital
    assert depreciation.rows[0]["bought"] == capital
    assert depreciation.rows[-1]["net_book_value"] == 0
    # the payment schedule: the upfront fee in the first month, beside both purchases' hours
    schedule = payment_schedule(plan_of(financed, part_upfront))
    assert schedule.rows[0]["upfront"] == D("100000.00")
    assert schedule.rows[0]["hourly"] == 2 * 31 * 24 * RATE
