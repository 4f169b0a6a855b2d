"""`qm diff BASE [HEAD]`: what a quota change does, costs and needs, as a PR comment (or text, or JSON).

BASE and HEAD are git revisions or inventory folders; HEAD defaults to the working-tree inventory.
Exit codes: 0 no blocking policy failed, 1 a blocking policy failed or a side does not validate,
2 a side is neither a folder nor a revision.
"""

from __future__ import annotations

import datetime as dt
import functools
import os
import sys
import tempfile
import time
from enum import StrEnum
from pathlib import Path

import typer

from quartermaster.bounds import MAX_IMPACT_DAYS
from quartermaster.cli.command_support import err_console, read_plan_or_exit
from quartermaster.errors import ProblemsFound
from quartermaster.loader import LoadResult
from quartermaster.textsafety import log_line


def team_files(result: LoadResult) -> dict[str, str]:
    """Team name -> the file holding it, relative to the side's inventory folder (the files' common folder), so a
    team added to or moved between files shows in the diff and needs finance."""
    root = os.path.commonpath(result.files) if result.files else ""
    if len(result.files) == 1:
        root = os.path.dirname(root)
    return {
        str(ref[1]): Path(os.path.relpath(file, root or ".")).as_posix()
        for ref, (file, _) in result.sources.objects.items()
        if ref[0] == "teams" and len(ref) == 2
    }


class Format(StrEnum):
    markdown = "markdown"
    json = "json"
    text = "text"


def command(
    base: str = typer.Argument(..., help="Base: a git revision (e.g. origin/main) or an inventory folder."),
    head: str = typer.Argument(None, help="Head: a git revision or an inventory folder; default the working tree."),
    inventory: Path = typer.Option(
        Path("inventory"),
        "--inventory",
        "-i",
        help="The inventory folder (its path inside the repository for revisions).",
    ),
    fmt: Format = typer.Option(Format.markdown, "--format", "-f", help="Output format."),
    impact_days: int = typer.Option(
        30,
        "--impact-days",
        min=0,
        max=MAX_IMPACT_DAYS,
        help="Days of usage history to replay through the "
        "old and the new quotas (who would have waited); 0 = no replay.",
    ),
    plan_dir: Path = typer.Option(
        None,
        "--plan",
        help="A plan folder written by `qm plan`: the budget status shows its planned charge "
        "of each touched cost centre (the finance report's figure) beside the exposure.",
    ),
) -> None:
    """Compare quotas between two revisions or folders: cost, policies, approvers, Kueue object diff."""
    # imported when run, so that `qm --help` stays fast
    from quartermaster.modules.kueue.cluster_files import rendered_documents
    from quartermaster.reports.quota_diff import RENDERERS, RenderOptions, build_quota_diff, open_side, render_invalid

    plan = read_plan_or_exit(plan_dir) if plan_dir is not None else None
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="qm-diff-") as scratch:
        sides = [open_side(base, inventory, Path(scratch)), open_side(head, inventory, Path(scratch))]
    # progress on stderr (CI logs show where the time goes); the report itself is stdout
    err_console.print(
        f"qm diff: read {sides[0].label} and {sides[1].label} in {time.perf_counter() - start:.1f} s", markup=False
    )
    # one line each, in every format; grouped in a comment by rule and file
    problems = [
        (log_line(f"{i.rule} in {i.location.file}" if i.location else i.rule), log_line(i.format()))
        for side in sides
        for i in side.errors
    ]
    if problems:
        for _, problem in problems:
            err_console.print(problem, markup=False)
        sys.stdout.write(render_invalid(fmt.value, problems))
        raise ProblemsFound(f"{len(problems)} error(s); the inventories must validate before they can be compared.")
    data = build_quota_diff(
        sides[0].result.inventory,
        sides[1].result.inventory,
        base_label=sides[0].label,
        head_label=sides[1].label,
        render_documents=functools.partial(rendered_documents, at=dt.datetime.now(dt.UTC)),
        impact_days=impact_days,
        team_files=(team_files(sides[0].result), team_files(sides[1].result)),
        plan=plan,
        plan_label=str(plan_dir) if plan_dir else None,
    )
    err_console.print(
        f"qm diff: compared quotas, prices and Kueue objects and replayed {impact_days} days of "
        f"demand: {time.perf_counter() - start:.1f} s in all",
        markup=False,
    )
    sys.stdout.write(RENDERERS[fmt.value](data, RenderOptions()))
    if data.blocking:
        failed = ", ".join(sorted({v.check for v in data.verdicts if v.status == "fail"}))
        raise ProblemsFound(f"blocking: {failed} failed.")
