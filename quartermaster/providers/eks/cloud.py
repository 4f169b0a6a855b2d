"""EKS managed node groups, their launch templates, capacity reservations and EC2 vCPU quotas.

Field names follow the provider arguments (`pulumi_aws` 7.51 / Terraform aws). Recipes: capacity blocks
as aws-ia/terraform-aws-eks-blueprints patterns/ml-capacity-block and terraform-aws-modules/terraform-aws-eks
build them; EFA as terraform-aws-eks issue #3653 lays it out; quota codes from `aws_quota_codes.csv` (vCPUs).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from quartermaster.capacity import pool_accelerators, pool_max_nodes, pool_min_nodes
from quartermaster.model import Cluster, Commitment, Inventory, Pool
from quartermaster.modules.cloud.provider_emitters import CloudModule, DeclaredNodes, ManualQuota
from quartermaster.modules.cloud.spec_support import SpecError, TaintSpec, pool_taints, read_table, sorted_labels
from quartermaster.pricing import Provisioning
from quartermaster.providers.eks import PROVIDER, EksCluster

GPU_AMI_TYPE = "AL2023_x86_64_NVIDIA"  # as eks-blueprints' ml-capacity-block pattern
EFA_LABEL = "vpc.amazonaws.com/efa.present"
# EKS capacity_type by provisioning; everything else is ON_DEMAND.
CAPACITY_TYPE = {Provisioning.SPOT: "SPOT", Provisioning.CAPACITY_BLOCK: "CAPACITY_BLOCK"}

DATA = Path(__file__).parent / "data"
"""The provider's fact tables, each row with its source."""


@dataclass(frozen=True)
class NetworkInterfaceSpec:
    """One launch-template network interface (EFA layout of terraform-aws-eks issue #3653)."""

    network_card_index: int
    device_index: int
    interface_type: str


@dataclass(frozen=True)
class LaunchTemplateSpec:
    """An `ec2.LaunchTemplate` for one node group."""

    name: str
    instance_type: str | None
    market_type: str | None
    capacity_reservation_id: str | None
    capacity_reservation: str | None
    """Name of an `AwsCapacityReservationSpec` declared in the same stack whose id the template targets."""
    network_interfaces: tuple[NetworkInterfaceSpec, ...]
    placement_group: str | None
    security_group_ids: tuple[str, ...] = ()
    """Security groups of every network interface (EFA needs them; terraform-aws-eks issue 1880)."""


@dataclass(frozen=True)
class ScheduledScalingSpec:
    """An `autoscaling.Schedule` (Terraform `aws_autoscaling_schedule`) on the node group's Auto Scaling group."""

    scheduled_action_name: str
    start_time: str
    """start_time: UTC, `YYYY-MM-DDThh:mm:ssZ`."""
    min_size: int
    max_size: int
    desired_capacity: int


@dataclass(frozen=True)
class EksNodeGroupSpec:
    """An `eks.NodeGroup` (plus its launch template and, for EFA outside a capacity block, a cluster placement
    group)."""

    node_group_name: str
    pool: str
    cluster_name: str
    region: str
    node_role_arn: str
    subnet_ids: tuple[str, ...]
    capacity_type: str
    instance_types: tuple[str, ...]
    ami_type: str
    desired_size: int
    min_size: int
    max_size: int
    labels: dict[str, str]
    taints: tuple[TaintSpec, ...]
    launch_template: LaunchTemplateSpec
    accelerators: int
    """Most GPUs the node group can hold; not a provider argument."""
    scheduled_scaling: tuple[ScheduledScalingSpec, ...] = ()
    """Capacity blocks: the actions still ahead: scale up when the block starts, to 0 before EC2 reclaims it."""


@dataclass(frozen=True)
class AwsCapacityReservationSpec:
    """An `ec2.CapacityReservation` (ODCR) for a reserved-instance commitment without an existing id."""

    name: str
    region: str
    instance_type: str
    availability_zone: str
    instance_count: int
    end_date: str
    instance_platform: str = "Linux/UNIX"
    instance_match_criteria: str = "targeted"
    end_date_type: str = "limited"


@dataclass(frozen=True)
class AwsServiceQuotaSpec:
    """A `servicequotas.ServiceQuota`: the vCPUs a quota must allow for the cluster's pools."""

    quota_code: str
    quota_name: str
    region: str
    value: float
    pools: tuple[str, ...]
    service_code: str = "ec2"


@dataclass(frozen=True)
class EksCapacity:
    """What an EKS cluster's stack declares: node groups, the capacity reservations it creates, vCPU quotas."""

    eks_node_groups: list[EksNodeGroupSpec] = field(default_factory=list)
    aws_capacity_reservations: list[AwsCapacityReservationSpec] = field(default_factory=list)
    aws_service_quotas: list[AwsServiceQuotaSpec] = field(default_factory=list)


def eks_node_groups(inventory: Inventory, cluster: EksCluster, now: dt.datetime) -> list[EksNodeGroupSpec]:
    """A node group per pool of an EKS cluster, as it should be at `now` (UTC; capacity blocks are dated)."""
    if cluster.eks is None:
        raise SpecError(f"cluster {cluster.name}: an EKS cluster needs `eks: {{node_role_arn, subnets}}`.")
    region = inventory.site_by_name[cluster.site].region
    return [_node_group(inventory, cluster, region, pool, now) for pool in cluster.pools]


def _node_group(
    inventory: Inventory, cluster: EksCluster, region: str, pool: Pool, now: dt.datetime
) -> EksNodeGroupSpec:
    assert cluster.eks is not None
    machine = inventory.machine_by_name[pool.machine]
    missing = [z for z in pool.zones if z not in cluster.eks.subnets]
    if missing:
        raise SpecError(
            f"pool {pool.name}: no subnet for zone(s) {', '.join(missing)} in cluster {cluster.name}. "
            "Add them under `eks.subnets`."
        )
    block = pool.provisioning == Provisioning.CAPACITY_BLOCK
    labels = dict(pool.labels)
    if pool.gpudirect:
        labels[EFA_LABEL] = "true"
    target_id, target_name = _reservation_target(inventory, pool)
    name = f"{cluster.name}-{pool.name}"
    template = LaunchTemplateSpec(
        name=name,
        # capacity blocks: instance type in the template, node group instance_types empty (terraform-aws-eks)
        instance_type=pool.machine if block else None,
        market_type="capacity-block" if block else None,
        capacity_reservation_id=target_id,
        capacity_reservation=target_name,
        network_interfaces=_efa_interfaces(pool) if pool.gpudirect else (),
        # EFA pools get a cluster placement group, except in a capacity block: its instances are already "placed
        # close together inside Amazon EC2 UltraClusters" (EC2 API reference, CapacityBlock,
        # https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_CapacityBlock.html, read 2026-11-27)
        placement_group=name if pool.gpudirect and not block else None,
        security_group_ids=cluster.eks.security_group_ids if pool.gpudirect else (),
    )
    max_nodes = pool_max_nodes(pool, machine)
    # a capacity block's group is empty outside the block: launches before it is active fail
    min_nodes = 0 if block else pool_min_nodes(pool, machine)
    desired, schedule = _block_phase(inventory, pool, max_nodes, now) if block else (min_nodes, ())
    return EksNodeGroupSpec(
        node_group_name=pool.name,
        pool=pool.name,
        cluster_name=cluster.name,
        region=region,
        node_role_arn=cluster.eks.node_role_arn,
        subnet_ids=tuple(cluster.eks.subnets[z] for z in pool.zones),
        capacity_type=CAPACITY_TYPE.get(pool.provisioning, "ON_DEMAND"),
        instance_types=() if block else (pool.machine,),
        ami_type=GPU_AMI_TYPE,
        desired_size=desired,
        min_size=min_nodes,
        max_size=max_nodes,
        labels=sorted_labels(labels),
        taints=pool_taints(pool, machine, PROVIDER),
        launch_template=template,
        accelerators=pool_accelerators(inventory, pool),
        scheduled_scaling=schedule,
    )


def _block_phase(
    inventory: Inventory, pool: Pool, nodes: int, now: dt.datetime
) -> tuple[int, tuple[ScheduledScalingSpec, ...]]:
    """(desired size, scheduled actions) of a capacity block's group at `now` (UTC).

    Before the block: 0 nodes, scale to the block's nodes when it starts and to 0 forty minutes before it ends.
    During it: the block's nodes (a group created mid-block starts full), and only the scale-down. After the
    scale-down: 0 nodes and no action. EC2 Auto Scaling refuses a one-time action whose start time is past
    (pulumi-aws issue 2473) and deletes an action once it has run (terraform-provider-aws issue 19446), so an action
    is declared only while it is still ahead; dropping one that has run is clean, as the provider's delete takes
    "not found" for done (`resourceScheduleDelete`, internal/service/autoscaling/schedule.go; read 2026-11-25)."""
    if pool.commitment is None:
        raise SpecError(f"pool {pool.name}: a capacity-block pool needs its `commitment` (the block's dates).")
    start, scale_down = PROVIDER.capacity_window(inventory.commitment_by_name[pool.commitment])
    assert scale_down is not None  # a capacity block ends
    up = ScheduledScalingSpec(f"{pool.name}-block-start", _utc(start), nodes, nodes, nodes)
    down = ScheduledScalingSpec(f"{pool.name}-block-end", _utc(scale_down), 0, nodes, 0)
    if now < start:
        return 0, (up, down)
    if now < scale_down:
        return nodes, (down,)
    return 0, ()


def _utc(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _reservation_target(inventory: Inventory, pool: Pool) -> tuple[str | None, str | None]:
    """(existing capacity reservation id, or name of one this stack creates) the pool launches into."""
    if pool.commitment is None:
        return None, None
    commitment = inventory.commitment_by_name[pool.commitment]
    if commitment.capacity_reservation_id:
        return commitment.capacity_reservation_id, None
    if _creates_reservation(commitment):
        return None, commitment.name
    if pool.provisioning == Provisioning.CAPACITY_BLOCK:
        raise SpecError(
            f"pool {pool.name}: capacity block {commitment.name} has no `capacity_reservation_id`. "
            "Buy the block, then set its `cr-...` id on the commitment."
        )
    if commitment.kind == "reserved-instance":
        raise SpecError(
            f"pool {pool.name}: commitment {commitment.name} says its reservation exists but gives no "
            "`capacity_reservation_id`. Set its `cr-...` id, or `reservation: create` to create one."
        )
    return None, None


def _creates_reservation(commitment: Commitment) -> bool:
    """A reserved-instance commitment marked `reservation: create` (and without an id) asks for an ODCR."""
    return (
        commitment.kind == "reserved-instance"
        and commitment.reservation == "create"
        and not commitment.capacity_reservation_id
    )


def _efa_interfaces(pool: Pool) -> tuple[NetworkInterfaceSpec, ...]:
    """ENA on card 0 device 0, then `efa-only` on card 0 device 1 and on device 0 of every other card."""
    row = next((r for r in read_table(DATA / "aws_efa.csv") if r["machine"] == pool.machine), None)
    if row is None:
        known = ", ".join(r["machine"] for r in read_table(DATA / "aws_efa.csv"))
        raise SpecError(
            f"pool {pool.name}: no EFA layout known for {pool.machine} (known: {known}). "
            "Remove `gpudirect: true` or add the machine to quartermaster/providers/eks/data/aws_efa.csv."
        )
    cards = int(row["network_cards"])
    return (
        NetworkInterfaceSpec(0, 0, "interface"),
        NetworkInterfaceSpec(0, 1, "efa-only"),
        *(NetworkInterfaceSpec(card, 0, "efa-only") for card in range(1, cards)),
    )


def aws_capacity_reservations(inventory: Inventory, cluster: Cluster) -> list[AwsCapacityReservationSpec]:
    """An ODCR per reserved-instance commitment (without an id) that the cluster's pools consume."""
    region = inventory.site_by_name[cluster.site].region
    specs: dict[str, AwsCapacityReservationSpec] = {}
    for pool in cluster.pools:
        commitment = inventory.commitment_by_name.get(pool.commitment or "")
        if commitment is None or not _creates_reservation(commitment) or commitment.name in specs:
            continue
        zone = commitment.zone or (pool.zones[0] if len(pool.zones) == 1 else None)
        if zone is None:
            raise SpecError(
                f"commitment {commitment.name}: a capacity reservation is in one zone. Set the commitment's `zone`."
            )
        specs[commitment.name] = AwsCapacityReservationSpec(
            name=commitment.name,
            region=region,
            instance_type=commitment.machine,
            availability_zone=zone,
            instance_count=commitment.count,
            end_date=f"{commitment.end.isoformat()}T00:00:00Z",
        )
    return sorted(specs.values(), key=lambda s: s.name)


def quota_class(pool: Pool) -> str | None:
    """The EC2 vCPU quota a pool draws on; capacity blocks are left out (not confirmed by AWS docs)."""
    if pool.provisioning == Provisioning.CAPACITY_BLOCK:
        return None
    return "spot" if pool.provisioning == Provisioning.SPOT else "on-demand"


def aws_service_quotas(inventory: Inventory, cluster: Cluster) -> list[AwsServiceQuotaSpec]:
    """One quota per (instance family, market): the vCPUs of all pools at their largest size."""
    region = inventory.site_by_name[cluster.site].region
    table = {(r["instance_family"], r["quota_class"]): r for r in read_table(DATA / "aws_quota_codes.csv")}
    needs: dict[str, tuple[dict[str, str], int, list[str]]] = {}
    for pool in cluster.pools:
        machine = inventory.machine_by_name[pool.machine]
        klass = quota_class(pool)
        row = table.get((pool.machine[0], klass)) if klass else None
        if row is None:
            continue
        if machine.vcpus == 0:
            raise SpecError(
                f"pool {pool.name}: machine {machine.name} has no `vcpus`, so its EC2 quota "
                "cannot be computed. Set `vcpus` on the machine."
            )
        _, vcpus, pools = needs.get(row["quota_code"], (row, 0, []))
        needs[row["quota_code"]] = (row, vcpus + pool_max_nodes(pool, machine) * machine.vcpus, [*pools, pool.name])
    return [
        AwsServiceQuotaSpec(code, row["name"], region, float(vcpus), tuple(pools))
        for code, (row, vcpus, pools) in sorted(needs.items())
    ]


def conflicts(spec: EksNodeGroupSpec) -> list[str]:
    """Arguments of a node group spec that contradict each other, each naming both and the way out."""
    out: list[str] = []
    block = spec.capacity_type == "CAPACITY_BLOCK"
    if block and spec.instance_types:
        out.append("CAPACITY_BLOCK `capacity_type` needs empty `instance_types` (the type is in the launch template)")
    if block != (spec.launch_template.market_type == "capacity-block"):
        out.append("`capacity_type` CAPACITY_BLOCK and launch template `market_type` capacity-block go together")
    if block and not (spec.launch_template.capacity_reservation_id or spec.launch_template.capacity_reservation):
        out.append("CAPACITY_BLOCK `capacity_type` needs the block's `capacity_reservation_id`")
    if spec.launch_template.placement_group and len(spec.subnet_ids) != 1:
        out.append("a cluster `placement_group` needs exactly one subnet (one zone)")
    if not spec.min_size <= spec.desired_size <= spec.max_size:
        out.append("`desired_size` must lie within `min_size` and `max_size`")
    return out


class EksModule(CloudModule[EksCapacity, EksNodeGroupSpec]):
    """EKS's capacity specs: node groups with their launch templates, capacity reservations and EC2 vCPU quotas
    (Pulumi: `pulumi_components`; Terraform: aws, `terraform_resources`)."""

    provider = PROVIDER

    def capacity(
        self, inventory: Inventory, cluster: Cluster, now: dt.datetime
    ) -> tuple[EksCapacity, list[ManualQuota]]:
        assert isinstance(cluster, EksCluster)
        specs = EksCapacity(
            eks_node_groups(inventory, cluster, now),
            aws_capacity_reservations(inventory, cluster),
            aws_service_quotas(inventory, cluster),
        )
        return specs, []

    def pool_specs(self, capacity: EksCapacity) -> Sequence[EksNodeGroupSpec]:
        return capacity.eks_node_groups

    def declared_nodes(self, capacity: EksCapacity) -> list[DeclaredNodes]:
        return [
            DeclaredNodes(g.pool, g.node_group_name, g.labels, tuple((t.key, t.value, t.effect) for t in g.taints))
            for g in capacity.eks_node_groups
        ]

    def conflicts(self, pool_spec: EksNodeGroupSpec) -> list[str]:
        return conflicts(pool_spec)

    def pool_title(self, pool_spec: EksNodeGroupSpec) -> str:
        return f"node group {pool_spec.node_group_name}"


MODULE = EksModule()
