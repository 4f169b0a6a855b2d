"""Parity: for every example cluster, the synthesised Terraform declares the cloud resources and Kubernetes
objects the Pulumi program registers under mocks, with the same key arguments; and drift on either side
is reported."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pulumi_gcp as gcp
import pytest

from quartermaster.capacity import nodes_per_slice
from quartermaster.model import Inventory
from quartermaster.modules.cloud import cluster_spec
from quartermaster.modules.kueue import objects_for_cluster
from quartermaster.modules.terraform import stack_clusters
from quartermaster.providers.gke import pulumi_components as pulumi_gke
from quartermaster.providers.gke import terraform_resources as tf_resources
from quartermaster.providers.gke.cloud import GkeNodePoolSpec
from tests.builders import BEFORE_THE_BLOCK
from tests.pulumi.harness import run_cluster, run_stack
from tests.terraform.conftest import BRANCH_POOLS
from tests.terraform.parity import View, differences, pulumi_view, terraform_view
from tests.terraform.test_synth import without_metadata

pytestmark = pytest.mark.node  # CDKTF synthesises through jsii, which runs Node.js
EXAMPLE_CLUSTERS = ("gke-gpu-us-east4", "gke-tpu-us-east5", "eks-us-east-1", "aks-eastus", "mk-manager")


@cache
def pulumi_of(cluster: str) -> View:
    """The Pulumi program's view of a stack (stacks/Pulumi.<cluster>.yaml), once per session."""
    return pulumi_view(run_stack(cluster))


def synth_one(inventory: Inventory, cluster: str, out: Path) -> dict[str, Any]:
    from quartermaster.modules.terraform.app import synth

    [path] = synth(inventory, [cluster], out, BEFORE_THE_BLOCK)
    return json.loads(path.read_text())


def test_the_examples_are_every_cloud_cluster(inventory: Inventory) -> None:
    assert set(stack_clusters(inventory)) == set(EXAMPLE_CLUSTERS)


@pytest.mark.parametrize("cluster", EXAMPLE_CLUSTERS)
def test_terraform_declares_what_pulumi_registers(inventory: Inventory, stacks: dict[str, Any], cluster: str) -> None:
    pulumi, terraform = pulumi_of(cluster), terraform_view(stacks[cluster])
    assert differences(pulumi, terraform) == []
    # the view compares real resources: as many as the specs and the Kueue builders imply
    capacity = cluster_spec(inventory, cluster, BEFORE_THE_BLOCK).capacity

    def specs(name: str) -> list[Any]:
        return getattr(capacity, name, [])  # the lists the cluster's provider has; the others are none

    want = {
        "node_pool": len(specs("gke_node_pools")),
        "reservation": sum(r.create for r in specs("gcp_reservations")),
        "quota_preference": len(specs("gcp_quota_preferences")),
        "node_group": len(specs("eks_node_groups")),
        "service_quota": len(specs("aws_service_quotas")),
        "agent_pool": len(specs("aks_agent_pools")),
        "kubernetes_object": len(objects_for_cluster(inventory, cluster, BEFORE_THE_BLOCK)),
    }
    assert {k: len(terraform[k]) for k in want} == want


@pytest.mark.parametrize("cluster", list(BRANCH_POOLS))
def test_terraform_declares_what_pulumi_registers_for_the_branches_the_example_lacks(
    every_branch: Inventory, every_branch_stacks: dict[str, Any], cluster: str
) -> None:
    """GPUDirect RDMA pools, an ODCR the stack creates and an AKS Spot pool come out the same on both sides."""
    pulumi, terraform = pulumi_view(run_cluster(every_branch, cluster)), terraform_view(every_branch_stacks[cluster])
    assert differences(pulumi, terraform) == []
    pools = {**terraform["node_pool"], **terraform["node_group"], **terraform["agent_pool"]}
    assert {p["name"] for p in BRANCH_POOLS[cluster]} <= set(pools)


def test_the_view_holds_the_numbers_of_the_inventory(inventory: Inventory, stacks: dict[str, Any]) -> None:
    """TPU slice sizes and topologies come out of both programs as the inventory implies."""
    view = terraform_view(stacks["gke-tpu-us-east5"])
    for pool in inventory.cluster_by_name["gke-tpu-us-east5"].pools:
        assert pool.tpu is not None
        for i in range(pool.tpu.slices):
            got = view["node_pool"][f"{pool.name}-{i}"]
            assert got["node_count"] == nodes_per_slice(pool, inventory.machine_by_name[pool.machine])
            assert got["placement_policy.tpu_topology"] == pool.tpu.topology
    assert view == pulumi_of("gke-tpu-us-east5")


def test_parity_reports_a_terraform_side_that_drifts(
    inventory: Inventory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    build = tf_resources.gke_node_pool

    def one_node_more(spec: GkeNodePoolSpec, depends_on: tuple[str, ...] = ()) -> Any:
        resource = build(spec, depends_on)
        return (
            resource
            if resource.name != "v5p-2x2x4-1"
            else type(resource)(**{**resource.__dict__, "body": {**resource.body, "node_count": spec.node_count + 1}})
        )

    monkeypatch.setattr(tf_resources, "gke_node_pool", one_node_more)
    drifted = terraform_view(synth_one(inventory, "gke-tpu-us-east5", tmp_path))
    pool = inventory.pool_by_name["v5p-2x2x4"]
    nodes = nodes_per_slice(pool, inventory.machine_by_name[pool.machine])
    assert differences(pulumi_of("gke-tpu-us-east5"), drifted) == [
        f"node_pool v5p-2x2x4-1: node_count is {nodes} in Pulumi but {nodes + 1} in Terraform"
    ]


def test_parity_reports_a_pulumi_side_that_drifts(stacks: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    build = pulumi_gke.node_pool_args

    def other_topology(spec: GkeNodePoolSpec) -> gcp.container.NodePoolArgs:
        args = build(spec)
        if spec.tpu_topology == "4x4":
            args.placement_policy = gcp.container.NodePoolPlacementPolicyArgs(type="COMPACT", tpu_topology="2x4")
        return args

    monkeypatch.setattr(pulumi_gke, "node_pool_args", other_topology)
    drifted = pulumi_view(run_stack("gke-tpu-us-east5"))
    assert differences(drifted, terraform_view(stacks["gke-tpu-us-east5"])) == [
        f"node_pool v6e-4x4-resv-{i}: placement_policy.tpu_topology is '2x4' in Pulumi but '4x4' in Terraform"
        for i in range(2)
    ]


def test_parity_reports_a_resource_only_one_side_declares(stacks: dict[str, Any]) -> None:
    terraform = json.loads(json.dumps(stacks["gke-tpu-us-east5"]))
    [name] = terraform["resource"].pop("google_compute_reservation")
    assert differences(pulumi_of("gke-tpu-us-east5"), terraform_view(terraform)) == [
        f"reservation {name}: only Pulumi declares it"
    ]


@pytest.mark.parametrize("cluster", ["gke-gpu-us-east4", "eks-us-east-1"])  # the TPU stack creates, reads nothing
def test_both_programs_read_the_same_existing_capacity_and_grants(stacks: dict[str, Any], cluster: str) -> None:
    """Issue 16: what a stack reads instead of creating (existing reservations, granted quota) is the same in the
    Pulumi program (reads under mocks) and in the Terraform JSON (data sources)."""
    reads = {
        (token.split("/")[-1].split(":")[0], json.dumps(dict(sorted(args.items())), sort_keys=True))
        for token, args in run_stack(cluster).invokes
    }
    token_of = {
        "google_compute_reservation": "getReservation",
        "google_cloud_quotas_quota_info": "getSQuotaInfo",
        "aws_servicequotas_service_quota": "getServiceQuota",
    }
    camel = {"quota_id": "quotaId", "service_code": "serviceCode", "quota_code": "quotaCode"}
    data = {
        (
            token_of[kind],
            json.dumps(
                {camel.get(k, k): v for k, v in sorted(without_metadata(body).items()) if k != "provider"},
                sort_keys=True,
            ),
        )
        for kind, bodies in stacks[cluster].get("data", {}).items()
        for body in bodies.values()
    }
    assert data and reads == data
