"""The manifest YAML emitter writes what YAML reads back unchanged, including strings YAML would retype."""

from __future__ import annotations

import pytest
import yaml

from quartermaster.loader import load
from quartermaster.modules.kueue import objects_for_cluster
from quartermaster.yamlwriter import dump_documents
from tests.builders import DURING_THE_BLOCK
from tests.paths import REPO

TRICKY = {
    # YAML 1.1 would read these as booleans, numbers, sexagesimals, dates or null if left plain.
    "retyped": ["yes", "no", "on", "1.0", "0x1f", "1_000", "1:20", "2026-01-01", "~", "null", "8"],
    # Indicators, comments, colons and whitespace that a plain scalar cannot hold.
    "indicators": ["", " x", "x ", "a: b", "a #b", "-x", "@x", "*x", "&x", "!x", "[x]", "{x}", "'q", 'q"q', "x\ny"],
    "plain": ["kueue.x-k8s.io/v1beta2", "nvidia.com/gpu", "a b", "é"],
    "scalars": [1.5, 0, True, False, None],
    "empty": [[], {}],
    "nested": [[1, [2, 3]], [{"k": [{"z": 1}]}]],
    "key with: colon": {"8": "8", "yes": "no"},
}


def test_tricky_values_round_trip() -> None:
    assert list(yaml.safe_load_all(dump_documents([TRICKY]))) == [TRICKY]


@pytest.mark.parametrize(
    "cluster", ["gke-gpu-us-east4", "gke-tpu-us-east5", "eks-us-east-1", "aks-eastus", "onprem-sjc", "mk-manager"]
)
def test_every_rendered_cluster_round_trips(cluster: str) -> None:
    objects = objects_for_cluster(load(REPO / "inventory").inventory, cluster, DURING_THE_BLOCK)
    assert list(yaml.safe_load_all(dump_documents(objects))) == objects
