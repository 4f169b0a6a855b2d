"""HiGHS (one highspy session) and CBC (through PuLP's problem) give the same plan: the two hand-offs of the same
arrays (planner/solve.py) agree, relax-and-round and each solver's own branch-and-bound alike."""

from __future__ import annotations

from decimal import Decimal

import pytest

from quartermaster.planner import Outcome, PlanOptions
from quartermaster.planner.build_result import collect
from quartermaster.planner.data import build_data
from quartermaster.planner.program import build_model
from quartermaster.planner.solve import branch_and_bound, fix_integers_and_resolve
from quartermaster.units import quarter_hours
from tests.planner.planning import EXACT, curves, make_tpu_inventory, one_site, price, run

SOLVERS = ["highs", "cbc"]
# CBC is PuLP's PULP_CBC_CMD, deprecated (not removed) in the PuLP pinned here
pytestmark = pytest.mark.filterwarnings("ignore:PULP_CBC_CMD is deprecated:DeprecationWarning")


def purchases(result) -> list[tuple[str, str, int, int]]:
    return sorted((p.start_quarter, p.pricing_model, p.term_months, p.nodes) for p in result.purchase_schedule)


def test_both_solvers_buy_the_same_terms_at_the_same_cost_to_the_cent():
    """40 GPUs for three years plus 30 more in 2027: 3y commitments ($4.40) for the 40, 1y ($6.50) for the 30, on
    demand ($10) for none. A person checks: 40 x 4.40 x the hours of 2027-2029 + 30 x 6.50 x the hours of 2027."""
    quarters = [f"{y}Q{q}" for y in (2027, 2028, 2029) for q in (1, 2, 3, 4)]
    demand = curves("ml", quarters, level=40.0)
    demand.loc[demand["quarter"].str.startswith("2027"), "level"] = 70.0
    inventory = one_site(on_demand=10, commit_12=6.5, commit_36=4.4).build()
    hours = {y: sum(quarter_hours(q) for q in quarters if q.startswith(y)) for y in ("2027", "2028", "2029")}
    want_cost = Decimal("4.4") * 40 * sum(hours.values()) + Decimal("6.5") * 30 * hours["2027"]
    plans = {solver: run(inventory, demand, solver=solver) for solver in SOLVERS}
    for solver, result in plans.items():
        assert (result.solver, result.outcome) == (solver, Outcome.OPTIMAL)
        assert purchases(result) == [("2027Q1", "commit", 12, 30), ("2027Q1", "commit", 36, 40)]
        assert result.expected_cost_usd == want_cost.quantize(Decimal("0.01"))


def test_both_solvers_own_branch_and_bound_find_the_same_whole_slices():
    """20 chips of v6e demand (5 nodes of 4 chips), 16-chip slices of 4 nodes: two committed slices (8 nodes x $4.88
    an hour) beat one committed and one on-demand slice (4 x 4.88 + 4 x 10.80); each solver's own search, without
    relax-and-round, and the LP with its integers fixed (the shadow prices' solve) give that plan."""
    inventory = (
        make_tpu_inventory()
        .add("prices", **price("ct6e-standard-4t", "on-demand", "10.80"))
        .add("prices", **price("ct6e-standard-4t", "commit", "4.88", term=12))
        .build()
    )
    demand = curves("ml", ["2027Q1"], level=20.0, accelerator="TPU-v6e")
    want_cost = (8 * Decimal("4.88") * quarter_hours("2027Q1")).quantize(Decimal("0.01"))
    for solver in SOLVERS:
        options = PlanOptions(start="2027Q1", horizon=1, solver=solver, **EXACT)
        model = build_model(build_data(inventory, options, demand))
        report = branch_and_bound(model)
        assert (report.solver, report.outcome) == (solver, Outcome.OPTIMAL)
        duals = fix_integers_and_resolve(model)
        assert duals.outcome == Outcome.OPTIMAL
        result = collect(model, report, duals)
        assert purchases(result) == [("2027Q1", "commit", 12, 8)], solver
        assert result.expected_cost_usd == want_cost, solver
