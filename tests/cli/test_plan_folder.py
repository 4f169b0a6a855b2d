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


@pytest.mark.parametrize(
    ("file", "content", "says"),
    [
        ("plan.json", "[1, 2]", "plan.json: a JSON list, not an object"),
        ("cost_by_team.csv", "quarter,team\n2027Q1,x\n", "cost_by_team.csv: "),  # columns missing
        ("kpis.csv", None, "kpis.csv: "),  # a value that is not a number
    ],
)
def test_a_plan_file_that_is_not_what_qm_plan_wrote_is_a_usage_error_naming_it(
    tmp_path: Path, file: str, content: str | None, says: str
) -> None:
    folder = written(tmp_path)
    path = folder / file
    if content is None:
        head, first, *rest = path.read_text().splitlines()
        content = "\n".join(
            [head, ",".join([first.split(",")[0]] + ["not-a-number"] * (len(first.split(",")) - 1)), *rest]
        )
    path.write_text(content)
    result = runner.invoke(app, ["diff", str(INVENTORY), str(INVENTORY), "--plan", str(folder)])
    assert result.exit_code == 2, result.output
    output = " ".join(result.output.split())
    assert f"--plan {folder}: the plan in it cannot be read ({says}" in output


def test_a_bug_while_reading_a_plan_is_not_reported_as_an_unreadable_plan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only what the files hold is the user's to fix: an error of the code reading them stays an error."""
    import quartermaster.plan_result as plan_result

    def broken(*_: object) -> None:
        raise AttributeError("a bug")

    folder = written(tmp_path)
    monkeypatch.setattr(plan_result, "_summary_value", broken)
    result = runner.invoke(app, ["diff", str(INVENTORY), str(INVENTORY), "--plan", str(folder)])
    assert isinstance(result.exception, AttributeError)
    assert "cannot be read" not in result.output
