"""`qm render [PATH] [--cluster NAME] [--out DIR] [--at DAY] [--schedule]`: the Kueue objects of each cluster as YAML,
valid at one instant (quotas follow the dates of the capacity they offer).

Every rendered object is validated (Kueue's schema, CEL and webhook rules) before anything is written.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from quartermaster.cli.command_support import (
    check_output,
    console,
    err_console,
    inventory_argument,
    load_or_exit,
    print_issue,
)
from quartermaster.errors import ProblemsFound, UsageError
from quartermaster.issues import did_you_mean
from quartermaster.model import Inventory

if TYPE_CHECKING:
    from quartermaster.modules.kueue.admission import Refusal


def command(
    path: Path = inventory_argument(),
    cluster: list[str] = typer.Option(None, "--cluster", "-c", help="Render only this cluster (repeatable)."),
    out: Path | None = typer.Option(
        None, "--out", "-o", help="Write <DIR>/<cluster>.yaml instead of printing.", file_okay=False, dir_okay=True
    ),
    kueue_config: bool = typer.Option(
        False,
        "--kueue-config",
        help="Print each cluster's Kueue manager Configuration (the settings its objects need), checked against "
        "the rules Kueue applies when it starts.",
    ),
    at: str = typer.Option(
        None,
        "--at",
        help="Render the objects valid at this instant: a day (2027-01-15, its midnight UTC) or ISO 8601 with a "
        "time zone; default: now. A pool's quota is 0 while its capacity block, reservation term or on-prem "
        "delivery does not hold it.",
    ),
    schedule: bool = typer.Option(
        False,
        "--schedule",
        help="List every instant at which capacity starts or ends, what changes in each cluster's quotas there, "
        "and the admission check of each window; render nothing.",
    ),
) -> None:
    """Render Kueue objects (plus Namespaces and RBAC) per cluster, byte-identical across runs for one instant."""
    # imported when run, so that `qm --help` stays fast
    from quartermaster.modules.cloud import SpecError
    from quartermaster.modules.cloud.spec_support import moment
    from quartermaster.modules.kueue import objects_for_cluster, validate_manifests
    from quartermaster.modules.kueue.admission import admission_refusals
    from quartermaster.modules.kueue.cluster_files import render_kueue_configuration, render_objects, stale_renders

    try:
        now = moment(at, "--at")
    except SpecError as e:
        raise UsageError(str(e)) from None
    if schedule and (out is not None or kueue_config or at is not None or cluster):
        raise UsageError(
            "--schedule lists every boundary of every cluster; leave out --out, --kueue-config, --at and --cluster."
        )
    if out is not None:
        check_output(out, "--out", path, folder=True)
    inventory = load_or_exit(path).inventory
    if schedule:
        _print_schedule(inventory, dt.datetime.now(dt.UTC))
        return
    known = [c.name for c in inventory.clusters]
    for name in cluster or []:
        if name not in known:
            hint = " " + (did_you_mean(name, known) or f"Clusters: {', '.join(known)}.")
            raise UsageError(f"--cluster: no such cluster `{name}` in {path}.{hint}")
    names = cluster or known
    if kueue_config:
        texts, problems = [], []
        for name in names:
            text, refused = render_kueue_configuration(inventory, name, now)
            texts.append(text)
            problems += [f"{name}: Configuration {p}" for p in refused]
        if problems:
            raise ProblemsFound("Kueue would not start with this Configuration:\n" + "\n".join(problems))
        typer.echo("".join(texts), nl=False)
        return
    rendered: dict[str, str] = {}
    errors = 0
    for name in names:
        objects = objects_for_cluster(inventory, name, now)
        for issue in validate_manifests(objects, f"render:{name}"):
            errors += issue.severity == "error"
            print_issue(issue)
        try:
            refusals = admission_refusals(inventory, name, objects, now)
        except SpecError as e:  # the cloud specs, whose node labels the check reads, cannot be built
            err_console.print(f"note: {name}: admission not checked: {e}", markup=False)
            refusals = []
        for refusal in refusals:
            err_console.print(f"warning: {refusal.format()}", markup=False)
        rendered[name] = render_objects(name, objects)
    if errors:
        raise ProblemsFound(f"{errors} error(s) in the rendered objects; nothing was written.")
    if out is None:
        for text in rendered.values():
            typer.echo(text, nl=False)
        return
    out.mkdir(parents=True, exist_ok=True)
    for name, text in rendered.items():
        target = out / f"{name}.yaml"
        target.write_text(text, encoding="utf-8")
        console.print(f"wrote {target} ({text.count(chr(10) + 'kind: ')} objects)")
    for stale in stale_renders(out, set(known)):
        stale.unlink()
        console.print(f"removed {stale} (its cluster is no longer in the inventory)")


def _print_schedule(inventory: Inventory, now: dt.datetime) -> None:
    """Each boundary: when, which pools open or close and by which commitment, the quota changes, and the
    admission check of the window it starts (refusals as warnings on stderr, as `qm render` prints them)."""
    from quartermaster.modules.kueue.schedule import first_window_refusals, quota_schedule

    boundaries = quota_schedule(inventory)
    if not boundaries:
        typer.echo("No dated capacity: every pool's quota holds at every instant.")
        return
    refusals, unchecked = first_window_refusals(inventory)
    _print_window_check(f"before {_when(boundaries[0].at)}", refusals, unchecked)
    for b in boundaries:
        past = " (past)" if b.at <= now else ""
        typer.echo(f"{_when(b.at)}{past}")
        for w in b.opens:
            typer.echo(f"  opens  {w.pool} ({w.commitment} starts)")
        for w in b.closes:
            typer.echo(f"  closes {w.pool} ({w.commitment} ends)")
        for change in b.changes:
            typer.echo(f"    {change.format()}")
        _print_window_check(f"from {_when(b.at)}", b.refusals, b.unchecked)


def _print_window_check(window: str, refusals: Sequence[Refusal], unchecked: Sequence[str]) -> None:
    for refusal in refusals:
        err_console.print(f"warning: window {window}: {refusal.format()}", markup=False)
    for note in unchecked:
        err_console.print(f"note: window {window}: admission not checked: {note}", markup=False)


def _when(at: dt.datetime) -> str:
    return f"{at:%Y-%m-%d %H:%M} UTC"
