"""The CDKTF app (`cdktf.json` runs it): one Terraform stack per cloud cluster of the inventory.

Settings (environment; `qm synth` passes the same as options):
    QM_INVENTORY        inventory path (default `inventory`)
    QM_CLUSTER          synthesise only this cluster (default: every cloud cluster)
    QM_TF_BACKEND       local (default), gcs or s3
    QM_TF_STATE_BUCKET  the gcs/s3 state bucket
    QM_TF_STATE_REGION  the s3 bucket's region
    CDKTF_OUTDIR        output directory (set by the cdktf CLI; default `cdktf.out`)
"""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the cdktf CLI runs this file directly; the packages live at the root

from modules.cloud import SpecError  # noqa: E402
from modules.terraform import stack_clusters  # noqa: E402
from modules.terraform.app import Backend, synth  # noqa: E402
from quartermaster.issues import errors  # noqa: E402
from quartermaster.loader import load  # noqa: E402


def main() -> None:
    loaded = load(Path(os.environ.get("QM_INVENTORY", "inventory")))
    if not loaded.ok:
        sys.exit("\n".join(issue.format() for issue in errors(loaded.issues)))
    cluster = os.environ.get("QM_CLUSTER")
    backend = Backend(os.environ.get("QM_TF_BACKEND", "local"), os.environ.get("QM_TF_STATE_BUCKET"),
                      os.environ.get("QM_TF_STATE_REGION"))
    if backend.problem():
        sys.exit(f"QM_TF_BACKEND: {backend.problem()}")
    clusters = [cluster] if cluster else stack_clusters(loaded.inventory)
    try:
        paths = synth(loaded.inventory, clusters, Path(os.environ.get("CDKTF_OUTDIR", "cdktf.out")), backend)
    except SpecError as e:
        sys.exit(str(e))
    for path in paths:
        print(path)


if __name__ == "__main__":
    main()
