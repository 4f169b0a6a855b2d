"""Every command of the README section "Finance reports, metering and FOCUS export" runs and exits 0."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

from typer.testing import CliRunner

from quartermaster.cli import app

REPO = Path(__file__).resolve().parents[2]
SECTION = "## Finance reports, metering and FOCUS export"


def readme_commands() -> list[list[str]]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text[text.index(SECTION):]
    section = section[:section.index("\n## ", len(SECTION))]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block is not None
    return [shlex.split(line)[1:] for line in block.group(1).splitlines() if line.startswith(".venv/bin/qm ")]


def test_readme_examples_run(tmp_path: Path) -> None:
    commands = readme_commands()
    assert [c[0] for c in commands] == ["meter", "export", "report"]
    shutil.copytree(REPO / "tests" / "data" / "reports" / "plan", tmp_path / "plan")  # what `qm plan` wrote
    runner = CliRunner()
    for args in commands:
        args = [str(REPO / a) if a.startswith("inventory/") else a.replace("out/", f"{tmp_path}/") for a in args]
        if args[0] == "report":
            args += ["--formats", "html,xlsx,csv,json"]  # the PDF has its own test
        result = runner.invoke(app, args)
        assert result.exit_code == 0, (args, result.output)
    assert (tmp_path / "focus-2026-10.csv").exists() and (tmp_path / "report" / "report.html").exists()
