"""`qm import kueue`: manifests -> inventory skeleton; import then render gives equivalent objects."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from quartermaster.cli import app
from quartermaster.loader import load
from quartermaster.modules.kueue import objects_for_cluster
from quartermaster.modules.kueue.importer import equivalence, import_kueue
from quartermaster.modules.kueue.manifest_checks import load_manifests
from tests.builders import DURING_THE_BLOCK
from tests.paths import DATA, INVENTORY

EXAMPLES = DATA / "kueue" / "examples"


def round_trip(objects: list[dict], tmp_path: Path, cluster: str = "imported") -> tuple[list[str], list[str], str]:
    result = import_kueue(objects, cluster)
    (tmp_path / "kueue-import.yaml").write_text(result.text)
    loaded = load(tmp_path, run_checks=False)  # a skeleton: model-valid, TODOs may still fail the checks
    assert [i.format() for i in loaded.issues] == []
    return (
        equivalence(objects, objects_for_cluster(loaded.inventory, cluster, DURING_THE_BLOCK)),
        result.dropped,
        result.text,
    )


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("*.yaml")))
def test_kueue_examples_round_trip(name: str, tmp_path: Path) -> None:
    manifests, _ = load_manifests(EXAMPLES / name)
    differences, _, _ = round_trip([m.obj for m in manifests], tmp_path)
    assert differences == []


def test_what_the_inventory_cannot_express_is_reported(tmp_path: Path) -> None:
    manifests, _ = load_manifests(EXAMPLES / "docs-gpu-credits-cluster-queue.yaml")
    _, dropped, text = round_trip([m.obj for m in manifests], tmp_path)
    assert (
        "ClusterQueue team-cluster-queue: resource `gpu_credits` in flavor credits is not modelled "
        "(only nvidia.com/gpu, google.com/tpu, cpu, memory)"
    ) in dropped
    assert "machine: dgx-h100  # TODO: the manifests do not say the machine; this is a placeholder" in text


def test_equivalence_notices_a_changed_quota(tmp_path: Path) -> None:
    manifests, _ = load_manifests(EXAMPLES / "docs-lending-limit-team-ab.yaml")
    objects = [m.obj for m in manifests]
    result = import_kueue(objects)
    (tmp_path / "kueue-import.yaml").write_text(result.text.replace("cpu: 12", "cpu: 13"))
    rendered = objects_for_cluster(load(tmp_path, run_checks=False).inventory, "imported", DURING_THE_BLOCK)
    assert equivalence(objects, rendered) == [
        "ClusterQueue/team-b-cq: quotas [('default-flavor', 'cpu', 12, None, None)] rendered as "
        "[('default-flavor', 'cpu', 13, None, None), ('default-flavor', 'nvidia.com/gpu', Decimal('0'), None, None)]"
    ]


def test_our_own_render_round_trips_with_machines_and_cohorts(tmp_path: Path) -> None:
    inventory = load(INVENTORY).inventory
    original = objects_for_cluster(inventory, "gke-gpu-us-east4", DURING_THE_BLOCK)
    differences, _, text = round_trip(original, tmp_path, "gke-gpu-us-east4")
    assert differences == []
    assert "kind: gke" in text and "- llm-eval" in text and "cost_center: CC-1001" in text
    assert "borrowing_limit: 32" in text  # llm-pretrain's h100-mega-resv quota


def test_qm_import_kueue_writes_a_skeleton(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        ["import", "kueue", str(EXAMPLES / "tas-sample-gpu-queues.yaml"), "--out", str(tmp_path), "--cluster", "gpu-a"],
    )
    assert result.exit_code == 0, result.output
    text = (tmp_path / "kueue-import.yaml").read_text()
    assert "- name: gpu-a" in text and "topology_aware: true" in text and "# TODO" in text
    assert "note: LocalQueue default/tas-user-queue: renamed" in result.output
