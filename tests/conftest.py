"""Shared pytest options and fixtures for every test area.

`pytest --update-golden` rewrites golden files instead of comparing against them; any test compares text
with the `golden` fixture: `golden(Path("tests/data/<area>/golden/x.yaml"), text)`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="Rewrite golden files from the current output instead of comparing.",
    )


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
