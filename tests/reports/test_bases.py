"""One team and one month of the example on the three bases (issue 14): llm-pretrain, October 2026.

- metered: `qm meter` of the month: the team's own lines at the rates of the capacity that served them, plus
  its share of idle capacity (proportional policy);
- planned: the plan of 2026Q4 (demand from the usage history) prorated to October's hours;
- exposure: the quota diff's monthly figure: each quota used in full at the flavor's marginal rate, the
  paid-anyway capacity shared by quota.

Each figure is traced to its definition from the same price book and rules (quartermaster.pricing), and the
differences between them are the ones their bases imply.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from quartermaster import planner
from quartermaster.capacity import nominal_by_flavor
from quartermaster.loader import load
from quartermaster.metering import check_usage, inventory_records, meter, parse_period
from quartermaster.metering.meter import MeterResult
from quartermaster.model import Inventory
from quartermaster.pricing import (
    HOURS_PER_MONTH,
    Provisioning,
    accelerator_hour_price,
    per_accelerator,
    pool_node_price,
    pricing_model_of,
)
from quartermaster.reports.finance import build_report
from quartermaster.reports.quota_diff import build_quota_diff, flavor_economics
from tests.paths import INVENTORY

TEAM, MONTH, QUARTER = "llm-pretrain", "2026-10", "2026Q4"


@pytest.fixture(scope="module")
def inventory() -> Inventory:
    return load(INVENTORY).inventory


@pytest.fixture(scope="module")
def metered(inventory: Inventory) -> MeterResult:
    records, issues = check_usage(inventory_records(inventory), inventory)
    assert issues == []
    result, issues = meter(inventory, records, parse_period(MONTH), "proportional")
    assert issues == [] and result is not None
    return result


@pytest.fixture(scope="module")
def plan(inventory: Inventory) -> planner.PlanResult:
    result = planner.plan(inventory, planner.PlanOptions(from_usage=True, start=QUARTER, horizon=1))
    assert result.has_plan
    return result


def test_metered_is_the_teams_lines_at_the_pricing_homes_rates_plus_its_idle_share(
    inventory: Inventory, metered: MeterResult
) -> None:
    team = next(t for t in metered.teams if t.team == TEAM)
    lines = [x for x in metered.lines if x.team == TEAM]
    shares = [x for x in metered.idle_shares if x.team == TEAM]
    assert team.usage_cost == sum((x.cost for x in lines), Decimal(0))
    assert team.idle_share == sum((x.cost for x in shares), Decimal(0))
    assert team.total == team.usage_cost + team.idle_share
    for line in lines:
        assert abs(line.cost - line.accelerator_hours * line.rate) < Decimal("0.01"), line  # cent-allocated
        if line.block.startswith("commitment:"):
            # covered hours at the contract's price, hours beyond it at the overflow (reservation) rate
            commitment = inventory.commitment_by_name[line.block.removeprefix("commitment:")]
            machine = inventory.machine_by_name[commitment.machine]
            covered = per_accelerator(commitment.usd_per_node_hour, machine.accelerators_per_node)
            provider = inventory.site_by_name[commitment.site].provider
            overflow = accelerator_hour_price(
                inventory, commitment.machine, commitment.site, pricing_model_of(Provisioning.RESERVATION, provider)
            )
            assert line.rate in (covered, overflow), line
        else:
            pool = inventory.pool_by_name[line.block.removeprefix("pool:")]
            price, _ = pool_node_price(
                inventory, pool.machine, inventory.cluster_of_pool[pool.name].site, pool.provisioning
            )
            assert price is not None
            assert line.rate == per_accelerator(price, inventory.machine_by_name[pool.machine].accelerators_per_node)


def test_the_plans_closed_month_is_its_metered_charge_and_the_report_shows_both(
    inventory: Inventory, metered: MeterResult, plan: planner.PlanResult
) -> None:
    """Issue 34, point 1: the usage history ends on 1 November, so the plan's October is closed: it holds `qm
    meter`'s charge for it (closed_costs), its 2026Q4 cost includes it, and plan vs actual shows the same figure on
    both sides, to the cent, with the basis of each."""
    metered_total = next(t.total for t in metered.teams if t.team == TEAM)
    [closed] = [r for r in plan.closed_costs if r.team == TEAM]
    assert (closed.quarter, closed.period, closed.usd) == (QUARTER, MONTH, metered_total)
    team_row = next(r for r in plan.cost_by_team if r.quarter == QUARTER and r.team == TEAM)
    assert team_row.usd == team_row.usage_usd + team_row.idle_share_usd
    assert team_row.usage_usd >= closed.usage_usd and team_row.idle_share_usd >= closed.idle_share_usd
    table = build_report(inventory, plan, QUARTER).table("plan_vs_actual")
    row = next(r for r in table.rows if r["team"] == TEAM)
    assert (row["plan"], row["basis"], row["months"]) == ("this plan", "metered (closed when planned)", MONTH)
    assert row["planned"] == row["metered"] == metered_total
    assert row["variance"] == 0
    assert "basis: planned" in table.note and "basis: metered" in table.note


def test_exposure_is_each_quota_used_in_full_at_the_flavors_marginal_rate(
    inventory: Inventory, metered: MeterResult
) -> None:
    """The quota diff of the inventory against itself shows no change; the team's exposure is its quota's share
    of each flavor's monthly cost, and that cost is the paid-anyway capacity plus the quota beyond it at the
    rate metering charges beyond it, per 730-hour month."""
    economics, totals = flavor_economics(inventory), nominal_by_flavor(inventory)
    team = inventory.team_by_name[TEAM]
    exposure = Decimal(0)
    for quota in team.quotas:
        econ = economics[quota.flavor]
        monthly = econ.monthly_usd(totals[quota.flavor])
        assert monthly is not None and econ.fixed_usd_per_month is not None
        beyond = max(0, totals[quota.flavor] - econ.paid_anyway)
        assert monthly == econ.fixed_usd_per_month + beyond * (econ.rate_usd_per_accelerator_month or 0)
        exposure += monthly * quota.nominal / totals[quota.flavor]
    assert build_quota_diff(inventory, inventory).rows == ()
    # Exposure prices the team's whole quota for every hour; metering prices what it held. The team's quota is
    # never fully held, so its exposure is above its metered usage at the same rates (idle shares aside).
    held_hours = next(t.charged_hours for t in metered.teams if t.team == TEAM)
    quota_hours = sum(q.nominal for q in team.quotas) * Decimal(31 * 24)
    assert held_hours < quota_hours
    usage = next(t.usage_cost for t in metered.teams if t.team == TEAM)
    assert exposure * Decimal(31 * 24) / HOURS_PER_MONTH > usage
