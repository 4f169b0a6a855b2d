"""The LP solved by independent component (planner/solve.py, issue 30 point 1): the same plan as the whole LP, and
the whole LP when a budget row, which links components, binds."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

import numpy as np
import pandas as pd
import pytest

from quartermaster.loader import load
from quartermaster.planner import PlanOptions
from quartermaster.planner import solve as solve_module
from quartermaster.planner.data import PlanData, build_data
from quartermaster.planner.model import build_model
from quartermaster.planner.solve import solve
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


def test_a_binding_budget_sends_the_solve_to_the_whole_lp(example, monkeypatch):
    # a budget of 0 USD for the first team's cost centre in the first quarter: the components, which do not see it,
    # serve that cost centre's demand, so their joint solution breaks it and the whole LP is solved instead
    cost_center = example.teams["cost_center"].iloc[0]
    budgets = pd.DataFrame([{"cost_center": cost_center, "quarter": example.first_quarter, "usd": Decimal(0)}])
    data = replace(example, budgets=budgets)
    objective, purchases, stages = relaxation(data, monkeypatch, whole=False)
    assert not any("components" in stage for stage in stages)
    want_objective, want_purchases, _ = relaxation(data, monkeypatch, whole=True)
    assert objective == pytest.approx(want_objective, rel=1e-9)
    assert purchases == pytest.approx(want_purchases, abs=1e-9)
