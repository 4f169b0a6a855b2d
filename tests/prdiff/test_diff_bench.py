"""bench/diff_bench.py times only commands that succeed (issue 19 audit: it timed a failed diff as a figure)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from bench.diff_bench import timed


def test_a_failing_command_stops_the_bench_with_its_error(tmp_path: Path) -> None:
    failing = [sys.executable, "-c", "import sys; sys.stderr.write('no such revision'); sys.exit(2)"]
    with pytest.raises(SystemExit, match=r"failed \(exit 2\):\nno such revision"):
        timed(failing, tmp_path)


def test_a_succeeding_command_gives_its_seconds(tmp_path: Path) -> None:
    assert 0 < timed([sys.executable, "-c", "pass"], tmp_path) < 60
