"""Time to load and check a generated inventory of 1,000 teams x 20 flavors (goal: under 2 s).

    .venv/bin/python bench/load_bench.py [--teams 1000] [--flavors 20] [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
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
        print(f"load + check: {args.teams} teams x {args.flavors} flavors ({quotas} quotas, {files} files): "
              f"median {statistics.median(times):.2f} s, best {min(times):.2f} s over {args.repeat} runs "
              f"(goal < 2 s)")


if __name__ == "__main__":
    main()
