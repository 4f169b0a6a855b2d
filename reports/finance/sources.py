"""Where a report's inputs come from, read from disk: the inventory's git revision."""

from __future__ import annotations

import subprocess
from pathlib import Path

NOT_A_CHECKOUT = "not a git checkout"


def inventory_revision(path: Path) -> str:
    """The git commit the inventory at `path` is read from (12 hex digits), with "uncommitted changes" when its
    files differ from that commit; NOT_A_CHECKOUT outside a git work tree or without git."""
    folder = path if path.is_dir() else path.parent

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", "-C", str(folder), *args], capture_output=True, text=True, timeout=30, check=False
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    commit = git("rev-parse", "--short=12", "HEAD")
    if commit is None:
        return NOT_A_CHECKOUT
    changed = git("status", "--porcelain", "--untracked-files=all", "--", ".")
    return f"{commit} (with uncommitted changes)" if changed else commit
