"""Issue 26, point 6, and issue 35, point 3: purchases as finance books them. One on-prem DGX B200 bought for 48
months from 2027-01-01 at $24.50 a node-hour, financed (no upfront), and one with a $100,000 upfront fee; its rate
made of a capital part and an operating part; financed purchases at the present value of their payments."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

from quartermaster.checks import check_onprem_cost_parts
from quartermaster.loader import load
from quartermaster.model import Commitment, Inventory, OnpremCost, Policy, PriceRow
from quartermaster.plan_contract import Outcome, PlanResult, PurchaseRow
from quartermaster.pricing import SPEND_RULE
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
    # no parts in the price book and no financing rate: the whole rate is capital, at its payments
    financed, part_upfront = dgx(), dgx(D("100000"))
    purchases, _, depreciation = capital_tables(Inventory(), plan_of(financed, part_upfront))
    first, second = purchases.rows
    assert first["financing"] == "financed: paid monthly over its life"
    assert (first["capital"], first["upfront"], first["financed"]) == (RATE * HOURS, D(0), RATE * HOURS)
    assert first["depreciation_month"] == (RATE * HOURS / 48).quantize(D("0.01"))  # $17,897.25
    assert second["financing"] == "part upfront, the rest financed monthly"
    assert (second["upfront"], second["financed"]) == (D("100000.00"), RATE * HOURS)
    assert first["interest"] == second["interest"] == 0 and first["operating_month"] == 0
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


OPERATING = {"power": D("1.716"), "space": D("2.80"), "support": D("0.984")}  # USD per node-hour: $5.50
CAPITAL = {"hardware": D("640000"), "installation": D("25760")}  # USD per node: (24.50 - 5.50) x 48 x 730


def parts(machine: str = "dgx-b200") -> tuple[OnpremCost, ...]:
    capital = [
        OnpremCost(machine=machine, site="onprem-sjc", item=k, usd_per_node=v, source="PO") for k, v in CAPITAL.items()
    ]
    operating = [
        OnpremCost(machine=machine, site="onprem-sjc", item=k, usd_per_node_hour=v, source="contract")
        for k, v in OPERATING.items()
    ]
    return (*capital, *operating)


def booked(rate: str, **more: object) -> Inventory:
    price = PriceRow(machine="dgx-b200", site="onprem-sjc", pricing_model="onprem", usd_per_node_hour=RATE, source="PO")
    fields = {"onprem_costs": parts(), "prices": (price,), "policy": Policy(financing_rate=D(rate)), **more}
    return Inventory(**fields)  # type: ignore[arg-type]


def month_hours(start: dt.date, months: int) -> list[int]:
    out = []
    for i in range(months):
        first = dt.date(start.year + (start.month - 1 + i) // 12, (start.month - 1 + i) % 12 + 1, 1)
        nxt = dt.date(first.year + first.month // 12, first.month % 12 + 1, 1)
        out.append((nxt - first).days * 24)
    return out


def test_only_the_capital_part_is_capitalised_at_the_present_value_of_its_payments() -> None:
    """Issue 35, point 3 (a, b): the operating part (power, space, support: $5.50 of $24.50) is operating cost by
    month; the capital part ($19.00 a node-hour, paid with each month's hours) is capitalised at the present value of
    its 48 monthly payments at the stated 6 % a year (0.5 % a month, each payment at its month's end), the rest of
    them interest. A person checks: PV = sum of 19.00 x hours_k / 1.005^k."""
    purchases, _, books = capital_tables(booked("0.06"), plan_of(dgx()))
    [row] = purchases.rows
    payments = [(RATE - sum(OPERATING.values())) * h for h in month_hours(START, 48)]
    assert payments[0] == 19 * 744  # January 2027: 744 hours at $19.00
    want_pv = sum(p / D("1.005") ** k for k, p in enumerate(payments, start=1)).quantize(D("0.01"))
    assert row["financed"] == row["capital"] == want_pv
    assert row["interest"] == sum(payments) - want_pv
    assert row["depreciation_month"] == (want_pv / 48).quantize(D("0.01"))
    assert row["operating_month"] == (sum(OPERATING.values()) * HOURS / 48).quantize(D("0.01"))
    months = {r["month"]: r for r in books.rows}
    assert len(months) == 48 and months["2027-01"]["bought"] == want_pv
    assert months["2027-01"]["interest"] == (want_pv * D("0.005")).quantize(D("0.01"))  # on the whole amount owed
    assert months["2027-01"]["operating"] == sum(OPERATING.values()) * 744
    assert sum(r["interest"] for r in books.rows) == row["interest"]  # the interest schedule adds up
    assert months["2030-12"]["liability"] == 0 and months["2030-12"]["net_book_value"] == 0
    # what is paid stays the rate for every hour: capital payments + operating cost = the payment schedule
    assert sum(payments) + sum(r["operating"] for r in books.rows) == RATE * HOURS
    assert SPEND_RULE in books.note


def test_the_assets_already_held_are_capital_depreciating_from_their_start() -> None:
    """Issue 35, point 3 (d): an on-prem purchase of the inventory (4 DGX B200 from 2026-06-01 for 48 months) is
    capital too, booked as the plan's are, its depreciation from June 2026 to May 2030."""
    held = Commitment(
        name="sjc-b200",
        kind="on-prem-purchase",
        machine="dgx-b200",
        site="onprem-sjc",
        count=4,
        term_months=48,
        start=dt.date(2026, 6, 1),
        usd_per_node_hour=RATE,
    )
    _, assets, books = capital_tables(booked("0", commitments=(held,)), plan_of())
    [row] = assets.rows
    hours = (held.end - held.start).days * 24
    capital = 4 * (RATE - sum(OPERATING.values())) * hours  # at 0 %, the capital payments themselves
    assert (row["commitment"], row["start"], row["nodes"], row["capital"]) == ("sjc-b200", "2026-06", 4, capital)
    assert assets.total is not None and assets.total["nodes"] == 4
    assert [r["month"] for r in books.rows][0::47] == ["2026-06", "2030-05"]
    assert sum(r["depreciation"] for r in books.rows) == capital


def test_the_parts_must_add_up_to_the_price_book_rate() -> None:
    """The capital items over the term at 730 hours a month plus the operating items give the price row's rate:
    (24.50 - 5.50) x 48 x 730 = 665,760 = 640,000 + 25,760; a hardware figure off by $1,000 is an error."""
    assert check_onprem_cost_parts(booked("0")) == []
    wrong = booked("0").model_copy(
        update={"onprem_costs": (parts()[0].model_copy(update={"usd_per_node": D("641000")}), *parts()[1:])}
    )
    [issue] = check_onprem_cost_parts(wrong)
    assert "do not add up" in issue.message and "$665,760.00" in issue.message and "$666,760.00" in issue.message


def test_the_example_s_parts_add_up_to_its_on_prem_rates() -> None:
    result = load(Path(__file__).parents[2] / "inventory")
    inventory = result.inventory
    assert not [i for i in result.issues if i.severity == "error"]
    assert check_onprem_cost_parts(inventory) == []
    for row in (r for r in inventory.prices if r.pricing_model == "onprem"):
        items = [c for c in inventory.onprem_costs if (c.machine, c.site) == (row.machine, row.site)]
        capital = sum(c.usd_per_node or 0 for c in items)
        operating = sum(c.usd_per_node_hour or 0 for c in items)
        assert capital == (row.usd_per_node_hour - operating) * 48 * 730 and operating > 0
