"""Fixtures of the Terraform tests: the example inventory and its stacks, synthesised once per session."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

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
