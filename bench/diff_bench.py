"""What a reviewer waits for on a quota pull request: `qm diff` of one changed quota in a generated inventory
(goal: within 3x the time of loading both inventories), end to end and per stage.

    .venv/bin/python -m bench.diff_bench [--teams 1000] [--flavors 20] [--days 30]

The inventory (bench/generate.py) is committed in a scratch git repository with a usage history of `--days`
days (hourly requests per team and flavor), one quota is cut with `qm quota set`, and `qm diff HEAD` runs as a
user runs it, with the impact replay over those days. Stages are timed in-process with the same inputs.
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import json
import pstats
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.generate import enterprise_inventory
from quartermaster.edit import QuotaChange, set_quotas
from quartermaster.loader import load

GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com", "-c", "commit.gpgsign=false"]


def usage_history(root: Path, teams: int, flavors: int, days: int) -> None:
    """Hourly requested and used accelerators per team and flavor, ending at the first hour of today (UTC)."""
    end = dt.datetime.now(dt.UTC).replace(tzinfo=None, minute=0, second=0, microsecond=0)
    lines = ["hour,cluster,team,flavor,accelerators_used,accelerators_requested"]
    regions = ["us-central1", "us-east4", "us-east5", "europe-west4"]
    for h in range(days * 24):
        hour = (end - dt.timedelta(hours=days * 24 - h)).isoformat()
        for t in range(0, teams, 10):  # a tenth of the teams are busy, in a daily wave
            for f in range(flavors):
                asked = (4 + (t + f + h) % 12) if (h + t) % 24 < 12 else 0
                if asked:
                    lines.append(f"{hour},gke-{regions[f % 4]},team-{t:04d},h100-{f:02d},{asked},{asked}")
    (root / "usage.csv").write_text("\n".join(lines) + "\n")


def timed(command: list[str], cwd: Path, *, verdict: bool = False) -> float:
    """Seconds `command` takes; a command that fails stops the bench with its exit code and error output (a
    failed diff's time is not a figure). With `verdict`, exit 1 with a whole JSON diff counts as done: it is the
    diff's answer that a blocking policy failed (the cut below makes team-0000 wait), not a failure to answer."""
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, check=False, capture_output=True, text=True)
    took = time.perf_counter() - start
    answered = verdict and done.returncode == 1 and _whole_diff(done.stdout)
    if done.returncode != 0 and not answered:
        raise SystemExit(f"{shlex.join(command)} failed (exit {done.returncode}):\n{done.stderr[-4000:]}")
    return took


def _whole_diff(stdout: str) -> bool:
    """`qm diff --format json` printed a diff, not the located errors of a side that does not validate."""
    try:
        printed = json.loads(stdout)
    except json.JSONDecodeError:
        return False
    return isinstance(printed, dict) and "errors" not in printed and "blocking" in printed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--teams", type=int, default=1000)
    parser.add_argument("--flavors", type=int, default=20)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--profile", action="store_true", help="Print the in-process diff's top functions.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp)
        root = enterprise_inventory(repo / "inventory", args.teams, args.flavors)
        usage_history(root, args.teams, args.flavors, args.days)
        subprocess.run([*GIT, "init", "-q"], cwd=repo, check=True)
        subprocess.run([*GIT, "add", "-A"], cwd=repo, check=True)
        subprocess.run([*GIT, "commit", "-qm", "base"], cwd=repo, check=True)
        result = set_quotas(root, [QuotaChange("team-0000", "h100-01", nominal=4)], force=True)
        assert result.ok, [i.format() for i in result.issues]

        start = time.perf_counter()
        load(root)
        load(root)
        loading = time.perf_counter() - start
        print(f"{args.teams} teams x {args.flavors} flavors, {args.days} days of usage")
        print(f"load both inventories (in-process): {loading:.2f} s")

        qm = [sys.executable, "-c", "from quartermaster.cli import main; main()"]
        diff = [*qm, "diff", "HEAD", "--inventory", "inventory", "--format", "json"]
        plain = timed([*diff, "--impact-days", "0"], repo, verdict=True)
        replay = timed([*diff, "--impact-days", str(args.days)], repo, verdict=True)
        start_only = timed([*qm, "--help"], repo)
        print(f"qm --help (interpreter and CLI start): {start_only:.2f} s")
        print(f"qm diff, end to end, no replay: {plain:.2f} s")
        print(
            f"qm diff, end to end, {args.days}-day replay: {replay:.2f} s ({replay / loading:.1f}x loading; goal <= 3x)"
        )
        if args.profile:
            from quartermaster.cli import app

            profile = cProfile.Profile()
            profile.runcall(lambda: app([*diff[3:], "--impact-days", str(args.days)], standalone_mode=False))
            pstats.Stats(profile).sort_stats("cumulative").print_stats(25)


if __name__ == "__main__":
    main()
