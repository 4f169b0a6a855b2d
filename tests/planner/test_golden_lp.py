"""One golden LP file per constraint family, built from a tiny fixture (two sites, two teams, one quarter).

Regenerate after a deliberate model change with `pytest tests/planner --update-golden` and review the diff.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pulp
import pytest

from quartermaster.model import Quota
from quartermaster.planner import PlanOptions, build_data
from quartermaster.planner.program import FAMILIES, build_model
from tests.builders import make_inventory
from tests.planner.planning import MACHINE, SITE, curves, one_site, price

GOLDEN = Path(__file__).parent.parent / "data" / "planner" / "golden"


def tiny_model():
    """Two sites, a cheap one the resident team may not use; spot, 1y, capacity blocks, caps, a budget."""
    inventory = (
        one_site(on_demand=10, spot=3, commit_12=6, capacity_block=7)
        .site(
            "gcp-us-east4",
            provider="gcp",
            region="us-east4",
            zones=["us-east4-a"],
            supply_caps=[{"machine": MACHINE, "pricing_model": "commit", "max_nodes": 4}],
        )
        .edit("sites", SITE, supply_caps=[{"machine": MACHINE, "pricing_model": "spot", "max_nodes": 2}])
        .add("prices", **price(MACHINE, "on-demand", 8, site="gcp-us-east4"))
        .add("prices", **price(MACHINE, "commit", 5, term=12, site="gcp-us-east4"))
        .add(
            "commitments",
            name="old-cud",
            kind="cud",
            machine=MACHINE,
            site="gcp-us-east4",
            count=1,
            term_months=12,
            start="2026-07-01",
            usd_per_node_hour="4",
        )
        .team("resident", cost_center="CC-2", sites=[SITE])
        .policy(budgets=[{"cost_center": "CC-2", "quarter": "2027Q1", "usd": 50000}])
        .build()
    )
    demand = pd.concat(
        [
            curves("ml", ["2027Q1"], hourly=[2, 4, 4, 6], preemptible_share=0.5),
            curves("resident", ["2027Q1"], hourly=[1, 3]),
        ],
        ignore_index=True,
    )
    options = PlanOptions(start="2027Q1", horizon=1, min_utilisation=0.5, explain_infeasible=True)
    return build_model(build_data(inventory, options, demand_curves=demand))


def tiny_tpu_model():
    """One 16-chip v6e slice (4 nodes) bought on demand per bucket, for the whole_slices_cover family."""
    inventory = (
        one_site(on_demand=10)
        .add("prices", **price("ct6e-standard-4t", "on-demand", "10.80"))
        .pool("v6e", machine="ct6e-standard-4t", zones=["us-central1-a"], tpu={"topology": "4x4", "slices": 1})
        .build()
    )
    demand = curves("ml", ["2027Q1"], hourly=[4, 20], accelerator="TPU-v6e")
    return build_model(build_data(inventory, PlanOptions(start="2027Q1", horizon=1), demand_curves=demand))


def tiny_quota_model():
    """Two teams of one cohort in one on-demand pool, l4, in the first quarter: `ml` holds 2 L4s and lends at most
    1; `guest` holds none and may borrow 2."""
    inventory = (
        make_inventory()
        .pool("l4", machine=MACHINE, nodes=4)
        .edit("teams", "ml", quotas=[{"flavor": "l4", "nominal": 2, "lending_limit": 1}])
        .team("guest", cohort="org", quotas={})
        .add("prices", **price(MACHINE, "on-demand", 10))
        .build()
    )
    guest = next(t for t in inventory.teams if t.name == "guest")
    quotas = (Quota(flavor="l4", nominal=0, borrowing_limit=2),)
    inventory = inventory.model_copy(
        update={
            "teams": tuple(t if t is not guest else t.model_copy(update={"quotas": quotas}) for t in inventory.teams)
        }
    )
    demand = pd.concat(
        [curves("ml", ["2027Q1"], hourly=[1, 3]), curves("guest", ["2027Q1"], hourly=[2])], ignore_index=True
    )
    return build_model(build_data(inventory, PlanOptions(start="2027Q1", horizon=1), demand_curves=demand))


QUOTA_FAMILIES = ("quota_within_nominal_and_borrowing", "lent_within_unused_quota", "borrowed_within_lent")


@pytest.mark.parametrize("family", FAMILIES)
def test_each_constraint_family_matches_its_golden_lp_file(family, golden, tmp_path):
    if family == "whole_slices_cover":
        model = tiny_tpu_model()
    elif family in QUOTA_FAMILIES:
        model = tiny_quota_model()
    else:
        model = tiny_model()
    part = pulp.LpProblem(f"{family}_only", pulp.LpMinimize)
    part.setObjective(model.prob.objective)
    rows = [c for c in model.prob.constraints() if c.name.startswith(f"{family}__")]
    assert rows, f"the fixture has no {family} constraint"
    for row in rows:
        part.addConstraint(row, row.name)
    path = tmp_path / f"{family}.lp"
    part.writeLP(str(path))
    golden(GOLDEN / f"{family}.lp", path.read_text())


def test_the_pulp_problem_is_the_arrays_problem():
    """PuLP's problem (CBC, --write-lp, the golden files above) is derived from the arrays HiGHS is handed: the same
    columns, bounds, integrality and objective, and the same rows term by term."""
    model = tiny_model()
    lp, prob = model.lp, model.prob
    assert model.slack and model.capacity_block and model.commit  # every kind of column is present in the fixture
    variables = {v.name: v for v in prob.variables()}
    assert sorted(variables) == sorted(lp.col_names)
    for j, column in enumerate(lp.col_names):
        var = variables[column]
        assert (var.lowBound, var.upBound) == (lp.col_lower[j], None if np.isinf(lp.col_upper[j]) else lp.col_upper[j])
        assert var.cat == ("Integer" if lp.integer[j] else "Continuous")
        assert prob.objective.get(var, 0.0) == lp.cost[j]
    assert prob.objective.constant == lp.constant
    assert [c.name for c in prob.constraints()] == lp.row_names
    for i, row in enumerate(prob.constraints()):
        terms = slice(lp.start[i], lp.start[i + 1])
        assert {v.name: c for v, c in row.items()} == dict(
            zip([lp.col_names[j] for j in lp.index[terms]], lp.value[terms], strict=True)
        )
        lower = -np.inf if row.sense == pulp.LpConstraintLE else -row.constant
        upper = np.inf if row.sense == pulp.LpConstraintGE else -row.constant
        assert (lp.row_lower[i], lp.row_upper[i]) == (lower, upper)
