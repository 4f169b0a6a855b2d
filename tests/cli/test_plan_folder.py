"""Review of issue 26: every command that reads a plan folder (`--plan`) refuses one that holds no plan (a failed
`qm plan`) or an --explain-infeasible plan, instead of showing its $0.00 or relaxed figures as the plan's."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from typer.testing import CliRunner

from quartermaster.cli import app
from quartermaster.plan_result import Outcome, load_result
from tests.paths import DATA, INVENTORY

runner = CliRunner()
STORED = DATA / "reports" / "plan"


def written(tmp_path: Path, **changes: object) -> Path:
    """The stored plan with `changes`, written as `qm plan --out` writes it."""
    folder = tmp_path / "plan"
    dataclasses.replace(load_result(STORED), **changes).write(folder)
    return folder


FAILED = {"outcome": Outcome.NO_SOLUTION}
RELAXED = {"relaxed": True}


@pytest.mark.parametrize(
    ("changes", "says"),
    [(FAILED, "the solve that wrote it found no plan (outcome `no-solution`)"), (RELAXED, "--explain-infeasible")],
)
@pytest.mark.parametrize("command", ["observability", "diff"])
def test_a_plan_folder_with_no_plan_to_hold_spend_to_is_a_usage_error(
    tmp_path: Path, command: str, changes: dict[str, object], says: str
) -> None:
    folder = written(tmp_path, **changes)
    out = tmp_path / "out"
    args = {
        "observability": ["observability", "render", str(INVENTORY), "--out", str(out), "--plan", str(folder)],
        "diff": ["diff", str(INVENTORY), str(INVENTORY), "--plan", str(folder)],
    }[command]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    output = " ".join(result.output.split())
    assert f"--plan {folder}: " in output and says in output
    assert f"`qm plan --out {folder}`" in output
    assert not out.exists()  # nothing written from it


def test_the_report_refuses_a_failed_plan_too(tmp_path: Path) -> None:
    failed = runner.invoke(
        app, ["report", str(INVENTORY), "--plan", str(written(tmp_path, **FAILED)), "--out", str(tmp_path / "r")]
    )
    assert failed.exit_code == 2, failed.output
    assert "found no plan (outcome `no-solution`)" in " ".join(failed.output.split())
