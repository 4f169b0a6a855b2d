"""The CLI reference page is generated from the commands and is current."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from quartermaster.cli import app
from quartermaster.cli.reference import cli_reference_markdown, main
from tests.paths import DOCS

PAGE = DOCS / "reference" / "cli.md"


def test_the_page_is_what_the_commands_say() -> None:
    assert PAGE.read_text(encoding="utf-8") == cli_reference_markdown(), (
        "docs/reference/cli.md is stale: run `python -m quartermaster.cli.reference` from the repository root"
    )


def test_every_command_qm_help_lists_has_a_section_with_its_options() -> None:
    page = PAGE.read_text(encoding="utf-8")
    listed = re.findall(r"^│ (\w+) ", CliRunner().invoke(app, ["--help"], terminal_width=200).stdout, re.M)
    assert "plan" in listed and "export" in listed
    assert all(f"## `qm {name}`" in page for name in listed)
    # subcommands too, and each option as `qm plan --help` declares it
    assert "## `qm export focus`" in page and "## `qm quota set`" in page
    help_text = " ".join(CliRunner().invoke(app, ["plan", "--help"], terminal_width=400).stdout.split())
    plan = page.split("## `qm plan`", 1)[1].split("\n## ", 1)[0]
    for option in ("--horizon", "--what-if", "--min-utilisation", "--sweep", "--rayjob"):
        assert option in help_text and f"`{option} " in plan


def test_help_text_is_escaped_for_markdown() -> None:
    """`<site>` in a help text is text, not an HTML tag the page would swallow; `code` stays code."""
    plan = cli_reference_markdown().split("## `qm plan`", 1)[1].split("\n## ", 1)[0]
    assert "price:&lt;site&gt;/&lt;machine&gt;" in plan and "<site>" not in plan


def test_main_writes_the_page(tmp_path: Path) -> None:
    target = tmp_path / "cli.md"
    assert main([str(target)]) == 0
    assert target.read_text(encoding="utf-8") == cli_reference_markdown()


def test_help_is_help_not_a_file_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0 and "target" in capsys.readouterr().out
    assert list(tmp_path.iterdir()) == []
