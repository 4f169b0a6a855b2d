"""Plan vs actual in the main job (issue 26, point 2): by default a plan starts with the quarter in progress where
the usage history ends, its metered hours as they were and the rest forecast, and buys nothing in it."""

from __future__ import annotations

from decimal import Decimal

import pandas as pd
import pytest

from quartermaster.planner import PlanOptions, build_data, plan
from quartermaster.planner.options import BANDS
from quartermaster.reports.finance import build_report
from quartermaster.units import quarter_hours
from tests.builders import make_inventory
from tests.planner.planning import MACHINE, price

OCTOBER = pd.date_range("2026-10-01", periods=31 * 24, freq="h")  # 744 hours, metered


def metered_october(on_demand: float = 10, commit_12: float | None = None):
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
    for i, hour in enumerate(OCTOBER):
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


def test_the_plan_starts_with_the_quarter_in_progress_metered_then_forecast():
    """2026Q4 has 2,208 hours: its 744 of October as metered (half at 2, half at 6) and 1,464 forecast from the flat
    trend (the same hours carried unchanged): 4 accelerators on average, at $10 an accelerator-hour."""
    inventory = metered_october()
    result = plan(inventory, PlanOptions(horizon=2, gap_rel=1e-9))
    assert result.quarters == ("2026Q4", "2027Q1")
    assert result.actuals_until == "2026-11-01T00:00:00"
    q4, q1 = result.kpis
    assert q4.cost_usd == pytest.approx(Decimal(4 * 10 * quarter_hours("2026Q4")), abs=Decimal("0.01"))
    assert q1.cost_usd == pytest.approx(Decimal(10 * 10 * quarter_hours("2027Q1")), abs=Decimal("0.01"))
    assert any(
        n.startswith("2026Q4: its demand to 2026-11-01 00:00 is the usage as metered (744 hours with use)")
        for n in result.notes
    )
    # its load-duration curve is its hours': 372 metered and 732 forecast hours' worth at 2 (half of 2,208), then 6
    demand = build_data(inventory, PlanOptions(horizon=2)).demand
    levels = demand[demand["quarter"] == "2026Q4"].sort_values("bucket")["level"].tolist()
    assert levels == pytest.approx([2.0 if hi <= 0.5 else 6.0 for _, hi in BANDS])


def test_no_commitment_starts_in_a_quarter_already_begun():
    """A 1-year commitment at $5 a node-hour pays from 4 accelerators' steady demand, but 2026Q4 began on 1 October:
    its first purchase is in 2027Q1."""
    result = plan(metered_october(commit_12=5), PlanOptions(horizon=2, gap_rel=1e-9))
    assert result.purchase_schedule
    assert {p.start_quarter for p in result.purchase_schedule} == {"2027Q1"}


def test_plan_vs_actual_compares_october_planned_and_metered():
    """Planned: the team's 2026Q4 cost x 744 / 2,208 hours = 4 x $10 x 744 = $29,760. Metered: October's 2,976
    accelerator-hours held (372 x 2 + 372 x 6) on demand at $10 = $29,760."""
    inventory = metered_october()
    result = plan(inventory, PlanOptions(horizon=2, gap_rel=1e-9))
    table = build_report(inventory, result).table("plan_vs_actual")
    [row] = [r for r in table.rows if r["team"] == "ml"]
    assert (row["quarter"], row["months"], row["cost_center"]) == ("2026Q4", "2026-10", "CC-1")
    assert row["planned"] == Decimal("29760.00")
    assert row["metered"] == Decimal("29760.00")


def test_an_explicit_start_after_the_history_plans_as_before():
    result = plan(metered_october(), PlanOptions(start="2027Q1", horizon=1, gap_rel=1e-9))
    assert result.quarters == ("2027Q1",)
    assert not any(n.startswith("2026Q4") for n in result.notes)


def test_the_first_quarter_open_to_purchases_follows_the_actuals():
    """Usage to 1 November 2026: 2026Q4 has begun, 2027Q1 is the first quarter a purchase can start in."""
    assert plan(metered_october(), PlanOptions(horizon=2, gap_rel=1e-9)).first_open_quarter == "2027Q1"
