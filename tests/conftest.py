"""Shared pytest options, markers and fixtures for every test area.

`pytest --update-golden` rewrites golden files instead of comparing against them; any test compares text
with the `golden` fixture: `golden(Path("tests/data/<area>/golden/x.yaml"), text)`.

A test that runs an outside program carries that program's marker (registered in pyproject.toml, which says how to
install it): on a developer's machine without the program it is skipped; under CI (CI=true) it fails instead.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest


def _chromium() -> bool:
    from quartermaster.reports.finance.report_formats import find_chromium  # imported when asked: it loads the planner

    return find_chromium() is not None


INSTALLED: dict[str, Callable[[], bool]] = {
    "promtool": lambda: shutil.which("promtool") is not None,
    "prometheus": lambda: shutil.which("prometheus") is not None and shutil.which("promtool") is not None,
    "chromium": _chromium,
    "pdftotext": lambda: shutil.which("pdftotext") is not None,
    "spark": lambda: shutil.which("java") is not None,
    "node": lambda: shutil.which("node") is not None,
    "kubectl": lambda: shutil.which("kubectl") is not None,
}
"""Each outside-tool marker: whether what its tests run is installed."""


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="Rewrite golden files from the current output instead of comparing.",
    )


@pytest.hookimpl(tryfirst=True)  # before the test's fixtures start the tool
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skip (fail under CI) a test whose outside tool is not installed, saying how to install it."""
    for marker in item.iter_markers():
        if marker.name in INSTALLED and not INSTALLED[marker.name]():
            need = next(line for line in item.config.getini("markers") if line.startswith(f"{marker.name}:"))
            if os.environ.get("CI"):
                pytest.fail(f"CI=true and this test's tool is not installed: {need}", pytrace=False)
            pytest.skip(f"not installed: {need}")


@pytest.fixture
def golden(request: pytest.FixtureRequest) -> Callable[[Path, str], None]:
    """Compare `text` with the golden file at `path`, or rewrite it under --update-golden."""
    update = bool(request.config.getoption("--update-golden"))

    def check(path: Path, text: str) -> None:
        if update:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            return
        assert path.exists(), f"golden file {path} is missing; run `pytest --update-golden` to create it"
        want = path.read_text(encoding="utf-8")
        assert text == want, f"{path} differs from the output; review the change, then `pytest --update-golden`"

    return check
