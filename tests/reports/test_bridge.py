"""Issue 26, point 1: the bridge from the last metered month, scaled to a quarter, to the first planned quarter, on
a hand-worked fleet (tests/reports/fixtures.py: one reserved node of 8 H100s at $2/GPU-h, on demand $10/GPU-h,
spot $3/GPU-h)."""

from __future__ import annotations

from decimal import Decimal

from quartermaster.plan_result import KpiRow, Outcome, PlanResult, QuarterCostRow, RoutingRow, TeamCostRow
from quartermaster.reports.bridge import build_bridge
from quartermaster.reports.finance import build_report
from quartermaster.reports.metering import check_usage, parse_period
from quartermaster.units import quarter_hours
from tests.reports.fixtures import SITE, small_fleet, usage

FEB = parse_period("2026-02")  # 672 hours
Q2 = "2026Q2"  # 2,184 hours
D = Decimal


def hand_plan(routing: list[tuple[str, str, float]], by_model: dict[str, Decimal]) -> PlanResult:
    """A plan of 2026Q2 on the small fleet's a3-megagpu-8g: `routing` as (team, tier, accelerator-hours),
    `by_model` the quarter's cost per pricing model; no idle."""
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
        options={"idle_policy": "proportional"},
        kpis=(KpiRow(Q2, total, total, D(0), 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0),),
        cost_by_quarter=tuple(QuarterCostRow(Q2, m, 0, usd) for m, usd in by_model.items()),
        cost_by_team=(
            TeamCostRow(Q2, "a", "CC-A", total / 2, D(0), total / 2),
            TeamCostRow(Q2, "b", "CC-B", total / 2, D(0), total / 2),
        ),
        routing=tuple(
            RoutingRow(Q2, team, "H100-80GB", "", SITE, "a3-megagpu-8g", "H100-80GB", tier, hours, hours)
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
