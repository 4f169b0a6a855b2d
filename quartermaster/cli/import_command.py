"""`qm import kueue FILE_OR_DIR [--out DIR] [--cluster NAME]`: existing Kueue manifests -> inventory skeleton."""

from __future__ import annotations

from pathlib import Path

import typer

from quartermaster.cli.command_support import console, err_console, print_issue
from quartermaster.errors import ProblemsFound

app = typer.Typer(help="Import existing objects into an inventory skeleton.", no_args_is_help=True)
SKELETON = "kueue-import.yaml"


@app.command("kueue")
def kueue(
    path: Path = typer.Argument(
        ...,
        exists=True,
        file_okay=True,
        dir_okay=True,
        readable=True,
        help="A Kueue manifest file or a directory of them.",
    ),
    out: Path | None = typer.Option(
        None, "--out", "-o", file_okay=False, dir_okay=True, help=f"Write <DIR>/{SKELETON} instead of printing it."
    ),
    cluster: str = typer.Option("imported", "--cluster", help="Name of the cluster the manifests come from."),
) -> None:
    """Turn ResourceFlavors, ClusterQueues, Cohorts, LocalQueues and priority classes into inventory YAML."""
    # imported when run, so that `qm --help` stays fast
    from quartermaster.modules.kueue.importer import import_kueue
    from quartermaster.modules.kueue.manifest_checks import load_manifests, validate

    manifests, issues = load_manifests(path)
    if not issues:  # objects Kueue's CRD schemas refuse are never imported (a list where a map goes)
        issues = [i for i in validate(manifests) if i.severity == "error"]
    for issue in issues:
        print_issue(issue)
    errors = sum(1 for i in issues if i.severity == "error")
    if errors:
        raise ProblemsFound(f"{errors} error(s) in {path}; nothing was imported.")
    result = import_kueue([m.obj for m in manifests], cluster)
    for note in result.dropped:
        err_console.print(f"note: {note}", markup=False)
    if out is None:
        typer.echo(result.text, nl=False)
        return
    out.mkdir(parents=True, exist_ok=True)
    (out / SKELETON).write_text(result.text, encoding="utf-8")
    console.print(f"wrote {out / SKELETON}; fill in the TODOs, then run `qm validate {out}`.", markup=False)
