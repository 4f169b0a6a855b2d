"""bench/pulumi_bench.py and bench/synth_bench.py run as a person runs them, on a small generated inventory: their
inventory is still one the stacks accept (a rule added later once broke both) and they print their figures."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.paths import REPO

pytestmark = pytest.mark.slow  # Python processes loading Pulumi's SDKs, and Node.js for CDKTF


@pytest.mark.parametrize(
    ("script", "figure"),
    [("bench.pulumi_bench", "all stacks under mocks:"), ("bench.synth_bench", "total synth")],
)
def test_the_bench_prints_its_figures(script: str, figure: str) -> None:
    run = subprocess.run(
        [sys.executable, "-m", script, "--pools", "20"], cwd=REPO, capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert figure in run.stdout
    assert "end-of-life" not in run.stdout + run.stderr  # jsii's Node 20 banner stays silenced
