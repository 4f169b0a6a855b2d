"""Budget prices (planner/solve.py, HighsSession; issue 38): when a budget binds, the LP solved from prices on the
budget rows gives the optimum of the whole LP solved cold, whichever way the prices start, with budgets slack,
partly binding, all binding and infeasible.

The cases are the bench's generated problems (bench/planner_bench.py) at its small size; each is checked against
HiGHS alone on the whole LP's arrays, solved cold, which is what the planner did before (and still does as its
fallback)."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

import highspy
import numpy as np
import pandas as pd
import pytest

from bench.planner_bench import SIZES, generate
from quartermaster.plan_contract import Outcome
from quartermaster.planner import PlanOptions
from quartermaster.planner.data import PlanData
from quartermaster.planner.program import PlanModel, build_model
from quartermaster.planner.solve import highs_lp, solve

STARTS = ("predicted", "slack-first")


def small(variant: str) -> PlanData:
    data = generate(*SIZES["small"], variant=variant)
    return replace(data, options=PlanOptions(solver="highs", time_limit_s=300, gap_rel=1e-3))


@pytest.fixture(scope="module")
def binding() -> PlanData:
    return small("binding-budgets")


def scaled(data: PlanData, factor: dict[str, float]) -> PlanData:
    """The same problem with each cost centre's budgets multiplied by factor[cost centre] (1 if not given)."""
    budgets = data.budgets.copy()
    budgets["usd"] = [
        Decimal(f"{float(usd) * factor.get(cc, 1.0):.2f}")
        for cc, usd in zip(budgets["cost_center"], budgets["usd"], strict=True)
    ]
    return replace(data, budgets=budgets)


def cold_whole_lp(model: PlanModel) -> tuple[highspy.HighsModelStatus, float, np.ndarray]:
    """HiGHS alone on the whole LP relaxation's arrays, cold: status, objective with the constant, row duals."""
    highs = highspy.Highs()
    highs.setOptionValue("output_flag", False)
    highs.passModel(highs_lp(model.lp))
    highs.run()
    objective = highs.getInfo().objective_function_value + model.lp.constant
    return highs.getModelStatus(), objective, np.asarray(highs.getSolution().row_dual)


def relaxation(data: PlanData, prices: str) -> tuple[PlanModel, float | None, str, Outcome]:
    model = build_model(data)
    report = solve(model, relax=True, prices=prices)  # type: ignore[arg-type]
    return model, report.objective, report.path, report.outcome


def assert_same_optimum(data: PlanData, prices: str) -> tuple[str, np.ndarray]:
    """The planner's LP relaxation has the cold whole LP's objective (1e-6 relative), keeps every row, and its
    budget rows' duals are HiGHS's; returns the path and the cold duals of the budget rows."""
    model, objective, path, outcome = relaxation(data, prices)
    status, want, duals = cold_whole_lp(model)
    assert status == highspy.HighsModelStatus.kOptimal
    assert outcome == Outcome.OPTIMAL
    assert objective == pytest.approx(want, rel=1e-6)
    lp = model.lp
    activity = lp.activity(model.x)
    scale = np.maximum(1.0, np.abs(np.where(np.isinf(lp.row_upper), lp.row_lower, lp.row_upper)))
    assert np.all(activity <= lp.row_upper + 1e-6 * scale)
    assert np.all(activity >= lp.row_lower - 1e-6 * scale)
    budgets = lp.rows_of("budget")
    assert model.pi[budgets] == pytest.approx(duals[budgets], abs=1e-6)
    return path, duals[budgets]


@pytest.mark.parametrize("prices", STARTS)
def test_slack_budgets_are_solved_by_the_components_alone(prices):
    # the bench's slack variant: one budget per cost centre that no plan reaches; no price is needed
    path, duals = assert_same_optimum(small("slack"), prices)
    assert path.startswith("8 components")
    assert np.all(duals == 0)


@pytest.mark.parametrize("prices", STARTS)
def test_every_budget_binding_gives_the_cold_whole_lps_optimum(binding, prices):
    # every budget is 0.9 of the least its demand could be charged: all 40 bind, so the prices are predicted from
    # the model (or, slack-first, estimated after the components' solve at no prices)
    path, duals = assert_same_optimum(binding, prices)
    assert np.all(duals < -1)  # 33-46 USD per budget USD: every budget binds
    start = "predicted" if prices == "predicted" else "from the slack solve"
    assert path.startswith(f"budget prices ({start}"), path


@pytest.mark.parametrize("prices", STARTS)
def test_some_budgets_binding_gives_the_cold_whole_lps_optimum(binding, prices):
    # every other cost centre's budgets tripled, above what its plan is charged: those rows are slack, the rest bind
    loose = {f"CC-{c:02d}": 3.0 for c in range(0, SIZES["small"][4], 2)}
    path, duals = assert_same_optimum(scaled(binding, loose), prices)
    assert 0 < int(np.sum(duals < -1e-6)) < len(duals)
    assert path.startswith("budget prices")


@pytest.mark.parametrize("prices", STARTS)
def test_budgets_that_bind_only_on_the_plan_start_from_the_slack_solve(binding, prices):
    # each budget 2 % above the least its demand can be charged at full service (PlanModel.budget_curves): none is
    # predicted to bind, but the components' plan, which buys what costs least rather than what is charged least, is
    # charged 3-12 % above that least, so both starts price the budgets after the components' solve at no prices
    least = build_model(binding).budget_curves().least_charge()
    budgets = binding.budgets.assign(usd=[Decimal(f"{1.02 * usd:.2f}") for usd in least.tolist()])
    path, duals = assert_same_optimum(replace(binding, budgets=budgets), prices)
    assert np.any(duals < -1e-6)
    assert path.startswith("budget prices (from the slack solve")


@pytest.mark.parametrize("prices", STARTS)
def test_equivalent_classes_give_the_cold_whole_lps_optimum(prices):
    # the bench's equivalence variant: classes stand in for each other, fewer and larger components
    assert_same_optimum(small("equivalence"), prices)


@pytest.mark.parametrize("prices", STARTS)
def test_an_infeasible_budget_is_reported_infeasible(binding, prices):
    # a negative budget cannot be kept (every charge is >= 0): the whole LP is infeasible, and so is the plan
    budgets = pd.concat(
        [binding.budgets.iloc[1:], pd.DataFrame([{**binding.budgets.iloc[0].to_dict(), "usd": Decimal(-1000)}])]
    )
    data = replace(binding, budgets=budgets)
    model, objective, _, outcome = relaxation(data, prices)
    status, _, _ = cold_whole_lp(model)
    assert status == highspy.HighsModelStatus.kInfeasible
    assert outcome == Outcome.INFEASIBLE
    assert objective is None


@pytest.mark.parametrize("prices", STARTS)
def test_the_plan_from_budget_prices_is_within_the_gap_of_the_cold_lp_bound(binding, prices):
    # relax-and-round from the priced LP: the rounded re-solve runs warm on the priced whole LP; its plan keeps every
    # budget and is proven within gap_rel of the cold whole LP's bound, and the plan's note says how the LP was solved
    model = build_model(binding)
    report = solve(model, prices=prices)  # type: ignore[arg-type]
    _, bound, _ = cold_whole_lp(build_model(binding))
    assert report.outcome == Outcome.OPTIMAL
    assert report.bound == pytest.approx(bound, rel=1e-6)
    assert bound <= report.cost <= bound * (1 + binding.options.gap_rel)
    lp = model.lp
    budgets = lp.rows_of("budget")
    assert np.all(lp.activity(model.x)[budgets] <= lp.row_upper[budgets] * (1 + 1e-9))
    assert "budgets bind; LP relaxation: budget prices" in report.note
