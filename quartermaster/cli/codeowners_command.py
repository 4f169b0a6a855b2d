"""`qm codeowners [PATH]`: write CODEOWNERS so team owners review their team files and finance reviews
everything else in the inventory (clusters, prices, commitments, policy, any new file) and the code that judges
it. `--check` exits 1 when the file is stale (for CI and pre-commit)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import typer

from quartermaster.cli.command_support import console, inventory_argument, load_or_exit
from quartermaster.errors import ProblemsFound


def _repo_root(path: Path) -> Path:
    where = path if path.is_dir() else path.parent
    top = subprocess.run(
        ["git", "rev-parse", "--show-toplevel"], cwd=where, capture_output=True, text=True, check=False
    )
    return Path(top.stdout.strip()) if top.returncode == 0 else Path.cwd()


def command(
    path: Path = inventory_argument(),
    output: Path = typer.Option(
        None, "--output", "-o", help="File to write; default .github/CODEOWNERS in the repository."
    ),
    check: bool = typer.Option(False, "--check", help="Write nothing; exit 1 if the file is not up to date."),
) -> None:
    """Generate CODEOWNERS from team owners and policy.finance_approvers (the rest of the inventory and the code)."""
    # imported when run, so that `qm --help` stays fast
    from quartermaster.reports.quota_diff.codeowners import render_codeowners

    result = load_or_exit(path)
    root = _repo_root(path)
    target = output or Path(os.path.relpath(root / ".github" / "CODEOWNERS"))
    existing = target.read_text(encoding="utf-8") if target.exists() else ""
    try:
        text = render_codeowners(result, root, path, existing)
    except ValueError as error:
        raise ProblemsFound(f"{target}: not written: {error}.") from None
    if check:
        if text != existing:
            raise ProblemsFound(f"{target} is not up to date with the inventory. Run `qm codeowners` and commit it.")
        console.print(f"{target} is up to date.")
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    console.print(f"wrote {target}")
