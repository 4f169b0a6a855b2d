"""Every example stack, run under Pulumi's mocks, registers exactly what the inventory implies.

Expected values come from the inventory (and the capacity helpers), never from literals.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from quartermaster.capacity import nodes_per_slice, open_pools, pool_accelerators, pool_max_nodes, pool_min_nodes
from quartermaster.model import Inventory, Pool
from quartermaster.modules.cloud import cluster_spec
from quartermaster.modules.cloud.spec_support import read_table
from quartermaster.modules.kueue.builders import accelerator_flavor_name
from quartermaster.providers.eks.cloud import DATA as EKS_DATA
from quartermaster.providers.gke.cloud import DATA as GKE_DATA
from tests.builders import BEFORE_THE_BLOCK
from tests.pulumi.harness import STACKS, Registered, Resource, registered, run_cluster, stack_config

EXAMPLE_STACKS = ("gke-gpu-us-east4", "gke-tpu-us-east5", "eks-us-east-1", "aks-eastus", "mk-manager")
NODE_POOL = "gcp:container/nodePool:NodePool"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
AGENT_POOL = "azure-native:containerservice:AgentPool"
CLUSTER_QUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"
RESOURCE_FLAVOR = "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor"


def pools_of(inventory: Inventory, stack: str) -> tuple[Pool, ...]:
    return inventory.cluster_by_name[stack_config(stack)["quartermaster:cluster"]].pools


# --- stacks and clusters -----------------------------------------------------------------------------


def test_every_cloud_cluster_has_a_stack_and_onprem_has_none(inventory: Inventory) -> None:
    want = {c.name for c in inventory.clusters if c.kind != "onprem"}
    got = {p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in STACKS.glob("Pulumi.*.yaml")}
    assert got == want == set(EXAMPLE_STACKS)
    for stack in got:
        assert stack_config(stack)["quartermaster:cluster"] == stack


@pytest.mark.parametrize("stack", EXAMPLE_STACKS)
def test_every_resource_is_parented_under_the_cluster_component(stack: str) -> None:
    reg = registered(stack)
    [top] = reg.of_type("quartermaster:cluster:ClusterCapacity")
    assert "pulumi:pulumi:Stack" in top.parent
    for r in reg.resources:
        if r is not top:
            chain = r
            while chain.parent != top.urn:
                chain = reg.parent_of(chain)  # raises StopIteration if a parent is outside the stack
    components = [r for r in reg.resources if r.type.startswith("quartermaster:") and r is not top]
    assert components and all(c.type.count(":") == 2 for c in components)


# --- GKE ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("stack", ["gke-gpu-us-east4", "gke-tpu-us-east5"])
def test_gke_node_pools_are_one_per_gpu_pool_and_one_per_tpu_slice(inventory: Inventory, stack: str) -> None:
    reg = registered(stack)
    want = {
        p.name if p.tpu is None else f"{p.name}-{i}"
        for p in pools_of(inventory, stack)
        for i in range(p.tpu.slices if p.tpu else 1)
    }
    node_pools = reg.of_type(NODE_POOL)
    assert {r.name for r in node_pools} == want and len(node_pools) == len(want)
    for r in node_pools:
        parent = reg.parent_of(r)
        assert parent.type == "quartermaster:gke:AcceleratorPool"
        assert r.name == parent.name or r.name.rsplit("-", 1)[0] == parent.name


def test_gke_gpu_pools_declare_their_accelerators_sizes_and_provisioning(inventory: Inventory) -> None:
    reg = registered("gke-gpu-us-east4")
    for pool in pools_of(inventory, "gke-gpu-us-east4"):
        machine = inventory.machine_by_name[pool.machine]
        got = reg.named(NODE_POOL, pool.name).inputs
        [accelerator] = got["nodeConfig"]["guestAccelerators"]
        assert (accelerator["type"], accelerator["count"]) == (machine.accelerator_label, machine.accelerators_per_node)
        assert accelerator["gpuDriverInstallationConfig"]["gpuDriverVersion"]
        assert got["nodeLocations"] == list(pool.zones)
        zones = len(pool.zones)
        if pool.autoscaling is None:
            assert got["nodeCount"] * zones == pool.nodes and "autoscaling" not in got
        else:
            assert got["autoscaling"]["maxNodeCount"] * zones == pool_max_nodes(pool, machine)
            assert got["autoscaling"]["minNodeCount"] * zones == pool_min_nodes(pool, machine)
        affinity = got["nodeConfig"]["reservationAffinity"]
        if pool.provisioning == "reservation":
            reservation = inventory.commitment_by_name[pool.commitment or ""].reservation_name
            assert affinity == {
                "consumeReservationType": "SPECIFIC_RESERVATION",
                "key": "compute.googleapis.com/reservation-name",
                "values": [reservation],
            }
        else:
            assert affinity == {"consumeReservationType": "NO_RESERVATION"}
        assert got["nodeConfig"].get("spot", False) == (pool.provisioning == "spot")
        flex = pool.provisioning == "flex-start"
        assert got["nodeConfig"].get("flexStart", False) == flex
        assert got.get("queuedProvisioning", {}).get("enabled", False) == flex
        assert got["management"]["autoRepair"] == (not flex)
        if flex:
            assert got["nodeConfig"]["maxRunDuration"] == f"{(pool.max_run_duration_hours or 0) * 3600}s"


def test_gke_gpudirect_pools_attach_the_machines_additional_networks(inventory: Inventory) -> None:
    reg = registered("gke-gpu-us-east4")
    layout = {r["machine"]: r for r in read_table(GKE_DATA / "gke_gpudirect.csv")}
    gpudirect = [p for p in pools_of(inventory, "gke-gpu-us-east4") if p.gpudirect]
    assert gpudirect, "the example has a GPUDirect pool"
    for pool in gpudirect:
        got = reg.named(NODE_POOL, pool.name).inputs
        row = layout[pool.machine]
        networks = got["networkConfig"]["additionalNodeNetworkConfigs"]
        assert len(networks) == int(row["gvnic_networks"]) + int(row["rdma_subnets"])
        assert got["nodeConfig"]["gvnic"] == {"enabled": True}
        assert got["nodeConfig"].get("gpudirectStrategy") == (row["gpudirect_strategy"] or None)


def test_gke_tpu_slices_are_compact_with_the_topology_and_nodes_per_slice(inventory: Inventory) -> None:
    reg = registered("gke-tpu-us-east5")
    for pool in pools_of(inventory, "gke-tpu-us-east5"):
        assert pool.tpu is not None
        machine = inventory.machine_by_name[pool.machine]
        slices = [reg.named(NODE_POOL, f"{pool.name}-{i}").inputs for i in range(pool.tpu.slices)]
        for got in slices:
            assert got["placementPolicy"] == {"type": "COMPACT", "tpuTopology": pool.tpu.topology}
            assert got["nodeCount"] == nodes_per_slice(pool, machine)
            assert got["nodeLocations"] == list(pool.zones) and len(pool.zones) == 1
            assert got["nodeConfig"]["labels"]["cloud.google.com/gke-tpu-topology"] == pool.tpu.topology
            assert "guestAccelerators" not in got["nodeConfig"]
        chips = sum(s["nodeCount"] for s in slices) * machine.accelerators_per_node
        assert chips == pool_accelerators(inventory, pool)


@pytest.mark.parametrize("stack", ["gke-gpu-us-east4", "gke-tpu-us-east5"])
def test_gcp_reservations_hold_each_consumed_commitment(inventory: Inventory, stack: str) -> None:
    reg = registered(stack)
    consumed = {
        inventory.commitment_by_name[p.commitment]
        for p in pools_of(inventory, stack)
        if p.provisioning == "reservation" and p.commitment
    }
    reservations = reg.of_type("gcp:compute/reservation:Reservation")
    created = {c for c in consumed if c.reservation == "create"}
    assert {r.inputs["name"] for r in reservations} == {c.reservation_name for c in created}
    reads = {args["name"] for token, args in reg.invokes if token == "gcp:compute/getReservation:getReservation"}
    assert reads == {c.reservation_name for c in consumed - created}  # existing reservations are only read
    for c in created:
        got = reg.named("gcp:compute/reservation:Reservation", c.reservation_name or "")
        assert got.inputs["zone"] == c.zone and got.protect
        assert got.inputs["specificReservation"]["count"] == c.count
        assert got.inputs["specificReservation"]["instanceProperties"]["machineType"] == c.machine
        assert got.inputs["specificReservationRequired"] is True
        pool_component = next(
            r
            for r in reg.of_type("quartermaster:gke:AcceleratorPool")
            if inventory.pool_by_name[r.name].commitment == c.name
        )
        assert got.urn in pool_component.dependencies  # depends_on a component = on its children


def test_gcp_quota_preferences_ask_for_what_the_pools_need(inventory: Inventory) -> None:
    """Spot and flex-start pools hold preemptible quota; reserved GPU pools hold on-demand family quota, whose
    NVIDIA_H100_MEGA family id has no public source, so a person files it (issue 16) and no preference asks."""
    reg = registered("gke-gpu-us-east4")
    pool = inventory.pool_by_name
    want = {
        ("PREEMPTIBLE-NVIDIA-H100-MEGA-GPUS-per-project-region", None): pool_accelerators(
            inventory, pool["h100-mega-spot"]
        ),
        ("PREEMPTIBLE-NVIDIA-H100-GPUS-per-project-region", None): pool_accelerators(inventory, pool["h100-flex"]),
    }
    got = {
        (r.inputs["quotaId"], r.inputs["dimensions"].get("gpu_family")): r.inputs["quotaConfig"]["preferredValue"]
        for r in reg.of_type("gcp:cloudquota/sQuotaPreference:SQuotaPreference")
    }
    assert got == {k: str(v) for k, v in want.items()}
    region = inventory.site_by_name[inventory.cluster_by_name["gke-gpu-us-east4"].site].region
    for r in reg.of_type("gcp:cloudquota/sQuotaPreference:SQuotaPreference"):
        assert r.inputs["dimensions"]["region"] == region
        assert r.inputs["parent"] == f"projects/{inventory.cluster_by_name['gke-gpu-us-east4'].project}"
        assert r.inputs["contactEmail"] == inventory.policy.quota_contact_email
    [manual] = cluster_spec(inventory, "gke-gpu-us-east4", BEFORE_THE_BLOCK).manual_quota
    assert (manual.pools, manual.accelerators) == (
        ("h100-mega-resv",),
        pool_accelerators(inventory, pool["h100-mega-resv"]),
    )


def test_quota_requests_never_ask_for_less_than_is_granted(inventory: Inventory) -> None:
    """Issue 16: `preferred_value` and the AWS quota `value` are absolute, so a grant above the need became a
    decrease request (GCP) or a failed apply (AWS). Each request reads what is granted and asks for the larger."""
    granted = {
        "gcp:cloudquota/getSQuotaInfo:getSQuotaInfo": {
            "dimensionsInfos": [
                {"dimensions": {"region": "us-east4"}, "details": [{"value": "1000"}]},  # this region: above
                {"dimensions": {"region": "europe-west4"}, "details": [{"value": "5000"}]},
            ]
        },  # another: ignored
        "aws:servicequotas/getServiceQuota:getServiceQuota": {"value": 99999.0},
    }
    gcp_reg = run_cluster(inventory, "gke-gpu-us-east4", reads=granted)
    asked = {
        r.inputs["quotaId"]: r.inputs["quotaConfig"]["preferredValue"]
        for r in gcp_reg.of_type("gcp:cloudquota/sQuotaPreference:SQuotaPreference")
    }
    assert asked and set(asked.values()) == {"1000"}  # every need (64) is below the grant
    [quota] = run_cluster(inventory, "eks-us-east-1", reads=granted).of_type(
        "aws:servicequotas/serviceQuota:ServiceQuota"
    )
    assert quota.inputs["value"] == 99999.0


def test_tpu_quota_without_a_verified_id_is_left_to_a_person(inventory: Inventory) -> None:
    """The on-demand v5p slices need quota but no Cloud Quotas id is verified; reserved v6e needs none."""
    reg = registered("gke-tpu-us-east5")
    assert not reg.of_type("gcp:cloudquota/sQuotaPreference:SQuotaPreference")
    [manual] = cluster_spec(inventory, "gke-tpu-us-east5", BEFORE_THE_BLOCK).manual_quota
    assert manual.accelerators == pool_accelerators(inventory, inventory.pool_by_name["v5p-2x2x4"])


# --- EKS ---------------------------------------------------------------------------------------------


def _launch_template(reg: Registered, group: Resource) -> dict[str, Any]:
    return next(r for r in reg.of_type(LAUNCH_TEMPLATE) if r.parent == group.parent).inputs


def test_eks_node_groups_match_their_pools(inventory: Inventory) -> None:
    reg = registered("eks-us-east-1")
    cluster = inventory.cluster_by_name["eks-us-east-1"]
    assert cluster.eks is not None
    assert {r.name for r in reg.of_type(NODE_GROUP)} == {p.name for p in cluster.pools}
    for pool in cluster.pools:
        machine = inventory.machine_by_name[pool.machine]
        group = reg.named(NODE_GROUP, pool.name)
        got = group.inputs
        assert got["clusterName"] == cluster.name and got["nodeRoleArn"] == cluster.eks.node_role_arn
        assert got["subnetIds"] == [cluster.eks.subnets[z] for z in pool.zones]
        assert got["scalingConfig"]["maxSize"] == pool_max_nodes(pool, machine)
        assert got["launchTemplate"]["id"] == f"{cluster.name}-{pool.name}-id"
        assert reg.parent_of(group).type == "quartermaster:eks:AcceleratorNodeGroup"


def test_eks_capacity_block_pool_launches_into_its_block(inventory: Inventory) -> None:
    reg = registered("eks-us-east-1")
    blocks = [p for p in inventory.cluster_by_name["eks-us-east-1"].pools if p.provisioning == "capacity-block"]
    assert blocks
    for pool in blocks:
        group = reg.named(NODE_GROUP, pool.name)
        template = _launch_template(reg, group)
        commitment = inventory.commitment_by_name[pool.commitment or ""]
        assert group.inputs["capacityType"] == "CAPACITY_BLOCK"
        assert not group.inputs.get("instanceTypes")
        assert template["instanceType"] == pool.machine
        assert template["instanceMarketOptions"] == {"marketType": "capacity-block"}
        target = template["capacityReservationSpecification"]["capacityReservationTarget"]
        assert target["capacityReservationId"] == commitment.capacity_reservation_id
        # Issue 16: the group was created with 4 nodes, whose launches fail before the block is active. It stays
        # at 0 and two scheduled actions on its Auto Scaling group scale it to the block's nodes when the block
        # starts (11:30 UTC on its start day: blocks are whole days ending at 11:30 UTC) and back to 0 forty
        # minutes before it ends (EC2 terminates from 30 minutes before the end).
        assert group.inputs["scalingConfig"]["minSize"] == group.inputs["scalingConfig"]["desiredSize"] == 0
        nodes = pool_max_nodes(pool, inventory.machine_by_name[pool.machine])
        start = dt.datetime.combine(commitment.start, dt.time(11, 30))
        end = dt.datetime.combine(commitment.start + dt.timedelta(days=commitment.term_days), dt.time(10, 50))
        schedules = {r.name: r.inputs for r in reg.of_type("aws:autoscaling/schedule:Schedule")}
        asg = {"autoscalingGroupName": f"eks-{pool.name}-asg", "region": "us-east-1"}
        assert schedules[f"{pool.name}-block-start"] == {
            **asg,
            "scheduledActionName": f"{pool.name}-block-start",
            "startTime": f"{start.isoformat()}Z",
            "minSize": nodes,
            "maxSize": nodes,
            "desiredCapacity": nodes,
        }
        assert schedules[f"{pool.name}-block-end"] == {
            **asg,
            "scheduledActionName": f"{pool.name}-block-end",
            "startTime": f"{end.isoformat()}Z",
            "minSize": 0,
            "maxSize": nodes,
            "desiredCapacity": 0,
        }
        assert "scalingConfig.desiredSize" in group.ignore_changes


# (moment, want: desired size, scheduled actions still declared) for the example block, which starts 2026-10-01 11:30
# UTC and runs 91 days, so EC2 reclaims it 2026-12-31 11:30 and the group scales down at 10:50.
BLOCK_PHASES = [
    # a month before: empty, both actions ahead
    pytest.param(dt.datetime(2026, 9, 1, tzinfo=dt.UTC), "empty", ("start", "end"), id="before"),
    # a minute before it starts: still empty, both actions ahead
    pytest.param(dt.datetime(2026, 10, 1, 11, 29, tzinfo=dt.UTC), "empty", ("start", "end"), id="just-before"),
    # mid-block (the day this was written): the start action has run and is gone; a group created now starts full
    pytest.param(dt.datetime(2026, 11, 25, tzinfo=dt.UTC), "full", ("end",), id="during"),
    # inside the last forty minutes, and after: empty, nothing left to schedule
    pytest.param(dt.datetime(2026, 12, 31, 10, 50, tzinfo=dt.UTC), "empty", (), id="scaled-down"),
    pytest.param(dt.datetime(2027, 2, 1, tzinfo=dt.UTC), "empty", (), id="after"),
]


@pytest.mark.parametrize(("now", "want_size", "want_actions"), BLOCK_PHASES)
def test_eks_capacity_block_declares_only_the_actions_still_ahead(
    inventory: Inventory, now: dt.datetime, want_size: str, want_actions: tuple[str, ...]
) -> None:
    """Issue 16: EC2 Auto Scaling refuses a one-time action whose start time is past and deletes an action once it
    has run, so a stack applied after the block started failed, and every later plan would recreate the action."""
    reg = run_cluster(inventory, "eks-us-east-1", now=now)
    [pool] = [p for p in inventory.cluster_by_name["eks-us-east-1"].pools if p.provisioning == "capacity-block"]
    nodes = pool_max_nodes(pool, inventory.machine_by_name[pool.machine])
    scaling = reg.named(NODE_GROUP, pool.name).inputs["scalingConfig"]
    assert scaling == {"minSize": 0, "maxSize": nodes, "desiredSize": nodes if want_size == "full" else 0}
    actions = {r.name for r in reg.of_type("aws:autoscaling/schedule:Schedule")}
    assert actions == {f"{pool.name}-block-{a}" for a in want_actions}
    times = [dt.datetime.fromisoformat(r.inputs["startTime"]) for r in reg.of_type("aws:autoscaling/schedule:Schedule")]
    assert all(t > now for t in times)


def test_a_moment_without_a_time_zone_is_refused_with_the_form_to_use(inventory: Inventory) -> None:
    from quartermaster.modules.cloud.spec_support import SpecError, moment

    with pytest.raises(SpecError, match=r"--now '2026-12-01T08:00': not a day or a moment with a time zone"):
        moment("2026-12-01T08:00", "--now")
    assert moment("2026-12-01T01:00:00+01:00", "--now") == dt.datetime(2026, 12, 1, tzinfo=dt.UTC)
    assert moment("2026-12-01", "--now") == dt.datetime(2026, 12, 1, tzinfo=dt.UTC)  # a day: its midnight UTC


def with_efa_on_demand(inventory: Inventory) -> Inventory:
    """The example with its on-demand p5 pool on EFA too (one zone, so it may have a cluster placement group)."""
    clusters = tuple(
        c.model_copy(
            update={
                "pools": tuple(p.model_copy(update={"gpudirect": True}) if p.name == "p5-od" else p for p in c.pools)
            }
        )
        for c in inventory.clusters
    )
    return inventory.model_copy(update={"clusters": clusters})


def test_eks_efa_pools_get_every_network_card_and_a_cluster_placement_group(inventory: Inventory) -> None:
    """...except in a capacity block, whose instances EC2 already places close together in an UltraCluster (EC2 API
    reference, CapacityBlock): issue 36 dropped the placement group from p5-cb's launch template."""
    variant = with_efa_on_demand(inventory)
    reg = run_cluster(variant, "eks-us-east-1")
    cards = {r["machine"]: int(r["network_cards"]) for r in read_table(EKS_DATA / "aws_efa.csv")}
    placed = set()
    for pool in variant.cluster_by_name["eks-us-east-1"].pools:
        group = reg.named(NODE_GROUP, pool.name)
        template = _launch_template(reg, group)
        interfaces = template.get("networkInterfaces", [])
        if not pool.gpudirect:
            assert not interfaces and "placement" not in template
            continue
        assert [i["interfaceType"] for i in interfaces].count("efa-only") == cards[pool.machine]
        assert {i["networkCardIndex"] for i in interfaces} == set(range(cards[pool.machine]))
        # Issue 16: EFA interfaces carried no security groups, which EC2 refuses (terraform-aws-eks issue 1880)
        cluster = inventory.cluster_by_name["eks-us-east-1"]
        assert cluster.eks is not None and cluster.eks.security_group_ids
        assert all(i["securityGroups"] == list(cluster.eks.security_group_ids) for i in interfaces)
        assert group.inputs["labels"]["vpc.amazonaws.com/efa.present"] == "true"
        groups = [r for r in reg.of_type("aws:ec2/placementGroup:PlacementGroup") if r.parent == group.parent]
        if pool.provisioning == "capacity-block":
            assert groups == [] and "placement" not in template
            continue
        [placement] = groups
        assert placement.inputs["strategy"] == "cluster"
        assert template["placement"]["groupName"] == placement.inputs["name"]
        placed.add(pool.name)
    assert placed == {"p5-od"}


def test_eks_p_instance_quota_is_the_vcpus_of_the_on_demand_pools(inventory: Inventory) -> None:
    """Capacity blocks are left out: whether they draw on L-417A185B is not confirmed (no AWS documentation says so)."""
    reg = registered("eks-us-east-1")
    machine = inventory.machine_by_name
    want = sum(
        pool_max_nodes(p, machine[p.machine]) * machine[p.machine].vcpus
        for p in inventory.cluster_by_name["eks-us-east-1"].pools
        if p.provisioning in ("on-demand", "reservation") and p.machine.startswith("p")
    )
    [quota] = reg.of_type("aws:servicequotas/serviceQuota:ServiceQuota")
    assert (quota.inputs["serviceCode"], quota.inputs["quotaCode"], quota.inputs["value"]) == (
        "ec2",
        "L-417A185B",
        want,
    )


# --- AKS ---------------------------------------------------------------------------------------------


def test_aks_agent_pools_match_their_pools(inventory: Inventory) -> None:
    reg = registered("aks-eastus")
    cluster = inventory.cluster_by_name["aks-eastus"]
    assert cluster.aks is not None
    for pool in cluster.pools:
        machine = inventory.machine_by_name[pool.machine]
        got = reg.named(AGENT_POOL, pool.name).inputs
        assert (got["resourceName"], got["resourceGroupName"]) == (cluster.name, cluster.aks.resource_group)
        assert got["vmSize"] == pool.machine and got["availabilityZones"] == list(pool.zones)
        assert got["maxCount"] == pool_max_nodes(pool, machine) and got["minCount"] == pool_min_nodes(pool, machine)
        assert got["gpuProfile"] == {"driver": "None" if pool.gpudirect else "Install"}
    [provider] = reg.of_type("pulumi:providers:azure-native")
    assert provider.inputs["subscriptionId"] == cluster.project


# --- Kueue -------------------------------------------------------------------------------------------


def _nominal(cluster_queue: Resource) -> dict[str, int]:
    """flavor -> nominal quota of the accelerator resource."""
    return {
        f["name"]: r["nominalQuota"]
        for group in cluster_queue.inputs["spec"]["resourceGroups"]
        for f in group["flavors"]
        for r in f["resources"]
        if r["name"] in ("nvidia.com/gpu", "google.com/tpu")
    }


@pytest.mark.parametrize("stack", ["gke-gpu-us-east4", "gke-tpu-us-east5", "eks-us-east-1", "aks-eastus"])
def test_kueue_quotas_on_a_worker_equal_the_teams_quotas(inventory: Inventory, stack: str) -> None:
    """The teams' quotas where the pool has nodes at the stack's moment; 0 in a pool that has none then (before
    the example's capacity block, p5-cb: issue 36, point 2)."""
    here = {p.name for p in pools_of(inventory, stack)}
    now_open = open_pools(inventory, BEFORE_THE_BLOCK)
    want = {
        t.name: {q.flavor: q.nominal if q.flavor in now_open else 0 for q in t.quotas if q.flavor in here}
        for t in inventory.teams
    }
    want = {team: quotas for team, quotas in want.items() if quotas}
    got = {r.name.split("/")[-1]: _nominal(r) for r in registered(stack).of_type(CLUSTER_QUEUE)}
    assert got == want


def test_kueue_quotas_on_the_manager_are_the_sum_over_its_workers(inventory: Inventory) -> None:
    """The sums count only the workers' pools that have nodes at the stack's moment (issue 36, point 2)."""
    manager = inventory.cluster_by_name["mk-manager"]
    now_open = open_pools(inventory, BEFORE_THE_BLOCK)
    on_workers = {p.name: p for w in manager.multikueue_workers for p in inventory.cluster_by_name[w].pools}
    want: dict[str, dict[str, int]] = {}
    for team in inventory.teams:
        for q in team.quotas:
            if q.flavor in on_workers:
                flavor = accelerator_flavor_name(inventory.machine_by_name[on_workers[q.flavor].machine].accelerator)
                want.setdefault(team.name, {}).setdefault(flavor, 0)
                want[team.name][flavor] += q.nominal if q.flavor in now_open else 0
    got = {r.name.split("/")[-1]: _nominal(r) for r in registered("mk-manager").of_type(CLUSTER_QUEUE)}
    assert got == want


@pytest.mark.parametrize("stack", EXAMPLE_STACKS)
def test_kueue_objects_go_through_the_clusters_provider_and_flavors_wait_for_their_pool(stack: str) -> None:
    reg = registered(stack)
    [provider] = reg.of_type("pulumi:providers:kubernetes")
    kueue = [r for r in reg.resources if r.type.startswith("kubernetes:")]
    assert kueue and all(r.provider.startswith(provider.urn) for r in kueue)
    components = {
        r.name: r.urn
        for r in reg.resources
        if r.type.split(":")[:2] in (["quartermaster", m] for m in ("gke", "eks", "aks"))
    }
    for flavor in reg.of_type(RESOURCE_FLAVOR):
        pool = flavor.inputs["metadata"]["name"]
        if pool in components:
            children = {r.urn for r in reg.resources if r.parent == components[pool]}
            assert children and children <= set(flavor.dependencies)  # depends_on a component = on its children
    namespaces = {r.inputs["metadata"]["name"]: r.urn for r in reg.of_type("kubernetes:core/v1:Namespace")}
    for r in kueue:
        if r.inputs["metadata"].get("namespace"):
            assert namespaces[r.inputs["metadata"]["namespace"]] in r.dependencies
