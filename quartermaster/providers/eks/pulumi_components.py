"""EKS components: an accelerator node group (launch template, placement group, node group), a capacity
reservation and an EC2 vCPU quota request; and `declare_capacity`, which declares an EKS cluster's capacity with them
(`cloud.EksModule`'s specs)."""

from __future__ import annotations

import pulumi
import pulumi_aws as aws

from quartermaster.modules.cloud import ClusterSpec, upper_snake_effect
from quartermaster.modules.pulumi.provider_components import PulumiComponents
from quartermaster.modules.pulumi.resource_error import ResourceError
from quartermaster.providers.eks.cloud import (
    AwsCapacityReservationSpec,
    AwsServiceQuotaSpec,
    EksCapacity,
    EksNodeGroupSpec,
    conflicts,
)


class EksAcceleratorNodeGroup(pulumi.ComponentResource):
    """One inventory pool on EKS: a launch template (market, reservation, EFA), an optional cluster
    placement group and the managed node group."""

    def __init__(
        self,
        name: str,
        spec: EksNodeGroupSpec,
        capacity_reservation_id: pulumi.Input[str] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`capacity_reservation_id`: the id of a reservation this stack creates
        (spec.launch_template.capacity_reservation)."""
        super().__init__("quartermaster:eks:AcceleratorNodeGroup", name, None, opts)
        problems = conflicts(spec)
        if spec.launch_template.capacity_reservation and capacity_reservation_id is None:
            problems.append(
                f"the launch template targets capacity reservation "
                f"{spec.launch_template.capacity_reservation}; pass its `capacity_reservation_id`"
            )
        if problems:
            raise ResourceError(f"node group {spec.node_group_name}: " + "; ".join(problems), self)
        child = pulumi.ResourceOptions(parent=self)
        lt = spec.launch_template
        self.placement_group = None
        if lt.placement_group is not None:
            self.placement_group = aws.ec2.PlacementGroup(
                lt.placement_group,
                args=aws.ec2.PlacementGroupArgs(name=lt.placement_group, strategy="cluster", region=spec.region),
                opts=child,
            )
        target = lt.capacity_reservation_id or capacity_reservation_id
        self.launch_template = aws.ec2.LaunchTemplate(
            lt.name,
            args=aws.ec2.LaunchTemplateArgs(
                name=lt.name,
                region=spec.region,
                instance_type=lt.instance_type,
                instance_market_options=(
                    aws.ec2.LaunchTemplateInstanceMarketOptionsArgs(market_type=lt.market_type)
                    if lt.market_type
                    else None
                ),
                capacity_reservation_specification=(
                    aws.ec2.LaunchTemplateCapacityReservationSpecificationArgs(
                        capacity_reservation_target=(
                            aws.ec2.LaunchTemplateCapacityReservationSpecificationCapacityReservationTargetArgs(
                                capacity_reservation_id=target
                            )
                        )
                    )
                    if target is not None
                    else None
                ),
                network_interfaces=[
                    aws.ec2.LaunchTemplateNetworkInterfaceArgs(
                        network_card_index=n.network_card_index,
                        device_index=n.device_index,
                        interface_type=n.interface_type,
                        delete_on_termination="true",
                        security_groups=list(lt.security_group_ids) or None,
                    )
                    for n in lt.network_interfaces
                ]
                or None,
                placement=(
                    aws.ec2.LaunchTemplatePlacementArgs(group_name=self.placement_group.name)
                    if self.placement_group is not None
                    else None
                ),
            ),
            opts=child,
        )
        autoscaled = spec.min_size != spec.max_size
        self.node_group = aws.eks.NodeGroup(
            spec.node_group_name,
            args=aws.eks.NodeGroupArgs(
                cluster_name=spec.cluster_name,
                node_group_name=spec.node_group_name,
                region=spec.region,
                node_role_arn=spec.node_role_arn,
                subnet_ids=list(spec.subnet_ids),
                capacity_type=spec.capacity_type,
                instance_types=list(spec.instance_types) or None,
                ami_type=spec.ami_type,
                scaling_config=aws.eks.NodeGroupScalingConfigArgs(
                    desired_size=spec.desired_size, min_size=spec.min_size, max_size=spec.max_size
                ),
                labels=spec.labels,
                taints=[
                    aws.eks.NodeGroupTaintArgs(key=t.key, value=t.value, effect=upper_snake_effect(t.effect))
                    for t in spec.taints
                ],
                launch_template=aws.eks.NodeGroupLaunchTemplateArgs(
                    id=self.launch_template.id, version=self.launch_template.latest_version.apply(str)
                ),
            ),
            # the cluster autoscaler (or a capacity block's schedule) owns the desired size
            opts=pulumi.ResourceOptions(
                parent=self,
                ignore_changes=["scalingConfig.desiredSize"] if autoscaled or spec.scheduled_scaling else None,
            ),
        )
        group_name = self.node_group.resources.apply(lambda r: r[0].autoscaling_groups[0].name)
        self.schedules = [
            aws.autoscaling.Schedule(
                action.scheduled_action_name,
                args=aws.autoscaling.ScheduleArgs(
                    scheduled_action_name=action.scheduled_action_name,
                    autoscaling_group_name=group_name,
                    region=spec.region,
                    start_time=action.start_time,
                    min_size=action.min_size,
                    max_size=action.max_size,
                    desired_capacity=action.desired_capacity,
                ),
                opts=child,
            )
            for action in spec.scheduled_scaling
        ]
        self.register_outputs({"node_group": self.node_group.node_group_name})


class AwsCapacityReservation(pulumi.ComponentResource):
    """An On-Demand Capacity Reservation for a reserved-instance commitment (protected)."""

    def __init__(self, name: str, spec: AwsCapacityReservationSpec, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("quartermaster:aws:CapacityReservation", name, None, opts)
        self.reservation = aws.ec2.CapacityReservation(
            spec.name,
            args=aws.ec2.CapacityReservationArgs(
                region=spec.region,
                instance_type=spec.instance_type,
                availability_zone=spec.availability_zone,
                instance_count=spec.instance_count,
                instance_platform=spec.instance_platform,
                instance_match_criteria=spec.instance_match_criteria,
                end_date_type=spec.end_date_type,
                end_date=spec.end_date,
                tags={"quartermaster.dev/commitment": spec.name},
            ),
            opts=pulumi.ResourceOptions(parent=self, protect=True),
        )
        self.register_outputs({"capacity_reservation_id": self.reservation.id})


class AwsQuotaRequest(pulumi.ComponentResource):
    """An EC2 service quota raised to the vCPUs the cluster's pools need (filing an increase request)."""

    def __init__(self, name: str, spec: AwsServiceQuotaSpec, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("quartermaster:aws:QuotaRequest", name, None, opts)
        # the larger of the need and the value applied now: a lower value would fail on the next apply
        applied = aws.servicequotas.get_service_quota_output(
            service_code=spec.service_code, quota_code=spec.quota_code, region=spec.region
        )
        value = applied.value.apply(lambda now: max(spec.value, now or 0.0))
        self.quota = aws.servicequotas.ServiceQuota(
            f"{spec.quota_code}-{spec.region}",
            args=aws.servicequotas.ServiceQuotaArgs(
                service_code=spec.service_code, quota_code=spec.quota_code, value=value, region=spec.region
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.register_outputs({"quota_code": spec.quota_code, "value": spec.value})


def declare_capacity(
    parent: pulumi.ComponentResource, spec: ClusterSpec[EksCapacity]
) -> dict[str, pulumi.ComponentResource]:
    """The EKS cluster's capacity reservations, node groups (after the reservation they launch into) and quota
    requests through a provider of the cluster's region, as children of `parent`; the component of each pool."""
    capacity = spec.capacity
    provider = aws.Provider(f"aws-{spec.region}", region=spec.region, opts=pulumi.ResourceOptions(parent=parent))
    child = pulumi.ResourceOptions(parent=parent, providers={"aws": provider})
    reservations = {r.name: AwsCapacityReservation(r.name, r, opts=child) for r in capacity.aws_capacity_reservations}
    pools: dict[str, pulumi.ComponentResource] = {}
    for group in capacity.eks_node_groups:
        target = reservations.get(group.launch_template.capacity_reservation or "")
        pools[group.pool] = EksAcceleratorNodeGroup(
            group.pool,
            group,
            capacity_reservation_id=target.reservation.id if target else None,
            opts=pulumi.ResourceOptions(
                parent=parent, providers={"aws": provider}, depends_on=[target] if target else None
            ),
        )
    for quota in capacity.aws_service_quotas:
        AwsQuotaRequest(quota.quota_code, quota, opts=child)
    return pools


COMPONENTS = PulumiComponents(declare_capacity)
