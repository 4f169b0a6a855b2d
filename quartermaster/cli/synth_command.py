"""`qm synth [PATH] [--cluster NAME] [--out DIR]`: Terraform JSON stacks (one per cloud cluster) through CDKTF."""

from __future__ import annotations

import shutil
from pathlib import Path

import typer

from quartermaster.cli.command_support import check_output, console, inventory_argument, load_or_exit
from quartermaster.errors import UsageError, require_extra
from quartermaster.providers import provider_of

NODE_MISSING = (
    "qm synth: Node.js is not on PATH (`node` not found). CDKTF synthesises through jsii, which runs in "
    "Node.js. Install Node.js 20 or newer (e.g. `apt-get install nodejs` or https://nodejs.org) and run "
    "`qm synth` again."
)
TERRAFORM_MODULES = ("cdktf", "constructs", "jsii")


def command(
    path: Path = inventory_argument(),
    cluster: str = typer.Option(None, "--cluster", "-c", help="Only this cluster (default: every cloud cluster)."),
    out: Path = typer.Option(
        Path("cdktf.out"), "--out", "-o", help="Output directory; stacks go to OUT/stacks/<cluster>/."
    ),
    backend: str = typer.Option("local", help="Terraform state backend: local, gcs or s3."),
    state_bucket: str = typer.Option(None, help="Bucket of the gcs or s3 backend."),
    state_region: str = typer.Option(None, help="Region of the s3 state bucket."),
    now: str = typer.Option(
        None,
        "--now",
        help="Build the stacks as of this moment (ISO 8601 with a time zone, or a day for its midnight UTC; "
        "default: now). Capacity blocks are dated: their node groups are sized and scheduled "
        "for where the block stands, and the Kueue quotas of dated pools follow their dates.",
    ),
) -> None:
    """Write `OUT/stacks/<cluster>/cdk.tf.json` for `terraform -chdir=... init / plan / apply` (or `tofu`)."""
    require_extra("qm synth", "terraform", *TERRAFORM_MODULES)
    if shutil.which("node") is None:  # before anything imports cdktf, which starts node
        raise UsageError(NODE_MISSING)
    # imported when run, so that `qm --help` stays fast; the terraform extra only after require_extra found it
    from quartermaster.modules.cloud import SpecError
    from quartermaster.modules.cloud.spec_support import moment
    from quartermaster.modules.terraform import stack_clusters
    from quartermaster.modules.terraform.app import Backend, synth

    try:
        at = moment(now, "--now")
    except SpecError as e:
        raise UsageError(str(e)) from None
    state = Backend(backend, state_bucket, state_region)
    if state.problem():
        raise UsageError(f"--backend {backend}: {state.problem()}.")
    check_output(out, "--out", path, folder=True)
    loaded = load_or_exit(path)
    inventory = loaded.inventory
    clusters = stack_clusters(inventory)
    if cluster is not None:
        if cluster not in clusters:
            known = inventory.cluster_by_name.get(cluster)
            why = (
                f"is {provider_of(known.kind).title}: it has no cloud resources (its Kueue objects: `qm render`)"
                if known is not None
                else "is not a cluster of the inventory"
            )
            raise UsageError(f"--cluster {cluster}: {why}. Clusters with a stack: {', '.join(clusters)}.")
        clusters = [cluster]
    try:
        stacks = synth(inventory, clusters, out, at, state, loaded.sources)
    except SpecError as e:
        raise SpecError(f"{path}: {e}") from None
    for stack in stacks:
        console.print(f"wrote {stack}")
    console.print(f"next: terraform -chdir={stacks[0].parent} init && terraform -chdir={stacks[0].parent} plan")
