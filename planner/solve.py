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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

import highspy
import numpy as np
import pulp

from quartermaster.plan_result import Outcome
from quartermaster.planner.model import BudgetCurves, Floats, Ints, PlanModel, ranges

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
    path: str = ""  # how HighsSession solved the LP relaxation (components, budget prices, the whole LP)

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
# Budget prices (HighsSession): at most this many passes over the components, fewer once every budget row's price is
# bracketed within this share; a price not yet bracketed moves by this share, doubled each pass; then the priced
# whole LP by the dual simplex (simplex_strategy 1) from the components' basis, which presolve would discard.
# Chosen on the bench's small and medium sizes: the model's first guess is within 2-4 % of the optimal duals (median
# over the rows), and six passes leave the priced LP about 1,250 iterations at medium size (docs/benchmarks.md).
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


def solve(model: PlanModel, *, relax: bool = False, prices: BudgetStart = "predicted") -> SolveReport:
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
    `prices` says where the session's budget prices start when a budget binds (BudgetStart).
    """
    model.fixed_lp = None
    start = time.perf_counter()
    integers = model.integers()
    if model.data.options.solver == "highs" and pulp.HiGHS(msg=False).available() and (relax or len(integers)):
        session = HighsSession(model, prices)
        lp = session.run("relaxation")
        if relax or not lp.outcome.has_plan:
            return _elapsed(lp, start)
        rounded = model.whole(integers)
        fixed = session.fix(integers, rounded)
        note = "; ".join(x for x in dict.fromkeys((lp.note, fixed.note)) if x)
        fixed = replace(fixed, stages=lp.stages + fixed.stages, path=f"{lp.path}; {fixed.path}", note=note)
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
        self.parts: list[tuple[np.ndarray, np.ndarray]] | None = _components(
            self.start, self.index, lp.rows_of(*LINKING_FAMILIES), self.n_col
        )
        self.prices: Floats | None = None  # lambda on the budget rows when the LP held is the priced whole LP
        self.path = ""
        self.highs: list[highspy.Highs] = []
        if self.parts is None:
            self._solve_whole()
        else:
            self.highs = [self._highs(self._lp(cols, rows), HIGHS_COMPONENT_OPTIONS) for cols, rows in self.parts]
            outside = np.ones(self.n_row, dtype=bool)
            for _, rows in self.parts:
                outside[rows] = False
            self.linking = np.flatnonzero(outside)

    def _lp(self, cols: np.ndarray, rows: np.ndarray) -> highspy.HighsLp:
        """The LP of the columns `cols` and rows `rows`, with the column bounds as they stand (fix changes them)."""
        return self.model.lp.to_highs(cols, rows, self.col_lower, self.col_upper)

    def _highs(self, lp: highspy.HighsLp, options: Mapping[str, str | int] | None = None) -> highspy.Highs:
        """A HiGHS instance holding `lp`, with the LP options (and `options` on top)."""
        opts = self.model.data.options
        _quiet_highs_banner()
        highs = highspy.Highs()
        highs.setOptionValue("output_flag", False)
        if opts.threads is not None:
            highs.setOptionValue("threads", opts.threads)
        highs.setOptionValue("time_limit", float(opts.time_limit_s))
        for key, val in {**HIGHS_LP_OPTIONS, **(options or {})}.items():
            highs.setOptionValue(key, val)
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
        feasible = info.primal_solution_status == highspy.SolutionStatus.kSolutionStatusFeasible
        outcome = _FROM_HIGHS_STATUS.get(status.name, Outcome.FEASIBLE if feasible else Outcome.NO_SOLUTION)
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
