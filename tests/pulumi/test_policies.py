"""Policies over everything the example stacks register, each written as the sentence it checks."""

from __future__ import annotations

import pytest

from quartermaster.model import Inventory
from quartermaster.names import POOL_LABEL
from tests.pulumi.harness import registered

STACKS = ("gke-gpu-us-east4", "gke-tpu-us-east5", "eks-us-east-1", "aks-eastus", "mk-manager")
NAMESPACE_LABEL = "kubernetes.io/metadata.name"


def test_every_accelerator_pool_is_tainted(inventory: Inventory) -> None:
    checked = 0
    for stack in STACKS:
        reg = registered(stack)
        for r in reg.of_type("gcp:container/nodePool:NodePool"):
            resource = inventory.machine_by_name[r.inputs["nodeConfig"]["machineType"]].resource_name
            assert {"key": resource, "value": "present", "effect": "NO_SCHEDULE"} in r.inputs["nodeConfig"]["taints"], (
                r.name
            )
            checked += 1
        for r in reg.of_type("aws:eks/nodeGroup:NodeGroup"):
            resource = inventory.machine_by_name[inventory.pool_by_name[r.name].machine].resource_name
            assert {"key": resource, "value": "present", "effect": "NO_SCHEDULE"} in r.inputs["taints"], r.name
            checked += 1
        for r in reg.of_type("azure-native:containerservice:AgentPool"):
            resource = inventory.machine_by_name[r.inputs["vmSize"]].resource_name
            assert f"{resource}=present:NoSchedule" in r.inputs["nodeTaints"], r.name
            checked += 1
    cloud_pools = sum(p.tpu.slices if p.tpu else 1 for c in inventory.clusters if c.kind != "onprem" for p in c.pools)
    assert checked == cloud_pools


@pytest.mark.parametrize("stack", STACKS)
def test_no_cluster_queue_admits_all_namespaces(inventory: Inventory, stack: str) -> None:
    queues = registered(stack).of_type("kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue")
    assert queues
    for q in queues:
        team = inventory.team_by_name[q.inputs["metadata"]["name"]]
        selector = q.inputs["spec"]["namespaceSelector"]
        assert selector, f"ClusterQueue {team.name} has an empty namespaceSelector (admits every namespace)"
        [expression] = selector["matchExpressions"]
        assert (expression["key"], expression["operator"]) == (NAMESPACE_LABEL, "In")
        assert sorted(expression["values"]) == sorted(team.namespaces)


def test_every_spot_pool_is_its_own_flavor(inventory: Inventory) -> None:
    spot = [(c, p) for c in inventory.clusters if c.kind != "onprem" for p in c.pools if p.provisioning == "spot"]
    assert spot
    for cluster, pool in spot:
        flavors = registered(cluster.name).of_type("kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor")
        [own] = [f for f in flavors if f.inputs["metadata"]["name"] == pool.name]
        labels = own.inputs["spec"]["nodeLabels"]
        assert pool.name in labels.values() or labels.get(POOL_LABEL) == pool.name
        others = [f for f in flavors if f is not own]
        assert all(f.inputs["spec"].get("nodeLabels") != labels for f in others), "a spot flavor shares its nodes"


@pytest.mark.parametrize("stack", ["gke-tpu-us-east5"])  # creates its commitment's reservation; the others read
def test_every_reservation_is_protected_from_deletion(stack: str) -> None:
    reservations = registered(stack).of_type("gcp:compute/reservation:Reservation")
    assert all(r.protect for r in reservations)


@pytest.mark.parametrize("stack", STACKS)
def test_no_namespace_is_deleted_when_its_team_leaves_the_inventory(stack: str) -> None:
    """Issue 17: Pulumi retains every Namespace on delete, so removing a team (or a namespace that existed before,
    which server-side apply adopts) never deletes the workloads in it."""
    namespaces = registered(stack).of_type("kubernetes:core/v1:Namespace")
    assert namespaces and all(n.retain_on_delete for n in namespaces)
    others = [r for r in registered(stack).resources if r.type != "kubernetes:core/v1:Namespace"]
    assert not any(r.retain_on_delete for r in others)
