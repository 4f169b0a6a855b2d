"""Step 3 of the planner: solve with HiGHS (in-process, through highspy) or CBC, and say what came out.

PuLP's own status is not enough (PLANNING.md, solver facts): it says "Optimal" when CBC stops at its time
limit holding only a feasible solution, and HiGHS's objective reads 0 when there is no solution. So the
outcome is taken from `prob.sol_status` and mapped to a typed `Outcome`; the objective is read only when
a solution exists. Shadow prices come from a second, linear solve with the integer decisions fixed.
"""

from __future__ import annotations

import enum
import time
from dataclasses import dataclass

import pulp

from planner.model import PlanModel


class Outcome(enum.StrEnum):
    """What the solver produced."""

    OPTIMAL = "optimal"  # proven within the gap tolerance
    FEASIBLE = "feasible"  # a plan, but the solver stopped (time limit) before proving the gap
    INFEASIBLE = "infeasible"  # no plan satisfies every business rule
    UNBOUNDED = "unbounded"
    NO_SOLUTION = "no-solution"  # stopped without any plan (time limit, solver error)

    @property
    def has_plan(self) -> bool:
        return self in (Outcome.OPTIMAL, Outcome.FEASIBLE)


_FROM_SOL_STATUS = {
    pulp.constants.LpSolutionOptimal: Outcome.OPTIMAL,
    pulp.constants.LpSolutionIntegerFeasible: Outcome.FEASIBLE,
    pulp.constants.LpSolutionInfeasible: Outcome.INFEASIBLE,
    pulp.constants.LpSolutionUnbounded: Outcome.UNBOUNDED,
    pulp.constants.LpSolutionNoSolutionFound: Outcome.NO_SOLUTION,
}


@dataclass(frozen=True)
class SolveReport:
    """The typed result of one solve."""

    outcome: Outcome
    solver: str
    status: str  # PuLP's status text, for the record
    objective: float | None
    bound: float | None  # best proven lower bound (HiGHS), if known
    gap: float | None  # relative gap (objective - bound) / objective, if known
    seconds: float
    note: str = ""


# Measured on the example (bench/planner_bench.py): HiGHS's restarts after root presolve re-run the cut loop
# and took 10-20 s for a model whose best plan is found in 2 s; without them it proves the gap in ~3 s.
HIGHS_OPTIONS = {"mip_allow_restart": False}


def make_solver(name: str, *, time_limit_s: float, gap_rel: float, threads: int | None, mip: bool = True,
                fixed_cost: float = 0.0) -> tuple[str, pulp.LpSolver]:
    """The requested solver, or CBC when HiGHS (highspy) is not installed.

    PuLP hands HiGHS the objective without its constant (the fixed cost of existing commitments), so a
    relative gap would be measured on the variable part only; an absolute gap of gap_rel x fixed cost
    keeps the stopping rule relative to the whole expected cost.
    """
    if name == "highs" and pulp.HiGHS(msg=False).available():
        return "highs", pulp.HiGHS(msg=False, mip=mip, timeLimit=time_limit_s, gapRel=gap_rel,
                                   gapAbs=gap_rel * abs(fixed_cost) or None, threads=threads, **HIGHS_OPTIONS)
    return "cbc", pulp.PULP_CBC_CMD(msg=False, mip=mip, timeLimit=time_limit_s, gapRel=gap_rel, threads=threads)


def solve(model: PlanModel, *, relax: bool = False) -> SolveReport:
    """Solve the problem (or its LP relaxation) and map the status to an Outcome."""
    opts = model.data.options
    fixed_cost = model.prob.objective.constant
    solver_name, solver = make_solver(opts.solver, time_limit_s=opts.time_limit_s, gap_rel=opts.gap_rel,
                                      threads=opts.threads, mip=not relax, fixed_cost=fixed_cost)
    note = "" if solver_name == opts.solver else f"{opts.solver} is not available; solved with {solver_name}"
    start = time.perf_counter()
    try:
        model.prob.solve(solver)
    except pulp.PulpSolverError as exc:
        if solver_name == "cbc":
            return SolveReport(Outcome.NO_SOLUTION, solver_name, f"solver error: {exc}", None, None, None,
                               time.perf_counter() - start, note)
        solver_name, solver = make_solver("cbc", time_limit_s=opts.time_limit_s, gap_rel=opts.gap_rel,
                                          threads=opts.threads, mip=not relax)
        note = f"HiGHS failed ({exc}); solved with CBC"
        model.prob.solve(solver)
    seconds = time.perf_counter() - start
    outcome = _FROM_SOL_STATUS.get(model.prob.sol_status, Outcome.NO_SOLUTION)
    objective = pulp.value(model.prob.objective) if outcome.has_plan else None
    bound = gap = None
    if solver_name == "highs" and outcome.has_plan and not relax:
        info = model.prob.solverModel.getInfo()
        if info.mip_node_count >= 0:  # a MIP was solved (an LP reports -1)
            bound = info.mip_dual_bound + fixed_cost
            gap = (objective - bound) / abs(objective) if objective else 0.0
    return SolveReport(outcome, solver_name, pulp.LpStatus[model.prob.status], objective, bound, gap, seconds, note)


def fix_integers_and_resolve(model: PlanModel) -> SolveReport:
    """Fix every integer decision at its value and solve the remaining LP, for duals (shadow prices)."""
    for var in model.prob.variables():
        if var.cat == pulp.constants.LpInteger:
            value = round(var.varValue or 0.0)
            var.lowBound = var.upBound = value
            var.cat = pulp.constants.LpContinuous
    return solve(model, relax=True)


def relax_integers(model: PlanModel) -> None:
    """Make every integer decision continuous (the LP relaxation, for the bench's MILP/LP ratio)."""
    for var in model.prob.variables():
        var.cat = pulp.constants.LpContinuous
