"""`qm validate [PATH]`: load and check an inventory, print a summary and every problem."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from quartermaster.cli.command_support import console, load_or_exit
from quartermaster.errors import UsageError


def command(
    path: Path = typer.Argument(Path("inventory"), help="Inventory directory (or one file); not needed with --kueue."),
    kueue: Path | None = typer.Option(
        None,
        "--kueue",
        exists=True,
        file_okay=True,
        dir_okay=True,
        help="Lint these Kueue manifests (a file or directory) instead of the inventory; with an inventory at PATH, "
        "also check each of its clusters' objects for admission (queues that could never get nodes, and why).",
    ),
) -> None:
    """Check an inventory and print clusters, pools, accelerators per site and quota vs capacity."""
    # imported when run, so that `qm --help` stays fast
    from quartermaster.summary import summarise

    if kueue is not None:
        # imported when run, so that `qm --help` stays fast
        from quartermaster.cli.kueue_lint import lint

        lint(kueue, load_or_exit(path).inventory if path.exists() else None)
        return
    if not path.exists():
        raise UsageError(
            f"no inventory at {path}. Give the inventory's folder, e.g. `qm validate inventory/`, or "
            "lint manifests with `qm validate --kueue FILE`."
        )
    result = load_or_exit(path)
    s = summarise(result.inventory)
    console.print(
        f"[bold]{path}[/]: {len(result.files)} files, {s.clusters} clusters, {s.pools} pools, "
        f"{s.teams} teams, {s.cohorts} cohorts, {s.commitments} commitments"
    )
    sites = Table(title="Accelerators per site", title_justify="left")
    sites.add_column("site")
    sites.add_column("accelerators")
    for site, by_accelerator in sorted(s.accelerators_by_site.items()):
        sites.add_row(site, ", ".join(f"{n} x {a}" for a, n in sorted(by_accelerator.items())))
    console.print(sites)
    flavors = Table(title="Quota vs capacity per flavor", title_justify="left")
    for column in ("cluster", "flavor", "machine", "provisioning", "nodes", "capacity", "nominal", "free"):
        flavors.add_column(column, justify="right" if column in ("nodes", "capacity", "nominal", "free") else "left")
    for r in s.flavors:
        flavors.add_row(
            r.cluster,
            r.flavor,
            r.machine,
            r.provisioning,
            str(r.nodes),
            f"{r.capacity} {r.accelerator}",
            str(r.nominal),
            str(r.free),
        )
    console.print(flavors)
    warnings = sum(1 for i in result.issues if i.severity == "warning")
    console.print(f"OK: no errors{f', {warnings} warning(s)' if warnings else ''}.")
