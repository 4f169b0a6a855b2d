"""Placement the fleet has (issue 26, point 3): a team's demand is served only where it holds quota, unless the
policy or a what-if lets it move; a plan that moves a team lists the move, the quota it needs and its saving; each
commitment's utilisation as assumed and as metered."""

from __future__ import annotations

from decimal import Decimal

import pandas as pd
import pytest

from quartermaster.loader import load
from quartermaster.planner import PlanInputError, PlanOptions, load_result, plan
from quartermaster.planner.whatif import parse
from quartermaster.units import quarter_hours
from tests.builders import make_inventory
from tests.paths import INVENTORY
from tests.planner.planning import curves, price, run

QUARTER = "2027Q1"
MACHINE = "a3-megagpu-8g"  # 8 H100s a node
HERE, THERE = "gcp-us-central1", "gcp-us-east4"  # the team's quota pool is HERE; THERE is $20 a node-hour cheaper
HOURS = quarter_hours(QUARTER)


def two_sites(placement: str | None = None, lending_limit: int | None = None):
    """Team `ml` holds 24 H100s of quota in pool h100 (HERE; more than it asks for); team `other`, in the same
    cohort, holds 16 in pool h100-east at THERE; on demand costs $100 a node-hour HERE and $80 THERE."""
    b = (
        make_inventory()
        .edit("teams", "ml", quotas=[{"flavor": "h100", "nominal": 24}])
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


# --- placement per flavor and quota amounts (issue 34, point 3) -------------------------------------------------------


def with_reservation(b):
    """`b` with pool `resv` HERE, a reservation of one MACHINE node (commitment `c1`, $60 a node-hour, paid whether
    used or not), where team `ml` holds no quota: it holds quota only in the on-demand pool h100 at the same site and
    machine."""
    return with_c1(b).pool("resv", machine=MACHINE, nodes=1, provisioning="reservation", commitment="c1")


def test_a_team_is_not_served_on_a_flavor_of_its_offer_where_it_holds_no_quota():
    """Under `quota`, ml pays 2 nodes on demand HERE beside the idle reservation: Kueue cannot admit it in `resv`."""
    result = run(with_reservation(two_sites()), DEMAND)
    assert result.expected_cost_usd == pytest.approx(Decimal((60 + 2 * 100) * HOURS), abs=Decimal("0.01"))
    assert {(r.tier, r.flavor) for r in result.routing} == {("on-demand", "h100")}
    assert result.moves == ()


def test_hours_on_a_flavor_without_quota_are_a_move_with_its_flavor_quota_and_saving():
    """Under `anywhere`, one of ml's nodes runs in the reservation (its hours cost nothing more) and the other THERE
    at $80: routing names both flavors, both are moves; the reservation's needs 8 accelerators of quota and saves $80 a
    node-hour (without it, that node runs THERE too)."""
    result = run(with_reservation(two_sites("anywhere")), DEMAND)
    assert result.expected_cost_usd == pytest.approx(Decimal((60 + 80) * HOURS), abs=Decimal("0.01"))
    routed = {(r.served_site, r.tier, r.flavor): r.accelerator_hours for r in result.routing}
    assert routed == {
        (HERE, "existing", "resv"): pytest.approx(8 * HOURS),
        (THERE, "on-demand", "h100-east"): 8 * HOURS,
    }
    moves = {m.flavor: m for m in result.moves}
    assert set(moves) == {"resv", "h100-east"}
    assert moves["resv"].quota_needed_accelerators == 8
    # without resv, that node runs THERE at $80 beside the other: the reservation saves $80 a node-hour
    assert moves["resv"].saving_usd == pytest.approx(Decimal(80 * HOURS), abs=Decimal("0.01"))


def test_a_quota_cut_changes_the_plan_in_the_first_quarter():
    """ml asks 16 H100s every hour of two quarters. Its nominal quota cut from 24 to 8 (nobody in its cohort holds h100
    to lend): in the first quarter Kueue admits 8 and the rest waits (unmet); the second quarter runs on the quotas
    the plan proposes, all served."""
    second = "2027Q2"
    demand = curves("ml", [QUARTER, second], level=16, accelerator="H100-80GB")
    full = run(two_sites(), demand)
    cut = run(two_sites().edit("teams", "ml", quotas=[{"flavor": "h100", "nominal": 8}]), demand)
    assert full.unmet_demand == ()
    [unmet] = cut.unmet_demand
    assert (unmet.quarter, unmet.peak_accelerators) == (QUARTER, pytest.approx(8))
    assert unmet.expected_accelerator_hours == pytest.approx(8 * HOURS)
    assert cut.expected_cost_usd < full.expected_cost_usd


@pytest.mark.parametrize(
    ("lending_limit", "other_level", "want_unmet"),
    [
        (None, 0, 0),  # other lends all of its idle 16: ml borrows the 8 beyond its nominal
        (4, 0, 4),  # other lends at most 4
        (None, 12, 4),  # other uses 12 of its 16: only 4 are unused to lend
    ],
)
def test_borrowing_stays_within_what_the_cohort_lends(lending_limit, other_level, want_unmet):
    """ml holds 8 in h100 and may borrow without limit; `other`, in its cohort, holds 16 in h100 too. In the first
    quarter ml runs 8 of its own and borrows what other lends out of its unused quota, within its lending limit; the
    rest of the two teams' demand waits."""
    other = {"flavor": "h100", "nominal": 16}
    if lending_limit is not None:
        other["lending_limit"] = lending_limit
    b = (
        make_inventory()
        .add("prices", **price(MACHINE, "on-demand", 100, site=HERE))
        .team("other", cohort="org", quotas={})
        .edit("teams", "other", quotas=[other])
    )
    demand = pd.concat(
        [
            DEMAND,
            curves("other", [QUARTER], level=other_level, accelerator="H100-80GB"),
        ],
        ignore_index=True,
    )
    result = run(b, demand)
    # the cohort's demand beyond what Kueue admits waits (which team's waits the plan does not choose)
    unmet = sum((r.peak_accelerators for r in result.unmet_demand), 0.0)
    assert unmet == pytest.approx(want_unmet, abs=1e-6)


def test_on_the_example_every_hour_off_its_teams_quota_is_a_listed_move():
    """`qm plan inventory/` (default options, placement `quota`): each routed hour names its flavor; where its team
    holds no quota there (a nominal, or a borrowing limit in a cohort), the team and flavor are in moves.csv with the
    quota they need."""
    inventory = load(INVENTORY, run_checks=False).inventory
    result = plan(inventory, PlanOptions(resolve_shadow_prices=False))
    held = {
        t.name: {q.flavor for q in t.quotas if q.nominal > 0 or (t.cohort and q.borrowing_limit != 0)}
        for t in inventory.teams
    }
    moves = {(m.team, m.flavor): m for m in result.moves}
    assert result.routing
    for r in result.routing:
        assert r.flavor, r
        if r.flavor not in held[r.team]:
            assert (r.team, r.flavor) in moves, r
            assert moves[(r.team, r.flavor)].quota_needed_accelerators > 0


def test_a_commitment_assumed_above_metered_says_whose_hours_raise_it():
    """Issue 34, point 4. c1's node (8 H100s) HERE held 2 of ml's accelerators in each of 2 metered hours: metered
    0.25. The plan fills it: ml's 4 (2 more than it held: a forecast rise; it holds quota in h100, the pool c1
    discounts) and 4 of `guest`, which holds no quota anywhere (a move). Assumed 1.0."""
    b = with_c1(two_sites()).team("guest", quotas={})
    for hour in ("2026-10-01T00:00:00", "2026-10-01T01:00:00"):
        b.add(
            "usage", hour=hour, cluster="gke-a", team="ml", flavor="h100", accelerators_used=2, accelerators_requested=2
        )
    demand = pd.concat(
        [curves(t, [QUARTER], level=4, accelerator="H100-80GB") for t in ("ml", "guest")], ignore_index=True
    )
    result = run(b, demand)
    [row] = result.commitment_utilisation
    assert (row.assumed_utilisation, row.metered_utilisation) == (pytest.approx(1.0), pytest.approx(0.25))
    assert row.rise_by == "guest +4.0 (move); ml +2.0 (forecast rise)"
    [pool] = [u for u in result.offer_utilisation if u.machine == MACHINE and u.site == HERE]
    assert pool.committed_accelerator_hours == pytest.approx(8 * HOURS)
    assert (pool.utilisation, pool.metered_utilisation) == (pytest.approx(1.0), pytest.approx(0.25))
