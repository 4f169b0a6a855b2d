"""The synthesised Terraform JSON: golden files, determinism, pinned providers, backends, `qm synth`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from quartermaster.capacity import nodes_per_slice
from quartermaster.cli import app, synth_command
from quartermaster.model import Inventory
from quartermaster.modules.cloud import cloud_module, cluster_spec
from quartermaster.modules.kueue import objects_for_cluster
from quartermaster.modules.terraform import provider_pins, stack_clusters
from tests.builders import BEFORE_THE_BLOCK, make_inventory
from tests.paths import INVENTORY
from tests.terraform.conftest import ROOT

GOLDEN = ROOT / "tests" / "data" / "terraform"
pytestmark = pytest.mark.node  # CDKTF synthesises through jsii, which runs Node.js
EXAMPLE_CLUSTERS = ("gke-gpu-us-east4", "gke-tpu-us-east5", "eks-us-east-1", "aks-eastus", "mk-manager")


def without_metadata(value: Any) -> Any:
    """The stack without cdktf's `//` metadata (cdktf version and construct paths, not ours to review)."""
    if isinstance(value, dict):
        return {k: without_metadata(v) for k, v in value.items() if k != "//"}
    if isinstance(value, list):
        return [without_metadata(v) for v in value]
    return value


@pytest.mark.parametrize("cluster", EXAMPLE_CLUSTERS)
def test_each_stack_matches_its_golden_file(
    stacks: dict[str, Any], cluster: str, golden: Callable[[Path, str], None]
) -> None:
    text = json.dumps(without_metadata(stacks[cluster]), indent=2, sort_keys=True) + "\n"
    golden(GOLDEN / f"{cluster}.tf.json", text)


def test_synth_is_deterministic(inventory: Inventory, outdir: Path, tmp_path: Path) -> None:
    from quartermaster.modules.terraform.app import synth

    again = tmp_path / "cdktf.out"
    synth(inventory, stack_clusters(inventory), again, BEFORE_THE_BLOCK)
    first = {p.relative_to(outdir): p.read_bytes() for p in outdir.rglob("*") if p.is_file()}
    second = {p.relative_to(again): p.read_bytes() for p in again.rglob("*") if p.is_file()}
    assert first == second and len(first) == len(EXAMPLE_CLUSTERS) + 1  # + manifest.json


@pytest.mark.parametrize("cluster", EXAMPLE_CLUSTERS)
def test_providers_are_pinned_and_state_is_local_next_to_the_output(stacks: dict[str, Any], cluster: str) -> None:
    terraform = stacks[cluster]["terraform"]
    assert terraform["required_providers"] == {
        name: {"source": provider_pins()[name].source, "version": provider_pins()[name].version}
        for name in stacks[cluster]["provider"]
    }
    assert terraform["backend"] == {"local": {"path": f"../../../terraform.{cluster}.tfstate"}}


def test_tpu_slices_are_one_compact_pool_each_sized_by_the_topology(
    inventory: Inventory, stacks: dict[str, Any]
) -> None:
    pools = stacks["gke-tpu-us-east5"]["resource"]["google_container_node_pool"]
    for pool in inventory.cluster_by_name["gke-tpu-us-east5"].pools:
        assert pool.tpu is not None
        for i in range(pool.tpu.slices):
            body = pools[f"{pool.name}-{i}"]
            assert body["node_count"] == nodes_per_slice(pool, inventory.machine_by_name[pool.machine])
            assert body["placement_policy"] == {"type": "COMPACT", "tpu_topology": pool.tpu.topology}
            assert body["node_locations"] == list(pool.zones) and len(pool.zones) == 1


@pytest.mark.parametrize(
    "cluster, section, address",
    [
        # `reservation: create`: the stack creates it, protected, and its pools wait for it
        ("gke-tpu-us-east5", "resource", "google_compute_reservation"),
        # the default, an existing reservation: read by a data source (plan fails if absent), never created
        ("gke-gpu-us-east4", "data", "data.google_compute_reservation"),
    ],
)
def test_reservations_are_created_or_read_and_consumed_after_they_exist(
    stacks: dict[str, Any], cluster: str, section: str, address: str
) -> None:
    stack = stacks[cluster]
    [(name, reservation)] = stack[section]["google_compute_reservation"].items()
    if section == "resource":
        assert reservation["lifecycle"] == {"prevent_destroy": True}
    else:
        assert "google_compute_reservation" not in stack["resource"]
    consumers = [
        p
        for p in stack["resource"]["google_container_node_pool"].values()
        if p["node_config"]["reservation_affinity"].get("values") == [reservation["name"]]
    ]
    assert consumers and all(p["depends_on"] == [f"{address}.{name}"] for p in consumers)


@pytest.mark.parametrize("cluster", EXAMPLE_CLUSTERS)
def test_namespaces_are_protected_from_destroy(stacks: dict[str, Any], cluster: str) -> None:
    """Issue 17: removing a team from the inventory deleted its Namespace, and every workload in it, on Terraform
    (the Pulumi program retains them); now `terraform apply` stops and says so."""
    manifests = stacks[cluster]["resource"]["kubernetes_manifest"].values()
    namespaces = [m for m in manifests if m["manifest"]["kind"] == "Namespace"]
    assert namespaces and all(m["lifecycle"] == {"prevent_destroy": True} for m in namespaces)
    assert not any("lifecycle" in m for m in manifests if m["manifest"]["kind"] != "Namespace")


@pytest.mark.parametrize("cluster", EXAMPLE_CLUSTERS)
def test_kueue_objects_are_manifests_that_wait_for_the_node_pools(
    inventory: Inventory, stacks: dict[str, Any], cluster: str
) -> None:
    resources = stacks[cluster]["resource"]
    manifests = [r["manifest"] for r in resources["kubernetes_manifest"].values()]
    canonical = sorted(json.dumps(m, sort_keys=True) for m in manifests)
    assert canonical == sorted(
        json.dumps(m, sort_keys=True) for m in objects_for_cluster(inventory, cluster, BEFORE_THE_BLOCK)
    )
    spec = cluster_spec(inventory, cluster, BEFORE_THE_BLOCK)
    pools = sorted(
        f"{t}.{n}"
        for t in ("google_container_node_pool", "aws_eks_node_group", "azurerm_kubernetes_cluster_node_pool")
        for n in resources.get(t, {})
    )
    module = cloud_module(spec.kind)
    assert module is not None
    assert len(pools) == len(module.pool_specs(spec.capacity))
    if pools:  # one barrier waits for every pool; every Kueue object waits for the barrier
        assert sorted(resources["terraform_data"]["node_pools"]["depends_on"]) == pools
    for body in resources["kubernetes_manifest"].values():
        if body["manifest"]["apiVersion"].startswith("kueue.x-k8s.io/") and pools:
            assert "terraform_data.node_pools" in body["depends_on"]
    assert stacks[cluster]["provider"]["kubernetes"] == [{"config_path": "${var.kubeconfig_path}"}]


def test_inventory_text_is_never_a_terraform_template(tmp_path: Path) -> None:
    """Issue 16: strings from the inventory reached the Terraform JSON unescaped, so a project named
    `${file("~/.ssh/id_rsa")}` was evaluated. Every `${` and `%{` of inventory text comes out as `$${` / `%%{`
    (Terraform's escapes); the stack's own references stay references."""
    from quartermaster.modules.terraform.app import synth

    project = '${file("~/.ssh/id_rsa")}'
    description = '%{ for x in ["a"] }evil%{ endfor }'
    inventory = (
        make_inventory()
        .edit("clusters", "gke-a", project=project)
        .edit("priority_classes", "training", description=description)
        .build()
    )
    [stack] = synth(inventory, ["gke-a"], tmp_path / "out", BEFORE_THE_BLOCK)
    text = stack.read_text()
    escaped = project.replace("${", "$${")
    assert '"${file' not in text and text.count(json.dumps(escaped)[1:-1]) >= 2  # provider config and node pool
    body = json.loads(text)
    assert body["provider"]["google-beta"][0]["project"] == escaped
    assert body["provider"]["kubernetes"] == [{"config_path": "${var.kubeconfig_path}"}]  # a reference, kept
    [priority] = [
        r["manifest"]
        for r in body["resource"]["kubernetes_manifest"].values()
        if r["manifest"]["kind"] == "WorkloadPriorityClass"
    ]
    assert priority["description"] == description.replace("%{", "%%{")


def test_quota_requests_read_the_grant_and_never_ask_for_less(inventory: Inventory, stacks: dict[str, Any]) -> None:
    """Issue 16: each request reads what is granted now (a data source) and asks for the larger of that and the
    need. The expression is evaluated by Terraform at plan time, which cannot run here; its shape is checked."""
    gke = stacks["gke-gpu-us-east4"]
    preferences = gke["resource"]["google_cloud_quotas_quota_preference"]
    assert preferences
    for name, preference in preferences.items():
        info = gke["data"]["google_cloud_quotas_quota_info"][name]
        assert [info[k] for k in ("parent", "service", "quota_id")] == [
            preference[k] for k in ("parent", "service", "quota_id")
        ]
        need = cluster_spec(inventory, "gke-gpu-us-east4", BEFORE_THE_BLOCK)
        [spec] = [p for p in need.capacity.gcp_quota_preferences if p.name == preference["name"]]
        asked = preference["quota_config"]["preferred_value"]
        grants = f"[for d in data.google_cloud_quotas_quota_info.{name}."
        assert asked.startswith(f"${{contains({grants}") and f": max({spec.preferred_value}, {grants}" in asked
        assert preference["contact_email"] == inventory.policy.quota_contact_email
    eks = stacks["eks-us-east-1"]
    for name, quota in eks["resource"]["aws_servicequotas_service_quota"].items():
        applied = without_metadata(eks["data"]["aws_servicequotas_service_quota"][name])
        assert applied == {k: quota[k] for k in ("service_code", "quota_code", "region", "provider")}
        assert quota["value"].endswith(f", data.aws_servicequotas_service_quota.{name}.value)}}")


def test_gcs_and_s3_backends_by_setting(inventory: Inventory, tmp_path: Path) -> None:
    from quartermaster.modules.terraform.app import Backend, synth

    [gcs] = synth(
        inventory, ["gke-tpu-us-east5"], tmp_path / "gcs", BEFORE_THE_BLOCK, Backend("gcs", "northwind-tfstate")
    )
    [s3] = synth(
        inventory, ["eks-us-east-1"], tmp_path / "s3", BEFORE_THE_BLOCK, Backend("s3", "northwind-tfstate", "us-east-1")
    )
    assert json.loads(gcs.read_text())["terraform"]["backend"] == {
        "gcs": {"bucket": "northwind-tfstate", "prefix": "quartermaster/gke-tpu-us-east5"}
    }
    assert json.loads(s3.read_text())["terraform"]["backend"] == {
        "s3": {
            "bucket": "northwind-tfstate",
            "key": "quartermaster/eks-us-east-1/terraform.tfstate",
            "region": "us-east-1",
        }
    }


# --- qm synth (the examples of docs/how-to/deploy-with-terraform.md, with --out in a temporary directory) -------


def test_qm_synth_writes_every_cloud_stack(inventory: Inventory, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["synth", str(INVENTORY), "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    for cluster in stack_clusters(inventory):
        assert f"wrote {tmp_path / 'stacks' / cluster / 'cdk.tf.json'}" in result.output


def test_qm_synth_one_cluster_with_s3_state(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        [
            "synth",
            str(INVENTORY),
            "--cluster",
            "eks-us-east-1",
            "--backend",
            "s3",
            "--state-bucket",
            "northwind-tfstate",
            "--state-region",
            "us-east-1",
            "--out",
            str(tmp_path),
        ],
    )
    assert result.exit_code == 0, result.output
    assert [p.name for p in (tmp_path / "stacks").iterdir()] == ["eks-us-east-1"]


@pytest.mark.parametrize(
    "args, want",
    [
        # an on-prem cluster has no cloud resources, as in the Pulumi program
        (["--cluster", "onprem-sjc"], "--cluster onprem-sjc: is on-prem"),
        # a misspelt cluster lists the clusters that have a stack
        (["--cluster", "gke-tpu-us-east"], "Clusters with a stack: gke-gpu-us-east4, gke-tpu-us-east5"),
        # s3 state needs the bucket's region
        (["--backend", "s3", "--state-bucket", "b"], "pass --state-region REGION"),
        # a moment without a time zone could be read in any of them (a day alone is its midnight UTC)
        (["--now", "2026-12-01T08:00"], "--now '2026-12-01T08:00': not a day or a moment with a time zone"),
    ],
)
def test_qm_synth_refuses_usage_mistakes_with_exit_2(args: list[str], want: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["synth", str(INVENTORY), *args, "--out", str(tmp_path)])
    assert result.exit_code == 2 and want in result.output
    assert not (tmp_path / "stacks").exists()


def test_qm_synth_now_builds_a_capacity_block_as_it_stands_then(inventory: Inventory, tmp_path: Path) -> None:
    """Mid-block (the example block runs 2026-10-01 to 2026-12-31), the group starts with the block's nodes and only
    the scale-down is still ahead (issue 16, point 4)."""
    result = CliRunner().invoke(
        app,
        [
            "synth",
            str(INVENTORY),
            "--cluster",
            "eks-us-east-1",
            "--now",
            "2026-11-25T00:00:00Z",
            "--out",
            str(tmp_path),
        ],
    )
    assert result.exit_code == 0, result.output
    stack = json.loads((tmp_path / "stacks" / "eks-us-east-1" / "cdk.tf.json").read_text())["resource"]
    [pool] = [p for p in inventory.cluster_by_name["eks-us-east-1"].pools if p.provisioning == "capacity-block"]
    actions = [b["scheduled_action_name"] for b in stack["aws_autoscaling_schedule"].values()]
    assert actions == [f"{pool.name}-block-end"]
    group = next(b for b in stack["aws_eks_node_group"].values() if b["node_group_name"] == pool.name)
    assert group["scaling_config"]["desired_size"] == pool.nodes


def test_qm_synth_without_nodejs_says_what_to_install(tmp_path: Path) -> None:
    """PATH without `node`: a clear message and exit 2 (a missing prerequisite), before cdktf (jsii) is imported."""
    env = {**os.environ, "PATH": str(tmp_path)}
    run = subprocess.run(
        [sys.executable, "-c", "from quartermaster.cli import main; main()", "synth", "--out", str(tmp_path / "out")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 2
    assert "Node.js is not on PATH (`node` not found)" in run.stderr and "Install Node.js" in run.stderr
    assert "Traceback" not in run.stderr and not (tmp_path / "out").exists()


def test_qm_synth_without_the_terraform_extra_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As if cdktf were not installed (a module name that does not exist stands in): exit 2, which extra, no
    traceback, nothing written."""
    monkeypatch.setattr(synth_command, "TERRAFORM_MODULES", ("cdktf_is_not_installed",))
    result = CliRunner().invoke(app, ["synth", str(INVENTORY), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert "needs the `terraform` extra" in result.output and "pip install 'quartermaster[terraform]'" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert not (tmp_path / "out").exists()
