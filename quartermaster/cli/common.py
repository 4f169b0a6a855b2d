"""Helpers shared by the CLI commands: loading with printed problems, the console."""

from __future__ import annotations

import sys
from pathlib import Path

import typer
from rich.console import Console

from quartermaster.errors import ProblemsFound
from quartermaster.loader import LoadResult, load

console = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 160)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)


def load_or_exit(path: Path, *, quiet_ok: bool = False) -> LoadResult:
    """Load an inventory; print every problem; exit 1 if any is an error."""
    result = load(path)
    print_issues(result)
    if not result.ok:
        errors = sum(1 for i in result.issues if i.severity == "error")
        raise ProblemsFound(f"{errors} error(s) in {path}; nothing was changed.")
    return result


def print_issues(result: LoadResult) -> None:
    """Print issues, errors first, in the one format."""
    for issue in sorted(result.issues, key=lambda i: (i.severity != "error",)):
        err_console.print(issue.format(), markup=False)


def inventory_argument() -> Path:
    """The PATH argument every command takes: the inventory directory."""
    return typer.Argument(Path("inventory"), help="Inventory directory (or one file).", exists=True,
                          file_okay=True, dir_okay=True, readable=True)
