"""Placement the fleet has (issue 26, point 3): a team's demand is served only where it holds quota, unless the
policy or a what-if lets it move; a plan that moves a team lists the move, the quota it needs and its saving; each
commitment's utilisation as assumed and as metered."""

from __future__ import annotations

from decimal import Decimal

import pytest

from quartermaster.planner import PlanInputError, load_result
from quartermaster.planner.whatif import parse
from quartermaster.units import quarter_hours
from tests.builders import make_inventory
from tests.planner.planning import curves, price, run

QUARTER = "2027Q1"
MACHINE = "a3-megagpu-8g"  # 8 H100s a node
HERE, THERE = "gcp-us-central1", "gcp-us-east4"  # the team's quota pool is HERE; THERE is $20 a node-hour cheaper
HOURS = quarter_hours(QUARTER)


def two_sites(placement: str | None = None, lending_limit: int | None = None):
    """Team `ml` holds 8 H100s of quota in pool h100 (HERE); team `other`, in the same cohort, holds 16 in pool
    h100-east at THERE; on demand costs $100 a node-hour HERE and $80 THERE."""
    b = (
        make_inventory()
        .site(THERE, provider="gcp", region="us-east4", zones=["us-east4-a"])
        .cluster("gke-b", kind="gke", site=THERE, project="proj")
        .pool("h100-east", cluster="gke-b", zones=["us-east4-a"], nodes=2)
        .team("other", quotas={"h100-east": 16}, cohort="org")
        .add("prices", **price(MACHINE, "on-demand", 100, site=HERE))
        .add("prices", **price(MACHINE, "on-demand", 80, site=THERE))
    )
    if lending_limit is not None:
        b.data["teams"][-1]["quotas"][0]["lending_limit"] = lending_limit
    if placement is not None:
        b.policy(placement=placement)
    return b


DEMAND = curves("ml", [QUARTER], level=16, accelerator="H100-80GB")  # 2 nodes every hour


def test_by_default_a_team_runs_only_where_it_holds_quota():
    """2 nodes HERE every hour at $100, although THERE sells them at $80: no move, no saving."""
    result = run(two_sites(), DEMAND)
    assert result.placement == "quota"
    assert result.expected_cost_usd == pytest.approx(Decimal(2 * 100 * HOURS))
    assert {r.served_site for r in result.routing} == {HERE}
    assert result.moves == () and result.placement_saving_usd is None


@pytest.mark.parametrize(
    "placement",
    [
        "anywhere",  # any offer of the price book
        "cohort",  # `other` lends its pool THERE to the cohort
    ],
)
def test_a_move_lists_its_quota_and_its_saving(placement):
    """Moved THERE, into its pool h100-east: 2 nodes x $80 x the quarter's hours; the move needs 16 accelerators of
    quota and saves 2 nodes x $20 x the quarter's hours."""
    result = run(two_sites(placement), DEMAND)
    assert result.expected_cost_usd == pytest.approx(Decimal(2 * 80 * HOURS))
    [move] = result.moves
    assert (move.team, move.served_site, move.machine) == ("ml", THERE, MACHINE)
    assert move.flavor == "h100-east"  # the pool THERE, under either placement
    assert move.accelerator_hours == pytest.approx(16 * HOURS)
    assert move.quota_needed_accelerators == 16
    assert move.saving_usd == pytest.approx(Decimal(2 * 20 * HOURS), abs=Decimal("0.01"))
    assert result.placement_saving_usd == move.saving_usd


def test_a_cohort_member_that_lends_nothing_opens_no_pool():
    """`other` keeps all of its quota (lending limit 0): under `cohort` ml stays HERE."""
    result = run(two_sites("cohort", lending_limit=0), DEMAND)
    assert result.moves == ()
    assert result.expected_cost_usd == pytest.approx(Decimal(2 * 100 * HOURS))


def test_a_what_if_moves_teams_and_a_new_team_may_run_anywhere():
    """`placement=anywhere` as a what-if does what the policy does; a team with no quota anywhere is listed as a move
    with no saving (it has nowhere else to run)."""
    result = run(two_sites(), DEMAND, what_if=("placement=anywhere",))
    assert [(m.team, m.served_site) for m in result.moves] == [("ml", THERE)]
    newcomer = run(two_sites().team("new", quotas={}), curves("new", [QUARTER], level=8, accelerator="H100-80GB"))
    [move] = newcomer.moves
    assert (move.team, move.served_site, move.saving_usd) == ("new", THERE, None)


def test_a_bad_placement_what_if_names_the_choices():
    with pytest.raises(PlanInputError, match="placement is one of quota, cohort, anywhere, not `everywhere`"):
        parse(("placement=everywhere",), two_sites().build())


def with_c1(b):
    """`b` with `c1`: one MACHINE node HERE, committed for 12 months from 2026-10-01 at $60 a node-hour."""
    return b.add(
        "commitments",
        name="c1",
        kind="cud",
        machine=MACHINE,
        site=HERE,
        count=1,
        term_months=12,
        start="2026-10-01",
        usd_per_node_hour="60",
    )


def test_each_commitment_shows_assumed_and_metered_utilisation():
    """One node (8 H100s) committed HERE. Usage: hour 1 holds 4 (3 used, 4 requested), hour 2 holds 12 (more than
    the 8 committed): metered (4 + 8) / (8 + 8) = 0.75 over 2 hours. The plan's 4 accelerators every hour fill
    half the node: assumed 0.5. The expected figure is the metered one."""
    b = with_c1(two_sites())
    for hour, used, requested in (("2026-10-01T00:00:00", 3, 4), ("2026-10-01T01:00:00", 12, 12)):
        b.add(
            "usage",
            hour=hour,
            cluster="gke-a",
            team="ml",
            flavor="h100",
            accelerators_used=used,
            accelerators_requested=requested,
        )
    result = run(b, curves("ml", [QUARTER], level=4, accelerator="H100-80GB"))
    [row] = result.commitment_utilisation
    assert (row.commitment, row.quarter) == ("c1", QUARTER)
    assert row.assumed_utilisation == pytest.approx(0.5)
    assert (row.metered_utilisation, row.metered_hours) == (pytest.approx(0.75), 2)
    assert (row.expected_utilisation, row.basis) == (pytest.approx(0.75), "metered")


def test_moves_and_utilisation_are_written_and_read_back_exactly(tmp_path):
    """A plan with a move (saving set) and a commitment with no history (metered None) reads back equal."""
    b = with_c1(two_sites("anywhere"))
    result = run(b, curves("ml", [QUARTER], level=24, accelerator="H100-80GB"))
    assert result.moves and result.commitment_utilisation[0].metered_utilisation is None
    result.write(tmp_path)
    assert load_result(tmp_path) == result
