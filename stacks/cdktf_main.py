"""The CDKTF app (`cdktf.json` runs it): one Terraform stack per cloud cluster of the inventory.

Settings (environment; `qm synth` passes the same as options):
    QM_INVENTORY        inventory path (default `inventory`)
    QM_CLUSTER          synthesise only this cluster (default: every cloud cluster)
    QM_TF_BACKEND       local (default), gcs or s3
    QM_TF_STATE_BUCKET  the gcs/s3 state bucket
    QM_TF_STATE_REGION  the s3 bucket's region
    QM_NOW              the moment to build the stacks for, ISO 8601 with a time zone (default: now)
    CDKTF_OUTDIR        output directory (set by the cdktf CLI; default `cdktf.out`)
"""

import os
import sys
from pathlib import Path

try:
    from quartermaster.errors import MissingExtra, require_extra
except ModuleNotFoundError:
    sys.exit(
        "stacks/cdktf_main.py: Quartermaster is not installed in this Python; from the repository root run "
        "`python3 -m venv .venv && .venv/bin/pip install -e '.[terraform]'`."
    )
try:
    require_extra("The CDKTF app", "terraform", "cdktf", "constructs", "jsii")
except MissingExtra as missing:  # say which extra to install, not a traceback
    sys.exit(str(missing))

from quartermaster.issues import errors
from quartermaster.loader import load
from quartermaster.modules.cloud import SpecError
from quartermaster.modules.cloud.spec_support import moment
from quartermaster.modules.terraform import stack_clusters
from quartermaster.modules.terraform.app import Backend, synth


def main() -> None:
    loaded = load(Path(os.environ.get("QM_INVENTORY", "inventory")))
    if not loaded.ok:
        sys.exit("\n".join(issue.format() for issue in errors(loaded.issues)))
    cluster = os.environ.get("QM_CLUSTER")
    backend = Backend(
        os.environ.get("QM_TF_BACKEND", "local"),
        os.environ.get("QM_TF_STATE_BUCKET"),
        os.environ.get("QM_TF_STATE_REGION"),
    )
    if backend.problem():
        sys.exit(f"QM_TF_BACKEND: {backend.problem()}")
    clusters = [cluster] if cluster else stack_clusters(loaded.inventory)
    try:
        paths = synth(
            loaded.inventory,
            clusters,
            Path(os.environ.get("CDKTF_OUTDIR", "cdktf.out")),
            moment(os.environ.get("QM_NOW"), "QM_NOW"),
            backend,
            loaded.sources,
        )
    except SpecError as e:
        sys.exit(str(e))
    for path in paths:
        print(path)


if __name__ == "__main__":
    main()
