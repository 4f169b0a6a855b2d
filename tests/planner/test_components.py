"""The LP solved by independent component (planner/solve.py, issue 30 point 1): the same plan as the whole LP, and
the whole LP when a budget row, which links components, binds."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

import highspy
import numpy as np
import pandas as pd
import pytest

from quartermaster.loader import load
from quartermaster.planner import PlanOptions
from quartermaster.planner import solve as solve_module
from quartermaster.planner.data import OFFER_COLUMNS, POOL_COLUMNS, PlanData, build_data
from quartermaster.planner.program import build_model
from quartermaster.planner.solve import highs_lp, solve
from tests.paths import INVENTORY

OPTIONS = PlanOptions(start="2027Q1", what_if=("placement=anywhere",))


def test_components_are_found_without_the_linking_rows():
    # rows: {0, 1}, {1}, {2, 3}, and {0, 3} linking; column 4 is in no row
    start = np.array([0, 2, 3, 5, 7], dtype=np.int32)
    index = np.array([0, 1, 1, 2, 3, 0, 3], dtype=np.int32)
    linking = np.array([False, False, False, True])
    parts = solve_module._components(start, index, linking, 5)
    assert parts is not None
    assert [(list(cols), list(rows)) for cols, rows in parts] == [([0, 1], [0, 1]), ([2, 3], [2]), ([4], [])]


def test_one_component_is_solved_as_the_whole_lp():
    # every row joins columns 0-1-2 into one chain
    start = np.array([0, 2, 4], dtype=np.int32)
    index = np.array([0, 1, 1, 2], dtype=np.int32)
    assert solve_module._components(start, index, np.array([False, False]), 3) is None


@pytest.fixture(scope="module")
def example() -> PlanData:
    return build_data(load(INVENTORY, run_checks=False).inventory, OPTIONS)


def relaxation(
    data: PlanData, monkeypatch: pytest.MonkeyPatch, whole: bool
) -> tuple[float, dict[str, float], list[str]]:
    """The LP relaxation's objective, its integer decisions (what relax-and-round rounds) and the solver stages, by
    component or (`whole`) as one LP. The example's plan itself comes from branch-and-bound (its TPU slices), which
    solves the whole model."""
    with monkeypatch.context() as patch:
        if whole:
            patch.setattr(solve_module, "_components", lambda *args: None)
        model = build_model(data)
        report = solve(model, relax=True)
    assert report.objective is not None
    purchases = {model.lp.col_names[j]: model.value(j) for j in model.integers().tolist()}
    return report.objective, purchases, [s for s, _ in report.stages]


def test_the_example_relaxes_to_the_same_decisions_by_component_as_by_the_whole_lp(example, monkeypatch):
    objective, purchases, stages = relaxation(example, monkeypatch, whole=False)
    assert "components" in stages[0]  # the example's matrix falls apart without its budget rows
    want_objective, want_purchases, _ = relaxation(example, monkeypatch, whole=True)
    assert objective == pytest.approx(want_objective, rel=1e-9)
    assert purchases == pytest.approx(want_purchases, abs=1e-9)


def test_a_binding_budget_sends_the_solve_to_the_whole_lp_priced(example, monkeypatch):
    # a budget of 0 USD for the first team's cost centre in the first quarter: the components, which do not see it,
    # serve that cost centre's demand, so their joint solution cannot answer; the whole LP is solved, from prices on
    # its budget rows (issue 38), and gives the cold whole LP's optimum
    cost_center = example.teams["cost_center"].iloc[0]
    budgets = pd.DataFrame([{"cost_center": cost_center, "quarter": example.first_quarter, "usd": Decimal(0)}])
    data = replace(example, budgets=budgets)
    objective, purchases, stages = relaxation(data, monkeypatch, whole=False)
    assert not any("components" in stage for stage in stages)
    want_objective, want_purchases, _ = relaxation(data, monkeypatch, whole=True)
    assert objective == pytest.approx(want_objective, rel=1e-9)
    assert purchases == pytest.approx(want_purchases, abs=1e-9)


HOURS = 2160  # hours in 2027Q1 (90 days), and in each quarter of the two-team model below


def two_teams(budget_usd: float, quarters: int = 1, commit_usd: tuple[float, float] = (100.0, 100.0)) -> PlanData:
    """Two teams of one cost centre, team-0 on class A0 (on demand 2 USD/node-hour) and team-1 on A1 (4 USD), one
    accelerator per node, each with its own offer: two independent components, linked only by the cost centre's
    budget of `budget_usd` in each quarter. Demand 10 accelerators in every quarter (with `quarters` > 1 a second
    bucket at 6 for half the hours); unmet demand costs 10 USD per accelerator-hour; 1-year commitments at
    `commit_usd` per node-hour (by default too dear to buy)."""
    qs = [f"2027Q{i + 1}" for i in range(quarters)]
    buckets = [(0, 1.0, 10.0)] if quarters == 1 else [(0, 0.5, 10.0), (1, 0.5, 6.0)]
    offer = {a: f"site-a/m{a}" for a in (0, 1)}
    return PlanData(
        quarters=qs,
        hours=dict.fromkeys(qs, HOURS),
        offers=pd.DataFrame(
            [
                {
                    "offer": offer[a],
                    "site": "site-a",
                    "machine": f"m{a}",
                    "accelerator": f"A{a}",
                    "accelerators_per_node": 1,
                    "nodes_per_unit": 1,
                }
                for a in (0, 1)
            ],
            columns=OFFER_COLUMNS,
        ),
        recourse_prices=pd.DataFrame(
            [
                {"offer": offer[a], "pricing_model": "on-demand", "term_months": 0, "usd_per_node_hour": usd}
                for a, usd in ((0, 2.0), (1, 4.0))
            ]
        ),
        commit_options=pd.DataFrame(
            [
                {
                    "offer": offer[a],
                    "option": "commit_12m",
                    "pricing_model": "commit",
                    "term_months": 12,
                    "term_quarters": 4,
                    "usd_per_node_hour": Decimal(str(commit_usd[a])),
                    "upfront_usd_per_node": Decimal(0),
                    "usd_per_node_hour_used": Decimal(0),
                }
                for a in (0, 1)
            ]
        ),
        existing=pd.DataFrame(columns=["commitment", "offer", "kind", "quarter", "nodes", "usd", "usd_per_node_hour"]),
        caps=pd.DataFrame(columns=["offer", "pricing_model", "max_nodes"]),
        demand=pd.DataFrame(
            [
                {
                    "demand_key": f"team-{a}/A{a}",
                    "team": f"team-{a}",
                    "accelerator": f"A{a}",
                    "site": "",
                    "quarter": q,
                    "scenario": "s",
                    "bucket": b,
                    "weight": weight,
                    "level": level,
                    "preemptible_share": 0.0,
                }
                for a in (0, 1)
                for q in qs
                for b, weight, level in buckets
            ]
        ),
        routes=pd.DataFrame([{"demand_key": f"team-{a}/A{a}", "offer": offer[a], "ratio": 1.0} for a in (0, 1)]),
        budgets=pd.DataFrame([{"cost_center": "CC", "quarter": q, "usd": Decimal(str(budget_usd))} for q in qs]),
        scenarios={"s": 1.0},
        teams=pd.DataFrame([{"team": f"team-{a}", "cost_center": "CC", "sites": ""} for a in (0, 1)]),
        pools=pd.DataFrame(columns=POOL_COLUMNS),
        unmet_penalty=10.0,
        max_spot_share=0.5,
        options=PlanOptions(time_limit_s=60, gap_rel=1e-9),
    )


def column(model, name: str) -> float:
    return float(model.x[model.lp.col_names.index(name)])


def test_a_budget_binding_across_two_components_gives_the_optimum_worked_by_hand():
    # Serving team-0 saves 10 - 2 = 8 USD of unmet penalty per accelerator-hour for 2 USD of budget (4 per USD),
    # team-1 saves 10 - 4 = 6 for 4 USD (1.5 per USD). A budget of 40 USD an hour (86,400 USD) serves team-0's 10
    # (20 USD an hour) and buys team-1 the (40 - 20) / 4 = 5 accelerators it leaves; team-1's other 5 are unmet.
    # The components alone would serve both (60 USD an hour), so their joint solution breaks the budget.
    model = build_model(two_teams(budget_usd=40 * HOURS))
    report = solve(model)
    assert report.objective == pytest.approx(HOURS * (2 * 10 + 4 * 5 + 10 * 5), rel=1e-9)
    assert column(model, "use__team_0__A0__site_a__m0__on_demand__2027Q1__s__b0") == pytest.approx(10)
    assert column(model, "use__team_1__A1__site_a__m1__on_demand__2027Q1__s__b0") == pytest.approx(5)
    assert column(model, "unmet__team_1__A1__2027Q1__s__b0") == pytest.approx(5)
    assert column(model, "unmet__team_0__A0__2027Q1__s__b0") == pytest.approx(0)
    # the budget's shadow price: one more USD buys team-1 a quarter of an accelerator-hour, saving 6 / 4 = 1.5 USD
    assert float(model.pi[model.lp.row_names.index("budget__CC__2027Q1")]) == pytest.approx(-1.5)


def test_a_budget_binding_across_two_components_gives_what_highs_gives_on_the_whole_lp():
    # four quarters, commitments worth buying (1.2 and 2.6 USD/node-hour against 2 and 4 on demand) and a budget
    # of 30 USD an hour each quarter, below what serving both teams is charged: the planner's relaxation, whatever
    # way it takes, must equal HiGHS alone on the whole LP of the same arrays (objective and every purchase)
    model = build_model(two_teams(budget_usd=30 * HOURS, quarters=4, commit_usd=(1.2, 2.6)))
    report = solve(model, relax=True)
    lp = model.lp
    highs = highspy.Highs()
    highs.setOptionValue("output_flag", False)
    highs.passModel(highs_lp(lp))
    highs.run()
    assert highs.getModelStatus() == highspy.HighsModelStatus.kOptimal
    budgets = lp.rows_of("budget")
    assert np.all(np.asarray(highs.getSolution().row_dual)[budgets] < 0)  # every quarter's budget binds
    assert report.objective == pytest.approx(highs.getInfo().objective_function_value + lp.constant, rel=1e-9)
    purchases = np.flatnonzero(lp.integer)
    assert np.asarray(highs.getSolution().col_value)[purchases].sum() > 0  # commitments are bought
    assert model.x[purchases] == pytest.approx(np.asarray(highs.getSolution().col_value)[purchases], abs=1e-7)
