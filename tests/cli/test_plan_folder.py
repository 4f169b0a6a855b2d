"""Review of issue 26: every command that reads a plan folder (`--plan`) refuses one that holds no plan (a failed
`qm plan`) or an --explain-infeasible plan, instead of showing its $0.00 or relaxed figures as the plan's."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from quartermaster.cli import app
from quartermaster.plan_contract import Outcome, load_result
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


def cost_by_team_cut(doc: dict[str, Any]) -> None:
    del doc["cost_by_team"][0]["usd"]


def kpi_not_a_number(doc: dict[str, Any]) -> None:
    doc["kpis"][1]["coverage"] = "not-a-number"


def another_version(doc: dict[str, Any]) -> None:
    doc["format_version"] = 2


def no_version(doc: dict[str, Any]) -> None:
    del doc["format_version"]


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        ("[1, 2]", "plan.json: a JSON list, not an object"),
        (cost_by_team_cut, "plan.json: cost_by_team[0].usd: Field required"),
        (kpi_not_a_number, "plan.json: kpis[1].coverage: Input should be a valid number"),
        (another_version, "plan.json: format version 2; this qm reads format version 1"),
        (no_version, "plan.json: no format version (a plan of qm 0.1); this qm reads format version 1"),
    ],
)
def test_a_plan_file_that_is_not_what_qm_plan_wrote_is_a_usage_error_naming_it(
    tmp_path: Path, edit: str | Callable[[dict[str, Any]], None], says: str
) -> None:
    folder = written(tmp_path)
    path = folder / "plan.json"
    if isinstance(edit, str):
        path.write_text(edit)
    else:
        doc = json.loads(path.read_text())
        edit(doc)
        path.write_text(json.dumps(doc))
    result = runner.invoke(app, ["diff", str(INVENTORY), str(INVENTORY), "--plan", str(folder)])
    assert result.exit_code == 2, result.output
    output = " ".join(result.output.split())
    assert f"--plan {folder}: the plan in it cannot be read ({says}" in output
    assert "Traceback" not in result.output


def test_a_bug_while_reading_a_plan_is_not_reported_as_an_unreadable_plan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only what the files hold is the user's to fix: an error of the code reading them stays an error."""
    import quartermaster.plan_contract as plan_contract

    def broken(*_: object) -> None:
        raise AttributeError("a bug")

    folder = written(tmp_path)
    monkeypatch.setattr(plan_contract, "_plan_file", broken)
    result = runner.invoke(app, ["diff", str(INVENTORY), str(INVENTORY), "--plan", str(folder)])
    assert isinstance(result.exception, AttributeError)
    assert "cannot be read" not in result.output
