"""Step 3 of the planner: solve with HiGHS (in-process, through highspy) or CBC, and say what came out.

PuLP's own status is not enough (docs/benchmarks.md, solver facts): it says "Optimal" when CBC stops at its time
limit holding only a feasible solution, and HiGHS's objective reads 0 when there is no solution. So the
outcome is taken from `prob.sol_status` (CBC) or HiGHS's model and primal solution status, and mapped
to a typed `Outcome`; the objective is read only when a solution exists. Shadow prices are the duals of
the LP with the integer decisions fixed.
"""

from __future__ import annotations

import functools
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import highspy
import numpy as np
import pulp

from quartermaster.plan_result import Outcome
from quartermaster.planner.model import Floats, Ints, PlanModel, ranges

# HiGHS model statuses that say what happened; any other (time or iteration limit, interrupt) leaves a
# plan only if HiGHS holds a primal feasible solution.
_FROM_HIGHS_STATUS = {
    "kOptimal": Outcome.OPTIMAL,
    "kInfeasible": Outcome.INFEASIBLE,
    "kUnboundedOrInfeasible": Outcome.INFEASIBLE,
    "kUnbounded": Outcome.UNBOUNDED,
    "kNotset": Outcome.NO_SOLUTION,
    "kLoadError": Outcome.NO_SOLUTION,
    "kModelError": Outcome.NO_SOLUTION,
    "kPresolveError": Outcome.NO_SOLUTION,
    "kSolveError": Outcome.NO_SOLUTION,
    "kPostsolveError": Outcome.NO_SOLUTION,
    "kModelEmpty": Outcome.NO_SOLUTION,
    "kUnknown": Outcome.NO_SOLUTION,
}

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
    stages: tuple[tuple[str, float], ...] = ()  # (stage, seconds) of the solver runs behind this report

    @property
    def cost(self) -> float:
        """The objective of a solve that found a plan (asking one without is a programming error)."""
        if self.objective is None:
            raise ValueError(f"the solve ended {self.outcome} without an objective")
        return self.objective


# Measured on the example (bench/planner_bench.py): HiGHS's restarts after root presolve re-run the cut loop
# and took 10-20 s for a model whose best plan is found in 2 s; without them it proves the gap in ~3 s.
HIGHS_OPTIONS = {"mip_allow_restart": False}
# The LP relaxation (HighsSession), measured at enterprise size on 2 cores with HiGHS 1.16: it picks its
# serial dual simplex with or without `parallel` (21 s either way); forcing the parallel variants
# (simplex_strategy 2, 3) gave 19-25 s, within this machine's run-to-run noise; the primal simplex, the
# interior point method without crossover and PDLP did not finish in 2 minutes. `parallel` stays on so
# HiGHS may use the second core where it judges that it pays.
HIGHS_LP_OPTIONS = {"parallel": "on"}
# Each independent component (HighsSession) solved without presolve, measured at enterprise size
# (bench/planner_bench.py, 12 components, at the same load): 7.5-7.6 s CPU against 8.5-9.4 s with it, for 4.5 % more
# simplex iterations; presolve removes little from these rows (6 % of the whole LP's) and costs a pass over each
# component. Same LP objective, and the same plan on every bench and example case checked.
HIGHS_COMPONENT_OPTIONS = {"presolve": "off"}


def time_limit_note(seconds: float) -> str:
    """What a user reads when the solver stopped at its time limit without a plan, and what to do."""
    return f"the solver stopped at its time limit ({seconds:g} s) before it had a plan; raise --time-limit"


@functools.cache
def _quiet_highs_banner() -> None:
    """Construct HiGHS once with stdout closed: highspy >= 1.16 prints a licence banner (from C++, so not
    through sys.stdout) at the first construction in a process, and `qm plan`'s output is for its reader."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 1)
            highspy.Highs()
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def make_solver(
    name: str, *, time_limit_s: float, gap_rel: float, threads: int | None, mip: bool = True, fixed_cost: float = 0.0
) -> tuple[str, pulp.LpSolver]:
    """The requested solver, or CBC when HiGHS (highspy) is not installed.

    PuLP hands HiGHS the objective without its constant (the fixed cost of existing commitments), so a
    relative gap would be measured on the variable part only; an absolute gap of gap_rel x fixed cost
    keeps the stopping rule relative to the whole expected cost.
    """
    if name == "highs" and pulp.HiGHS(msg=False).available():
        _quiet_highs_banner()
        return "highs", pulp.HiGHS(
            msg=False,
            mip=mip,
            timeLimit=time_limit_s,
            gapRel=gap_rel,
            gapAbs=gap_rel * abs(fixed_cost) or None,
            threads=threads,
            **HIGHS_OPTIONS,
        )
    return "cbc", pulp.PULP_CBC_CMD(msg=False, mip=mip, timeLimit=time_limit_s, gapRel=gap_rel, threads=threads)


def solve(model: PlanModel, *, relax: bool = False) -> SolveReport:
    """Solve the problem (or, with `relax`, its LP relaxation) and map the status to an Outcome.

    The MILP is solved relax-and-round first: the LP relaxation gives a lower bound, its integer decisions
    rounded to whole units (PlanModel.whole: slices up, the rest to the nearest) and the rest re-optimised
    give a plan. When that plan is within
    `gap_rel` of the bound it is proven good enough and returned; otherwise the MILP solver runs for the
    remaining time and the better of the two plans is kept. On generated enterprise problems the rounded
    plan is within 0.05 % of the LP bound while HiGHS's own search was still 0.2 % away after 60 s
    (bench/planner_bench.py). With HiGHS the problem is handed over once (`HighsLp`, by independent component:
    HighsSession): the re-optimisation only changes the bounds of the integer columns and starts from the
    relaxation's basis, and its duals are kept for the shadow prices (`fix_integers_and_resolve` does not solve again).
    """
    model.fixed_lp = None
    start = time.perf_counter()
    integers = model.integers()
    if model.data.options.solver == "highs" and pulp.HiGHS(msg=False).available() and (relax or len(integers)):
        session = HighsSession(model)
        lp = session.run("relaxation")
        if relax or not lp.outcome.has_plan:
            return _elapsed(lp, start)
        rounded = model.whole(integers)
        fixed = session.fix(integers, rounded)
        fixed = replace(fixed, stages=lp.stages + fixed.stages)
        if _proven(fixed, relaxation_bound(lp), model.data.options.gap_rel):
            model.fixed_lp = fixed
            return _report(fixed, Outcome.OPTIMAL, fixed.cost, lp.cost, start, "relax-and-round")
        return _branch_and_bound(model, integers, lp, fixed, rounded, start)
    if relax:
        return _run(model, mip=False)
    if not len(integers):
        return _run(model, mip=True)
    lp = _with_integers(model, integers, None, lambda: _run(model, mip=False))
    if not lp.outcome.has_plan:
        return _elapsed(lp, start)
    rounded = model.whole(integers)
    fixed = _with_integers(model, integers, rounded, lambda: _run(model, mip=False))
    fixed = replace(fixed, stages=(("relaxation", lp.seconds), ("rounded re-solve", fixed.seconds)))
    if _proven(fixed, relaxation_bound(lp), model.data.options.gap_rel):
        return _report(fixed, Outcome.OPTIMAL, fixed.cost, lp.cost, start, "relax-and-round")
    return _branch_and_bound(model, integers, lp, fixed, rounded, start)


def _branch_and_bound(
    model: PlanModel,
    integers: Ints,
    lp: SolveReport,
    fixed: SolveReport,
    rounded: Floats,
    start: float,
) -> SolveReport:
    """The MILP solver for the remaining time; the better of its plan and the rounded one is kept."""
    gap_rel = model.data.options.gap_rel
    remaining = max(1.0, model.data.options.time_limit_s - (time.perf_counter() - start))
    mip = _run(model, mip=True, time_limit_s=remaining)
    bound = max((b for b in (relaxation_bound(lp), mip.bound) if b is not None), default=None)
    if mip.outcome.has_plan and (not fixed.outcome.has_plan or mip.cost <= fixed.cost):
        outcome = Outcome.OPTIMAL if mip.outcome == Outcome.OPTIMAL else Outcome.FEASIBLE
        return _report(mip, outcome, mip.cost, bound, start, "branch-and-bound")
    if fixed.outcome.has_plan:  # the rounded plan beat what the solver found in its time
        x = model.x.copy()
        x[integers] = rounded
        model.x = x
        outcome = Outcome.OPTIMAL if _proven(fixed, bound, gap_rel) else Outcome.FEASIBLE
        return _report(fixed, outcome, fixed.cost, bound, start, "relax-and-round")
    return _elapsed(mip, start)


def relaxation_bound(lp: SolveReport) -> float | None:
    """The LP relaxation's objective as a lower bound on the MILP: only when the relaxation was solved to
    optimality. A relaxation stopped early (a time limit holding a feasible point) bounds nothing."""
    return lp.cost if lp.outcome == Outcome.OPTIMAL else None


def _proven(plan: SolveReport, bound: float | None, gap_rel: float) -> bool:
    """Whether `plan` is within `gap_rel` of a proven lower `bound` (never without one)."""
    return plan.outcome.has_plan and bound is not None and plan.cost - bound <= gap_rel * abs(plan.cost)


# Constraint families whose rows tie otherwise independent parts of the model together: a cost centre's budget
# spans the keys of its teams, whatever offers serve them. Components are found without these rows, which are then
# checked on the components' joint solution.
LINKING_FAMILIES = ("budget",)


class HighsSession:
    """The LP relaxation handed to HiGHS in bulk, by independent component, and re-solved warm after the integers
    are fixed.

    The model is built as arrays (PlanModel.lp, the one place its rules are written) and handed over as they are:
    the rows as one row-wise matrix, the fixed re-solve from the relaxation's optimal basis. PuLP's own HiGHS bridge
    adds columns and rows one call at a time and starts a new solver for every solve (12 s per hand-over at
    enterprise size, then a cold solve). Values and row duals are written to the model's solution (PlanModel.x, pi).

    By component: without the budget rows (LINKING_FAMILIES) the matrix falls apart into independent components
    (demand keys and the offers their routes reach, with those offers' rows), and each is solved as its own HiGHS
    problem, whose simplex iterations are cheaper than the whole LP's. The joint solution is optimal for the LP
    without the budget rows, so when it keeps every budget row it is optimal for the whole LP (those rows' duals
    0). When a budget row is violated (a budget binds), a component is not optimal, or the matrix does not fall
    apart, the whole LP is solved as one problem (cold at that point), and the session keeps it from then on.
    """

    def __init__(self, model: PlanModel):
        self.model, lp = model, model.lp
        self.n_col, self.n_row = lp.num_cols, lp.num_rows
        self.cost = lp.cost
        self.col_lower, self.col_upper = lp.col_lower.copy(), lp.col_upper.copy()  # fix() changes them
        self.row_lower, self.row_upper = lp.row_lower, lp.row_upper
        self.start, self.index, self.value = lp.start, lp.index, lp.value
        self.parts: list[tuple[np.ndarray, np.ndarray]] | None = _components(
            self.start, self.index, lp.rows_of(*LINKING_FAMILIES), self.n_col
        )
        self.highs: list[highspy.Highs] = []
        if self.parts is None:
            self._solve_whole()
        else:
            self.highs = [self._highs(self._lp(cols, rows), HIGHS_COMPONENT_OPTIONS) for cols, rows in self.parts]

    def _lp(self, cols: np.ndarray, rows: np.ndarray) -> highspy.HighsLp:
        """The LP of the columns `cols` and rows `rows`, with the column bounds as they stand (fix changes them)."""
        return self.model.lp.to_highs(cols, rows, self.col_lower, self.col_upper)

    def _highs(self, lp: highspy.HighsLp, options: dict[str, str] | None = None) -> highspy.Highs:
        """A HiGHS instance holding `lp`, with the LP options (and `options` on top)."""
        opts = self.model.data.options
        _quiet_highs_banner()
        highs = highspy.Highs()
        highs.setOptionValue("output_flag", False)
        if opts.threads is not None:
            highs.setOptionValue("threads", opts.threads)
        highs.setOptionValue("time_limit", float(opts.time_limit_s))
        for key, val in (HIGHS_LP_OPTIONS | (options or {})).items():
            highs.setOptionValue(key, val)
        highs.passModel(lp)
        return highs

    def _solve_whole(self) -> None:
        """From now on, the whole LP as one HiGHS problem (its column bounds as they stand)."""
        self.parts = None
        self.highs = [self._highs(self._lp(np.arange(self.n_col), np.arange(self.n_row)))]

    def run(self, stage: str) -> SolveReport:
        """Solve the LP as it stands; the outcome from HiGHS's statuses, values and row duals written to the model."""
        start = time.perf_counter()
        solution = self._run_parts() if self.parts is not None else None
        if solution is None:  # one problem, or a budget binds or a component is not optimal: the whole LP decides
            if self.parts is not None:
                self._solve_whole()
            solution = self._run_whole()
        outcome, status, objective, col_value, _, _, row_dual = solution
        timed_out = self.highs[0].getModelStatus() == highspy.HighsModelStatus.kTimeLimit
        note = time_limit_note(self.model.data.options.time_limit_s) if timed_out and not outcome.has_plan else ""
        if outcome.has_plan:
            self.model.x, self.model.pi = np.asarray(col_value, dtype=float), np.asarray(row_dual, dtype=float)
        seconds = time.perf_counter() - start
        parts = f" ({len(self.parts)} components)" if self.parts is not None else ""
        return SolveReport(
            outcome,
            "highs",
            status,
            objective + self.model.lp.constant if outcome.has_plan else None,
            None,
            None,
            seconds,
            note,
            stages=((stage + parts, seconds),),
        )

    def _run_whole(self) -> tuple[Any, ...]:
        """(outcome, status text, objective without the constant, column values and duals, row values and duals)."""
        highs = self.highs[0]
        highs.run()
        status, info = highs.getModelStatus(), highs.getInfo()
        feasible = info.primal_solution_status == highspy.SolutionStatus.kSolutionStatusFeasible
        outcome = _FROM_HIGHS_STATUS.get(status.name, Outcome.FEASIBLE if feasible else Outcome.NO_SOLUTION)
        solution = highs.getSolution()
        return (
            outcome,
            highs.modelStatusToString(status),
            info.objective_function_value,
            solution.col_value,
            solution.col_dual,
            solution.row_value,
            solution.row_dual,
        )

    def _run_parts(self) -> tuple[Any, ...] | None:
        """Each component solved; their joint solution if every one is optimal and the rows outside them (budget
        rows) hold on it, else None."""
        n_col, n_row = self.n_col, self.n_row
        col_value, col_dual = np.zeros(n_col), np.zeros(n_col)
        row_value, row_dual = np.zeros(n_row), np.zeros(n_row)
        objective = 0.0
        for highs, (cols, rows) in zip(self.highs, self.parts or [], strict=True):
            highs.run()
            if highs.getModelStatus().name != "kOptimal":
                return None
            solution = highs.getSolution()
            col_value[cols], col_dual[cols] = solution.col_value, solution.col_dual
            row_value[rows], row_dual[rows] = solution.row_value, solution.row_dual
            objective += highs.getInfo().objective_function_value
        outside = np.ones(n_row, dtype=bool)
        for _, rows in self.parts or []:
            outside[rows] = False
        rows = np.flatnonzero(outside)
        lengths = np.diff(self.start)[rows]
        entries = np.repeat(self.start[rows], lengths) + ranges(lengths)
        products = self.value[entries] * col_value[self.index[entries]]
        activity = np.bincount(np.repeat(np.arange(len(rows)), lengths), weights=products, minlength=len(rows))
        tolerance = 1e-7 * np.maximum(1.0, np.abs(np.where(np.isinf(self.row_upper[rows]), 0, self.row_upper[rows])))
        if np.any(activity > self.row_upper[rows] + tolerance) or np.any(activity < self.row_lower[rows] - tolerance):
            return None
        row_value[rows] = activity
        return (Outcome.OPTIMAL, "Optimal", objective, col_value, col_dual, row_value, row_dual)

    def fix(self, cols: Ints, fixed: Floats) -> SolveReport:
        """Fix the integer columns `cols` at `fixed` and re-solve from the current basis (dual simplex)."""
        self.col_lower[cols] = self.col_upper[cols] = fixed
        for highs, part_cols in zip(self.highs, [c for c, _ in self.parts] if self.parts else [None], strict=True):
            if part_cols is None:
                here, at = cols, fixed
            else:
                local = np.searchsorted(part_cols, cols)
                inside = (local < len(part_cols)) & (part_cols[np.minimum(local, len(part_cols) - 1)] == cols)
                here, at = local[inside].astype(np.int32), fixed[inside]
            highs.changeColsBounds(len(here), here, at, at)
            highs.setOptionValue("solver", "simplex")
        return self.run("rounded re-solve")


def _components(
    start: np.ndarray, index: np.ndarray, linking: np.ndarray, n_col: int
) -> list[tuple[np.ndarray, np.ndarray]] | None:
    """The independent components of a row-wise matrix, leaving out the `linking` rows: (columns, rows) of each,
    both sorted (columns in no row are gathered in one component); None when there are fewer than two.

    Labels propagate along the rows: each column takes the least label of the rows it is in, then its label's
    label, until nothing changes; columns that share a row then share a label."""
    lengths = np.diff(start)
    rows = np.flatnonzero(~linking & (lengths > 0))
    row_lengths = lengths[rows]
    entries = np.repeat(start[rows], row_lengths) + ranges(row_lengths)
    cols = index[entries]
    firsts = np.concatenate(([0], np.cumsum(row_lengths)[:-1])).astype(np.int64)
    label = np.arange(n_col)
    while len(rows):
        row_least = np.minimum.reduceat(label[cols], firsts)
        new = label.copy()
        np.minimum.at(new, cols, np.repeat(row_least, row_lengths))
        new = new[new]
        if np.array_equal(new, label):
            break
        label = new
    in_rows = np.zeros(n_col, dtype=bool)
    in_rows[cols] = True
    rowless = np.flatnonzero(~in_rows)
    if len(rowless):  # one component for the columns no row reaches: only their bounds hold them
        label[rowless] = rowless[0]
    names, part_of_col = np.unique(label, return_inverse=True)
    if len(names) < 2:
        return None
    part_of_row = part_of_col[cols[firsts]] if len(rows) else np.zeros(0, dtype=np.int64)
    col_order = np.argsort(part_of_col, kind="stable")
    col_splits = np.cumsum(np.bincount(part_of_col, minlength=len(names)))[:-1]
    row_order = np.argsort(part_of_row, kind="stable")
    row_splits = np.cumsum(np.bincount(part_of_row, minlength=len(names)))[:-1]
    return list(zip(np.split(col_order, col_splits), np.split(rows[row_order], row_splits), strict=True))


def _with_integers(
    model: PlanModel, integers: Ints, fixed: Floats | None, run: Callable[[], SolveReport]
) -> SolveReport:
    """Run (through PuLP) with the integer decisions continuous (fixed at `fixed` values if given), then restore
    them."""
    variables = model.pulp_columns(integers)
    saved = [(v.lowBound, v.upBound) for v in variables]
    for i, v in enumerate(variables):
        v.cat = pulp.constants.LpContinuous
        if fixed is not None:
            v.lowBound = v.upBound = float(fixed[i])
    try:
        return run()
    finally:
        for v, (lo, up) in zip(variables, saved, strict=True):
            v.cat, v.lowBound, v.upBound = pulp.constants.LpInteger, lo, up


def _report(
    base: SolveReport, outcome: Outcome, objective: float, bound: float | None, start: float, how: str
) -> SolveReport:
    """The report of a plan found by `how`; with no proven bound, no gap."""
    gap = None if bound is None else (max(0.0, (objective - bound) / abs(objective)) if objective else 0.0)
    note = "; ".join(x for x in (base.note, f"plan by {how}") if x)
    return SolveReport(
        outcome, base.solver, base.status, objective, bound, gap, time.perf_counter() - start, note, base.stages
    )


def _elapsed(report: SolveReport, start: float) -> SolveReport:
    return SolveReport(
        report.outcome,
        report.solver,
        report.status,
        report.objective,
        report.bound,
        report.gap,
        time.perf_counter() - start,
        report.note,
        report.stages,
    )


def _run(model: PlanModel, *, mip: bool, time_limit_s: float | None = None) -> SolveReport:
    """One solver run; the outcome read from `sol_status`, the objective only when there is a plan."""
    opts = model.data.options
    fixed_cost = model.lp.constant
    solver_name, solver = make_solver(
        opts.solver,
        time_limit_s=time_limit_s or opts.time_limit_s,
        gap_rel=opts.gap_rel,
        threads=opts.threads,
        mip=mip,
        fixed_cost=fixed_cost,
    )
    note = "" if solver_name == opts.solver else f"{opts.solver} is not available; solved with {solver_name}"
    start = time.perf_counter()
    try:
        model.prob.solve(solver)
    except pulp.PulpSolverError as exc:
        if solver_name == "cbc":
            return SolveReport(
                Outcome.NO_SOLUTION,
                solver_name,
                f"solver error: {exc}",
                None,
                None,
                None,
                time.perf_counter() - start,
                note,
            )
        solver_name, solver = make_solver(
            "cbc", time_limit_s=time_limit_s or opts.time_limit_s, gap_rel=opts.gap_rel, threads=opts.threads, mip=mip
        )
        note = f"HiGHS failed ({exc}); solved with CBC"
        model.prob.solve(solver)
    seconds = time.perf_counter() - start
    outcome = _FROM_SOL_STATUS.get(model.prob.sol_status, Outcome.NO_SOLUTION)
    limit = time_limit_s or opts.time_limit_s
    if outcome == Outcome.NO_SOLUTION and seconds >= limit:  # CBC's status does not say why it stopped
        note = "; ".join(x for x in (note, time_limit_note(opts.time_limit_s)) if x)  # the user's limit, not the rest
    objective = pulp.value(model.prob.objective) if outcome.has_plan else None
    if outcome.has_plan:
        model.load_pulp_solution()
    bound = gap = None
    if solver_name == "highs" and outcome.has_plan and mip:
        info = model.prob.solverModel.getInfo()
        bound = info.mip_dual_bound + fixed_cost
        gap = (objective - bound) / abs(objective) if objective else 0.0
    return SolveReport(
        outcome,
        solver_name,
        pulp.LpStatus[model.prob.status],
        objective,
        bound,
        gap,
        seconds,
        note,
        (("branch-and-bound" if mip else "LP", seconds),),
    )


def fix_integers_and_resolve(model: PlanModel) -> SolveReport:
    """Fix every integer decision at its value and solve the remaining LP, for duals (shadow prices).

    When the plan came from relax-and-round with HiGHS, that fixed LP was the last solve and its duals
    are already on the constraints: it is not solved again.
    """
    if isinstance(model.fixed_lp, SolveReport):
        return model.fixed_lp
    integers = model.integers()
    for var, value in zip(model.pulp_columns(integers), model.whole(integers).tolist(), strict=True):
        var.lowBound = var.upBound = value
        var.cat = pulp.constants.LpContinuous
    return _run(model, mip=False)
