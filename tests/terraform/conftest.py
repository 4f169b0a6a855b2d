"""Fixtures of the Terraform tests: the example inventory and its stacks, synthesised once per session."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from quartermaster.loader import load
from quartermaster.model import Inventory
from quartermaster.modules.terraform import stack_clusters
from tests.builders import BEFORE_THE_BLOCK
from tests.paths import REPO as ROOT


@pytest.fixture(scope="session")
def inventory() -> Inventory:
    result = load(ROOT / "inventory")
    assert result.ok, [i.format() for i in result.issues]
    return result.inventory


@pytest.fixture(scope="session")
def outdir(tmp_path_factory: pytest.TempPathFactory, inventory: Inventory) -> Path:
    """Every example stack, synthesised in one App (Node.js starts once)."""
    from quartermaster.modules.terraform.app import synth

    out = tmp_path_factory.mktemp("cdktf") / "cdktf.out"
    synth(inventory, stack_clusters(inventory), out, BEFORE_THE_BLOCK)
    return out


@pytest.fixture(scope="session")
def stacks(outdir: Path, inventory: Inventory) -> dict[str, dict[str, Any]]:
    """cluster -> its parsed `cdk.tf.json`."""
    return {c: json.loads((outdir / "stacks" / c / "cdk.tf.json").read_text()) for c in stack_clusters(inventory)}


BRANCH_POOLS = {  # pools the example lacks, so that every branch of the emitters is synthesised
    # GPUDirect RDMA (`gpudirect_strategy`, google-beta >= 7.34) on A3 Ultra and A4
    "gke-gpu-us-east4": [
        {"name": "ultra", "machine": "a3-ultragpu-8g", "zones": ["us-east4-a"], "nodes": 2, "gpudirect": True},
        {"name": "a4", "machine": "a4-highgpu-8g", "zones": ["us-east4-a"], "nodes": 1, "gpudirect": True},
    ],
    # an On-Demand Capacity Reservation the stack creates
    "eks-us-east-1": [
        {
            "name": "p5-odcr",
            "machine": "p5.48xlarge",
            "zones": ["us-east-1b"],
            "nodes": 2,
            "provisioning": "reservation",
            "commitment": "aws-p5-odcr",
        }
    ],
    # AKS Spot: the platform's taint and label declared
    "aks-eastus": [
        {
            "name": "ndh100spot",
            "machine": "Standard_ND96isr_H100_v5",
            "zones": ["1"],
            "autoscaling": {"min_nodes": 0, "max_nodes": 2},
            "provisioning": "spot",
        }
    ],
}
ODCR = {
    "name": "aws-p5-odcr",
    "kind": "reserved-instance",
    "machine": "p5.48xlarge",
    "site": "aws-us-east-1",
    "zone": "us-east-1b",
    "count": 2,
    "term_months": 12,
    "start": "2026-12-01",
    "usd_per_node_hour": 60.0,
    "reservation": "create",
}


@pytest.fixture(scope="session")
def every_branch(tmp_path_factory: pytest.TempPathFactory) -> Inventory:
    """The example inventory plus the pools of BRANCH_POOLS (and the ODCR one of them consumes)."""
    folder = tmp_path_factory.mktemp("every-branch") / "inventory"
    shutil.copytree(ROOT / "inventory", folder)
    clusters = yaml.safe_load((folder / "clusters.yaml").read_text())
    for cluster in clusters["clusters"]:
        if cluster["name"] in BRANCH_POOLS:
            cluster["pools"] += BRANCH_POOLS[cluster["name"]]
    (folder / "clusters.yaml").write_text(yaml.safe_dump(clusters, sort_keys=False))
    commitments = yaml.safe_load((folder / "commitments.yaml").read_text())
    commitments["commitments"].append(ODCR)
    (folder / "commitments.yaml").write_text(yaml.safe_dump(commitments, sort_keys=False))
    result = load(folder)
    assert result.ok, [i.format() for i in result.issues]
    return result.inventory


@pytest.fixture(scope="session")
def every_branch_stacks(tmp_path_factory: pytest.TempPathFactory, every_branch: Inventory) -> dict[str, Any]:
    """cluster of BRANCH_POOLS -> its parsed `cdk.tf.json` with the extra pools."""
    from quartermaster.modules.terraform.app import synth

    out = tmp_path_factory.mktemp("cdktf-every-branch") / "cdktf.out"
    paths = synth(every_branch, list(BRANCH_POOLS), out, BEFORE_THE_BLOCK)
    return {c: json.loads(p.read_text()) for c, p in zip(BRANCH_POOLS, paths, strict=True)}
