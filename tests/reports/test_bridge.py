"""Issue 26, point 1: the bridge from the last metered month, scaled to a quarter, to the first planned quarter, on
a hand-worked fleet (tests/reports/fixtures.py: one reserved node of 8 H100s at $2/GPU-h, on demand $10/GPU-h,
spot $3/GPU-h)."""

from __future__ import annotations

from decimal import Decimal

from quartermaster.metering import check_usage, parse_period
from quartermaster.model import Inventory
from quartermaster.plan_contract import (
    KpiRow,
    Outcome,
    PlanOptions,
    PlanResult,
    QuarterCostRow,
    RoutingRow,
    TeamCostRow,
)
from quartermaster.reports.cost_bridge import build_bridge
from quartermaster.reports.finance import build_report
from quartermaster.units import quarter_hours
from tests.reports.fixtures import SITE, small_fleet, usage

FEB = parse_period("2026-02")  # 672 hours
Q2 = "2026Q2"  # 2,184 hours
D = Decimal


def hand_plan(
    routing: list[tuple[str, str, float]],
    by_model: dict[str, Decimal],
    demand: float | None = None,
    served_per_asked: float = 1.0,
) -> PlanResult:
    """A plan of 2026Q2 on the small fleet's a3-megagpu-8g: `routing` as (team, tier, accelerator-hours of the
    machine), `by_model` the quarter's cost per pricing model, `demand` the quarter's demand in H100-hours (None: a plan
    written before it recorded it), each hour of work taking `served_per_asked` machine hours; no idle."""
    total = sum(by_model.values(), D(0))
    return PlanResult(
        outcome=Outcome.OPTIMAL,
        solver="highs",
        status="Optimal",
        objective_usd=total,
        expected_cost_usd=total,
        baseline_on_demand_usd=total,
        gap=0.0,
        solve_seconds=0.0,
        quarters=(Q2,),
        options=PlanOptions(idle_policy="proportional"),
        kpis=(KpiRow(Q2, total, total, D(0), 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, demand),),
        cost_by_quarter=tuple(QuarterCostRow(Q2, m, 0, usd) for m, usd in by_model.items()),
        cost_by_team=(
            TeamCostRow(Q2, "a", "CC-A", total / 2, D(0), total / 2),
            TeamCostRow(Q2, "b", "CC-B", total / 2, D(0), total / 2),
        ),
        routing=tuple(
            RoutingRow(
                Q2, team, "H100-80GB", "", SITE, "a3-megagpu-8g", "H100-80GB", tier, hours, hours / served_per_asked
            )
            for team, tier, hours in routing
        ),
    )


def test_the_bridge_explains_the_quarter_line_by_line_to_the_cent() -> None:
    inventory = small_fleet()
    # February, every hour: team a runs 6 GPUs on the reserved node (2 of its 8 idle), team b 2 GPUs on demand
    rows = [(h, "a", "h100-resv", 6.0, 6.0) for h in range(672)] + [(h, "b", "h100", 2.0, 2.0) for h in range(672)]
    records, issues = check_usage(usage(rows), inventory)
    assert not issues
    committed, on_demand, spot = D(2), D(10), D(3)  # USD per GPU-hour (fixtures.py)
    k = D(quarter_hours(Q2)) / D(FEB.hours)  # 2,184 / 672 = 3.25
    hc0, hp0 = 6 * 672 * k, 2 * 672 * k  # used hours, scaled to the quarter
    c0 = 8 * 672 * k * committed  # the reserved node, paid whole
    i0 = 2 * 672 * k * committed  # its two idle GPUs
    p0_cost = hp0 * on_demand
    start = c0 + p0_cost  # 78,624.00
    # 2026Q2 planned: a uses all 8 reserved GPUs (no idle), b 4 GPUs on spot
    hc1, hp1 = D(8 * quarter_hours(Q2)), D(4 * quarter_hours(Q2))
    c1, p1_cost = hc1 * committed, hp1 * spot
    plan = hand_plan(
        [("a", "existing", float(hc1)), ("b", "spot", float(hp1))],
        {"existing-commitments": c1, "spot": p1_cost},
    )
    end = c1 + p1_cost  # 61,152.00
    p0 = p0_cost / hp0  # $10: the month's pay-per-use rate
    want = {
        "demand change": (hc1 + hp1 - hc0 - hp0) * p0,  # +87,360.00
        "work moved between accelerator types": D(0),  # every hour runs on the H100s asked for
        "demand not served": D(0),
        "placement change": hp1 * (p1_cost / hp1 - p0),  # -61,152.00: on spot at $3, not on demand at $10
        "price changes": D(0),
        "hours moved onto paid capacity": -(hc1 - hc0) * p0 - (D(0) - i0),  # -34,944.00
        "commitments expiring": c1 - c0,  # 0: the reservation runs all 2026
        "commitments bought": D(0),
        "idle change": D(0) - i0,  # -8,736.00
    }
    lines = build_bridge(inventory, plan, records, FEB)
    assert lines is not None
    assert lines[0].usd == start.quantize(D("0.01")) and lines[0].item.startswith("2026-02 metered")
    assert lines[-1].usd == end and lines[-1].item == "2026Q2 planned"
    assert {line.item: line.usd for line in lines[1:-1]} == {
        item: usd.quantize(D("0.01")) for item, usd in want.items()
    }
    assert sum(line.usd for line in lines[1:-1]) == lines[-1].usd - lines[0].usd
    # in report.json: the table `bridge` with columns item, usd; the metered start first, the planned quarter last
    data = build_report(inventory.model_copy(update={"demand": []}), plan, Q2, usage=records)
    bridge = data.table("bridge")
    assert [c.key for c in bridge.columns] == ["item", "usd"]
    assert [(r["item"], r["usd"]) for r in bridge.rows] == [(line.item, line.usd) for line in lines]


def bridge_of(
    inventory: Inventory, plan: PlanResult, rows: list[tuple[int, str, str, float, float]], days: int = 28
) -> dict[str, D]:
    """The bridge's lines from February's records `rows`, a history of its first `days` days."""
    records, issues = check_usage(usage(rows, days), inventory)
    assert not issues
    lines = build_bridge(inventory, plan, records, FEB)
    assert lines is not None
    assert sum(line.usd for line in lines[1:-1]) == lines[-1].usd - lines[0].usd
    return {line.item: line.usd for line in lines}


def test_a_history_ending_mid_month_is_scaled_by_the_hours_it_covers() -> None:
    """Issue 34, point 6: a history of February's first 14 days was metered as the whole month (the reserved node
    paid 672 hours, used 336) and scaled by 2,184 / 672, halving the run-rate. Metered over the 336 hours it covers,
    the same fleet's two weeks give the start the whole month gives: the same use every hour."""
    inventory = small_fleet()
    every_hour = [(h, "a", "h100-resv", 6.0, 6.0) for h in range(672)] + [
        (h, "b", "h100", 2.0, 2.0) for h in range(672)
    ]
    two_weeks = [r for r in every_hour if r[0] < 14 * 24]
    plan = hand_plan([("a", "existing", 8.0 * quarter_hours(Q2))], {"existing-commitments": D(16 * quarter_hours(Q2))})
    whole, half = bridge_of(inventory, plan, every_hour), bridge_of(inventory, plan, two_weeks, days=14)
    start = (8 * D(2) + 2 * D(10)) * quarter_hours(Q2)  # per hour: the reserved node's 8 GPUs and 2 GPUs on demand
    assert whole["2026-02 metered, scaled to a quarter (2,184 / 672 hours)"] == start
    assert (
        half[
            "2026-02, 2026-02-01 00:00..2026-02-15 00:00 only (no usage records after) metered, scaled to a quarter "
            "(2,184 / 336 hours)"
        ]
        == start
    )
    assert list(half.values())[1:] == list(whole.values())[1:]


def test_idle_minimum_nodes_of_an_on_demand_pool_are_idle_not_an_expiring_commitment() -> None:
    """Issue 35, point 1: "commitments expiring" held idle of an on-demand pool's minimum nodes (v5p-2x2x4 on the
    example). Here the on-demand pool `h100` keeps 1 node (8 GPUs at $10) of which team b uses 2."""
    inventory = small_fleet(on_demand_min_nodes=1)
    rows = [(h, "a", "h100-resv", 8.0, 8.0) for h in range(672)] + [(h, "b", "h100", 2.0, 2.0) for h in range(672)]
    hours = D(quarter_hours(Q2))
    plan = hand_plan(
        [("a", "existing", float(8 * hours)), ("b", "on-demand", float(2 * hours))],
        {"existing-commitments": 8 * hours * D(2), "on-demand": 2 * hours * D(10)},
    )
    lines = bridge_of(inventory, plan, rows)
    assert lines["commitments expiring"] == D("0.00")  # the reservation is paid whole in both, none of it idle
    assert lines["idle change"] == -6 * hours * D(10)  # the pool's 6 idle GPUs, gone from the plan
    assert lines["demand change"] == D("0.00")


def test_demand_change_depends_on_demand_alone_and_moved_work_has_its_own_line() -> None:
    """Issue 35, point 1: "demand change" held H100 work served on B200 nodes, counted in B200-hours (one B200-hour
    does 2.2 H100-hours), so the same demand gave three demand changes. Two plans of the same demand, one serving all
    of it on the asked H100s, one serving half of it on a machine doing 2.2 H100-hours an hour and leaving 100 hours
    unmet, give the same demand change to the cent; the other lines take the difference."""
    inventory = small_fleet()
    rows = [(h, "a", "h100-resv", 6.0, 6.0) for h in range(672)] + [(h, "b", "h100", 2.0, 2.0) for h in range(672)]
    hours = D(quarter_hours(Q2))
    demand = 12 * hours  # H100-hours asked in 2026Q2
    as_asked = hand_plan(
        [("a", "existing", float(8 * hours)), ("b", "on-demand", float(4 * hours))],
        {"existing-commitments": 8 * hours * D(2), "on-demand": 4 * hours * D(10)},
        demand=float(demand),
    )
    ratio = 1 / D("2.2")  # machine hours per hour of work
    served = (demand - 100) * ratio
    moved = hand_plan(
        [("b", "on-demand", float(served))],
        {"existing-commitments": 8 * hours * D(2), "on-demand": served * D(10)},
        demand=float(demand),
        served_per_asked=float(ratio),
    )
    one, two = bridge_of(inventory, as_asked, rows), bridge_of(inventory, moved, rows)
    p0 = D(10)  # February's pay-per-use rate: b's GPUs on demand
    metered = (6 + 2) * D(672) * hours / 672
    assert one["demand change"] == two["demand change"] == ((demand - metered) * p0).quantize(D("0.01"))
    assert one["work moved between accelerator types"] == one["demand not served"] == D("0.00")
    asked = D(repr(float(served))) / D(repr(float(ratio)))  # the routing row's hours of work, as the plan wrote them
    assert two["demand not served"] == (-(demand - asked) * p0).quantize(D("0.01"))
    assert abs(two["work moved between accelerator types"] - (D(repr(float(served))) - asked) * p0) <= D("0.01")
