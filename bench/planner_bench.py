"""Planner scale: generated enterprise problems solved with HiGHS and CBC, against their LP relaxation.

    .venv/bin/python -m bench.planner_bench                      # all three sizes, HiGHS and CBC
    .venv/bin/python -m bench.planner_bench --sizes enterprise --solvers highs

Sizes are sites x machines x quarters x pricing options x scenarios. A generated problem has 40 sites
(16 GCP, 16 AWS, 8 Azure) x 15 machines in 5 fungible-within-class accelerator classes, 6 pricing options
(on-demand, spot, 1y and 3y commitments; flex-start at GCP, capacity blocks at AWS), 5 demand scenarios
with 3 load-duration buckets each, 20 cost centres of 5 teams (one per accelerator class) at two home
sites plus one shared site per team, existing commitments at a third of the offers, supply caps and
budgets. Prices are drawn around the ratios of the sourced price book (inventory/prices.csv, GCP A3 in
us-east4: 1y 61.43 / 88.56 ~0.69, 3y 38.89 / 88.56 ~0.44, spot ~0.3 of on-demand). The generator is
seeded, so every run builds the same problems.

For each size and solver it prints what a user waits for, stage by stage: data (the generated tables),
build (the PuLP model), solve (by solver stage: LP relaxation, rounded re-solve) and result tables (shadow
prices and every table of the plan), each in wall and CPU seconds (every thread of the process, and CBC's
process) with the load average at its end, since the machine may be shared; then the outcome, the objective, the LP
relaxation bound and the MILP / LP ratio (1.001 = within 0.1 % of the LP bound). `--branch-and-bound-only`
runs the solver's own search without the relax-and-round step, for comparison.
"""

from __future__ import annotations

import argparse
import os
import random
import time
from decimal import Decimal

import pandas as pd

from quartermaster.planner.data import OFFER_COLUMNS, POOL_COLUMNS, PlanData
from quartermaster.planner.model import build_model
from quartermaster.planner.options import PlanOptions
from quartermaster.planner.results import collect
from quartermaster.planner.solve import _run, fix_integers_and_resolve, solve
from quartermaster.units import next_quarters, quarter_hours

SIZES = {  # sites, machines, quarters, scenarios, cost centres
    "small": (10, 6, 8, 3, 5),
    "medium": (20, 10, 12, 5, 10),
    "enterprise": (40, 15, 12, 5, 20),
}
CLASSES = 5
BUCKETS = ((0.0, 0.5), (0.5, 0.9), (0.9, 1.0))
PROVIDERS = ("gcp",) * 2 + ("aws",) * 2 + ("azure",)


def generate(sites: int, machines: int, quarters: int, scenarios: int, cost_centres: int, seed: int = 7) -> PlanData:
    """A reproducible planning problem of the given size (as PlanData tables)."""
    rng = random.Random(seed)
    qs = next_quarters("2027Q1", quarters)
    site_names = [f"{PROVIDERS[i % 5]}-site-{i:02d}" for i in range(sites)]
    offers, recourse, options, existing, caps = [], [], [], [], []
    for s in site_names:
        provider = s.split("-")[0]
        for mi in range(machines):
            offer = f"{s}/m{mi:02d}"
            offers.append(
                {
                    "offer": offer,
                    "site": s,
                    "machine": f"m{mi:02d}",
                    "accelerator": f"A{mi % CLASSES}",
                    "accelerators_per_node": 8,
                    "nodes_per_unit": 1,
                }
            )
            od = rng.uniform(60, 110)
            recourse.append({"offer": offer, "pricing_model": "on-demand", "term_months": 0, "usd_per_node_hour": od})
            recourse.append(
                {
                    "offer": offer,
                    "pricing_model": "spot",
                    "term_months": 0,
                    "usd_per_node_hour": od * rng.uniform(0.2, 0.45),
                }
            )
            if provider == "gcp":
                recourse.append(
                    {
                        "offer": offer,
                        "pricing_model": "flex-start",
                        "term_months": 0,
                        "usd_per_node_hour": od * rng.uniform(0.85, 1.0),
                    }
                )
            if provider == "aws":
                recourse.append(
                    {
                        "offer": offer,
                        "pricing_model": "capacity-block",
                        "term_months": 0,
                        "usd_per_node_hour": od * rng.uniform(0.65, 0.75),
                    }
                )
            for months, ratio in ((12, 0.69), (36, 0.44)):
                options.append(
                    {
                        "offer": offer,
                        "option": f"commit_{months}m",
                        "pricing_model": "commit",
                        "term_months": months,
                        "term_quarters": months // 3,
                        "usd_per_node_hour": Decimal(f"{od * ratio * rng.uniform(0.95, 1.05):.4f}"),
                        "upfront_usd_per_node": Decimal(0),
                        "usd_per_node_hour_used": Decimal(0),
                    }
                )
            if rng.random() < 1 / 3:
                nodes, price = rng.randint(2, 12), od * 0.5
                for q in qs[: rng.randint(2, quarters)]:
                    existing.append(
                        {
                            "commitment": f"old-{offer}",
                            "offer": offer,
                            "kind": "cud",
                            "quarter": q,
                            "nodes": float(nodes),
                            "usd": Decimal(f"{nodes * price * quarter_hours(q):.2f}"),
                            "usd_per_node_hour": Decimal(f"{price:.4f}"),
                        }
                    )
            if rng.random() < 0.2:
                caps.append({"offer": offer, "pricing_model": "on-demand", "max_nodes": rng.randint(10, 40)})
    probabilities = [rng.uniform(0.5, 1.5) for _ in range(scenarios)]
    scen = {f"s{i}": p / sum(probabilities) for i, p in enumerate(probabilities)}
    teams, demand, routes, budgets = [], [], [], []
    for c in range(cost_centres):
        cc = f"CC-{c:02d}"
        home = [site_names[(2 * c) % sites], site_names[(2 * c + 1) % sites]]
        for a in range(CLASSES):
            team = f"team-{c:02d}-{a}"
            teams.append({"team": team, "cost_center": cc, "sites": ""})
            key = f"{team}/A{a}"
            for s in sorted(set([*home, rng.choice(site_names)])):
                for mi in range(a, machines, CLASSES):
                    routes.append({"demand_key": key, "offer": f"{s}/m{mi:02d}", "ratio": 1.0})
            base, growth, spread = rng.uniform(200, 1500), rng.uniform(-0.02, 0.08), rng.uniform(0.1, 0.5)
            share = rng.choice((0.0, 0.1, 0.3, 0.6))
            for qi, q in enumerate(qs):
                for s_name in scen:
                    mean = base * (1 + growth) ** qi * rng.uniform(0.85, 1.15)
                    for b, (lo, hi) in enumerate(BUCKETS):
                        level = mean * (1 + spread * ((lo + hi) - 1))
                        demand.append(
                            {
                                "demand_key": key,
                                "team": team,
                                "accelerator": f"A{a}",
                                "site": "",
                                "quarter": q,
                                "scenario": s_name,
                                "bucket": b,
                                "weight": hi - lo,
                                "level": level,
                                "preemptible_share": share,
                            }
                        )
        budgets.append({"cost_center": cc, "quarter": qs[0], "usd": Decimal(500_000_000)})
    return PlanData(
        quarters=qs,
        hours={q: quarter_hours(q) for q in qs},
        offers=pd.DataFrame(offers, columns=OFFER_COLUMNS),
        recourse_prices=pd.DataFrame(recourse),
        commit_options=pd.DataFrame(options),
        existing=pd.DataFrame(
            existing, columns=["commitment", "offer", "kind", "quarter", "nodes", "usd", "usd_per_node_hour"]
        ),
        caps=pd.DataFrame(caps, columns=["offer", "pricing_model", "max_nodes"]),
        demand=pd.DataFrame(demand),
        routes=pd.DataFrame(routes),
        budgets=pd.DataFrame(budgets),
        scenarios=scen,
        teams=pd.DataFrame(teams),
        pools=pd.DataFrame(columns=POOL_COLUMNS),
        unmet_penalty=150.0,
        max_spot_share=0.5,
        options=PlanOptions(time_limit_s=600),
    )


def _cpu() -> float:
    """CPU seconds of this process (every thread) and of the solver processes it has waited for (CBC)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


class Stages:
    """Wall and CPU seconds of each stage a user waits for (CPU: see _cpu), and
    the machine's 1-minute load average at its end, since the machine may be shared."""

    def __init__(self):
        self.rows: list[tuple[str, float, float, float]] = []

    def time(self, stage: str, fn, *args, **kwargs):
        wall, cpu = time.perf_counter(), _cpu()
        out = fn(*args, **kwargs)
        self.rows.append((stage, time.perf_counter() - wall, _cpu() - cpu, os.getloadavg()[0]))
        return out

    def line(self) -> str:
        parts = [f"{stage} {wall:.1f} s ({cpu:.1f} CPU, load {load:.1f})" for stage, wall, cpu, load in self.rows]
        wall, cpu = sum(r[1] for r in self.rows), sum(r[2] for r in self.rows)
        return f"{' + '.join(parts)} = {wall:.1f} s wall, {cpu:.1f} s CPU"


def run(size: str, solvers: list[str], time_limit: float, threads: int | None, pure: bool) -> None:
    """Per solver: data, build, solve (by solver stage), result tables (shadow prices and every table of the plan)."""
    dims = SIZES[size]
    header = False
    for solver in solvers:
        stages = Stages()
        data = stages.time("data", generate, *dims)
        data.options = PlanOptions(solver=solver, time_limit_s=time_limit, gap_rel=1e-3, threads=threads)
        model = stages.time("build", build_model, data)
        if not header:
            ints = len(model.integers())
            print(
                f"\n{size}: {dims[0]} sites x {dims[1]} machines x {dims[2]} quarters x 6 pricing options x "
                f"{dims[3]} scenarios; {len(model.variables()):,} variables ({ints:,} integer), "
                f"{model.prob.numConstraints():,} constraints",
                flush=True,
            )
            header = True
        report = stages.time("solve", _run, model, mip=True) if pure else stages.time("solve", solve, model)
        if report.outcome.has_plan:
            stages.time("result tables", lambda m, r: collect(m, r, fix_integers_and_resolve(m)), model, report)
        bound = report.bound
        if pure or bound is None:  # the LP relaxation of a fresh copy, for the ratio
            data.options = PlanOptions(solver="highs", time_limit_s=time_limit, threads=threads)
            bound = solve(build_model(data), relax=True).objective
        ratio = f"{report.objective / bound:.5f}" if report.objective and bound else "-"
        solver_stages = ", ".join(f"{stage} {seconds:.1f} s" for stage, seconds in report.stages)
        print(
            f"  {solver:5s}: {report.outcome.value} ({solver_stages}); objective {(report.objective or 0):,.0f}, "
            f"LP bound {(bound or 0):,.0f}, MILP/LP {ratio} "
            f"({report.status}{'; ' + report.note if report.note else ''})\n"
            f"         {stages.line()}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", default=list(SIZES), choices=list(SIZES))
    parser.add_argument("--solvers", nargs="+", default=["highs", "cbc"], choices=["highs", "cbc"])
    parser.add_argument("--time-limit", type=float, default=120.0)
    parser.add_argument(
        "--branch-and-bound-only",
        action="store_true",
        help="Skip relax-and-round: the solver's own branch-and-bound from the start.",
    )
    # HiGHS fixes its thread pool at the first solve of a process (default: all cores, 2 here); a different
    # `threads` later makes it refuse to solve, so the default leaves it unset.
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    for size in args.sizes:
        run(size, args.solvers, args.time_limit, args.threads, args.branch_and_bound_only)


if __name__ == "__main__":
    main()
