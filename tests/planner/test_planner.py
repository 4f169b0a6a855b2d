"""The planner against results known in closed form, solved by the real MILP solver (HiGHS)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pandas as pd
import pytest
from pydantic import ValidationError

from quartermaster.model import PriceRow
from quartermaster.planner import Outcome, PlanInputError, load_result
from quartermaster.planner.solve import SolveReport, relaxation_bound
from quartermaster.units import quarter_hours
from tests.planner.planning import MACHINE, SITE, curves, make_tpu_inventory, one_site, price, run, usd_of, with_cud

Q1 = ["2027Q1"]
H1 = quarter_hours("2027Q1")  # 2,160 hours
C_ON_DEMAND = 10.0


def newsvendor_level(hourly: list[int], ratio: float) -> int:
    """Reference: the smallest R whose share of hours with demand above R is at most c_commit / c_on_demand."""
    return next(r for r in range(max(hourly) + 1) if sum(d > r for d in hourly) / len(hourly) <= ratio)


UNIFORM = list(range(1, 101))  # 1..100 GPUs, one hour each
BIMODAL = [10] * 60 + [50] * 40  # a quiet base and a busy plateau
SPIKY = [20] * 80 + list(range(21, 41))  # a flat base with a ramp of peaks


@pytest.mark.parametrize(
    ("shape", "hourly", "ratio", "want"),
    [
        ("uniform", UNIFORM, 0.305, 70),  # P(D > 70) = 0.30 <= 0.305 < P(D > 69) = 0.31
        ("uniform", UNIFORM, 0.555, 45),
        ("uniform", UNIFORM, 0.805, 20),
        ("bimodal", BIMODAL, 0.305, 50),  # the plateau is busy 40 % of hours > 30.5 %: commit to all of it
        ("bimodal", BIMODAL, 0.555, 10),  # ... < 55.5 %: commit only to the base
        ("spiky", SPIKY, 0.155, 25),  # P(D > 25) = 0.15
        ("spiky", SPIKY, 0.305, 20),  # the base is always busy; no peak hour pays
        ("spiky", SPIKY, 0.055, 35),
    ],
)
def test_commitment_is_the_critical_fractile_of_the_load_duration_curve(shape, hourly, ratio, want):
    """One machine, one site: commit to the (1 - c_commit / c_on_demand) quantile of hourly demand."""
    assert newsvendor_level(hourly, ratio) == want
    inventory = one_site(on_demand=C_ON_DEMAND, commit_12=f"{ratio * C_ON_DEMAND:.4f}")
    result = run(inventory, curves("ml", Q1, hourly=hourly))
    assert result.outcome == Outcome.OPTIMAL
    bought = result.frame("purchase_schedule")
    assert bought["nodes"].sum() == want
    if want:
        assert list(bought[["start_quarter", "pricing_model", "term_months"]].iloc[0]) == ["2027Q1", "commit", 12]


def test_three_year_terms_cover_the_stable_base_and_one_year_terms_the_band_above():
    """40 GPUs for three years plus 30 more in the first year: 3y for 40, 1y for 30."""
    quarters = [f"{y}Q{q}" for y in (2027, 2028, 2029) for q in (1, 2, 3, 4)]
    demand = curves("ml", quarters, level=40.0)
    demand.loc[demand["quarter"].str.startswith("2027"), "level"] = 70.0
    result = run(one_site(on_demand=10, commit_12=6.5, commit_36=4.4), demand)
    got = {(r.term_months, r.start_quarter): r.nodes for r in result.frame("purchase_schedule").itertuples()}
    assert got == {(36, "2027Q1"): 40, (12, "2027Q1"): 30}
    assert result.frame("kpis")["coverage"].tolist() == [1.0] * 12


def test_a_term_spans_its_quarters_and_then_must_be_renewed():
    """A 1y commitment bought in 2027Q1 is paid in 2027Q1-Q4 and not after; 2028 needs a new one."""
    quarters = ["2027Q1", "2027Q2", "2027Q3", "2027Q4", "2028Q1", "2028Q2"]
    result = run(one_site(on_demand=10, commit_12=6), curves("ml", quarters, level=10.0))
    got = [(r.start_quarter, r.nodes, r.end) for r in result.purchase_schedule]
    assert got == [("2027Q1", 10, dt.date(2028, 1, 1)), ("2028Q1", 10, dt.date(2029, 1, 1))]
    for q in quarters:
        assert usd_of(result.cost_by_quarter, quarter=q, pricing_model="commit") == Decimal(10 * 6 * quarter_hours(q))
    first = result.frame("purchase_schedule").iloc[0]
    assert first["monthly_usd"] == Decimal("43800.000000")  # 10 nodes x $6 x 730 h
    assert first["total_liability_usd"] == Decimal("525600.000000")  # x the 8,760 hours of 2027


@pytest.mark.parametrize(
    ("preemptible", "max_spot", "want_spot"),
    [
        (0.3, 1.0, 30),  # the preemptible 30 % runs on spot
        (0.3, 0.2, 20),  # policy.max_spot_share caps it lower
        (0.0, 1.0, 0),  # nothing tolerates preemption
    ],
)
def test_spot_serves_only_the_preemptible_share(preemptible, max_spot, want_spot):
    inventory = one_site(on_demand=10, spot=2).policy(max_spot_share=max_spot)
    result = run(inventory, curves("ml", Q1, level=100.0, preemptible_share=preemptible))
    costs = result.cost_by_quarter
    assert usd_of(costs, pricing_model="spot") == Decimal(want_spot * 2 * H1)
    assert usd_of(costs, pricing_model="on-demand") == Decimal((100 - want_spot) * 10 * H1)


def test_residency_keeps_a_team_at_its_sites_even_when_another_is_cheaper():
    inventory = (
        one_site(on_demand=10)
        .site("gcp-us-east4", provider="gcp", region="us-east4", zones=["us-east4-a"])
        .add("prices", **price(MACHINE, "on-demand", 4, site="gcp-us-east4"))
        .team("resident", cost_center="CC-2", sites=[SITE])
    )
    demand = pd.concat([curves("ml", Q1, level=10.0), curves("resident", Q1, level=10.0)], ignore_index=True)
    result = run(inventory, demand)
    by_team = result.cost_by_team
    assert usd_of(by_team, team="resident") == Decimal(10 * 10 * H1)  # held at us-central1
    assert usd_of(by_team, team="ml") == Decimal(10 * 4 * H1)  # free to use the cheaper us-east4
    pinned = run(inventory, curves("ml", Q1, level=10.0, site=SITE))  # a demand row pinned to a site
    assert usd_of(pinned.cost_by_team, team="ml") == Decimal(10 * 10 * H1)


def test_a_cheaper_capped_offer_is_used_up_to_its_cap_and_the_dearer_uncapped_one_for_the_rest():
    """Pay-per-use pruning keeps what a plan may need: on-demand at 8 capped at 3 nodes, at 10 uncapped."""
    inventory = (
        one_site(on_demand=10)
        .site(
            "gcp-us-east4",
            provider="gcp",
            region="us-east4",
            zones=["us-east4-a"],
            supply_caps=[{"machine": MACHINE, "pricing_model": "on-demand", "max_nodes": 3}],
        )
        .add("prices", **price(MACHINE, "on-demand", 8, site="gcp-us-east4"))
    )
    result = run(inventory, curves("ml", Q1, level=10.0))
    assert usd_of(result.cost_by_quarter, pricing_model="on-demand") == Decimal((3 * 8 + 7 * 10) * H1)
    assert result.frame("unmet_demand").empty


def test_a_budget_caps_a_cost_centre_and_the_rest_is_reported_unmet():
    inventory = one_site(on_demand=10).policy(budgets=[{"cost_center": "CC-1", "quarter": "2027Q1", "usd": 108000}])
    result = run(inventory, curves("ml", Q1, level=10.0))
    (budget,) = result.budget_status  # to the cent, as every view shows it (budget_status.budget_status)
    assert (budget.basis, budget.usd, budget.over) == ("planned", Decimal("108000.00"), False)
    assert result.frame("unmet_demand")["expected_accelerator_hours"].tolist() == [5 * H1]  # half of 10 GPUs unmet


def test_existing_commitments_are_used_first_and_only_the_rest_is_bought():
    inventory = with_cud(one_site(on_demand=10, commit_12=6), count=8, usd_per_node_hour="4", start="2026-07-01")
    result = run(inventory, curves("ml", Q1, level=10.0))
    assert result.frame("purchase_schedule")["nodes"].tolist() == [2]
    assert usd_of(result.cost_by_quarter, pricing_model="existing-commitments") == Decimal(8 * 4 * H1)


def test_tpu_commitments_come_in_whole_slices():
    """20 chips of v6e demand (5 nodes of 4 chips), 16-chip slices of 4 nodes, on demand too: two committed slices
    (8 nodes x $4.88 = $39.04 an hour) beat one committed and one on-demand slice (4 x 4.88 + 4 x 10.80 = $62.72)."""
    inventory = (
        make_tpu_inventory()
        .add("prices", **price("ct6e-standard-4t", "on-demand", "10.80"))
        .add("prices", **price("ct6e-standard-4t", "commit", "4.88", term=12))
    )
    result = run(inventory, curves("ml", Q1, level=20.0, accelerator="TPU-v6e"))
    assert result.frame("purchase_schedule")[["nodes", "accelerators"]].values.tolist() == [[8, 32]]
    assert usd_of(result.cost_by_quarter, pricing_model="on-demand") == 0


@pytest.mark.parametrize(
    ("hourly", "slices", "room"),
    [
        ([4, 20], [1, 2], True),  # half the hours 4 chips (1 slice), half 20 (2 slices): room in both
        ([16, 32], [1, 2], False),  # every slice full: the next chip costs a node's price / 4 chips
    ],
)
def test_pay_per_use_tpu_nodes_are_bought_in_whole_slices(hourly, slices, room):
    """On demand only, $10.80 a 4-chip node, 4-node slices: each half of the quarter pays for its whole slices,
    used or not; the quota proposed is the peak in whole slices (16 chips each); an idle slice's room is free."""
    inventory = make_tpu_inventory().add("prices", **price("ct6e-standard-4t", "on-demand", "10.80"))
    result = run(inventory, curves("ml", Q1, hourly=hourly, accelerator="TPU-v6e"))
    assert result.unmet_demand == ()
    want = sum(Decimal(H1) / 2 * n * 4 * Decimal("10.80") for n in slices)
    assert usd_of(result.cost_by_quarter, pricing_model="on-demand") == pytest.approx(want, abs=Decimal("0.01"))
    assert [(q.flavor, q.nominal) for q in result.proposed_quotas] == [("v6e", 16 * max(slices))]
    shadow = result.frame("shadow_prices")["usd_per_accelerator_hour"].tolist()
    assert shadow == [Decimal("0.000000") if room else Decimal("10.80") / 4]


def test_shadow_price_is_the_on_demand_price_per_accelerator_when_nothing_else_is_sold():
    result = run(one_site(on_demand=10), curves("ml", Q1, level=10.0))
    assert result.frame("shadow_prices")["usd_per_accelerator_hour"].tolist() == [Decimal("10.000000")]


def test_shadow_price_is_zero_where_an_existing_commitment_has_idle_nodes_and_on_demand_where_it_is_full():
    """20 committed nodes: idle under a load of 10 (the next accelerator is free), full under 30 (on-demand)."""
    inventory = with_cud(one_site(on_demand=10), count=20, usd_per_node_hour="6")
    idle = run(inventory, curves("ml", Q1, level=10.0))
    full = run(inventory, curves("ml", Q1, level=30.0))
    assert idle.frame("shadow_prices")["usd_per_accelerator_hour"].tolist() == [Decimal("0.000000")]
    assert full.frame("shadow_prices")["usd_per_accelerator_hour"].tolist() == [Decimal("10.000000")]


def test_a_supply_cap_below_existing_commitments_is_infeasible_and_says_which_rule_gave():
    inventory = with_cud(one_site(on_demand=10, commit_12=6), count=10, usd_per_node_hour="6").edit(
        "sites", SITE, supply_caps=[{"machine": MACHINE, "pricing_model": "commit", "max_nodes": 6}]
    )
    result = run(inventory, curves("ml", Q1, level=10.0))
    assert result.outcome == Outcome.INFEASIBLE
    assert result.frame("relaxed_rules")[["rule", "where", "amount"]].values.tolist() == [
        ["supply_cap_excess", f"{SITE}/{MACHINE}/commit/2027Q1", 4.0]
    ]


def test_what_if_demand_and_price_change_the_plan():
    base = run(one_site(on_demand=10), curves("ml", Q1, level=10.0))
    more = run(
        one_site(on_demand=10), curves("ml", Q1, level=10.0), what_if=("demand=+20%", f"price:{SITE}/{MACHINE}=-10%")
    )
    assert base.expected_cost_usd == Decimal(10 * 10 * H1)
    assert more.expected_cost_usd == Decimal(12 * 9 * H1)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("demand=lots", "is not a percentage"),
        ("lose-site=gcp-us-centrl1", "Did you mean `gcp-us-central1`?"),
        ("budget=+5%", "unknown target"),
    ],
)
def test_a_bad_what_if_is_a_plan_input_error(spec, message):
    with pytest.raises(PlanInputError, match=message):
        run(one_site(on_demand=10), curves("ml", Q1, level=1.0), what_if=(spec,))


def test_min_utilisation_keeps_new_commitments_busy():
    """Without the rule the uniform 1..100 curve commits to 45 GPUs at 55.5 %; busy >= 90 % allows fewer."""
    inventory = one_site(on_demand=10, commit_12=5.55)
    result = run(inventory, curves("ml", Q1, hourly=UNIFORM), min_utilisation=0.9)
    nodes = int(result.frame("purchase_schedule")["nodes"].sum())
    assert nodes < 45
    assert result.frame("kpis")["utilisation"].iloc[0] >= 0.9


def test_a_written_plan_reads_back_the_same(tmp_path):
    result = run(one_site(on_demand=10, commit_12=6, spot=3), curves("ml", Q1, hourly=UNIFORM, preemptible_share=0.2))
    result.write(tmp_path)
    again = load_result(tmp_path)
    assert again == result  # every field and typed row, exactly (issue 14)
    assert again.purchase_schedule and again.shadow_prices
    first = (tmp_path / "plan.json").read_text()
    result.write(tmp_path)
    assert (tmp_path / "plan.json").read_text() == first
    # routing: all L4 demand on the one L4 offer, its expected hours as kpis count them
    assert {(r.accelerator, r.served_accelerator) for r in again.routing} == {("L4", "L4")}
    assert sum(r.accelerator_hours for r in again.routing) == pytest.approx(again.kpis[0].served_accelerator_hours)
    # plan.json is the plan; the CSVs are its tables for spreadsheets, not read back
    (tmp_path / "routing.csv").unlink()
    assert load_result(tmp_path) == result


@pytest.mark.parametrize(
    "level, want_coverage, want_utilisation",
    [
        # 10 nodes of load on 20 committed nodes: all of it covered; half the commitment's $120/h is used
        (10.0, 1.0, 0.5),
        # 30 nodes of load: 20 covered of 30 at the same on-demand price ($200 of $300 per hour); the commitment is full
        (30.0, round(200 / 300, 6), 1.0),
    ],
)
def test_commitment_coverage_and_utilisation_are_measured_in_dollars(level, want_coverage, want_utilisation):
    """FinOps Foundation definitions (issue 14): coverage = on-demand-equivalent spend covered by commitments /
    all on-demand-equivalent spend; utilisation = commitment spend used / commitment spend. One machine, so the
    accelerator-hour versions agree here."""
    inventory = with_cud(one_site(on_demand=10), count=20, usd_per_node_hour="6")
    kpi = run(inventory, curves("ml", Q1, level=level)).frame("kpis").iloc[0]
    assert (kpi["coverage"], kpi["utilisation"]) == (want_coverage, want_utilisation)
    assert (kpi["coverage_accelerator_hours"], kpi["utilisation_accelerator_hours"]) == (
        want_coverage,
        want_utilisation,
    )


@pytest.mark.parametrize(
    "policy, want_idle_share",
    [
        # idle $72/h of the quarter: 20 committed nodes at $6, 8 of them used (ml 6, cv 2) at the contract's $6
        ("proportional", {"ml": 54, "cv": 18}),  # 72 x 6/8 and 72 x 2/8
        ("even", {"ml": 36, "cv": 36}),
        ("owner:cv", {"ml": 0, "cv": 72}),
    ],
)
def test_idle_commitment_hours_belong_to_teams_by_the_idle_policy(policy, want_idle_share):
    """Issue 14: the plan shares idle by the same policy as `qm meter`; nothing is left on a shared line."""
    inventory = with_cud(one_site(on_demand=10).team("cv"), count=20, usd_per_node_hour="6")
    demand = pd.concat([curves("ml", Q1, level=6.0), curves("cv", Q1, level=2.0)], ignore_index=True)
    result = run(inventory, demand, idle_policy=policy)
    teams = result.frame("cost_by_team").set_index("team")
    assert set(teams.index) == {"ml", "cv"}
    for team, per_hour in want_idle_share.items():
        use = {"ml": 6, "cv": 2}[team] * 6 * H1
        assert teams.loc[team, "usage_usd"] == Decimal(use)
        assert teams.loc[team, "idle_share_usd"] == Decimal(per_hour * H1)
        assert teams.loc[team, "usd"] == Decimal(use + per_hour * H1)
    assert sum(teams["usd"], Decimal(0)) == result.frame("kpis").iloc[0]["cost_usd"] == Decimal(20 * 6 * H1)


def test_an_unknown_idle_policy_is_a_plan_input_error():
    with pytest.raises(PlanInputError, match="--idle owner:nobody: no team `nobody`"):
        run(one_site(on_demand=10), curves("ml", Q1, level=1.0), idle_policy="owner:nobody")


def test_a_horizon_past_the_calendar_is_a_plan_input_error_with_the_longest_that_fits():
    # 2100Q3 and 2100Q4 are the calendar's last two quarters (it ends on 2100-12-31), so 3q does not fit and 2q does
    with pytest.raises(PlanInputError, match=r"3 quarters from 2100Q3 ends after 2100Q4.*use --horizon 2q"):
        run(one_site(on_demand=10), curves("ml", ["2100Q3"], level=1.0), horizon=3)


def test_the_baseline_says_which_price_stands_in_where_there_is_no_on_demand_price():
    """Issue 14: an offer without an on-demand price of its own is priced in the all-on-demand baseline at the
    cheapest on-demand price of its accelerator elsewhere, or, with none anywhere, at its own price."""
    inventory = (
        one_site(commit_12=6)
        .site("gcp-us-east1", provider="gcp", region="us-east1", zones=["us-east1-b"])
        .add("prices", **price(MACHINE, "on-demand", 9, site="gcp-us-east1"))
    )
    result = run(inventory, curves("ml", Q1, level=4.0, site=SITE))
    assert result.baseline_stand_ins == (
        f"ml/L4@{SITE}: no on-demand price in the pools it holds quota in; the cheapest on-demand L4 (or equivalent) "
        "anywhere, $9.0000 per accelerator-hour, stands in",
    )
    alone = run(one_site(commit_12=6), curves("ml", Q1, level=4.0))
    assert alone.baseline_stand_ins == (
        "ml/L4: no on-demand price in the pools it holds quota in; its offers' own dearest price, $6.0000 per "
        "accelerator-hour, stands in, so it claims no savings",
    )
    assert alone.savings_rate == 0.0


@pytest.mark.parametrize(("block_price", "want_instances"), [(4, 10), (6, 0)])
def test_a_capacity_block_is_dated_paid_up_front_and_serves_only_the_hours_of_its_window(block_price, want_instances):
    """Demand 0 GPUs half the hours and 10 the other half, on demand $10 a node-hour. 2027Q1 has 2,160 hours and 12
    whole weeks: a block runs from 2027-01-01 for 84 days (2,016 hours, f = 2016 / 2160 of every hour's demand,
    since a quarter has no calendar) and costs 2,016 x price per instance. An instance saves $10 x f x 1,080 busy
    hours = $10,080: at $4 (cost $8,064) ten instances pay, the busy hours outside the window go on demand
    (10 x (1 - f) x 1,080 x $10 = $7,200); at $6 (cost $12,096) none does. The old rule spent a block's node-hours
    in the busy hours only: 64 node-weeks ($43,008 at $4) and 48 node-hours on demand, as if it knew when they were."""
    f = Decimal(2016) / Decimal(2160)
    result = run(one_site(on_demand=10, capacity_block=block_price), curves("ml", Q1, hourly=[0, 10]))
    blocks = [(p.start, p.end, p.nodes, p.node_weeks, p.upfront_usd, p.monthly_usd) for p in result.purchase_schedule]
    on_demand = usd_of(result.cost_by_quarter, pricing_model="on-demand")
    if want_instances:
        upfront = Decimal(2016 * block_price * want_instances)
        assert blocks == [(dt.date(2027, 1, 1), dt.date(2027, 3, 26), 10, 120, upfront, 0)]
        assert usd_of(result.cost_by_quarter, pricing_model="capacity-block") == upfront == Decimal(80_640)
        assert on_demand == pytest.approx(10 * (1 - f) * 1080 * 10, abs=Decimal("0.01"))  # $7,200
    else:
        assert blocks == [] and on_demand == 10 * 1080 * 10


YEAR = ["2027Q1", "2027Q2", "2027Q3", "2027Q4"]  # 8,760 hours: a 12-month term started 2027-01-01 ends with them


def commit_row(hourly: str, upfront: str = "0", used: str = "0") -> dict:
    return {
        **price(MACHINE, "commit", hourly, term=12),
        "upfront_usd_per_node": upfront,
        "usd_per_node_hour_used": used,
    }


@pytest.mark.parametrize(
    ("upfront", "want"),
    [
        (
            "50000",
            ("all", 10 * 50_000, 0),
        ),  # all upfront $50,000 a node beats 6 x 8,760 = $52,560 and 26,000 + 3 x 8,760
        ("53000", ("partial", 10 * 26_000, 10 * 3 * 730)),  # ... until it costs more than partial's $52,280
    ],
)
def test_upfront_fees_all_partial_or_none_are_compared_over_the_whole_term(upfront, want):
    """10 GPUs every hour of 2027, on demand $10 ($87,600 a node-year): three 12-month shapes of one commitment, no
    upfront at $6 an hour, all upfront, and $26,000 upfront plus $3 an hour. The cheapest per node wins for all 10."""
    inventory = (
        one_site(on_demand=10)
        .add("prices", **commit_row("6"))
        .add("prices", **commit_row("0", upfront=upfront))
        .add("prices", **commit_row("3", upfront="26000"))
    )
    result = run(inventory, curves("ml", YEAR, level=10.0))
    shape, paid_upfront, monthly = want
    (row,) = result.purchase_schedule
    assert (row.nodes, row.upfront_usd, row.monthly_usd) == (10, paid_upfront, monthly)
    assert row.usd_per_node_hour == {"all": 0, "partial": 3}[shape]
    assert row.total_liability_usd == row.in_horizon_usd == paid_upfront + row.usd_per_node_hour * 10 * 8760
    assert result.expected_cost_usd == row.total_liability_usd  # all served by the commitment
    assert usd_of(result.cost_by_quarter, quarter="2027Q1") == paid_upfront + row.usd_per_node_hour * 10 * H1
    # every hour of the term is used and the fee is spread over the term's 8,760 hours: fully utilised every quarter
    assert [result.kpi(q).utilisation for q in YEAR] == [1.0] * 4


def test_a_fixed_fee_plus_a_rate_per_hour_used_pays_where_a_flat_rate_does_not():
    """10 GPUs half the hours of 2027 (4,380 hours), on demand $10. A flat 12-month commitment at $6 an hour costs a
    node $52,560 and saves $43,800: not bought. A fee of $2 an hour plus $4 per hour used costs $17,520 a node and
    saves (10 - 4) x 4,380 = $26,280: ten nodes, for 10 x 17,520 + 10 x 4 x 4,380 = $350,400."""
    flat = run(one_site(on_demand=10).add("prices", **commit_row("6")), curves("ml", YEAR, hourly=[0, 10]))
    assert flat.purchase_schedule == ()
    used = run(one_site(on_demand=10).add("prices", **commit_row("2", used="4")), curves("ml", YEAR, hourly=[0, 10]))
    (row,) = used.purchase_schedule
    assert (row.nodes, row.usd_per_node_hour, row.usd_per_node_hour_used) == (10, 2, 4)
    assert row.total_liability_usd == 10 * 2 * 8760  # use is not a liability
    assert used.expected_cost_usd == pytest.approx(Decimal(350_400), abs=Decimal("0.01"))
    assert usd_of(used.cost_by_quarter, pricing_model="on-demand") == 0


def test_a_rate_per_hour_used_differing_between_commitments_of_one_offer_is_refused():
    inventory = one_site(on_demand=10).add("prices", **commit_row("2", used="4")).add("prices", **commit_row("6"))
    with pytest.raises(PlanInputError, match="give different usd_per_node_hour_used"):
        run(inventory, curves("ml", YEAR, level=1.0))


def test_an_upfront_fee_on_a_pay_per_use_price_row_is_refused():
    with pytest.raises(ValidationError, match="apply to `commit` and `onprem` rows only"):
        PriceRow(**{**price(MACHINE, "on-demand", "10"), "upfront_usd_per_node": "100"})


@pytest.mark.parametrize(
    ("outcome", "want"),
    [
        (Outcome.OPTIMAL, 100.0),  # solved to optimality: no plan costs less than the relaxation
        (Outcome.FEASIBLE, None),  # stopped at its time limit on a feasible point: that point's cost bounds nothing
    ],
)
def test_only_an_optimal_lp_relaxation_is_a_lower_bound(outcome, want):
    lp = SolveReport(outcome, "highs", "", 100.0, None, None, 1.0)
    assert relaxation_bound(lp) == want
