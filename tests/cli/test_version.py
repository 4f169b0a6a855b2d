"""`qm --version` names the version the package metadata carries, and the CHANGELOG has a section for it."""

from __future__ import annotations

from importlib.metadata import version

from typer.testing import CliRunner

from quartermaster import __version__
from quartermaster.cli import app
from tests.paths import REPO


def test_qm_version_prints_the_installed_version() -> None:
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0
    # pyproject reads the version from quartermaster.__version__; the installed metadata must agree with it
    assert result.stdout.strip() == f"qm (Quartermaster) {version('quartermaster')}"
    assert version("quartermaster") == __version__


def test_the_changelog_has_a_section_for_this_version() -> None:
    changelog = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"\n## {__version__} " in changelog
