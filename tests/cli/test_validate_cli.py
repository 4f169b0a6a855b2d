"""`qm validate` and `qm schema` as a user runs them: exit codes and the key sentences."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from quartermaster.cli import app
from tests.builders import make_inventory
from tests.paths import REPO

runner = CliRunner()


def test_validate_example_prints_summary_and_exits_0() -> None:
    result = runner.invoke(app, ["validate", str(REPO / "inventory")])
    assert result.exit_code == 0, result.output
    assert "6 clusters, 10 pools, 8 teams, 3 cohorts, 5 commitments" in result.output
    assert "gcp-us-east5" in result.output and "32 x TPU-v5p, 32 x TPU-v6e" in result.output
    assert "OK: no errors." in result.output


def test_validate_problems_exit_1_without_traceback(tmp_path: Path) -> None:
    root = make_inventory().team("ops", quotas={"h100": 16}).write(tmp_path)
    result = runner.invoke(app, ["validate", str(root)])
    assert result.exit_code == 1
    assert "flavor `h100` is over-subscribed: nominal quotas sum to 24 but the pool has 16" in result.output
    assert "1 error(s)" in result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_validate_warnings_only_exit_0(tmp_path: Path) -> None:
    root = make_inventory().team("ops", quotas={"h100": 16}).policy(allow_oversubscription=True).write(tmp_path)
    result = runner.invoke(app, ["validate", str(root)])
    assert result.exit_code == 0, result.output
    assert "warning: flavor `h100` is over-subscribed" in result.output
    assert "OK: no errors, 1 warning(s)." in result.output


def test_validate_missing_path_is_a_usage_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["validate", str(tmp_path / "nope")])
    assert result.exit_code == 2 and "no inventory at" in result.output


def test_validate_kueue_needs_no_inventory_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 16: outside the repository root `qm validate --kueue FILE` failed with "path 'inventory' does not
    exist"."""
    manifests = tmp_path / "queues.yaml"
    manifests.write_text((REPO / "tests/data/kueue/golden/aks-eastus.yaml").read_text())
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["validate", "--kueue", str(manifests)])
    assert result.exit_code == 0, result.output
    assert "0 error(s)" in result.output


def test_schema_writes_the_three_files(tmp_path: Path) -> None:
    out, ref, plan = tmp_path / "s.json", tmp_path / "ref.md", tmp_path / "plan.schema.json"
    result = runner.invoke(app, ["schema", "--out", str(out), "--reference", str(ref), "--plan", str(plan)])
    assert result.exit_code == 0, result.output
    assert out.read_text() == (REPO / "inventory" / "inventory.schema.json").read_text()
    assert "## Team" in ref.read_text()
    assert plan.read_text() == (REPO / "docs" / "reference" / "plan.schema.json").read_text()


def test_a_team_cannot_escape_into_system_namespaces_or_groups(tmp_path: Path) -> None:
    """Issue 17's reproduction: kube-system, kueue-system and default with group system:authenticated would
    give every authenticated user a Role that creates pods in kube-system. Every part is refused, located."""
    root = (
        make_inventory()
        .edit("teams", "ml", namespaces=["kube-system", "kueue-system", "default"], group="system:authenticated")
        .write(tmp_path)
    )
    result = runner.invoke(app, ["validate", str(root)])
    assert result.exit_code == 1
    for i, ns in enumerate(("kube-system", "kueue-system", "default")):
        assert f"teams[0].namespaces[{i}]: namespace `{ns}` is reserved (" in result.output
    assert "teams[0].group: group `system:authenticated` is a Kubernetes system group" in result.output
    render = runner.invoke(app, ["render", str(root)])
    assert render.exit_code == 1 and "kind: Role" not in render.output


def test_a_flex_start_tpu_pool_of_the_example_is_a_located_error(tmp_path: Path) -> None:
    """Issue 36: `v5p-2x2x4` set to flex-start validated, then ran as always-on slices behind a queued-provisioning
    check that never succeeds; now `qm validate` names the line of its `provisioning` and exits 1."""

    root = tmp_path / "inventory"
    shutil.copytree(REPO / "inventory", root)
    clusters = root / "clusters.yaml"
    shape = "        tpu: {topology: 2x2x4, slices: 2}\n"
    text = clusters.read_text(encoding="utf-8")
    clusters.write_text(text.replace(shape, shape + "        provisioning: flex-start\n", 1), encoding="utf-8")
    line = text[: text.index(shape)].count("\n") + 2  # the line after the slice shape
    result = runner.invoke(app, ["validate", str(root)])
    assert result.exit_code == 1 and "Traceback" not in result.output
    flat = " ".join(result.output.split())
    assert f"clusters.yaml:{line} clusters[1].pools[0].provisioning: a TPU pool cannot be flex-start" in flat
