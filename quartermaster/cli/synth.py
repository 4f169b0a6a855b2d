"""`qm synth [PATH] [--cluster NAME] [--out DIR]`: Terraform JSON stacks (one per cloud cluster) through CDKTF."""

from __future__ import annotations

import shutil
from pathlib import Path

import typer

from quartermaster.cli.common import console, err_console, inventory_argument, load_or_exit

NODE_MISSING = (
    "qm synth: Node.js is not on PATH (`node` not found). CDKTF synthesises through jsii, which runs in "
    "Node.js. Install Node.js 20 or newer (e.g. `apt-get install nodejs` or https://nodejs.org) and run "
    "`qm synth` again."
)


def command(
    path: Path = inventory_argument(),
    cluster: str = typer.Option(None, "--cluster", "-c", help="Only this cluster (default: every cloud cluster)."),
    out: Path = typer.Option(Path("cdktf.out"), "--out", "-o", help="Output directory; stacks go to OUT/stacks/<cluster>/."),
    backend: str = typer.Option("local", help="Terraform state backend: local, gcs or s3."),
    state_bucket: str = typer.Option(None, help="Bucket of the gcs or s3 backend."),
    state_region: str = typer.Option(None, help="Region of the s3 state bucket."),
) -> None:
    """Write `OUT/stacks/<cluster>/cdk.tf.json` for `terraform -chdir=... init / plan / apply` (or `tofu`)."""
    if shutil.which("node") is None:  # before anything imports cdktf, which starts node
        err_console.print(NODE_MISSING, markup=False)
        raise typer.Exit(1)
    from modules.cloud import SpecError
    from modules.terraform import stack_clusters
    from modules.terraform.app import Backend, synth

    state = Backend(backend, state_bucket, state_region)
    if state.problem():
        err_console.print(f"--backend {backend}: {state.problem()}.", markup=False)
        raise typer.Exit(2)
    inventory = load_or_exit(path).inventory
    clusters = stack_clusters(inventory)
    if cluster is not None:
        if cluster not in clusters:
            kind = inventory.cluster_by_name[cluster].kind if cluster in inventory.cluster_by_name else None
            why = ("is on-prem: it has no cloud resources (its Kueue objects: `qm render`)" if kind == "onprem"
                   else "is not a cluster of the inventory")
            err_console.print(f"--cluster {cluster}: {why}. Clusters with a stack: {', '.join(clusters)}.",
                              markup=False)
            raise typer.Exit(2)
        clusters = [cluster]
    try:
        stacks = synth(inventory, clusters, out, state)
    except SpecError as e:
        err_console.print(f"{path}: {e}", markup=False)
        raise typer.Exit(1) from None
    for stack in stacks:
        console.print(f"wrote {stack}")
    console.print(f"next: terraform -chdir={stacks[0].parent} init && terraform -chdir={stacks[0].parent} plan")
