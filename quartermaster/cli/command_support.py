"""Helpers shared by the CLI commands: loading with printed problems, the console."""

from __future__ import annotations

import math
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console

from quartermaster.errors import ProblemsFound, UsageError
from quartermaster.issues import Issue
from quartermaster.loader import LoadResult, load
from quartermaster.names import DNS_SUBDOMAIN_PATTERN
from quartermaster.textsafety import log_line
from quartermaster.units import Quarter, QuarterError

if TYPE_CHECKING:
    from collections.abc import Callable

    from quartermaster.plan_contract import PlanResult

# No emoji codes (`research:x:` is a cohort path, not an emoji) and no markup from inventory text.
console = Console(highlight=False, soft_wrap=True, emoji=False, width=None if sys.stdout.isatty() else 160)
err_console = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)


def finite(low: float, high: float) -> Callable[[str], float]:
    """A parser of a number option: finite and from `low` to `high` (a NaN passes a range check:
    `--gap nan`), else a usage error naming the range."""

    def parse(text: str | float) -> float:
        try:
            value = float(text)
        except ValueError:
            raise typer.BadParameter(f"{text!r} is not a number") from None
        if not (math.isfinite(value) and low <= value <= high):
            raise typer.BadParameter(f"{text} is not a finite number from {low:g} to {high:g}")
        return value

    return parse


def quarter_option(text: str) -> Quarter:
    """A parser of a quarter option (`--start`): a quarter of the calendar in ASCII digits, as the inventory's."""
    try:
        return Quarter.parse(text, "option")
    except QuarterError:
        raise typer.BadParameter(f"{text!r} is not a quarter from 2000Q1 to 2100Q4, such as 2027Q1") from None


def object_name_option(text: str) -> str:
    """A parser of a Kubernetes object name option (`--results-claim`): a DNS-1123 subdomain, at most 253
    characters (kubernetes.io/docs/concepts/overview/working-with-objects/names, read 2026-11-27)."""
    if len(text) > 253 or not re.fullmatch(DNS_SUBDOMAIN_PATTERN, text):
        raise typer.BadParameter(
            f"{log_line(repr(text[:80]))} is not a Kubernetes object name (lower-case letters, digits, `-` and `.`, "
            "starting and ending with a letter or digit, at most 253 characters)"
        )
    return text


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
        print_issue(issue)


def print_issue(issue: Issue) -> None:
    """One located problem on stderr, on one line: control characters from the inventory (a line feed in a key or a
    file name included) are shown, not obeyed, and no line can start a CI workflow command."""
    err_console.print(log_line(issue.format()), markup=False)


def inventory_argument() -> Path:
    """The PATH argument every command takes: the inventory directory."""
    argument: Path = typer.Argument(
        Path("inventory"),
        help="Inventory directory (or one file).",
        exists=True,
        file_okay=True,
        dir_okay=True,
        readable=True,
    )
    return argument


def check_output(out: Path, option: str, inventory: Path, *, folder: bool, inputs: tuple[str, ...] = ()) -> None:
    """Refuse an output path before any work: inside the inventory or one of the command's other `inputs` (a file,
    folder or glob: it would overwrite or add to what the user gave), a folder where a file goes or the reverse, or
    a place that cannot be written."""
    target, inside = out.resolve(), inventory.resolve()
    if target == inside or (inside.is_dir() and target.is_relative_to(inside)):
        raise UsageError(
            f"{option} {out}: inside the inventory {inventory}; nothing the user wrote is overwritten. "
            "Write the output elsewhere, e.g. out/."
        )
    for given in inputs:
        if "://" in given:
            continue  # object storage: never a local output
        base = Path(given.split("*")[0].split("?")[0].split("[")[0] or ".").resolve()
        if target == base or (base.is_dir() and target.is_relative_to(base)):
            raise UsageError(
                f"{option} {out}: is the input {given}, or inside it; the input would be overwritten or read again "
                "next time. Write the output elsewhere, e.g. out/."
            )
    if out.exists() and out.is_dir() != folder:
        raise UsageError(
            f"{option} {out}: is a {'file' if folder else 'folder'}; give a {'folder' if folder else 'file'} path."
        )
    if out.exists() and not os.access(out, os.W_OK):
        raise UsageError(f"{option} {out}: is not writable; choose another path or fix its permissions.")
    base = next((p for p in out.parents if p.exists()), Path.cwd())
    if not base.is_dir() or not os.access(base, os.W_OK | os.X_OK):
        raise UsageError(
            f"{option} {out}: cannot be created ({base} is "
            f"{'a file' if not base.is_dir() else 'not writable'}); choose another path."
        )


UNREADABLE = (ValueError, OSError)
"""What reading a plan folder raises when a file in it is not what `qm plan` wrote (JSON that does not parse or
lacks a field, a CSV or Parquet file that is cut or corrupt: `plan_contract.load_result` and `sweep_result.load_sweep`
raise ValueError naming the file, pyarrow ValueError or OSError) or cannot be read; any other error is a bug and
shows as one."""


def unreadable_plan(what: str, plan_dir: Path, error: Exception) -> UsageError:
    reason = log_line(str(error).splitlines()[0] if str(error) else type(error).__name__)[:200]
    return UsageError(
        f"{what} {plan_dir}: the plan in it cannot be read ({reason}); write it again with "
        f"`qm plan --out {plan_dir}`, or give another folder."
    )


def read_plan_or_exit(plan_dir: Path, what: str = "--plan", relaxed_ok: bool = False) -> PlanResult:
    """The plan `qm plan` wrote in `plan_dir`; a usage error (`what` names the option) when there is none, it cannot
    be read, the solve found no plan, or (unless `relaxed_ok`: a reader that labels it) business rules had to give
    (`--explain-infeasible`), so that no view shows a plan's figures that are not a plan."""
    from quartermaster.plan_contract import load_result  # imported when run, so that `qm --help` stays fast

    if not (plan_dir / "plan.json").is_file():
        raise UsageError(f"{what} {plan_dir}: no plan.json there; run `qm plan --out {plan_dir}` first.")
    try:
        result = load_result(plan_dir)
    except UNREADABLE as error:
        raise unreadable_plan(what, plan_dir, error) from None
    if not result.has_plan:
        raise UsageError(
            f"{what} {plan_dir}: the solve that wrote it found no plan (outcome `{result.outcome}`); fix what "
            f"`qm plan` reported and write it again with `qm plan --out {plan_dir}`, or give another folder."
        )
    if result.relaxed and not relaxed_ok:
        raise UsageError(
            f"{what} {plan_dir}: a plan written with --explain-infeasible ({len(result.relaxed_rules)} business "
            "rule(s) had to give), so its figures are not a plan to hold spend to; fix the rules and write it again "
            f"with `qm plan --out {plan_dir}` (without --explain-infeasible), or give another folder."
        )
    return result
