"""Step 3 of the planner: solve with HiGHS (in-process, through highspy) or CBC (through PuLP), and say what came out.

HiGHS takes the model's arrays (PlanModel.lp) in one session (`HighsSession`): the LP relaxation, the rounded
re-solve, branch-and-bound and the LP with the integers fixed. CBC takes PuLP's problem, derived from the same
arrays (PlanModel.prob, as `--write-lp` writes it). PuLP's own status is not enough (docs/benchmarks.md, solver
facts): it says "Optimal" when CBC stops at its time limit holding only a feasible solution. So the outcome is taken
from `prob.sol_status` (CBC) or HiGHS's model and primal solution status, and mapped to a typed `Outcome`; the
objective is read only when a solution exists. Shadow prices are the duals of the LP with the integer decisions
fixed.
"""

from __future__ import annotations

import functools
import os
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

import highspy
import numpy as np
import pulp

from quartermaster.plan_contract import Outcome
from quartermaster.planner.program import BudgetCurves, Floats, Ints, LinearProgram, PlanModel, ranges

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
    status: str  # the solver's status text, for the record
    objective: float | None
    bound: float | None  # best proven lower bound (HiGHS), if known
    gap: float | None  # relative gap (objective - bound) / objective, if known
    seconds: float
    note: str = ""
    stages: tuple[tuple[str, float], ...] = ()  # (stage, seconds) of the solver runs behind this report
    path: str = ""  # how HighsSession solved the LP relaxation (components, budget prices, the whole LP)

    @property
    def cost(self) -> float:
        """The objective of a solve that found a plan (asking one without is a programming error)."""
        if self.objective is None:
            raise ValueError(f"the solve ended {self.outcome} without an objective")
        return self.objective


# Measured on the example (bench/planner_bench.py): HiGHS's restarts after root presolve re-run the cut loop
# and took 10-20 s for a model whose best plan is found in 2 s; without them it proves the gap in ~3 s.
HIGHS_MIP_OPTIONS = {"mip_allow_restart": False}
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
# Budget prices (HighsSession): at most this many passes over the components, fewer once every budget row's price is
# bracketed within this share; a price not yet bracketed moves by this share, doubled each pass; then the priced
# whole LP by the dual simplex (simplex_strategy 1) from the components' basis, which presolve would discard.
# Chosen on the bench's small and medium sizes: the model's first guess is within 2-4 % of the optimal duals (median
# over the rows), and six passes leave the priced LP a short dual-simplex run from that basis.
BUDGET_PRICE_PASSES = 6
BUDGET_PRICE_TOLERANCE = 0.005
BUDGET_PRICE_STEP = 0.02
PRICED_LP_OPTIONS: dict[str, str | int] = {"presolve": "off", "solver": "simplex", "simplex_strategy": 1}
BudgetStart = Literal["predicted", "slack-first"]
"""Where HighsSession's budget prices start: predicted where a budget is below the least its demand can be charged
(else as slack-first), or always from the components' solution at no prices (`slack-first`, for the bench and tests)."""


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


def _cbc(time_limit_s: float, gap_rel: float, threads: int | None, mip: bool) -> pulp.LpSolver:
    """CBC (bundled with PuLP) with the plan's stopping rules."""
    return pulp.PULP_CBC_CMD(msg=False, mip=mip, timeLimit=time_limit_s, gapRel=gap_rel, threads=threads)


def highs_lp(
    lp: LinearProgram,
    cols: Ints | None = None,
    rows: Ints | None = None,
    col_lower: Floats | None = None,
    col_upper: Floats | None = None,
    *,
    integer: bool = False,
) -> highspy.HighsLp:
    """The problem as HiGHS takes it: the columns `cols` and rows `rows` (all by default; each row's columns among
    `cols`, in the order of `cols`), indexed from 0, with the column bounds `col_lower`, `col_upper` if given; the
    LP relaxation, or with `integer` the integer decisions marked. The objective's constant is left out (HiGHS's
    objective is the variable cost; SolveReport adds the constant back)."""
    cols = np.arange(lp.num_cols) if cols is None else cols
    rows = np.arange(lp.num_rows) if rows is None else rows
    lower = lp.col_lower if col_lower is None else col_lower
    upper = lp.col_upper if col_upper is None else col_upper
    local = np.full(lp.num_cols, -1, dtype=np.int32)
    local[cols] = np.arange(len(cols), dtype=np.int32)
    lengths = np.diff(lp.start)[rows]
    entries = np.repeat(lp.start[rows], lengths) + ranges(lengths)
    out = highspy.HighsLp()
    out.num_col_, out.num_row_ = len(cols), len(rows)
    out.col_cost_, out.col_lower_, out.col_upper_ = lp.cost[cols], lower[cols], upper[cols]
    out.row_lower_, out.row_upper_ = lp.row_lower[rows], lp.row_upper[rows]
    out.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    out.a_matrix_.start_ = np.concatenate(([0], np.cumsum(lengths))).astype(np.int32)
    out.a_matrix_.index_ = local[lp.index[entries]]
    out.a_matrix_.value_ = lp.value[entries]
    if integer:
        kind = highspy.HighsVarType
        out.integrality_ = [kind.kInteger if i else kind.kContinuous for i in lp.integer[cols].tolist()]
    return out


def solve(model: PlanModel, *, relax: bool = False, prices: BudgetStart = "predicted") -> SolveReport:
    """Solve the problem (or, with `relax`, its LP relaxation) and map the status to an Outcome.

    The MILP is solved relax-and-round first: the LP relaxation gives a lower bound, its integer decisions
    rounded to whole units (PlanModel.whole: slices up, the rest to the nearest) and the rest re-optimised
    give a plan. When that plan is within
    `gap_rel` of the bound it is proven good enough and returned; otherwise the MILP solver runs for the
    remaining time and the better of the two plans is kept. On generated enterprise problems the rounded
    plan is within 0.05 % of the LP bound while HiGHS's own search was still 0.2 % away after 60 s
    (bench/planner_bench.py). With HiGHS every stage runs in one session (HighsSession): the LP relaxation handed
    over by independent component, the re-optimisation changing only the bounds of the integer columns from the
    relaxation's basis (its duals kept for the shadow prices: `fix_integers_and_resolve` does not solve again), and
    branch-and-bound on the same arrays. `prices` says where the session's budget prices start when a budget binds
    (BudgetStart).
    """
    start = time.perf_counter()
    integers = model.integers()
    if model.data.options.solver == "cbc":
        return _solve_cbc(model, integers, relax, start)
    session = HighsSession(model, prices)
    model.session = session
    if not len(integers):  # the LP is the problem: solved, it is its own bound, its duals the shadow prices
        session.fixed = session.run("LP")
        bound = relaxation_bound(session.fixed)
        return _elapsed(replace(session.fixed, bound=bound, gap=None if bound is None else 0.0), start)
    lp = session.run("relaxation")
    if relax or not lp.outcome.has_plan:
        return _elapsed(lp, start)
    rounded = model.whole(integers)
    fixed = session.fix(integers, rounded)
    note = "; ".join(x for x in dict.fromkeys((lp.note, fixed.note)) if x)
    fixed = replace(fixed, stages=lp.stages + fixed.stages, path=f"{lp.path}; {fixed.path}", note=note)
    if _proven(fixed, relaxation_bound(lp), model.data.options.gap_rel):
        session.fixed = fixed
        return _report(fixed, Outcome.OPTIMAL, fixed.cost, lp.cost, start, "relax-and-round")
    return _branch_and_bound(model, integers, lp, fixed, rounded, start)


def _solve_cbc(model: PlanModel, integers: Ints, relax: bool, start: float) -> SolveReport:
    """`solve` with CBC: each stage a CBC run on PuLP's problem, the integer decisions made continuous (and fixed at
    their rounded values for the re-optimisation) for the LP stages."""
    if relax:
        return _run_cbc(model, mip=False)
    if not len(integers):
        return _run_cbc(model, mip=True)
    lp = _with_integers(model, integers, None, lambda: _run_cbc(model, mip=False))
    if not lp.outcome.has_plan:
        return _elapsed(lp, start)
    rounded = model.whole(integers)
    fixed = _with_integers(model, integers, rounded, lambda: _run_cbc(model, mip=False))
    fixed = replace(fixed, stages=(("relaxation", lp.seconds), ("rounded re-solve", fixed.seconds)))
    if _proven(fixed, relaxation_bound(lp), model.data.options.gap_rel):
        return _report(fixed, Outcome.OPTIMAL, fixed.cost, lp.cost, start, "relax-and-round")
    return _branch_and_bound(model, integers, lp, fixed, rounded, start)


def branch_and_bound(model: PlanModel, time_limit_s: float | None = None) -> SolveReport:
    """The MILP solver's own search on the whole problem, for `time_limit_s` (default: the plan's time limit)."""
    limit = time_limit_s or model.data.options.time_limit_s
    if model.data.options.solver == "cbc":
        return _run_cbc(model, mip=True, time_limit_s=limit)
    if not isinstance(model.session, HighsSession):
        model.session = HighsSession(model)
    return model.session.branch_and_bound(limit)


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
    mip = branch_and_bound(model, remaining)
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
    without the budget rows, so when it keeps every budget row it is optimal for the whole LP (those rows' duals 0).

    When a budget binds, the budget rows are priced (docs/explanation/planning.md, *How HiGHS solves it*): prices
    lambda >= 0 from a few passes over the components with costs c + B'lambda (each warm from the last), then the
    whole LP at those prices, min (c + B'lambda)x + lambda s subject to Bx + s = b, s >= 0 and the other rows,
    which is the LP shifted by the constant lambda b for any lambda >= 0, solved by the dual simplex from the
    components' joint basis. Budgets start priced (`start` "predicted") where the model shows one below the least
    its demand can be charged at full service (PlanModel.budget_curves), else (and with `start` "slack-first")
    from the components' joint solution at lambda = 0 when it breaks a budget. When a component or the priced LP does
    not end optimal, in explain mode (whose overrun columns make the prices unbounded), or when the matrix does not
    fall apart, the whole LP is solved as one problem, cold, and the session keeps it from then on. `path` says
    which way the last run took.
    """

    def __init__(self, model: PlanModel, start: BudgetStart = "predicted"):
        self.model, lp = model, model.lp
        self.start_prices = start
        self.n_col, self.n_row = lp.num_cols, lp.num_rows
        self.cost = lp.cost
        self.col_lower, self.col_upper = lp.col_lower.copy(), lp.col_upper.copy()  # fix() changes them
        self.row_lower, self.row_upper = lp.row_lower, lp.row_upper
        self.start, self.index, self.value = lp.start, lp.index, lp.value
        self.budget_rows = np.flatnonzero(lp.rows_of("budget"))
        self.parts: list[tuple[np.ndarray, np.ndarray]] | None = None
        self.prices: Floats | None = None  # lambda on the budget rows when the LP held is the priced whole LP
        self.path = ""
        self.highs: list[highspy.Highs] = []  # the LP's instances (by component, or the whole LP), set up by run()
        self.search: tuple[highspy.Highs, Ints] | None = None  # branch-and-bound's instance and its column order
        self.fixed: SolveReport | None = None  # the LP with the integers fixed, once solved (its duals loaded)

    def _set_up(self) -> None:
        """The LP's HiGHS instances: one per independent component when the matrix falls apart, else the whole LP."""
        self.parts = _components(self.start, self.index, self.model.lp.rows_of(*LINKING_FAMILIES), self.n_col)
        if self.parts is None:
            self._solve_whole()
            return
        self.highs = [self._highs(self._lp(cols, rows), HIGHS_COMPONENT_OPTIONS) for cols, rows in self.parts]
        outside = np.ones(self.n_row, dtype=bool)
        for _, rows in self.parts:
            outside[rows] = False
        self.linking = np.flatnonzero(outside)

    def _lp(self, cols: np.ndarray, rows: np.ndarray) -> highspy.HighsLp:
        """The LP of the columns `cols` and rows `rows`, with the column bounds as they stand (fix changes them)."""
        return highs_lp(self.model.lp, cols, rows, self.col_lower, self.col_upper)

    def _highs(self, lp: highspy.HighsLp, options: Mapping[str, str | int] | None = None) -> highspy.Highs:
        """A HiGHS instance holding `lp`, with the LP options (and `options` on top)."""
        opts = self.model.data.options
        highs = _new_highs(opts.threads, opts.time_limit_s, {**HIGHS_LP_OPTIONS, **(options or {})})
        highs.passModel(lp)
        return highs

    def _solve_whole(self) -> None:
        """From now on, the whole LP as one HiGHS problem (its column bounds as they stand), cold."""
        self.parts, self.prices = None, None
        self.highs = [self._highs(self._lp(np.arange(self.n_col), np.arange(self.n_row)))]

    def run(self, stage: str) -> SolveReport:
        """Solve the LP as it stands; the outcome from HiGHS's statuses, values and row duals written to the model."""
        start = time.perf_counter()
        solution, notes = None, []
        if not self.highs:
            self._set_up()
        if self.parts is not None:
            solution = self._run_by_components()
            if solution is None and self.prices is None:  # a component is not optimal, or a budget cannot be priced
                self._solve_whole()
        elif self.prices is None:
            self.path = "the whole LP"
        if solution is None:
            solution = self._run_whole()
        if solution is None:  # the priced whole LP did not end optimal: the cold whole LP decides
            self._solve_whole()
            self.path = "the whole LP, cold (the priced whole LP did not end optimal)"
            solution = self._run_whole()
        if solution is None:
            raise AssertionError("the unpriced whole LP always gives a solution")
        if self.path.startswith(("budget prices", f"the whole LP, cold ({BUDGET_BINDS}")):
            notes.append(f"budgets bind; LP relaxation: {self.path}")
        outcome, status, objective, col_value, _, _, row_dual = solution
        timed_out = self.highs[0].getModelStatus() == highspy.HighsModelStatus.kTimeLimit
        if timed_out and not outcome.has_plan:
            notes.insert(0, time_limit_note(self.model.data.options.time_limit_s))
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
            "; ".join(notes),
            stages=((stage + parts, seconds),),
            path=self.path,
        )

    def _run_whole(self) -> tuple[Any, ...] | None:
        """(outcome, status text, objective without the constant, column values and duals, row values and duals) of
        the whole LP held; for the priced LP mapped back to the LP's own (None when it did not end optimal)."""
        highs = self.highs[0]
        cpu = time.process_time()
        highs.run()
        status, info = highs.getModelStatus(), highs.getInfo()
        outcome = _outcome(highs)
        solution = highs.getSolution()
        col_value, col_dual = np.asarray(solution.col_value), np.asarray(solution.col_dual)
        row_value, row_dual = np.asarray(solution.row_value), np.asarray(solution.row_dual)
        objective = info.objective_function_value
        if self.prices is not None:
            if status != highspy.HighsModelStatus.kOptimal:
                return None
            # back from min (c + B'lambda)x + lambda s, Bx + s = b: the objective less lambda b, the budget rows'
            # values Bx = b - s and duals less lambda (the reduced costs are the same)
            rows, unspent = self.budget_rows, col_value[self.n_col :]
            objective -= float(self.prices @ self.row_upper[rows])
            row_value, row_dual = row_value.copy(), row_dual.copy()
            row_value[rows] -= unspent
            row_dual[rows] -= self.prices
            col_value, col_dual = col_value[: self.n_col], col_dual[: self.n_col]
            done = f"{info.simplex_iteration_count:,} iterations, {_cpu_since(cpu)}"
            first = self.path.startswith("budget prices") and self.path.endswith("their basis")
            self.path = f"{self.path} ({done})" if first else f"the priced whole LP, warm ({done})"
        return (outcome, highs.modelStatusToString(status), objective, col_value, col_dual, row_value, row_dual)

    def _run_by_components(self) -> tuple[Any, ...] | None:
        """The components' joint solution if it is the LP's optimum; else None, with the priced whole LP set up
        (self.prices) when a budget binds, or for the cold whole LP when a component is not optimal or the budgets
        cannot be priced (explain mode)."""
        n = len(self.parts or [])
        priceable = (
            not self.model.data.options.explain_infeasible
            and len(self.budget_rows) > 0
            and np.all(np.isin(self.linking, self.budget_rows) | (np.diff(self.start)[self.linking] == 0))
            and np.all(np.isinf(self.row_lower[self.budget_rows]))
        )
        curves, prices, how = None, None, ""
        if priceable and self.start_prices == "predicted":
            curves = self.model.budget_curves()
            below = curves.limit < curves.least_charge() * (1 - 1e-9)
            if below.any():
                prices, how = np.where(below, curves.prices_for(curves.limit), 0.0), "predicted"
        if prices is None:
            cpu = time.process_time()
            joint = self._solve_parts()
            if joint is None:
                self.path = "the whole LP, cold (a component did not end optimal)"
                return None
            objective, col_value, col_dual, row_value, row_dual = joint
            activity = self._linking_activity(col_value)
            if self._holds(activity):
                row_value[self.linking] = activity
                self.path = f"{n} components"
                return (Outcome.OPTIMAL, "Optimal", objective, col_value, col_dual, row_value, row_dual)
            if not priceable:
                why = "explain mode" if self.model.data.options.explain_infeasible else "a linking row is no budget"
                self.path = f"the whole LP, cold ({BUDGET_BINDS}; not priced: {why})"
                return None
            curves = curves or self.model.budget_curves()
            spend = self._budget_spend(col_value)
            none = np.zeros(len(spend))
            prices = np.where(spend > curves.limit + _slack_allowed(curves.limit), _guess(curves, spend, none), 0.0)
            how = f"from the slack solve, {_cpu_since(cpu)}"
        self._priced(curves or self.model.budget_curves(), prices, how)
        return None  # the priced whole LP is set up (self.prices), or the passes failed and the cold whole LP decides

    def _priced(self, curves: BudgetCurves, prices: Floats, how: str) -> None:
        """Lagrangian passes over the components from `prices`, then the priced whole LP set up from their joint basis
        (self.prices); nothing set up when a component does not end optimal."""
        cpu = time.process_time()
        low, high = np.zeros(len(prices)), np.full(len(prices), np.inf)
        step = np.full(len(prices), BUDGET_PRICE_STEP)
        passes = 0
        for passes in range(1, BUDGET_PRICE_PASSES + 1):
            joint = self._solve_parts(prices, cold=passes == 1)
            if joint is None:
                self.path = "the whole LP, cold (a component did not end optimal at the budget prices)"
                return
            spend = self._budget_spend(joint[1])
            gap = spend - curves.limit
            over, under = gap > _slack_allowed(curves.limit), gap < 0
            # each row's price is bracketed: above the prices it was over its budget at, below those it was under at
            low = np.where(over, np.maximum(low, prices), low)
            high = np.where(under & (prices > 0), np.minimum(high, prices), high)
            settled = (high <= low * (1 + BUDGET_PRICE_TOLERANCE)) | ((prices == 0) & ~over) | (~over & ~under)
            if settled.all() or passes == BUDGET_PRICE_PASSES:
                break
            bracketed = np.isfinite(high) & (low > 0)
            moved = np.where(
                bracketed,
                np.sqrt(low * np.where(bracketed, high, 1.0)),
                np.where(over, prices * (1 + step), high / (1 + step)),
            )
            if np.any(over & (prices == 0)):  # a budget broken at no price: its first guess from the curves
                moved = np.where(over & (prices == 0), _guess(curves, spend, prices), moved)
            prices = np.where(settled, prices, moved)
            step = np.where(bracketed, step, 2 * step)  # widened until the row's price is bracketed
        parts = self.parts or []
        self.path = (
            f"budget prices ({how}): {passes} passes over {len(parts)} components ({_cpu_since(cpu)}), "
            "then the whole LP from their basis"
        )
        self._solve_priced(prices)

    def _solve_parts(self, prices: Floats | None = None, cold: bool = False) -> tuple[Any, ...] | None:
        """Each component solved, with costs c + B'prices on the budget rows if given, from its last basis unless
        `cold`: (objective, column values and duals, row values and duals) jointly, or None when one is not optimal.

        The first priced pass is cold: from the basis of no prices, whose costs the prices multiply (budget prices
        are tens of USD per USD), the simplex took 4-5x a cold solve at medium size (bench/planner_bench.py)."""
        n_col, n_row = self.n_col, self.n_row
        col_value, col_dual = np.zeros(n_col), np.zeros(n_col)
        row_value, row_dual = np.zeros(n_row), np.zeros(n_row)
        cost = None if prices is None else self.cost + self._shift(prices)
        objective = 0.0
        for highs, (cols, rows) in zip(self.highs, self.parts or [], strict=True):
            if cost is not None:
                highs.changeColsCost(len(cols), np.arange(len(cols), dtype=np.int32), cost[cols])
            if cold:
                highs.clearSolver()
            highs.run()
            if highs.getModelStatus().name != "kOptimal":
                return None
            solution = highs.getSolution()
            col_value[cols], col_dual[cols] = solution.col_value, solution.col_dual
            row_value[rows], row_dual[rows] = solution.row_value, solution.row_dual
            objective += highs.getInfo().objective_function_value
        return objective, col_value, col_dual, row_value, row_dual

    def _shift(self, prices: Floats) -> Floats:
        """B'prices: each column's cost added by the prices on the budget rows."""
        y = np.zeros(self.n_row)
        y[self.budget_rows] = prices
        return self.model.lp.transposed_times(y)

    def _linking_activity(self, col_value: Floats) -> Floats:
        """The values of the rows outside the components at `col_value`."""
        rows = self.linking
        lengths = np.diff(self.start)[rows]
        entries = np.repeat(self.start[rows], lengths) + ranges(lengths)
        products = self.value[entries] * col_value[self.index[entries]]
        activity = np.bincount(np.repeat(np.arange(len(rows)), lengths), weights=products, minlength=len(rows))
        return np.asarray(activity, dtype=float)

    def _budget_spend(self, col_value: Floats) -> Floats:
        """Each budget row's value at `col_value`."""
        activity = np.zeros(self.n_row)
        activity[self.linking] = self._linking_activity(col_value)
        return activity[self.budget_rows]

    def _holds(self, activity: Floats) -> bool:
        """Whether the rows outside the components hold at these values."""
        upper, lower = self.row_upper[self.linking], self.row_lower[self.linking]
        tolerance = 1e-7 * np.maximum(1.0, np.abs(np.where(np.isinf(upper), 0, upper)))
        return not (np.any(activity > upper + tolerance) or np.any(activity < lower - tolerance))

    def _solve_priced(self, prices: Floats) -> None:
        """From now on, the priced whole LP (see the class), its basis the components' joint one: dual feasible, and
        primal infeasible only in the budget rows (their logicals basic, the unspent budget s at 0)."""
        rows = self.budget_rows
        col_status = np.empty(self.n_col + len(rows), dtype=object)
        row_status = np.full(self.n_row, highspy.HighsBasisStatus.kBasic, dtype=object)
        for highs, (cols, part_rows) in zip(self.highs, self.parts or [], strict=True):
            basis = highs.getBasis()
            col_status[cols] = basis.col_status
            row_status[part_rows] = basis.row_status
        col_status[self.n_col :] = highspy.HighsBasisStatus.kLower
        whole = self._lp(np.arange(self.n_col), np.arange(self.n_row))
        whole.col_cost_ = self.cost + self._shift(prices)
        row_lower = self.row_lower.copy()
        row_lower[rows] = self.row_upper[rows]
        whole.row_lower_ = row_lower
        highs = self._highs(whole, PRICED_LP_OPTIONS)
        n = len(rows)
        highs.addCols(n, prices, np.zeros(n), np.full(n, np.inf), n, np.arange(n, dtype=np.int32), rows, np.ones(n))
        basis = highspy.HighsBasis()
        basis.col_status, basis.row_status, basis.valid = col_status.tolist(), row_status.tolist(), True
        highs.setBasis(basis)
        self.parts, self.prices, self.highs = None, prices, [highs]

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

    def branch_and_bound(self, time_limit_s: float) -> SolveReport:
        """HiGHS's own search on the whole problem (the integer decisions integer, their bounds as built) for
        `time_limit_s`; its plan written to the model's solution, without duals (`fix_integers_and_resolve` solves
        the LP with its integers fixed).

        The columns go in name order, the order in which PuLP gives them to CBC: HiGHS's search depends on the
        column order, and both solvers then search the same problem. HiGHS's objective leaves out the constant (the
        fixed cost of existing commitments), so an absolute gap of gap_rel x that constant keeps the stopping rule
        relative to the whole expected cost."""
        lp, opts = self.model.lp, self.model.data.options
        names = lp.col_names
        order = np.array(sorted(range(self.n_col), key=names.__getitem__), dtype=np.int64)
        gaps: dict[str, str | int | float] = {"mip_rel_gap": opts.gap_rel}
        if lp.constant:
            gaps["mip_abs_gap"] = opts.gap_rel * abs(lp.constant)
        highs = _new_highs(opts.threads, time_limit_s, {**gaps, **HIGHS_MIP_OPTIONS})
        highs.passModel(highs_lp(lp, order, integer=True))
        self.search, self.fixed = (highs, order), None
        start = time.perf_counter()
        highs.run()
        seconds = time.perf_counter() - start
        outcome, info = _outcome(highs), highs.getInfo()
        objective = bound = gap = None
        note = ""
        if outcome.has_plan:
            x = np.zeros(self.n_col)
            x[order] = highs.getSolution().col_value
            self.model.x, self.model.pi = x, np.zeros(self.n_row)
            objective = info.objective_function_value + lp.constant
            bound = info.mip_dual_bound + lp.constant
            gap = (objective - bound) / abs(objective) if objective else 0.0
        elif highs.getModelStatus() == highspy.HighsModelStatus.kTimeLimit:
            note = time_limit_note(opts.time_limit_s)
        status = highs.modelStatusToString(highs.getModelStatus())
        return SolveReport(
            outcome, "highs", status, objective, bound, gap, seconds, note, (("branch-and-bound", seconds),)
        )

    def fix_searched(self, cols: Ints, fixed: Floats) -> SolveReport:
        """After branch-and-bound: the LP with the integer columns `cols` fixed at `fixed`, in the search's instance
        (its column order), cold; the relaxation's basis is no start for the search's plan."""
        if self.search is None:
            raise ValueError("no branch-and-bound in this session to fix the integers of")
        highs, order = self.search
        lp, opts = self.model.lp, self.model.data.options
        lower, upper = lp.col_lower.copy(), lp.col_upper.copy()
        lower[cols] = upper[cols] = fixed
        highs.setOptionValue("time_limit", float(opts.time_limit_s))
        highs.passModel(highs_lp(lp, order, col_lower=lower, col_upper=upper))
        start = time.perf_counter()
        highs.run()
        seconds = time.perf_counter() - start
        outcome = _outcome(highs)
        objective = None
        note = ""
        if outcome.has_plan:
            solution = highs.getSolution()
            x = np.zeros(self.n_col)
            x[order] = solution.col_value
            self.model.x, self.model.pi = x, np.asarray(solution.row_dual, dtype=float)
            objective = highs.getInfo().objective_function_value + lp.constant
        elif highs.getModelStatus() == highspy.HighsModelStatus.kTimeLimit:
            note = time_limit_note(opts.time_limit_s)
        status = highs.modelStatusToString(highs.getModelStatus())
        return SolveReport(outcome, "highs", status, objective, None, None, seconds, note, (("fixed LP", seconds),))


def _new_highs(threads: int | None, time_limit_s: float, options: Mapping[str, str | int | float]) -> highspy.Highs:
    """A HiGHS instance, quiet, with the plan's threads and time limit and `options`."""
    _quiet_highs_banner()
    highs = highspy.Highs()
    highs.setOptionValue("output_flag", False)
    if threads is not None:
        highs.setOptionValue("threads", threads)
    highs.setOptionValue("time_limit", float(time_limit_s))
    for key, val in options.items():
        highs.setOptionValue(key, val)
    return highs


def _outcome(highs: highspy.Highs) -> Outcome:
    """The outcome of HiGHS's last run: from its model status, else (a limit reached) whether it holds a plan."""
    feasible = highs.getInfo().primal_solution_status == highspy.SolutionStatus.kSolutionStatusFeasible
    return _FROM_HIGHS_STATUS.get(highs.getModelStatus().name, Outcome.FEASIBLE if feasible else Outcome.NO_SOLUTION)


def _cpu_since(cpu: float) -> str:
    return f"{time.process_time() - cpu:.1f} s CPU"


BUDGET_BINDS = "a budget binds"


def _guess(curves: BudgetCurves, spend: Floats, prices: Floats) -> Floats:
    """The prices at which the curves, moved by what the components' plan at `prices` is charged beyond them, meet
    each budget."""
    return curves.prices_for(curves.limit - (spend - curves.charge_at(prices)))


def _slack_allowed(limit: Floats) -> Floats:
    """How far a budget row may be over on the components' joint solution and still hold (HighsSession._holds)."""
    return 1e-7 * np.maximum(1.0, np.abs(limit))


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
    return replace(
        base,
        outcome=outcome,
        objective=objective,
        bound=bound,
        gap=gap,
        seconds=time.perf_counter() - start,
        note=note,
    )


def _elapsed(report: SolveReport, start: float) -> SolveReport:
    return replace(report, seconds=time.perf_counter() - start)


def _run_cbc(model: PlanModel, *, mip: bool, time_limit_s: float | None = None) -> SolveReport:
    """One CBC run on PuLP's problem; the outcome read from `sol_status`, the objective only when there is a plan."""
    opts = model.data.options
    limit = time_limit_s or opts.time_limit_s
    start = time.perf_counter()
    try:
        model.prob.solve(_cbc(limit, opts.gap_rel, opts.threads, mip))
    except pulp.PulpSolverError as exc:
        return SolveReport(
            Outcome.NO_SOLUTION, "cbc", f"solver error: {exc}", None, None, None, time.perf_counter() - start
        )
    seconds = time.perf_counter() - start
    outcome = _FROM_SOL_STATUS.get(model.prob.sol_status, Outcome.NO_SOLUTION)
    note = ""
    if outcome == Outcome.NO_SOLUTION and seconds >= limit:  # CBC's status does not say why it stopped
        note = time_limit_note(opts.time_limit_s)  # the user's limit, not what was left of it
    objective = pulp.value(model.prob.objective) if outcome.has_plan else None
    if outcome.has_plan:
        model.load_pulp_solution()
    return SolveReport(
        outcome,
        "cbc",
        pulp.LpStatus[model.prob.status],
        objective,
        None,
        None,
        seconds,
        note,
        (("branch-and-bound" if mip else "LP", seconds),),
    )


def fix_integers_and_resolve(model: PlanModel) -> SolveReport:
    """Fix every integer decision at its value and solve the remaining LP, for duals (shadow prices).

    With HiGHS, when the last solve of the session was that fixed LP (relax-and-round's plan, or a problem without
    integer decisions), its duals are already loaded: it is not solved again.
    """
    integers = model.integers()
    session = model.session
    if isinstance(session, HighsSession):
        if session.fixed is None:
            whole = model.whole(integers)
            session.fixed = session.fix_searched(integers, whole) if session.search else session.fix(integers, whole)
        return session.fixed
    for var, value in zip(model.pulp_columns(integers), model.whole(integers).tolist(), strict=True):
        var.lowBound = var.upBound = value
        var.cat = pulp.constants.LpContinuous
    return _run_cbc(model, mip=False)
