"""The two sides of a quota diff: an inventory folder, or the inventory tree at a git revision.

A revision is read with `git archive <rev> -- <inventory path>` into a scratch directory and loaded
like any folder; problems found in it are shown as `<rev>:<path>:<line>`, so a reviewer can find them.
"""

from __future__ import annotations

import io
import subprocess
import tarfile
from dataclasses import dataclass, replace
from pathlib import Path

from quartermaster.errors import UsageError
from quartermaster.issues import Issue, Location
from quartermaster.loader import UNREAD, LoadResult, load

# Over-subscription is judged by the diff's `over-capacity` policy (a verdict, not a load error),
# so the comment can still be written and show what exceeds what.
RULES_JUDGED_BY_THE_DIFF = ("quota-within-capacity",)


class RevisionError(UsageError):
    """A side that is neither an inventory folder nor a readable git revision (a usage error)."""


@dataclass
class Side:
    """One loaded side: its label, the load result, and the errors that make it unusable."""

    label: str
    result: LoadResult
    errors: list[Issue]


def open_side(spec: str | None, inventory: Path, scratch: Path) -> Side:
    """Load a side: None = the working-tree `inventory`; an existing path = that folder; else a revision."""
    if spec is None:
        return _loaded(f"working tree ({inventory})", load(inventory), None, None)
    if Path(spec).exists():
        return _loaded(spec, load(Path(spec)), None, None)
    root, sha = _git_revision(spec, inventory)
    rel = inventory.resolve().relative_to(root) if inventory.resolve() != root else Path(".")
    tree = scratch / sha
    archive = subprocess.run(
        ["git", "archive", "--format=tar", sha, "--", str(rel)], cwd=root, capture_output=True, check=False
    )
    if archive.returncode != 0:
        raise RevisionError(
            f"`{rel}` does not exist at revision `{spec}`: {archive.stderr.decode(errors='replace').strip()}"
        )
    tree.mkdir(parents=True, exist_ok=True)
    refused: list[str] = []

    def safe(member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo | None:
        try:
            return tarfile.data_filter(member, dest)
        except tarfile.FilterError:  # an absolute link, or one leaving the tree: not extracted
            refused.append(member.name)
            return None

    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(tree, filter=safe)
    label = spec if sha.startswith(spec) else f"{spec} ({sha[:7]})"
    side = _loaded(label, load(tree / rel), tree, spec)
    side.errors += [
        Issue(
            UNREAD,
            "a link that leaves the inventory; it is not read",
            "Commit the file itself instead of a link to it.",
            location=Location(f"{spec}:{name}", None, ""),
        )
        for name in refused
    ]
    return side


def _git_revision(spec: str, inventory: Path) -> tuple[Path, str]:
    where = inventory if inventory.is_dir() else inventory.parent
    try:
        top = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"], cwd=where, capture_output=True, text=True, check=False
        )
    except FileNotFoundError as exc:
        raise RevisionError(f"`{spec}` is not an inventory folder, and git is not installed") from exc
    if top.returncode != 0:
        raise RevisionError(f"`{spec}` is not an inventory folder, and {where} is not in a git repository")
    root = Path(top.stdout.strip()).resolve()
    rev = subprocess.run(
        ["git", "rev-parse", "--verify", "--quiet", f"{spec}^{{commit}}"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    if rev.returncode != 0:
        raise RevisionError(
            f"`{spec}` is neither an inventory folder nor a git revision of {root}. "
            f"For a branch of the remote, fetch it first (`git fetch origin main`)."
        )
    return root, rev.stdout.strip()


def _loaded(label: str, result: LoadResult, tree: Path | None, spec: str | None) -> Side:
    issues = [_relocated(i, tree, spec) for i in result.issues] if tree is not None else result.issues
    result = replace(result, issues=issues)
    errors = [i for i in issues if i.severity == "error" and i.rule not in RULES_JUDGED_BY_THE_DIFF]
    return Side(label, result, errors)


def _relocated(issue: Issue, tree: Path | None, spec: str | None) -> Issue:
    """Show a file of the scratch tree as `<rev>:<path in the repository>`."""
    if issue.location is None or tree is None:
        return issue
    try:
        rel = Path(issue.location.file).resolve().relative_to(tree.resolve())
    except ValueError:
        return issue
    return replace(issue, location=replace(issue.location, file=f"{spec}:{rel.as_posix()}"))
