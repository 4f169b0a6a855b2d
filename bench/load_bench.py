"""Time to validate a generated inventory of 1,000 teams x 20 flavors (goal: `qm validate` under 2 s, end to end),
per stage: the CLI's start (interpreter and imports) and loading + checking.

    .venv/bin/python bench/load_bench.py [--teams 1000] [--flavors 20] [--repeat 5]
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
from pathlib import Path

from bench.generate import enterprise_inventory
from quartermaster.loader import load


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--teams", type=int, default=1000)
    parser.add_argument("--flavors", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = enterprise_inventory(Path(tmp), args.teams, args.flavors)
        files = sum(1 for _ in root.rglob("*.yaml"))
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            result = load(root)
            times.append(time.perf_counter() - start)
        assert result.ok, [i.format() for i in result.issues[:5]]
        quotas = sum(len(t.quotas) for t in result.inventory.teams)
        print(
            f"load + check: {args.teams} teams x {args.flavors} flavors ({quotas} quotas, {files} files): "
            f"median {statistics.median(times):.2f} s, best {min(times):.2f} s over {args.repeat} runs"
        )
        wall, cpu = _timed([sys.executable, "-c", "import quartermaster.cli"], args.repeat)
        print(f"CLI start (interpreter + imports): median {wall:.2f} s ({cpu:.2f} s CPU)")
        wall, cpu = _timed(
            [sys.executable, "-c", "from quartermaster.cli import main; main()", "validate", str(root)], args.repeat
        )
        print(
            f"qm validate, end to end: median {wall:.2f} s ({cpu:.2f} s CPU; goal < 2 s); load average "
            f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
        )


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
