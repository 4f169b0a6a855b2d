"""Planner scale: generated enterprise problems solved with HiGHS and CBC, against their LP relaxation.

    .venv/bin/python -m bench.planner_bench                      # all three sizes, HiGHS and CBC
    .venv/bin/python -m bench.planner_bench --sizes enterprise --solvers highs
    .venv/bin/python -m bench.planner_bench --sizes enterprise --solvers highs \
        --variants slack binding-budgets equivalence --write-mps /tmp/enterprise.mps
    .venv/bin/python -m bench.planner_bench --sizes enterprise --solvers highs \
        --variants slack binding-budgets --prices predicted slack-first --write-mps /tmp/enterprise.mps

Sizes are sites x machines x quarters x pricing options x scenarios. A generated problem has 40 sites
(16 GCP, 16 AWS, 8 Azure) x 15 machines in 5 fungible-within-class accelerator classes, 6 pricing options
(on-demand, spot, 1y and 3y commitments; flex-start at GCP, capacity blocks at AWS), 5 demand scenarios
with 3 load-duration buckets each, 20 cost centres of 5 teams (one per accelerator class) at two home
sites plus one shared site per team, existing commitments at a third of the offers, supply caps and
budgets. Prices are drawn around the ratios of the sourced price book (inventory/prices.csv, GCP A3 in
us-east4: 1y 61.43 / 88.56 ~0.69, 3y 38.89 / 88.56 ~0.44, spot ~0.3 of on-demand). The generator is
seeded, so every run builds the same problems.

Variants of each size (`--variants`), the cases users hit:
- `slack`: each cost centre has a budget in the first quarter that no plan reaches.
- `binding-budgets`: each cost centre has a budget in every quarter, set to 0.9 of what serving all its expected
  demand would be charged at the cheapest rate any of its routes offers (a lower bound on any full plan's charge),
  so every budget row binds and the plan leaves some demand unmet.
- `quota`: placement per flavor (`policy.placement: quota`): each offer's pools are one reservation pool (existing,
  new commitments and on demand) and one per other pay-per-use model; each team holds quota in every pool of its two
  home sites (so its shared site is out of reach) and, in its cost centre's cohort, a nominal of 16 to 160
  accelerators in each reservation pool of its class there, which binds the first quarter (borrowing and lending
  without limits).
- `equivalence`: demand may also be served on the equivalent accelerator classes, as `policy.equivalence` allows:
  classes A0, A1 and A2 are worth 1.0, 1.4 and 2.2 (H100, H200 and B200 in inventory/org.yaml), so H100 work
  may run on H200 and B200 offers (and the reverse) at the site's routes, with the planner's equivalence ratio.

For each size and solver it prints what a user waits for, stage by stage: data (the generated tables),
build (the model as arrays), solve (by solver stage: LP relaxation, rounded re-solve) and result tables (shadow
prices and every table of the plan), each in wall and CPU seconds (every thread of the process, and CBC's
process) with the load average at its end, since the machine may be shared; then the outcome, the objective, the LP
relaxation bound and the MILP / LP ratio (1.001 = within 0.1 % of the LP bound). `--branch-and-bound-only`
runs the solver's own search without the relax-and-round step, for comparison.

When a budget binds, HiGHS's session prices the budget rows (docs/explanation/planning.md, *How HiGHS solves it*):
each HiGHS line prints the LP's path (components alone, budget prices and their passes with their CPU seconds, or
the whole LP cold). `--prices predicted slack-first` runs the binding-budgets variant once per start of the prices
(predicted from the model where a budget is below the least its demand can be charged, or always after the
components' solve at no prices), and prints each one's binding-budgets / slack ratio of CPU seconds end to end.

`--write-mps PATH` writes each problem as built (integer columns marked) to an MPS file (PATH itself for one size
and variant, else PATH with `-<size>-<variant>` before its suffix), then reads it back into HiGHS alone and times
its LP relaxation with the options the planner's HiGHS session uses: the floor, printed beside the end-to-end CPU
as their ratio. The same file can be timed with the `highs` binary on an idle machine. Read every figure beside
the load average printed with it: on a shared machine CPU seconds grow with the load.
"""

from __future__ import annotations

import argparse
import os
import random
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

import highspy
import numpy as np
import pandas as pd

from quartermaster.demand_quantiles import equivalence_ratio
from quartermaster.plan_contract import EXISTING, NEW
from quartermaster.planner.build_result import collect
from quartermaster.planner.data import OFFER_COLUMNS, POOL_COLUMNS, PlanData
from quartermaster.planner.options import PlanOptions
from quartermaster.planner.placement import QuotaHolder, tiers_of
from quartermaster.planner.program import PlanModel, build_model
from quartermaster.planner.solve import (
    HIGHS_LP_OPTIONS,
    BudgetStart,
    _quiet_highs_banner,
    branch_and_bound,
    fix_integers_and_resolve,
    highs_lp,
    solve,
)
from quartermaster.units import next_quarters, quarter_hours

SIZES = {  # sites, machines, quarters, scenarios, cost centres
    "small": (10, 6, 8, 3, 5),
    "medium": (20, 10, 12, 5, 10),
    "enterprise": (40, 15, 12, 5, 20),
}
CLASSES = 5
BUCKETS = ((0.0, 0.5), (0.5, 0.9), (0.9, 1.0))
PROVIDERS = ("gcp",) * 2 + ("aws",) * 2 + ("azure",)
VARIANTS = ("slack", "binding-budgets", "equivalence", "quota")
# The `equivalence` variant: A0, A1, A2 worth as H100, H200 and B200 are in inventory/org.yaml's policy.equivalence.
EQUIVALENCE = {"A0": 1.0, "A1": 1.4, "A2": 2.2}
BINDING_SHARE = 0.9  # binding-budgets: a budget is this share of a lower bound on a full plan's charge


def generate(
    sites: int, machines: int, quarters: int, scenarios: int, cost_centres: int, variant: str = "slack", seed: int = 7
) -> PlanData:
    """A reproducible planning problem of the given size and variant (as PlanData tables)."""
    rng = random.Random(seed)
    equivalence = EQUIVALENCE if variant == "equivalence" else {}
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
                for mi in range(machines):
                    ratio = equivalence_ratio(equivalence, f"A{a}", f"A{mi % CLASSES}")
                    if ratio is not None:
                        routes.append({"demand_key": key, "offer": f"{s}/m{mi:02d}", "ratio": ratio})
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
    frames = {
        "recourse": pd.DataFrame(recourse),
        "options": pd.DataFrame(options),
        "existing": pd.DataFrame(
            existing, columns=["commitment", "offer", "kind", "quarter", "nodes", "usd", "usd_per_node_hour"]
        ),
        "demand": pd.DataFrame(demand),
        "routes": pd.DataFrame(routes),
        "teams": pd.DataFrame(teams),
    }
    if variant == "binding-budgets":
        budgets = _binding_budgets(frames, scen, {q: quarter_hours(q) for q in qs})
    placement = _quota_placement(offers, recourse, frames["teams"], seed) if variant == "quota" else {}
    return PlanData(
        quarters=qs,
        hours={q: quarter_hours(q) for q in qs},
        offers=pd.DataFrame(offers, columns=OFFER_COLUMNS),
        recourse_prices=frames["recourse"],
        commit_options=frames["options"],
        existing=frames["existing"],
        caps=pd.DataFrame(caps, columns=["offer", "pricing_model", "max_nodes"]),
        demand=frames["demand"],
        routes=frames["routes"],
        budgets=pd.DataFrame(budgets),
        scenarios=scen,
        teams=frames["teams"],
        pools=pd.DataFrame(columns=POOL_COLUMNS),
        unmet_penalty=150.0,
        max_spot_share=0.5,
        options=PlanOptions(time_limit_s=600),
        **placement,
    )


def _quota_placement(offers: list[dict], recourse: list[dict], teams: pd.DataFrame, seed: int) -> dict[str, Any]:
    """The `quota` variant's PlanData fields: flavors, each team's held pools and placed tiers, its quota rows."""
    rng = random.Random(seed + 1)
    served: dict[tuple[str, str], tuple[str, ...]] = {}
    for o in offers:
        for tier in (EXISTING, NEW, "on-demand"):
            served[(o["offer"], tier)] = (f"{o['offer']}/resv",)
    for r in recourse:
        if r["pricing_model"] != "on-demand":
            served[(r["offer"], r["pricing_model"])] = (f"{r['offer']}/{r['pricing_model']}",)
    held, placed, holders = {}, {}, []
    names = list(dict.fromkeys(o["site"] for o in offers))  # in generate's order: a team's home sites as there
    for t in teams.itertuples():
        c, a = int(t.team[5:7]), int(t.team[-1])  # team-<cost centre>-<class>
        home = {names[(2 * c) % len(names)], names[(2 * c + 1) % len(names)]}
        pools = frozenset(p for (j, _), ps in served.items() if j.split("/")[0] in home for p in ps)
        held[t.team] = pools
        placed[t.team] = tiers_of(served, pools)
        for o in offers:
            if o["site"] in home and o["accelerator"] == f"A{a}":
                nominal = 8 * rng.randint(2, 20)
                holders.append(QuotaHolder(t.team, True, t.cost_center, f"{o['offer']}/resv", nominal, None, nominal))
    return {"flavors": served, "held": held, "placed": placed, "quota_holders": tuple(holders), "placement": "quota"}


def _binding_budgets(frames: dict[str, pd.DataFrame], scenarios: dict[str, float], hours: dict[str, int]) -> list[dict]:
    """A budget per cost centre and quarter that binds: BINDING_SHARE of its expected demand's accelerator-hours
    at the cheapest rate (USD per demand accelerator-hour: any pricing model, commitment or existing contract of
    any of its routes). Every plan that serves all the demand is charged at least that rate for every hour, and
    unmet demand's penalty is above every price, so the optimal plan spends each budget to its limit."""
    rates = pd.concat(
        [frames[name][["offer", "usd_per_node_hour"]] for name in ("recourse", "options", "existing")]
    ).astype({"usd_per_node_hour": float})
    node_rate = rates.groupby("offer")["usd_per_node_hour"].min()
    routes = frames["routes"]
    # a node of the offer serves accelerators_per_node / ratio of the key's accelerators (8 per node here)
    key_rate = (routes["offer"].map(node_rate) * routes["ratio"] / 8).groupby(routes["demand_key"]).min()
    demand = frames["demand"]
    hours_used = demand["level"] * demand["weight"] * demand["scenario"].map(scenarios) * demand["quarter"].map(hours)
    cost_centre = demand["team"].map(dict(zip(frames["teams"]["team"], frames["teams"]["cost_center"], strict=True)))
    usd = (hours_used * demand["demand_key"].map(key_rate)).groupby([cost_centre, demand["quarter"]]).sum()
    return [
        {"cost_center": cc, "quarter": q, "usd": Decimal(f"{BINDING_SHARE * value:.2f}")}
        for (cc, q), value in usd.items()
    ]


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

    @property
    def cpu(self) -> float:
        """CPU seconds of every stage."""
        return sum(r[2] for r in self.rows)

    def line(self) -> str:
        parts = [f"{stage} {wall:.1f} s ({cpu:.1f} CPU, load {load:.1f})" for stage, wall, cpu, load in self.rows]
        return f"{' + '.join(parts)} = {sum(r[1] for r in self.rows):.1f} s wall, {self.cpu:.1f} s CPU"


def mps_path(template: Path | None, size: str, variant: str, several: bool) -> Path | None:
    """Where --write-mps writes this problem: the path given, or with several problems, `-<size>-<variant>` added."""
    if template is None or not several:
        return template
    return template.with_name(f"{template.stem}-{size}-{variant}{template.suffix}")


def highs_alone(model: PlanModel, path: Path, threads: int | None) -> tuple[float, float, float]:
    """Write the model as MPS (HiGHS's writer, from the arrays the planner builds: names, integer columns marked and
    the objective's constant), read it into HiGHS alone and solve its LP relaxation with the planner's HiGHS LP
    options: (seconds to write, CPU seconds of HiGHS's solve, objective)."""
    wall = time.perf_counter()
    lp = model.lp
    whole = highs_lp(lp, integer=True)
    whole.offset_ = lp.constant
    whole.col_names_, whole.row_names_ = lp.col_names, lp.row_names
    _quiet_highs_banner()
    writer = highspy.Highs()
    writer.setOptionValue("output_flag", False)
    writer.passModel(whole)
    writer.writeModel(str(path))
    written = time.perf_counter() - wall
    highs = highspy.Highs()
    highs.setOptionValue("output_flag", False)
    if threads is not None:
        highs.setOptionValue("threads", threads)
    for key, value in HIGHS_LP_OPTIONS.items():
        highs.setOptionValue(key, value)
    highs.setOptionValue("solve_relaxation", True)
    highs.readModel(str(path))
    cpu = _cpu()
    highs.run()
    seconds = _cpu() - cpu
    status = highs.modelStatusToString(highs.getModelStatus())
    if status != "Optimal":
        raise SystemExit(f"{path}: HiGHS alone ended {status} on the LP relaxation")
    return written, seconds, highs.getInfo().objective_function_value


def run(
    size: str,
    variant: str,
    solvers: list[str],
    time_limit: float,
    threads: int | None,
    pure: bool,
    mps: Path | None,
    prices: BudgetStart = "predicted",
    floors: dict[str, tuple[float, float]] | None = None,
) -> dict[str, float]:
    """Per solver: data, build, solve (by solver stage), result tables (shadow prices and every table of the plan).
    With `mps`, first the floor: HiGHS alone on the LP relaxation of the same model, and each solver's end-to-end
    CPU over it (read once per size and variant into `floors`). `prices`: where HiGHS's budget prices start when a
    budget binds. Returns each solver's CPU seconds end to end."""
    dims = SIZES[size]
    floors = {} if floors is None else floors
    floor, floor_objective = floors.get(f"{size} {variant}", (None, None))
    cpu_by_solver: dict[str, float] = {}
    for solver in solvers:
        stages = Stages()
        data = stages.time("data", generate, *dims, variant=variant)
        data.options = PlanOptions(solver=solver, time_limit_s=time_limit, gap_rel=1e-3, threads=threads)
        model = stages.time("build", build_model, data)
        if not cpu_by_solver:  # the first solver: the problem's size, and the floor
            ints = len(model.integers())
            print(
                f"\n{size}, {variant}: {dims[0]} sites x {dims[1]} machines x {dims[2]} quarters x 6 pricing options "
                f"x {dims[3]} scenarios; {model.lp.num_cols:,} variables ({ints:,} integer), "
                f"{model.lp.num_rows:,} constraints; budget prices {prices}; load {os.getloadavg()[0]:.1f}",
                flush=True,
            )
            if mps is not None and floor is None:
                written, floor, floor_objective = highs_alone(model, mps, threads)
                floors[f"{size} {variant}"] = (floor, floor_objective)
                print(
                    f"  floor: HiGHS alone on the LP relaxation of {mps} (written in {written:.1f} s): "
                    f"{floor:.1f} s CPU, objective {floor_objective:,.2f}; load {os.getloadavg()[0]:.1f}",
                    flush=True,
                )
        if pure:
            report = stages.time("solve", branch_and_bound, model)
        else:
            report = stages.time("solve", solve, model, prices=prices)
        if report.outcome.has_plan:
            stages.time("result tables", lambda m, r: collect(m, r, fix_integers_and_resolve(m)), model, report)
        cpu_by_solver[solver] = stages.cpu
        bound = report.bound
        if pure or bound is None:  # the LP relaxation of a fresh copy, for the ratio
            data.options = PlanOptions(solver="highs", time_limit_s=time_limit, threads=threads)
            bound = solve(build_model(data), relax=True).objective
        ratio = f"{report.objective / bound:.5f}" if report.objective and bound else "-"
        solver_stages = ", ".join(f"{stage} {seconds:.1f} s" for stage, seconds in report.stages)
        budgets = np.flatnonzero(model.lp.rows_of("budget"))
        limit = model.lp.row_upper[budgets]
        activity = model.lp.activity(model.x)[budgets]
        binding = int(np.sum(activity >= limit - 1e-6 * np.abs(limit))) if report.outcome.has_plan else 0
        over_floor = f"; end to end / HiGHS alone {stages.cpu / floor:.2f}x CPU" if floor else ""
        if floor_objective and bound:
            over_floor += f"; LP bound / HiGHS alone's objective - 1 = {bound / floor_objective - 1:.1e}"
        print(
            f"  {solver:5s}: {report.outcome.value} ({solver_stages}); objective {(report.objective or 0):,.0f}, "
            f"LP bound {(bound or 0):,.2f}, MILP/LP {ratio}, {binding} of {len(budgets)} budget rows binding "
            f"({report.status}{'; ' + report.note if report.note else ''})\n"
            + (f"         LP path: {report.path}\n" if report.path else "")
            + f"         {stages.line()}{over_floor}",
            flush=True,
        )
    return cpu_by_solver


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", default=list(SIZES), choices=list(SIZES))
    parser.add_argument("--variants", nargs="+", default=["slack"], choices=VARIANTS)
    parser.add_argument("--solvers", nargs="+", default=["highs", "cbc"], choices=["highs", "cbc"])
    parser.add_argument("--time-limit", type=float, default=120.0)
    parser.add_argument(
        "--prices",
        nargs="+",
        default=["predicted"],
        choices=["predicted", "slack-first"],
        help="Where HiGHS's budget prices start when a budget binds; several: the binding-budgets variant once each.",
    )
    parser.add_argument(
        "--branch-and-bound-only",
        action="store_true",
        help="Skip relax-and-round: the solver's own branch-and-bound from the start.",
    )
    # HiGHS fixes its thread pool at the first solve of a process (default: all cores, 2 here); a different
    # `threads` later makes it refuse to solve, so the default leaves it unset.
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument(
        "--write-mps",
        type=Path,
        metavar="PATH",
        help="Write each problem as MPS and time HiGHS alone on its LP relaxation (the floor).",
    )
    args = parser.parse_args()
    several = len(args.sizes) * len(args.variants) > 1
    floors: dict[str, tuple[float, float]] = {}
    for size in args.sizes:
        cpu: dict[tuple[str, str], dict[str, float]] = {}
        for variant in args.variants:
            mps = mps_path(args.write_mps, size, variant, several)
            for prices in args.prices if variant == "binding-budgets" else args.prices[:1]:
                cpu[(variant, prices)] = run(
                    size,
                    variant,
                    args.solvers,
                    args.time_limit,
                    args.threads,
                    args.branch_and_bound_only,
                    mps,
                    prices,
                    floors,
                )
        slack = cpu.get(("slack", args.prices[0]))
        for prices in args.prices:
            binding = cpu.get(("binding-budgets", prices))
            if slack and binding:
                ratios = ", ".join(f"{s} {binding[s] / slack[s]:.2f}x" for s in args.solvers)
                print(
                    f"  {size}: binding-budgets (budget prices {prices}) / slack, CPU end to end: {ratios}; "
                    f"load {os.getloadavg()[0]:.1f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
