"""The offline admission check of what `qm render` emits (issue 28, points 2 and 3): for every team queue on every
cluster, a one-node workload of each of its flavors is admissible (quota, node labels, taints, TAS levels, admission
checks), on the example and on generated inventories; TAS flavors only where nodes exist or a ProvisioningRequest
brings them up; `qm validate --kueue` names a queue that could never get nodes, and why."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from bench.generate import enterprise_inventory
from quartermaster.cli import app
from quartermaster.loader import load
from quartermaster.model import Inventory, Pool, Taint
from quartermaster.modules.kueue import objects_for_cluster
from quartermaster.modules.kueue.admission import (
    PodSet,
    _Objects,
    admission_refusals,
    flavors_of,
    kueue_flavor,
    pool_nodes,
    workload_refusals,
)
from tests.builders import BEFORE_THE_BLOCK, DURING_THE_BLOCK, make_inventory
from tests.paths import INVENTORY


@pytest.fixture(scope="module")
def example() -> Inventory:
    return load(INVENTORY).inventory


def refusals(inventory: Inventory, now: dt.datetime = BEFORE_THE_BLOCK) -> list[str]:
    return [
        r.format()
        for c in inventory.clusters
        for r in admission_refusals(inventory, c.name, objects_for_cluster(inventory, c.name, now), now)
    ]


def flavor(inventory: Inventory, cluster: str, name: str) -> dict[str, Any]:
    return next(
        o
        for o in objects_for_cluster(inventory, cluster, DURING_THE_BLOCK)
        if o["kind"] == "ResourceFlavor" and o["metadata"]["name"] == name
    )


@pytest.mark.parametrize("now", [BEFORE_THE_BLOCK, DURING_THE_BLOCK])
def test_every_queue_of_the_example_admits_a_one_node_workload_of_each_flavor(
    example: Inventory, now: dt.datetime
) -> None:
    assert refusals(example, now) == []


def with_pools(inventory: Inventory, change: Any) -> Inventory:
    """The inventory with `change(cluster, pool) -> pool` applied to every pool (model_copy: no re-validation)."""
    clusters = tuple(c.model_copy(update={"pools": tuple(change(c, p) for p in c.pools)}) for c in inventory.clusters)
    return inventory.model_copy(update={"clusters": clusters})


def everything_topology_aware(inventory: Inventory) -> Inventory:
    return inventory.model_copy(
        update={"clusters": tuple(c.model_copy(update={"topology_aware": True}) for c in inventory.clusters)}
    )


def fixed_size(_: Any, pool: Pool) -> Pool:
    if pool.autoscaling is None or pool.provisioning == "flex-start":
        return pool
    return pool.model_copy(update={"autoscaling": None, "nodes": pool.autoscaling.max_nodes})


def spot_where_possible(cluster: Any, pool: Pool) -> Pool:
    if cluster.kind in ("eks", "aks") and pool.provisioning == "on-demand":
        return pool.model_copy(update={"provisioning": "spot"})
    return pool


def tainted_on_prem(cluster: Any, pool: Pool) -> Pool:
    if cluster.kind != "onprem":
        return pool
    return pool.model_copy(update={"taints": (*pool.taints, Taint(key="northwind.ai/dedicated", value=pool.name))})


# Variants of the example: each changes how nodes come to be, which the flavors must follow.
VARIANTS = {
    # TAS on every cluster, EKS and AKS included: scale-from-zero pools must get plain flavors
    "every cluster topology-aware": everything_topology_aware,
    # every autoscaling pool fixed (flex-start excepted): all of them become TAS flavors
    "fixed sizes, topology-aware": lambda inv: with_pools(everything_topology_aware(inv), fixed_size),
    # EKS and AKS on-demand pools turned spot: AKS adds its Spot taint, which the flavor must tolerate
    "spot on EKS and AKS": lambda inv: with_pools(everything_topology_aware(inv), spot_where_possible),
    # on-prem nodes tainted for their pool: the flavors tolerate the pool's own taints
    "tainted on-prem pools": lambda inv: with_pools(inv, tainted_on_prem),
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_generated_variants_of_the_example_stay_admissible(example: Inventory, variant: str) -> None:
    assert refusals(VARIANTS[variant](example)) == []


def test_a_generated_enterprise_inventory_is_admissible(tmp_path: Path) -> None:
    """bench/generate.py's organisation (teams x flavors over four GKE clusters, a third of the pools spot), made
    topology-aware."""
    inventory = load(enterprise_inventory(tmp_path / "inv", teams=12, flavors=8)).inventory
    contact = inventory.policy.model_copy(update={"quota_contact_email": "capacity@example.com"})  # GKE quota specs
    assert refusals(everything_topology_aware(inventory.model_copy(update={"policy": contact}))) == []


# --- point 2: TAS as Kueue allows it ------------------------------------------------------------------------


def test_the_spot_pool_that_scales_from_zero_gets_a_plain_flavor(example: Inventory) -> None:
    """Issue 28: `h100-mega-spot` (0-8 nodes, no ProvisioningRequest) was a TAS flavor whose 64 GPUs of quota could
    never be used; the fixed reservation pool and the flex-start pool (behind its ProvisioningRequest) stay TAS."""
    assert "topologyName" not in flavor(example, "gke-gpu-us-east4", "h100-mega-spot")["spec"]
    assert flavor(example, "gke-gpu-us-east4", "h100-mega-resv")["spec"]["topologyName"] == "gke-hostname"
    assert flavor(example, "gke-gpu-us-east4", "h100-flex")["spec"]["topologyName"] == "gke-hostname"


def test_a_tas_flavor_on_a_pool_without_nodes_is_named_with_the_reason(example: Inventory) -> None:
    objects = objects_for_cluster(example, "gke-gpu-us-east4", BEFORE_THE_BLOCK)
    for o in objects:
        if o["kind"] == "ResourceFlavor" and o["metadata"]["name"] == "h100-mega-spot":
            o["spec"]["topologyName"] = "gke-hostname"  # what was emitted before
    found = [r for r in admission_refusals(example, "gke-gpu-us-east4", objects, BEFORE_THE_BLOCK)]
    queues = sorted(t.name for t in example.teams if any(q.flavor == "h100-mega-spot" for q in t.quotas))
    assert sorted(r.queue for r in found) == queues
    assert all("scales from 0 nodes with no ProvisioningRequest admission check" in r.reason for r in found)


def test_qm_validate_kueue_names_the_queues_that_could_never_get_nodes(tmp_path: Path, example: Inventory) -> None:
    rendered = tmp_path / "rendered"
    assert CliRunner().invoke(app, ["render", str(INVENTORY), "--out", str(rendered)]).exit_code == 0
    ok = CliRunner().invoke(app, ["validate", str(INVENTORY), "--kueue", str(rendered)])
    assert ok.exit_code == 0, ok.output
    path = rendered / "gke-gpu-us-east4.yaml"
    text = path.read_text()
    head, tail = text.split("  name: h100-mega-spot\nspec:\n", 1)
    path.write_text(head + "  name: h100-mega-spot\nspec:\n  topologyName: gke-hostname\n" + tail)
    stale = CliRunner().invoke(app, ["validate", str(INVENTORY), "--kueue", str(rendered)])
    assert stale.exit_code == 1
    message = " ".join(stale.output.split())
    assert (
        "ClusterQueue rl-research flavor h100-mega-spot: it is topology-aware and pool h100-mega-spot scales" in message
    )
    assert "so the queue never gets nodes here" in message


# --- point 3: each rule of the check catches its failure --------------------------------------------------------


def broken(inventory: Inventory, cluster: str, edit: Any) -> list[str]:
    objects = objects_for_cluster(inventory, cluster, BEFORE_THE_BLOCK)
    edit(objects)
    return [r.reason for r in admission_refusals(inventory, cluster, objects, BEFORE_THE_BLOCK)]


def of(objects: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    return next(o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name)


def test_a_flavor_label_no_node_carries_is_refused(example: Inventory) -> None:
    def edit(objects: list[dict[str, Any]]) -> None:
        of(objects, "ResourceFlavor", "ndh100")["spec"]["nodeLabels"]["kubernetes.azure.com/agentpool"] = "ndh100x"

    assert broken(example, "aks-eastus", edit)[0].startswith(
        "no node of pool ndh100 carries the flavor's node labels (kubernetes.azure.com/agentpool=ndh100x)"
    )


def test_a_taint_the_flavor_does_not_tolerate_is_refused(example: Inventory) -> None:
    def edit(objects: list[dict[str, Any]]) -> None:
        of(objects, "ResourceFlavor", "h100-flex")["spec"]["tolerations"] = [
            t for t in of(objects, "ResourceFlavor", "h100-flex")["spec"]["tolerations"] if "gke-queued" not in t["key"]
        ]

    assert any(
        "tainted cloud.google.com/gke-queued=true:NoSchedule" in r for r in broken(example, "gke-gpu-us-east4", edit)
    )


def test_a_topology_level_the_nodes_do_not_carry_is_refused(example: Inventory) -> None:
    def edit(objects: list[dict[str, Any]]) -> None:
        of(objects, "Topology", "gke-hostname")["spec"]["levels"].insert(
            0, {"nodeLabel": "cloud.google.com/gce-topology-block"}
        )

    assert any(
        "topology level cloud.google.com/gce-topology-block is not a label" in r
        for r in broken(example, "gke-gpu-us-east4", edit)
    )


def test_a_missing_admission_check_is_refused(example: Inventory) -> None:
    def edit(objects: list[dict[str, Any]]) -> None:
        objects[:] = [o for o in objects if o["kind"] != "ProvisioningRequestConfig"]

    assert any(
        "names ProvisioningRequestConfig h100-flex-flex-start, not emitted" in r
        for r in broken(example, "gke-gpu-us-east4", edit)
    )


def test_a_queued_provisioning_pool_without_its_check_is_refused(example: Inventory) -> None:
    def edit(objects: list[dict[str, Any]]) -> None:
        for o in objects:
            if o["kind"] == "ClusterQueue":
                o["spec"].pop("admissionChecksStrategy", None)

    assert any("come only through a ProvisioningRequest" in r for r in broken(example, "gke-gpu-us-east4", edit))


def test_quota_smaller_than_a_node_is_refused() -> None:
    """8 GPUs a node (a3-megagpu-8g), 4 of nominal quota and no cohort to borrow from: one node never fits."""
    alone = make_inventory().edit("teams", "ml", cohort=None, quotas=[{"flavor": "h100", "nominal": 4}]).build()
    assert refusals(alone) == [
        "cluster gke-a: ClusterQueue ml flavor h100: the workload requests 8 `nvidia.com/gpu` but the queue holds at "
        "most 4 there (nominal quota plus what it may borrow)"
    ]


def test_borrowing_from_the_cohort_makes_a_small_quota_admissible() -> None:
    """4 of nominal plus 8 another team of the cohort lends: 12 >= 8."""
    shared = (
        make_inventory()
        .edit("teams", "ml", quotas=[{"flavor": "h100", "nominal": 4}])
        .team("other", quotas={"h100": 8}, cohort="org")
        .build()
    )
    assert refusals(shared) == []


# --- issue 36: a pod set without accelerators on a TAS-only queue -------------------------------------------------


@pytest.mark.parametrize("ignore_undeclared, want_refused", [(True, False), (False, True)])
def test_a_cpu_only_pod_set_on_a_tas_only_queue_is_admitted_as_kueue_admits_it(
    example: Inventory, ignore_undeclared: bool, want_refused: bool
) -> None:
    """Kueue's flavor assigner skips a resource the ClusterQueue does not declare under IgnoreUndeclared
    (`assignFlavors`, pkg/scheduler/flavorassigner/flavorassigner.go, kubernetes-sigs/kueue v0.19.2): a driver pod
    asking only cpu and memory is admitted with no flavor, outside TAS, beside the TPU workers; BlockUndeclared
    refuses it for the cpu (the check used to refuse it under both)."""
    cluster = example.cluster_by_name["gke-tpu-us-east5"]
    objects = _Objects(objects_for_cluster(example, cluster.name, BEFORE_THE_BLOCK))
    queue = objects.queue("tpu-research")
    assert queue is not None
    nodes = pool_nodes(example, cluster, BEFORE_THE_BLOCK)
    flavors = flavors_of(queue)
    assert all(objects.topology_aware(f) for f in flavors)  # TAS only
    pool = nodes[flavors[0]]
    sets = [
        PodSet("workers", 1, {pool.resource: Decimal(pool.per_node)}),
        PodSet("driver", 1, {"cpu": Decimal(1), "memory": Decimal(2**30)}),
    ]
    found = workload_refusals(cluster.name, queue, flavors[0], sets, objects, nodes, ignore_undeclared)
    assert bool(found) is want_refused, found
    assert all("which the ClusterQueue does not cover" in r.reason for r in found)


# --- issue 36: cohort limits and whenCanBorrow, as Kueue's resource nodes and flavor assigner count them ----------


def cq(name: str, cohort: str, flavors: list[tuple[str, dict[str, int]]], when_can_borrow: str | None = None) -> dict:
    """A ClusterQueue with one resource group over nvidia.com/gpu: (flavor, {nominalQuota, borrowingLimit, ...})."""
    spec: dict[str, Any] = {
        "cohortName": cohort,
        "resourceGroups": [
            {
                "coveredResources": ["nvidia.com/gpu"],
                "flavors": [{"name": f, "resources": [{"name": "nvidia.com/gpu", **q}]} for f, q in flavors],
            }
        ],
    }
    if when_can_borrow:
        spec["flavorFungibility"] = {"whenCanBorrow": when_can_borrow, "whenCanPreempt": "TryNextFlavor"}
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": name}, "spec": spec}


def cohort(name: str, parent: str | None, quota: dict[str, int] | None = None) -> dict:
    spec: dict[str, Any] = {"parentName": parent} if parent else {}
    if quota is not None:
        spec["resourceGroups"] = [
            {
                "coveredResources": ["nvidia.com/gpu"],
                "flavors": [{"name": "f", "resources": [{"name": "nvidia.com/gpu", **quota}]}],
            }
        ]
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Cohort", "metadata": {"name": name}, "spec": spec}


def held(objects: list[dict], queue: str) -> Decimal:
    return _Objects(objects).quota.available(queue, "f", "nvidia.com/gpu")


@pytest.mark.parametrize(
    "research, want_a, want_b",
    [
        # no cohort limits: a holds its 8 and b's 32 (40); b its 32 and a's 8 (40)
        ({"nominalQuota": 0}, 40, 40),
        # research may borrow at most 8 from org: a holds 8 + 8
        ({"nominalQuota": 0, "borrowingLimit": 8}, 16, 40),
        # research lends nothing to org: b holds only its own 32; a still borrows b's
        ({"nominalQuota": 0, "lendingLimit": 0}, 40, 32),
    ],
)
def test_cohort_borrowing_and_lending_limits_bound_what_a_queue_holds(
    research: dict[str, int], want_a: int, want_b: int
) -> None:
    """org <- research <- ClusterQueue a (8 GPUs); org <- ClusterQueue b (32): `potentialAvailable` and
    `accumulateFromChild` of Kueue v0.19.2's resource_node.go (before issue 36 the check summed a whole tree and
    ignored the cohorts' own limits)."""
    objects = [
        cohort("org", None),
        cohort("research", "org", research),
        cq("a", "research", [("f", {"nominalQuota": 8})]),
        cq("b", "org", [("f", {"nominalQuota": 32})]),
    ]
    assert (held(objects, "a"), held(objects, "b")) == (want_a, want_b)


@pytest.mark.parametrize(
    "when_can_borrow, want",
    [
        # the default: the first flavor that holds 16 GPUs by borrowing is taken
        (None, ("small", True)),
        ("MayStopSearch", ("small", True)),
        # Kueue tries the next flavor, whose nominal quota holds them
        ("TryNextFlavor", ("large", False)),
    ],
)
def test_when_can_borrow_decides_the_flavor_a_job_gets(when_can_borrow: str | None, want: tuple[str, bool]) -> None:
    objects = [
        cohort("org", None),
        cq("team", "org", [("small", {"nominalQuota": 8}), ("large", {"nominalQuota": 32})], when_can_borrow),
        cq("lender", "org", [("small", {"nominalQuota": 32})]),
    ]
    index = _Objects(objects)
    queue = index.queue("team")
    assert queue is not None
    assert kueue_flavor(queue, {"nvidia.com/gpu": Decimal(16)}, index) == want
    assert kueue_flavor(queue, {"nvidia.com/gpu": Decimal(8)}, index) == ("small", False)  # fits its nominal
    assert kueue_flavor(queue, {"nvidia.com/gpu": Decimal(100)}, index) == (None, False)  # fits nowhere
