"""The quarter in progress (issue 34, points 1 and 2): a plan starts with the quarter in progress where the actuals
end; its closed part is what `qm meter` charges for it, fixed, and only its open part is planned; a purchase can
start on the first open day."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal

import pandas as pd
import pytest

from quartermaster.loader import load
from quartermaster.metering import check_usage, inventory_records, meter, parse_period
from quartermaster.planner import PlanInputError, PlanOptions, build_data, plan
from quartermaster.planner.options import BANDS
from quartermaster.reports.finance import build_report
from quartermaster.units import quarter_hours
from tests.builders import make_inventory
from tests.paths import INVENTORY
from tests.planner.planning import MACHINE, price

OCTOBER = pd.date_range("2026-10-01", periods=31 * 24, freq="h")  # 744 hours, metered
OPEN_Q4 = quarter_hours("2026Q4") - 31 * 24  # November and December: 1,464 hours


def metered_october(on_demand: float = 10, commit_12: float | None = None, hours: pd.DatetimeIndex = OCTOBER):
    """One team on a 1-L4 machine, on demand at $10 a node-hour, holding quota in its autoscaling pool (paid as
    used). October 2026 is metered:
    2 and 6 accelerators requested in turn, a mean of 4 every day (a flat trend). demand.csv starts in 2027Q1 at 10."""
    b = (
        make_inventory()
        .pool("l4", machine=MACHINE, autoscaling={"max_nodes": 8}, provisioning="on-demand")
        .edit_pool("h100", nodes=None, autoscaling={"max_nodes": 2})  # the builder's pool, unused: costs nothing
        .edit("teams", "ml", quotas=[{"flavor": "l4", "nominal": 8}])
        .add("prices", **price(MACHINE, "on-demand", on_demand))
        .add("prices", **price("a3-megagpu-8g", "on-demand", 100))  # the builder's H100 pool, unused
        .add("demand", period="2027Q1", team="ml", accelerator="L4", p50=10)
    )
    if commit_12 is not None:
        b.add("prices", **price(MACHINE, "commit", commit_12, 12))
    for i, hour in enumerate(hours):
        b.add(
            "usage",
            hour=hour.isoformat(),
            cluster="gke-a",
            team="ml",
            flavor="l4",
            accelerators_used=2 + 4 * (i % 2),
            accelerators_requested=2 + 4 * (i % 2),
        )
    return b.build()


def test_the_closed_part_is_metered_and_only_the_open_part_is_planned():
    """2026Q4 has 2,208 hours: October's 744 are closed, charged as `qm meter` charges them (2,976 accelerator-hours
    held, 372 x 2 + 372 x 6, on demand at $10 = $29,760.00), and only November and December (1,464 hours) are
    planned, forecast from the flat history (2 and 6 accelerators in turn, 4 on average): 4 x $10 x 1,464 =
    $58,560.00. The quarter costs both: $88,320.00."""
    inventory = metered_october()
    result = plan(inventory, PlanOptions(horizon=2, gap_rel=1e-9))
    assert result.quarters == ("2026Q4", "2027Q1")
    assert result.actuals_until == "2026-11-01T00:00:00"
    [closed] = result.closed_costs
    assert (closed.quarter, closed.period, closed.team, closed.usd) == ("2026Q4", "2026-10", "ml", Decimal("29760"))
    assert closed.accelerator_hours == 2976
    by_model = {r.pricing_model: r.usd for r in result.cost_by_quarter if r.quarter == "2026Q4"}
    assert by_model["metered"] == Decimal("29760")
    assert by_model["on-demand"] == pytest.approx(Decimal(4 * 10 * OPEN_Q4), abs=Decimal("0.01"))
    q4, q1 = result.kpis
    assert q4.cost_usd == pytest.approx(Decimal(29760 + 4 * 10 * OPEN_Q4), abs=Decimal("0.01"))
    assert q1.cost_usd == pytest.approx(Decimal(10 * 10 * quarter_hours("2027Q1")), abs=Decimal("0.01"))
    [team] = [r for r in result.cost_by_team if r.quarter == "2026Q4"]
    assert team.usd == q4.cost_usd
    assert any(
        n.startswith("2026Q4: closed to 2026-11-01 00:00, its cost as `qm meter` charges it") for n in result.notes
    )
    # the model sees the open part only: its hours, and its demand forecast (half the hours at 2, half at 6)
    data = build_data(inventory, PlanOptions(horizon=2))
    assert data.hours["2026Q4"] == OPEN_Q4
    levels = data.demand[data.demand["quarter"] == "2026Q4"].sort_values("bucket")["level"].tolist()
    assert levels == pytest.approx([2.0 if hi <= 0.5 else 6.0 for _, hi in BANDS])


def test_a_purchase_starts_on_the_first_open_day_of_the_quarter_in_progress():
    """A 1-year commitment at $4 a node-hour against $10 on demand pays for every node demand holds at least 40 % of
    the hours: in November and December the 6 nodes of the flat history (2 all the time, 6 half of it). It starts
    on 1 November, the first open day, and binds 6 x $4 x 8,760 hours (1 November 2026 to 1 November 2027)."""
    result = plan(metered_october(commit_12=4), PlanOptions(horizon=2, gap_rel=1e-9))
    [now] = [p for p in result.purchase_schedule if p.start_quarter == "2026Q4"]
    assert (now.start, now.end, now.nodes) == (dt.date(2026, 11, 1), dt.date(2027, 11, 1), 6)
    assert now.total_liability_usd == Decimal(6 * 4 * 8760)
    # inside the horizon (to 1 April 2027): November to March, 1,464 + 2,160 hours
    assert now.in_horizon_usd == Decimal(6 * 4 * (OPEN_Q4 + quarter_hours("2027Q1")))
    assert result.first_open_quarter == "2026Q4"


def test_a_history_ending_mid_quarter_with_rising_demand_buys_in_the_quarter_in_progress():
    """Issue 34, point 2: a history from 1 October to 15 November 2026 13:00 whose demand rises steadily, from 2 to
    20 accelerators (one more every 2.5 days), forecast from usage: the cloud recommenders buy the day they are
    asked, and so does the plan. A 1-year commitment at $4 against $10 on demand pays for any node held at least
    40 % of the hours, so the plan buys in 2026Q4, starting on 16 November (the day after the history's end), its
    term from that day: 8,760 hours to 16 November 2027."""
    hours = pd.date_range("2026-10-01", "2026-11-15 12:00", freq="h")
    b = (
        make_inventory()
        .pool("l4", machine=MACHINE, autoscaling={"max_nodes": 64}, provisioning="on-demand")
        .edit_pool("h100", nodes=None, autoscaling={"max_nodes": 2})
        .edit("teams", "ml", quotas=[{"flavor": "l4", "nominal": 64}])
        .add("prices", **price(MACHINE, "on-demand", 10))
        .add("prices", **price(MACHINE, "commit", 4, 12))
        .add("prices", **price("a3-megagpu-8g", "on-demand", 100))
    )
    for i, hour in enumerate(hours):
        level = 2 + i // 60  # one more accelerator every 60 hours
        b.add(
            "usage",
            hour=hour.isoformat(),
            cluster="gke-a",
            team="ml",
            flavor="l4",
            accelerators_used=level,
            accelerators_requested=level,
        )
    inventory = b.build()
    result = plan(inventory, PlanOptions(horizon=2, from_usage=True, gap_rel=1e-9))
    assert result.actuals_until == "2026-11-15T13:00:00"
    now = [p for p in result.purchase_schedule if p.start_quarter == "2026Q4"]
    assert now, result.purchase_schedule
    history_end = dt.date(2026, 11, 15)
    for p in now:
        assert p.start == dt.date(2026, 11, 16) > history_end
        assert p.end == dt.date(2027, 11, 16)
        assert p.total_liability_usd == Decimal(p.nodes * 4 * 8760)
    # at least what the lookback (the recommenders' method) commits from the same hours: 1,093 hours, levels 2 to 19
    # for 60 hours each and 20 for 13; a node pays when held at least 40 % of the hours: level 12 or more is held
    # 8 x 60 + 13 = 493 hours (45 %), level 13 or more 433 hours (39.6 %), so 12 nodes
    assert sum(p.nodes for p in now) >= 12


def test_plan_vs_actual_shows_this_plans_closed_month_as_metered_and_the_previous_plans_forecast():
    """This plan holds October as `qm meter` charges it: its figure equals the metered one to the cent. The previous
    plan (made before October, 2026Q4 all forecast: 10 accelerators at $10 over 2,208 hours = $220,800.00) is
    prorated to October's 744 hours: $74,400.00 against $29,760.00 metered, a variance of -$44,640.00."""
    inventory = metered_october()
    result = plan(inventory, PlanOptions(horizon=2, gap_rel=1e-9))
    earlier = (
        make_inventory()
        .pool("l4", machine=MACHINE, autoscaling={"max_nodes": 16}, provisioning="on-demand")
        .edit_pool("h100", nodes=None, autoscaling={"max_nodes": 2})
        .edit("teams", "ml", quotas=[{"flavor": "l4", "nominal": 16}])
        .add("prices", **price(MACHINE, "on-demand", 10))
        .add("prices", **price("a3-megagpu-8g", "on-demand", 100))
        .add("demand", period="2026Q4", team="ml", accelerator="L4", p50=10)
        .build()
    )
    previous = plan(earlier, PlanOptions(horizon=1, gap_rel=1e-9))
    assert previous.kpis[0].cost_usd == pytest.approx(Decimal(10 * 10 * 2208), abs=Decimal("0.01"))
    table = build_report(inventory, result, None, previous).table("plan_vs_actual")
    rows = {(r["plan"], r["team"]): r for r in table.rows}
    this, prior = rows[("this plan", "ml")], rows[("previous plan", "ml")]
    assert (this["quarter"], this["months"], this["cost_center"]) == ("2026Q4", "2026-10", "CC-1")
    assert this["basis"] == "metered (closed when planned)"
    assert this["planned"] == this["metered"] == Decimal("29760.00") and this["variance"] == 0
    assert prior["basis"] == "planned (prorated)"
    assert (prior["planned"], prior["metered"], prior["variance"]) == (
        Decimal("74400.00"),
        Decimal("29760.00"),
        Decimal("-44640.00"),
    )
    assert table.total is not None and table.total["plan"] == "previous plan"


@pytest.fixture(scope="module")
def example_plan():
    """The example inventory planned as `qm plan inventory/` plans it (the default options)."""
    inventory = load(INVENTORY).inventory
    return inventory, plan(inventory, PlanOptions())


def test_the_example_octobers_plan_equals_its_metered_charge_per_team_to_the_cent(example_plan):
    """Issue 34, done-when: `qm plan inventory/` then `qm report`: October 2026 is closed, and the plan's October per
    team is `qm meter`'s, to the cent (before: 2026Q4's plan prorated, $858,093.48 against $1,153,660.60)."""
    inventory, result = example_plan
    table = build_report(inventory, result).table("plan_vs_actual")
    records, issues = check_usage(inventory_records(inventory), inventory)
    assert not issues
    charged, problems = meter(inventory, records, parse_period("2026-10"), "proportional")
    assert charged is not None and not problems
    want = {t.team: t.total for t in charged.teams}
    got = {r["team"]: (r["planned"], r["metered"]) for r in table.rows if r["months"] == "2026-10"}
    assert got == {team: (usd, usd) for team, usd in want.items()}
    assert sum(want.values()) == Decimal("1153660.60")


def test_an_explicit_start_after_the_history_plans_as_before():
    result = plan(metered_october(), PlanOptions(start="2027Q1", horizon=1, gap_rel=1e-9))
    assert result.quarters == ("2027Q1",)
    assert not result.closed_costs
    assert not any(n.startswith("2026Q4") for n in result.notes)


def test_as_of_ends_the_actuals_earlier():
    """`--as-of 2026-10-16`: the history after 16 October is not known yet; October's first 15 days are closed
    (360 hours, 1,440 accelerator-hours at $10 = $14,400.00) and a commitment can start on 16 October."""
    result = plan(metered_october(commit_12=4), PlanOptions(horizon=2, as_of=dt.date(2026, 10, 16), gap_rel=1e-9))
    assert result.actuals_until == "2026-10-16T00:00:00"
    [closed] = result.closed_costs
    assert (closed.period, closed.usd) == ("2026-10-01 00:00..2026-10-16 00:00", Decimal("14400"))
    assert {p.start for p in result.purchase_schedule if p.start_quarter == "2026Q4"} == {dt.date(2026, 10, 16)}


@pytest.mark.parametrize(
    ("as_of", "want"),
    [
        (dt.date(2026, 9, 1), "outside the usage history (2026-10-01 00:00 to 2026-11-01 00:00)"),  # before it
        (dt.date(2026, 11, 20), "outside the usage history"),  # after it: nothing metered between
    ],
)
def test_as_of_outside_the_history_is_refused(as_of: dt.date, want: str):
    with pytest.raises(PlanInputError, match=re.escape(want)):
        plan(metered_october(), PlanOptions(horizon=2, as_of=as_of))
