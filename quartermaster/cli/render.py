"""`qm render [PATH] [--cluster NAME] [--out DIR]`: the Kueue objects of each cluster as YAML.

Every rendered object is validated (Kueue's schema, CEL and webhook rules) before anything is written.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import typer

from quartermaster.cli.common import (
    check_output,
    console,
    err_console,
    inventory_argument,
    load_or_exit,
    print_issue,
)
from quartermaster.errors import ProblemsFound, UsageError
from quartermaster.issues import did_you_mean


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
) -> None:
    """Render Kueue objects (plus Namespaces and RBAC) per cluster, byte-identical across runs."""
    # imported when run, so that `qm --help` stays fast
    from quartermaster.modules.cloud import SpecError
    from quartermaster.modules.kueue import objects_for_cluster, validate_manifests
    from quartermaster.modules.kueue.admission import admission_refusals
    from quartermaster.modules.kueue.render import render_kueue_configuration, render_objects, stale_renders

    if out is not None:
        check_output(out, "--out", path, folder=True)
    inventory = load_or_exit(path).inventory
    known = [c.name for c in inventory.clusters]
    for name in cluster or []:
        if name not in known:
            hint = " " + (did_you_mean(name, known) or f"Clusters: {', '.join(known)}.")
            raise UsageError(f"--cluster: no such cluster `{name}` in {path}.{hint}")
    names = cluster or known
    if kueue_config:
        texts, problems = [], []
        for name in names:
            text, refused = render_kueue_configuration(inventory, name)
            texts.append(text)
            problems += [f"{name}: Configuration {p}" for p in refused]
        if problems:
            raise ProblemsFound("Kueue would not start with this Configuration:\n" + "\n".join(problems))
        typer.echo("".join(texts), nl=False)
        return
    rendered: dict[str, str] = {}
    errors = 0
    now = dt.datetime.now(dt.UTC)
    for name in names:
        objects = objects_for_cluster(inventory, name)
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
