"""Time a plan sweep of the example inventory on each backend: serial, processes (and Ray when installed).

    .venv/bin/python -m bench.sweep_bench [--scenarios 200] [--seed 0] [--backends serial,processes,ray] [--workers N]

The scenarios are demand draws (`qm plan inventory/ --draws N --seed S`). For each backend it prints the wall time,
the CPU time of the solves (the sum of every scenario's process CPU, taken where it ran), CPU / wall (the cores
kept busy) and the speed-up against serial, with the load average before and after: on a shared machine the other
jobs take their share of the cores. Every backend's tables must equal serial's (checked here too).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import time
from pathlib import Path

from quartermaster.loader import load
from quartermaster.planner import PlanOptions
from quartermaster.planner.sweep import run_sweep, spec_of, usable_cores
from quartermaster.sweep_result import Sweep, cost_bands

REPO = Path(__file__).resolve().parents[1]
TIMINGS = ["seconds", "cpu_seconds"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--backends", default="serial,processes" + (",ray" if importlib.util.find_spec("ray") else ""))
    parser.add_argument("--workers", type=int, default=None, help="default: one per core")
    args = parser.parse_args()
    inventory = load(REPO / "inventory").inventory
    spec = spec_of([], args.scenarios, args.seed)
    print(
        f"{args.scenarios} demand draws of the example inventory (seed {args.seed}); {usable_cores()} cores; "
        f"load average {_load()}"
    )
    runs: dict[str, tuple[Sweep, float]] = {}
    for backend in args.backends.split(","):
        start = time.perf_counter()
        sweep = run_sweep(inventory, PlanOptions(), spec, backend=backend, workers=args.workers)
        wall = time.perf_counter() - start
        runs[backend] = (sweep, wall)
        cpu = sum(_per_scenario(sweep, "cpu_seconds"))
        base = runs.get("serial", (None, None))[1]
        speed = f", speed-up {base / wall:.2f}x against serial" if base and backend != "serial" else ""
        print(
            f"{backend:>9} x {sweep.meta['workers']}: wall {wall:.1f} s, solve CPU {cpu:.1f} s "
            f"(CPU / wall {cpu / wall:.2f}){speed}; load average {_load()}"
        )
        if "serial" in runs and backend != "serial":
            same = sweep.costs.drop_columns(TIMINGS).equals(runs["serial"][0].costs.drop_columns(TIMINGS))
            print(f"{'':>9}   same tables as serial: {same and sweep.purchases.equals(runs['serial'][0].purchases)}")
    sweep = next(iter(runs.values()))[0]
    total = cost_bands(sweep)[-1]
    print(
        f"Expected cost over the horizon (planned), {total.scenarios} scenarios: p10 {total.p10_usd:,.0f}, "
        f"p50 {total.p50_usd:,.0f}, p90 {total.p90_usd:,.0f} USD"
    )


def _per_scenario(sweep: Sweep, column: str) -> list[float]:
    """One value per scenario (the cost table repeats it on each quarter's row)."""
    return list({r["scenario"]: r[column] for r in sweep.costs.select(["scenario", column]).to_pylist()}.values())


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


if __name__ == "__main__":
    main()
