"""Time `qm validate` of a generated inventory (default 10,000 teams x 20 flavors) against its floor measured in the
same run: libyaml composing the same files (`yaml.compose` with `yaml.CSafeLoader`, every file read and composed,
nothing else). Goal: validate end to end at most 2x the compose time. Also per stage: the CLI's start (interpreter
and imports) and loading + checking in one process. Each figure is the median of `--repeat` runs, CPU and wall,
printed with the load average (CPU seconds double when other work shares the cores: read it on an idle machine).

    .venv/bin/python -m bench.load_bench [--teams 10000] [--flavors 20] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import yaml

from bench.generate import enterprise_inventory
from quartermaster.loader import load

GOAL = 2.0
"""`qm validate` end to end may take at most this many times libyaml's compose of the same files."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--teams", type=int, default=10000)
    parser.add_argument("--flavors", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = enterprise_inventory(Path(tmp), args.teams, args.flavors)
        files = sorted(root.rglob("*.yaml"))
        result = load(root)
        assert result.ok, [i.format() for i in result.issues[:5]]
        quotas = sum(len(t.quotas) for t in result.inventory.teams)
        print(f"inventory: {args.teams} teams x {args.flavors} flavors ({quotas} quotas, {len(files)} files)")
        compose_cpu, compose_wall = _in_process(lambda: _compose_all(files), args.repeat)
        print(f"floor, libyaml compose of every file: median {compose_cpu:.2f} s CPU ({compose_wall:.2f} s wall)")
        load_cpu, load_wall = _in_process(lambda: load(root), args.repeat)
        print(
            f"load + check in one process: median {load_cpu:.2f} s CPU ({load_wall:.2f} s wall), "
            f"{load_cpu / compose_cpu:.2f}x compose"
        )
        wall, cpu = _timed([sys.executable, "-c", "import quartermaster.cli"], args.repeat)
        print(f"CLI start (interpreter + imports): median {cpu:.2f} s CPU ({wall:.2f} s wall)")
        wall, cpu = _timed(
            [sys.executable, "-c", "from quartermaster.cli import main; main()", "validate", str(root)], args.repeat
        )
        print(
            f"qm validate, end to end: median {cpu:.2f} s CPU ({wall:.2f} s wall): "
            f"{cpu / compose_cpu:.2f}x compose in CPU, {wall / compose_wall:.2f}x in wall (goal <= {GOAL:g}x)"
        )
        print(
            f"load average {' / '.join(f'{x:.1f}' for x in os.getloadavg())} (1 / 5 / 15 min) on {os.cpu_count()} cores"
        )


def _compose_all(files: list[Path]) -> None:
    """The floor: read every file and compose it with libyaml, as the loader does before anything of its own."""
    for path in files:
        yaml.compose(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)


def _in_process(work: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Median CPU time and median wall time of `work()` run `repeat` times in this process."""
    cpus, walls = [], []
    for _ in range(repeat):
        cpu, wall = time.process_time(), time.perf_counter()
        work()
        cpus.append(time.process_time() - cpu)
        walls.append(time.perf_counter() - wall)
    return statistics.median(cpus), statistics.median(walls)


def _timed(command: list[str], repeat: int) -> tuple[float, float]:
    """Median wall time and median CPU time (user + system) of a command run `repeat` times (it must succeed): on
    a busy machine the wall time grows with the load and the CPU time says what the command itself costs.

    Timed as a user's machine runs it: after one untimed run with Python's bytecode cache allowed, so modules load
    from `__pycache__` (an environment with PYTHONDONTWRITEBYTECODE set, as some sandboxes and CI runners have,
    would otherwise compile every module from source on every run: about 0.7 s here)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(command, check=True, capture_output=True, env=env)
    walls, cpus = [], []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True, env=env)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


if __name__ == "__main__":
    main()
