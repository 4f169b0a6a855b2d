"""Plan sweeps (`qm plan --sweep / --draws`): many scenarios of one inventory, each solved as its own plan, in
parallel, gathered as Arrow tables and written beside the plan.

A scenario is a point of a what-if grid crossed with a demand draw:

    --sweep 'demand=-10%,0,+10%'                     an axis: a what-if target (planner/whatif.py) and its values
    --sweep 'price:gcp-us-east4/a3-highgpu-8g=-20%,0'  a second axis: the grid is the cartesian product (3 x 2)
    --sweep 'lose-site=none,gcp-us-east5'             `none` (or 0) on an axis: that axis changes nothing
    --draws 200 --seed 7                             200 demand draws (x every grid point)

Draw d moves every demand series (data.demand_series: a team's demand for an accelerator class at a site, over
its quarters) by its own z ~ N(0, 1) in the forecast's fitted distribution (data.shifted_quantiles), drawn by
numpy's PCG64 seeded with (seed, d): the same draw for the same seed whatever the backend, the number of draws or
the order of solving. One z per series for all of its quarters (a forecast that runs high stays high); series
are independent of each other; the spread inside each quarter (the load-duration curve) is kept.

Each scenario is an independent plan (pipeline.plan) solved by HiGHS with threads=1, so that N workers keep N
cores busy. Backends: `serial` (this process), `processes` (concurrent.futures over a forkserver pool, one worker
per core; the default) and `ray` (the `ray` extra: `ray.init()` starts Ray locally or joins the cluster at
RAY_ADDRESS; one CPU per scenario).

Written (`write`): sweep.parquet / sweep.csv, one row per scenario and quarter (its planned cost);
sweep_purchases.parquet / .csv, one row per scenario and purchase; sweep.json, the settings. Every figure is on
the planned basis.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

import highspy
import numpy as np
import pyarrow as pa

from quartermaster.errors import UsageError, require_extra
from quartermaster.model import Inventory
from quartermaster.plan_contract import PlanResult
from quartermaster.planner import whatif
from quartermaster.planner.data import curves_from_quantiles, demand_series
from quartermaster.planner.options import PlanInputError, PlanOptions
from quartermaster.planner.pipeline import plan
from quartermaster.sweep_result import Scenario, Sweep, SweepSpec

BACKENDS = ("serial", "processes", "ray")
MONEY = pa.decimal128(24, 6)
"""USD as solved: PlanResult's money has 6 decimals (pricing.usd), which Arrow takes as it is."""


def parse_axis(text: str) -> tuple[str, tuple[str, ...]]:
    """`demand=-10%,0,+10%` -> ("demand", ("-10%", "0", "+10%")); the values are checked with the what-ifs."""
    target, sep, values = text.partition("=")
    items = tuple(v.strip() for v in values.split(",") if v.strip())
    if not sep or not target.strip() or not items:
        raise PlanInputError(
            f"--sweep `{text}`: write a what-if target and its values, e.g. "
            f"--sweep 'demand=-10%,0,+10%' (targets: {whatif.FORMS})"
        )
    if len(set(items)) < len(items):
        raise PlanInputError(f"--sweep `{text}` repeats a value; give each once")
    return target.strip(), items


def spec_of(axes: Sequence[str], draws: int, seed: int) -> SweepSpec:
    """The sweep of `--sweep` axes and `--draws`/`--seed`; a mistake raises PlanInputError."""
    if draws < 0 or seed < 0:
        raise PlanInputError(f"--draws and --seed must be 0 or more (got --draws {draws} --seed {seed})")
    grid = tuple(parse_axis(a) for a in axes)
    targets = [t for t, _ in grid]
    if len(set(targets)) < len(targets):
        raise PlanInputError(f"--sweep names a target twice ({', '.join(targets)}); give all its values in one axis")
    return SweepSpec(grid, draws, seed)


def draw_shifts(inventory: Inventory, seed: int, draw: int) -> dict[tuple[str, str, str, str], float]:
    """z per demand series of draw `draw` (see the module docstring)."""
    series = sorted({demand_series(d) for d in inventory.demand})
    z = np.random.default_rng([seed, draw]).standard_normal(len(series))
    return dict(zip(series, (float(v) for v in z), strict=True))


@dataclass(frozen=True)
class Job:
    """What every worker needs: the inventory, the plan's options and the seed of the draws."""

    inventory: Inventory
    options: PlanOptions
    seed: int


@dataclass(frozen=True)
class ScenarioResult:
    """What a worker sends back: the scenario's outcome, planned cost per quarter and purchases."""

    scenario: Scenario
    outcome: str
    expected_cost_usd: Decimal | None
    quarter_costs: tuple[tuple[str, Decimal | None], ...]
    purchases: tuple[dict[str, Any], ...]
    seconds: float
    cpu_seconds: float


def solve_scenario(job: Job, scenario: Scenario) -> ScenarioResult:
    """Plan one scenario, single-threaded (threads=1)."""
    start, cpu = time.perf_counter(), time.process_time()
    # HiGHS keeps one thread pool per process, sized by the first solve; a solve asking for another size fails
    # (no solution) until the pool is reset, as in `serial` after the plan itself was solved on every core.
    highspy.Highs.resetGlobalScheduler(True)
    options = replace(
        job.options,
        what_if=job.options.what_if + scenario.what_if,
        threads=1,
        credit_shares=(),
        resolve_shadow_prices=False,
    )
    curves = None
    if scenario.draw is not None:
        curves = curves_from_quantiles(
            job.inventory, options.bands, draw_shifts(job.inventory, job.seed, scenario.draw)
        )
    result = plan(job.inventory, options, demand_curves=curves)
    costs = {k.quarter: k.cost_usd for k in result.kpis} if result.has_plan else {}
    purchases = (
        tuple(
            {
                "site": p.site,
                "machine": p.machine,
                "pricing_model": p.pricing_model,
                "term_months": p.term_months,
                "start_quarter": p.start_quarter,
                "nodes": p.nodes,
                "accelerators": p.accelerators,
                "total_liability_usd": p.total_liability_usd,
            }
            for p in result.purchase_schedule
        )
        if result.has_plan
        else ()
    )
    return ScenarioResult(
        scenario,
        str(result.outcome),
        result.expected_cost_usd if result.has_plan else None,
        tuple((q, costs.get(q)) for q in result.quarters),
        purchases,
        time.perf_counter() - start,
        time.process_time() - cpu,
    )


_JOB: Job | None = None
"""The job of this worker process (set once by _start_worker)."""


def _start_worker(job: Job) -> None:
    global _JOB
    _JOB = job


def _solve_in_worker(scenario: Scenario) -> ScenarioResult:
    if _JOB is None:
        raise RuntimeError("a sweep worker started without its job (the pool's initializer sets it)")
    return solve_scenario(_JOB, scenario)


Progress = Callable[[int, int], None]


def usable_cores() -> int:
    """The cores this process may run on (its affinity where the platform tells, else all)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _serial(job: Job, scenarios: list[Scenario], workers: int, progress: Progress) -> list[ScenarioResult]:
    out = []
    for s in scenarios:
        out.append(solve_scenario(job, s))
        progress(len(out), len(scenarios))
    return out


def _processes(job: Job, scenarios: list[Scenario], workers: int, progress: Progress) -> list[ScenarioResult]:
    """A pool of `workers` processes started by a forkserver that has imported the planner once (spawn where
    there is no forkserver); the job goes to each worker once."""
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    context = multiprocessing.get_context(method)
    if method == "forkserver":
        context.set_forkserver_preload([__name__])
    with ProcessPoolExecutor(
        max_workers=workers, mp_context=context, initializer=_start_worker, initargs=(job,)
    ) as pool:
        futures = [pool.submit(_solve_in_worker, s) for s in scenarios]
        for done, _ in enumerate(as_completed(futures), start=1):
            progress(done, len(scenarios))
        return [f.result() for f in futures]


def _ray(job: Job, scenarios: list[Scenario], workers: int, progress: Progress) -> list[ScenarioResult]:
    """One Ray task per scenario (1 CPU each). Starts Ray locally with `workers` CPUs unless it is running or
    RAY_ADDRESS names a cluster (whose size then decides), and shuts down only what it started."""
    import ray

    started = not ray.is_initialized()
    if started:
        if os.environ.get("RAY_ADDRESS"):
            ray.init(log_to_driver=False, configure_logging=False)
        else:
            ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        task = ray.remote(num_cpus=1)(solve_scenario)
        job_ref = ray.put(job)
        pending = [task.remote(job_ref, s) for s in scenarios]
        refs, done = list(pending), 0
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            done += len(ready)
            progress(done, len(scenarios))
        return list(ray.get(refs))
    finally:
        if started:
            ray.shutdown()


RUNNERS: dict[str, Callable[[Job, list[Scenario], int, Progress], list[ScenarioResult]]] = {
    "serial": _serial,
    "processes": _processes,
    "ray": _ray,
}


def check(
    inventory: Inventory, options: PlanOptions, spec: SweepSpec, backend: str = "processes", workers: int | None = None
) -> list[Scenario]:
    """The sweep's scenarios, each what-if checked before anything is solved; a mistake raises PlanInputError
    (UsageError for the backend and workers, MissingExtra for Ray without the `ray` extra)."""
    if backend not in RUNNERS:
        raise UsageError(f"--backend must be one of {', '.join(BACKENDS)} (got {backend}).")
    if backend == "ray":
        require_extra("qm plan --backend ray", "ray", "ray")
    if workers is not None and workers < 1:
        raise UsageError(f"--workers must be 1 or more (got {workers}).")
    if spec.draws and options.from_usage:
        raise PlanInputError("--draws draws from demand.csv's quantiles; it cannot be combined with --from-usage")
    if spec.draws and not inventory.demand:
        raise PlanInputError("--draws needs demand.csv rows to draw from; the inventory has none")
    scenarios = spec.scenarios()
    for s in scenarios:
        whatif.parse(options.what_if + s.what_if, inventory)
    return scenarios


def run_sweep(
    inventory: Inventory,
    options: PlanOptions,
    spec: SweepSpec,
    *,
    backend: str = "processes",
    workers: int | None = None,
    base: PlanResult | None = None,
    progress: Progress = lambda done, total: None,
) -> Sweep:
    """Solve every scenario of `spec` on `backend` with `workers` (default: every core this process may use) and
    gather the results in scenario order, so that every backend gives the same tables."""
    scenarios = check(inventory, options, spec, backend, workers)
    workers = workers if workers is not None else usable_cores()
    start = time.perf_counter()
    results = sorted(
        RUNNERS[backend](Job(inventory, options, spec.seed), scenarios, workers, progress),
        key=lambda r: r.scenario.index,
    )
    meta = {
        "backend": backend,
        "workers": 1 if backend == "serial" else workers,
        "scenarios": len(scenarios),
        "wall_seconds": round(time.perf_counter() - start, 3),
        "what_if": list(options.what_if),
        "plan_expected_cost_usd": None if base is None else base.expected_cost_usd,
    }
    return Sweep(spec, _costs_table(spec, results), _purchases_table(results), meta)


def _scenario_columns(spec: SweepSpec, results: Sequence[ScenarioResult], repeat: Sequence[int]) -> dict[str, pa.Array]:
    """scenario, label, one column per axis (`axis:<target>`), draw and outcome; each result `repeat` times."""

    def column(values: list[Any], kind: pa.DataType) -> pa.Array:
        return pa.array([v for v, n in zip(values, repeat, strict=True) for _ in range(n)], kind)

    columns = {
        "scenario": column([r.scenario.index for r in results], pa.int32()),
        "label": column([r.scenario.label for r in results], pa.string()),
    }
    for i, (target, _) in enumerate(spec.grid):
        columns[f"axis:{target}"] = column([r.scenario.axes[i] for r in results], pa.string())
    columns["draw"] = column([r.scenario.draw for r in results], pa.int32())
    columns["outcome"] = column([r.outcome for r in results], pa.string())
    return columns


def _costs_table(spec: SweepSpec, results: Sequence[ScenarioResult]) -> pa.Table:
    rows = [(r, q, c) for r in results for q, c in r.quarter_costs]
    columns = _scenario_columns(spec, results, [len(r.quarter_costs) for r in results])
    columns.update(
        {
            "quarter": pa.array([q for _, q, _ in rows], pa.string()),
            "cost_usd": pa.array([c for _, _, c in rows], MONEY),
            "expected_cost_usd": pa.array([r.expected_cost_usd for r, _, _ in rows], MONEY),
            "seconds": pa.array([r.seconds for r, _, _ in rows], pa.float64()),
            "cpu_seconds": pa.array([r.cpu_seconds for r, _, _ in rows], pa.float64()),
        }
    )
    return pa.table(columns)


def _purchases_table(results: Sequence[ScenarioResult]) -> pa.Table:
    rows = [(r, p) for r in results for p in r.purchases]
    return pa.table(
        {
            "scenario": pa.array([r.scenario.index for r, _ in rows], pa.int32()),
            "draw": pa.array([r.scenario.draw for r, _ in rows], pa.int32()),
            **{
                k: pa.array([p[k] for _, p in rows], kind)
                for k, kind in (
                    ("site", pa.string()),
                    ("machine", pa.string()),
                    ("pricing_model", pa.string()),
                    ("term_months", pa.int32()),
                    ("start_quarter", pa.string()),
                    ("nodes", pa.int64()),
                    ("accelerators", pa.int64()),
                )
            },
            "total_liability_usd": pa.array([p["total_liability_usd"] for _, p in rows], MONEY),
        }
    )
