"""The conflicts guard (`modules.cloud.conflicts`): each contradiction it knows, found alone in an otherwise clean
node pool spec of the example, and both emitters refusing a stack that holds one."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Any

import pytest

from quartermaster.model import Inventory
from quartermaster.modules.cloud import ClusterSpec, SpecError, cloud_module, cluster_spec, conflicts
from quartermaster.modules.pulumi.cluster import ClusterCapacity
from quartermaster.modules.pulumi.resource_error import ResourceError
from quartermaster.modules.terraform import stack_spec
from quartermaster.providers.gke.cloud import GkeReservationAffinity
from tests.builders import BEFORE_THE_BLOCK
from tests.pulumi.harness import run_program

Change = Callable[[Any], Any]


def replace(**changes: object) -> Change:
    return lambda spec: dataclasses.replace(spec, **changes)


def replace_template(**changes: object) -> Change:
    return lambda spec: dataclasses.replace(spec, launch_template=dataclasses.replace(spec.launch_template, **changes))


# (cluster, pool whose spec is changed, the change, the one contradiction it makes). The unchanged specs have none
# (test_the_example_has_no_conflicts); each change breaks exactly one rule.
CASES: dict[str, tuple[str, str, Change, str]] = {
    # GKE: a spot GPU pool autoscaling 0-4 per zone, a TPU slice with COMPACT placement
    "GKE size given twice": (
        "gke-gpu-us-east4",
        "h100-mega-spot",
        replace(node_count=4),
        "set exactly one of `node_count` (fixed size) and `autoscaling`",
    ),
    "GKE spot and flex-start": (
        "gke-gpu-us-east4",
        "h100-mega-spot",
        replace(flex_start=True, queued_provisioning=True, auto_repair=False),
        "`spot` and `flex_start` exclude each other; keep one",
    ),
    "GKE spot consuming a reservation": (
        "gke-gpu-us-east4",
        "h100-mega-spot",
        replace(reservation_affinity=GkeReservationAffinity("SPECIFIC_RESERVATION", "k", ("r",))),
        "`spot`/`flex_start` need reservation_affinity NO_RESERVATION; drop the reservation",
    ),
    "GKE queued provisioning without flex-start": (
        "gke-gpu-us-east4",
        "h100-mega-spot",
        replace(queued_provisioning=True),
        "`queued_provisioning` needs `flex_start`; set flex_start or drop queued provisioning",
    ),
    "GKE flex-start of a fixed size": (
        "gke-gpu-us-east4",
        "h100-flex",
        replace(node_count=8, autoscaling=None),
        "`flex_start` pools autoscale from 0; replace `node_count` with `autoscaling`",
    ),
    "GKE flex-start with auto-repair": (
        "gke-gpu-us-east4",
        "h100-flex",
        replace(auto_repair=True),
        "`flex_start` needs `auto_repair` off; set auto_repair=False",
    ),
    "GKE COMPACT placement over two zones": (
        "gke-tpu-us-east5",
        "v5p-2x2x4",
        replace(node_locations=("us-east5-a", "us-east5-b")),
        "COMPACT `placement_type` needs exactly one zone in `node_locations`",
    ),
    "GKE TPU topology on a GPU pool": (
        "gke-gpu-us-east4",
        "h100-mega-spot",
        replace(tpu_topology="2x2x1"),
        "`tpu_topology` (TPU) and `guest_accelerator` (GPU) exclude each other",
    ),
    # EKS: an on-demand node group and a capacity block's
    "EKS capacity block naming its instance type": (
        "eks-us-east-1",
        "p5-cb",
        replace(instance_types=("p5.48xlarge",)),
        "CAPACITY_BLOCK `capacity_type` needs empty `instance_types` (the type is in the launch template)",
    ),
    "EKS capacity-block market without the capacity type": (
        "eks-us-east-1",
        "p5-od",
        replace_template(market_type="capacity-block"),
        "`capacity_type` CAPACITY_BLOCK and launch template `market_type` capacity-block go together",
    ),
    "EKS capacity block without its reservation": (
        "eks-us-east-1",
        "p5-cb",
        replace_template(capacity_reservation_id=None),
        "CAPACITY_BLOCK `capacity_type` needs the block's `capacity_reservation_id`",
    ),
    "EKS placement group over two subnets": (
        "eks-us-east-1",
        "p5-od",
        lambda s: replace_template(placement_group="pg")(replace(subnet_ids=("subnet-a", "subnet-b"))(s)),
        "a cluster `placement_group` needs exactly one subnet (one zone)",
    ),
    "EKS desired size above the maximum": (
        "eks-us-east-1",
        "p5-od",
        lambda s: dataclasses.replace(s, desired_size=s.max_size + 1),
        "`desired_size` must lie within `min_size` and `max_size`",
    ),
    # AKS: an autoscaled agent pool
    "AKS autoscaling without bounds": (
        "aks-eastus",
        "ndh100",
        replace(min_count=None),
        "`enable_auto_scaling` needs `min_count` and `max_count`, and they need it",
    ),
    "AKS spot in a capacity reservation group": (
        "aks-eastus",
        "ndh100",
        replace(scale_set_priority="Spot", capacity_reservation_group_id="crg"),
        "Spot `scale_set_priority` cannot use a `capacity_reservation_group_id`",
    ),
}


def changed(inventory: Inventory, cluster: str, pool: str, change: Change) -> ClusterSpec:
    """The cluster's spec with `change` applied to the (first) node pool spec of inventory pool `pool`."""
    spec = cluster_spec(inventory, cluster, BEFORE_THE_BLOCK)
    capacity = spec.capacity
    for field in dataclasses.fields(capacity):
        specs = getattr(capacity, field.name)
        hits = [i for i, s in enumerate(specs) if getattr(s, "pool", None) == pool]
        if hits:
            specs = [change(s) if i == hits[0] else s for i, s in enumerate(specs)]
            return dataclasses.replace(spec, capacity=dataclasses.replace(capacity, **{field.name: specs}))
    raise AssertionError(f"no spec of pool {pool} in {cluster}")


def test_the_example_has_no_conflicts(inventory: Inventory) -> None:
    for cluster in {c for c, _, _, _ in CASES.values()}:
        assert conflicts(cluster_spec(inventory, cluster, BEFORE_THE_BLOCK)) == []


def test_every_branch_of_the_guard_is_a_case() -> None:
    # one case per `out.append` of the three providers' `conflicts` (8 GKE, 5 EKS, 2 AKS)
    assert len(CASES) == 15


@pytest.mark.parametrize("cluster, pool, change, want", CASES.values(), ids=list(CASES))
def test_each_contradiction_is_named_with_its_pool_and_way_out(
    inventory: Inventory, cluster: str, pool: str, change: Change, want: str
) -> None:
    spec = changed(inventory, cluster, pool, change)
    module = cloud_module(spec.kind)
    assert module is not None
    [problem] = conflicts(spec)
    title = next(module.pool_title(s) for s in module.pool_specs(spec.capacity) if s.pool == pool)
    assert problem == f"{title}: {want}"


# One contradiction per provider, refused by both emitters.
REFUSED = [
    "GKE spot consuming a reservation",
    "EKS desired size above the maximum",
    "AKS spot in a capacity reservation group",
]


@pytest.mark.parametrize("case", REFUSED)
def test_terraform_refuses_a_conflicting_stack(inventory: Inventory, case: str) -> None:
    cluster, pool, change, want = CASES[case]
    with pytest.raises(SpecError, match=f"^cluster {cluster}: .*" + re.escape(f"{pool}: {want}")):
        stack_spec(changed(inventory, cluster, pool, change), [])


@pytest.mark.parametrize("case", REFUSED)
def test_pulumi_refuses_a_conflicting_pool(inventory: Inventory, case: str) -> None:
    cluster, pool, change, want = CASES[case]
    spec = changed(inventory, cluster, pool, change)
    with pytest.raises(ResourceError, match=re.escape(f"{pool}: {want}")):
        run_program(cluster, {}, lambda: ClusterCapacity(cluster, spec))
