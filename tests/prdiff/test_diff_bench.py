"""bench/diff_bench.py run as a person runs it, on a tiny generated inventory: it prints its figures, and it times
only commands that succeed (issue 19 audit: it timed a failed diff as a figure)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.paths import REPO

pytestmark = pytest.mark.slow  # four Python processes, each loading the CLI


def bench(days: int) -> subprocess.CompletedProcess[str]:
    """The bench on 10 teams x 2 flavors (it cuts team-0000's quota of h100-01) with `days` of usage."""
    return subprocess.run(
        [sys.executable, "-m", "bench.diff_bench", "--teams", "10", "--flavors", "2", f"--days={days}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_bench_prints_each_figure() -> None:
    run = bench(1)
    assert run.returncode == 0, run.stderr
    for figure in ("qm --help (interpreter and CLI start):", "qm diff, end to end, no replay:", "1-day replay:"):
        assert figure in run.stdout, run.stdout


def test_a_failing_diff_stops_the_bench_with_its_error() -> None:
    """--days=-1: the replay's `qm diff --impact-days -1` is a usage error (exit 2), so the bench stops there with
    qm's own message and prints no figure for it."""
    run = bench(-1)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "--impact-days -1 failed (exit 2):" in run.stderr and "Invalid value for '--impact-days'" in run.stderr
    assert "replay:" not in run.stdout
