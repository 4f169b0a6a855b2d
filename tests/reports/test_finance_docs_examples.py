"""Every command of the finance-reports guide's first example runs and exits 0."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from quartermaster.cli import app
from tests.paths import DATA, INVENTORY, REPO

GUIDE = REPO / "docs" / "how-to" / "finance-reports.md"


def guide_commands() -> list[list[str]]:
    block = re.search(r"```bash\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.S)
    assert block is not None
    return [shlex.split(line)[1:] for line in block.group(1).splitlines() if line.startswith(".venv/bin/qm ")]


def test_guide_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run as a user would from the repository root: here a scratch folder holding the example inventory (a link)
    and the plan `qm plan` wrote, so nothing is written into the repository."""
    commands = guide_commands()
    assert [c[0] for c in commands] == ["meter", "export", "report"]
    (tmp_path / "inventory").symlink_to(INVENTORY, target_is_directory=True)
    shutil.copytree(DATA / "reports" / "plan", tmp_path / "out" / "plan")  # what `qm plan` wrote
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    for args in commands:
        if args[0] == "report":
            args += ["--formats", "html,xlsx,csv,json"]  # the PDF has its own test
        result = runner.invoke(app, args)
        assert result.exit_code == 0, (args, result.output)
    assert (tmp_path / "out" / "focus-2026-10.csv").exists() and (tmp_path / "out" / "report" / "report.html").exists()
