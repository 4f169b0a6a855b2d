"""Issue 26, points 3 and 5, and issue 34, point 3, as the report shows them: the plan's moves, the proposed quotas
beside today's, assumed vs metered commitment utilisation and the plan re-solved at shares of its post-horizon credit
(rows the planner writes on PlanResult)."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

from quartermaster.loader import load
from quartermaster.plan_contract import (
    CommitmentUtilisationRow,
    CreditSensitivityPurchaseRow,
    CreditSensitivityRow,
    MoveRow,
    OfferUtilisationRow,
    Outcome,
    PlanResult,
    ProposedQuotaRow,
)
from quartermaster.planner import load_result
from quartermaster.reports.finance.tables.break_even import break_even_table
from quartermaster.reports.finance.tables.placement_tables import (
    credit_table,
    moves_table,
    proposed_quotas_table,
    utilisation_table,
)
from tests.builders import make_inventory
from tests.paths import DATA as TEST_DATA
from tests.paths import INVENTORY

D = Decimal


def plan(**tables: object) -> PlanResult:
    return PlanResult(Outcome.OPTIMAL, "highs", "Optimal", D(0), D(0), D(0), 0.0, 0.0, ("2027Q1",), {}, **tables)  # type: ignore[arg-type]


def test_each_move_names_the_quota_it_needs_and_its_saving() -> None:
    move = MoveRow("search-ranking", "onprem-sjc", "dgx-h100", "H100-80GB", "dgx-h100-a", 1234.56, 16, D("41000.004"))
    table = moves_table(plan(moves=(move,), placement="anywhere", placement_saving_usd=D("52000")))
    [row] = table.rows
    assert (row["team"], row["flavor"], row["quota_needed"], row["saving"]) == (
        "search-ranking",
        "dgx-h100-a",
        16,
        D("41000.00"),
    )
    assert row["served_on"] == "H100-80GB at onprem-sjc (dgx-h100)" and row["accelerator_hours"] == D("1234.6")
    assert "placement policy: anywhere" in table.title and "52,000.00 USD" in table.note
    assert "None: every team runs on flavors where it holds quota" in moves_table(plan()).note


def test_assumed_and_metered_utilisation_side_by_side() -> None:
    # the example: the plan assumed about 88 %, October metered 61.5 %
    row = CommitmentUtilisationRow("c", "gcp-us-east4", "a3-megagpu-8g", "2027Q1", 0.88, 0.615, 744, 0.615, "metered")
    [line] = utilisation_table(plan(commitment_utilisation=(row,))).rows
    assert (line["assumed"], line["metered"], line["expected"], line["basis"]) == (
        D("0.880000"),
        D("0.615000"),
        D("0.615000"),
        "metered",
    )


def test_the_credit_shares_in_order_with_what_each_buys_first() -> None:
    rows = tuple(
        CreditSensitivityRow(share, D(cost), D(cost), D(credit), D(liability), "2027Q1", D(first))
        for share, cost, credit, liability, first in (
            (1.0, "100.004", "30", "500", "200"),
            (0.0, "130", "0", "100", "50"),
        )
    )
    bought = (CreditSensitivityPurchaseRow(0.0, "onprem-sjc", "dgx-b200", "onprem", 48, 2, 0, D(50)),)
    table = credit_table(plan(credit_sensitivity=rows, credit_sensitivity_purchases=bought))
    assert [(r["credit_share"], r["horizon_cost"], r["first_quarter_purchases"]) for r in table.rows] == [
        (D("0.000000"), D("130.00"), "2 x dgx-b200 onprem at onprem-sjc"),
        (D("1.000000"), D("100.00"), "none"),
    ]


def test_the_proposed_quotas_stand_beside_todays() -> None:
    """ml holds 8 in h100 today (no borrowing limit): the plan proposes 16; in p5-od, where it holds nothing, 8."""
    rows = (
        ProposedQuotaRow("ml", "h100", "gcp-us-central1", "a3-megagpu-8g", "2027Q1", 16, 0, 16, True),
        ProposedQuotaRow("ml", "p5-od", "aws-us-east-1", "p5.48xlarge", "2027Q1", 8, 0, 0, False),
    )
    table = proposed_quotas_table(make_inventory().build(), plan(proposed_quotas=rows))
    got = [(r["flavor"], r["nominal_today"], r["nominal"], r["borrowing_today"], r["fits_pool"]) for r in table.rows]
    assert got == [("h100", 8, 16, "no limit", "yes"), ("p5-od", 0, 8, "-", "no")]
    assert "2027Q1" in table.title
    assert "None: the plan proposes no quotas" in proposed_quotas_table(make_inventory().build(), plan()).note


def test_a_break_even_verdict_reads_its_own_site_and_machine_with_the_metered_figure() -> None:
    """Issue 34, point 4. The stored plan approves one DGX B200 in 2027Q1. Its pool's committed capacity is used 60 of
    100 accelerator-hours in 2027Q1 and 30 of 100 in 2027Q2 (a3-megagpu-8g beside it, full, does not count):
    expected (60 + 30) / 200 = 0.45, below the B200's break-even; the metered 45.9 % beside it."""
    stored = load_result(TEST_DATA / "reports" / "plan")
    approve = [r for r in stored.purchase_schedule if r.start_quarter == "2027Q1"]
    rows = (
        OfferUtilisationRow("onprem-sjc", "dgx-b200", "2027Q1", 100.0, 60.0, 0.6, 0.459005),
        OfferUtilisationRow("onprem-sjc", "dgx-b200", "2027Q2", 100.0, 30.0, 0.3, 0.459005),
        OfferUtilisationRow("gcp-us-east4", "a3-megagpu-8g", "2027Q1", 100.0, 100.0, 1.0, None),
    )
    inventory = load(INVENTORY).inventory
    [own] = break_even_table(inventory, replace(stored, offer_utilisation=rows), approve).rows
    assert (own["expected"], own["metered"]) == (D("0.45"), D("0.459005"))
    assert own["expected_of"] == "dgx-b200 at onprem-sjc"
    assert own["verdict"] == ("above break-even" if own["break_even"] <= D("0.45") else "below break-even")
    # a plan written before offer_utilisation: all commitments together, and it says so
    [old] = break_even_table(inventory, stored, approve).rows
    assert old["expected_of"].startswith("all commitments") and old["metered"] is None
