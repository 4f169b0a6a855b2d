"""EKS's Terraform resources (aws): per pool a placement group, a launch template and the node group (`taint`
blocks on `aws_eks_node_group`), capacity reservations and EC2 vCPU quotas, each mirroring a component of
`pulumi_components` argument for argument in the Terraform spelling."""

from __future__ import annotations

from quartermaster.modules.cloud import ClusterSpec, upper_snake_effect
from quartermaster.modules.cloud.provider_emitters import Body
from quartermaster.modules.terraform.resources import ProviderPin, Ref, TerraformResources, TfResource, compact, tf_name
from quartermaster.providers.eks.cloud import (
    AwsCapacityReservationSpec,
    AwsServiceQuotaSpec,
    EksCapacity,
    EksNodeGroupSpec,
)

PINS = {"aws": ProviderPin("hashicorp/aws", "~> 6.0")}
"""The Terraform providers the resources use, by the name they use, and the version their arguments were read at
(`tests/terraform/test_provider_arguments.py` checks every emitted name against the provider's source at its floor
tag):
hashicorp/aws `~> 6.0`: `aws_launch_template`, `aws_eks_node_group` (`taint` blocks, `CAPACITY_BLOCK`
capacity type: terraform-provider-aws #40876), `aws_placement_group`, `aws_ec2_capacity_reservation`,
`aws_servicequotas_service_quota` (resource and data source), `aws_autoscaling_schedule`; per-resource `region`
is the 6.x argument pulumi_aws 7.x exposes.
"""
POOL_TYPES = ("aws_eks_node_group",)
"""The resource types that hold nodes: the Kueue objects wait for them."""


def terraform(spec: ClusterSpec[EksCapacity]) -> tuple[dict[str, Body], list[TfResource]]:
    """The provider block and the resources of an EKS cluster's capacity."""
    return {"aws": {"region": spec.region}}, aws_resources(spec.capacity)


def aws_resources(spec: EksCapacity) -> list[TfResource]:
    """Capacity reservations, then per pool a placement group, a launch template and the node group; quotas."""
    reservations = {r.name: aws_capacity_reservation(r) for r in spec.aws_capacity_reservations}
    out: list[TfResource] = list(reservations.values())
    for group in spec.eks_node_groups:
        out += eks_node_group(group, reservations.get(group.launch_template.capacity_reservation or ""))
    return out + [r for q in spec.aws_service_quotas for r in aws_service_quota(q)]


def eks_node_group(spec: EksNodeGroupSpec, reservation: TfResource | None = None) -> list[TfResource]:
    """`aws_placement_group` (EFA pools), `aws_launch_template` and `aws_eks_node_group` of one pool."""
    lt = spec.launch_template
    out: list[TfResource] = []
    placement = None
    if lt.placement_group is not None:
        group = TfResource(
            "aws_placement_group",
            tf_name(lt.placement_group),
            "aws",
            {"name": lt.placement_group, "strategy": "cluster", "region": spec.region},
        )
        out.append(group)
        placement = {"group_name": Ref(f"${{{group.address}.name}}")}
    target = lt.capacity_reservation_id or (Ref(f"${{{reservation.address}.id}}") if reservation else None)
    template = TfResource(
        "aws_launch_template",
        tf_name(lt.name),
        "aws",
        compact(
            {
                "name": lt.name,
                "region": spec.region,
                "instance_type": lt.instance_type,
                "instance_market_options": {"market_type": lt.market_type} if lt.market_type else None,
                "capacity_reservation_specification": (
                    {"capacity_reservation_target": {"capacity_reservation_id": target}} if target is not None else None
                ),
                "network_interfaces": [
                    {
                        "network_card_index": n.network_card_index,
                        "device_index": n.device_index,
                        "interface_type": n.interface_type,
                        "delete_on_termination": "true",
                        "security_groups": list(lt.security_group_ids) or None,
                    }
                    for n in lt.network_interfaces
                ]
                or None,
                "placement": placement,
            }
        ),
    )
    out.append(template)
    autoscaled = spec.min_size != spec.max_size
    out.append(
        TfResource(
            "aws_eks_node_group",
            tf_name(spec.node_group_name),
            "aws",
            compact(
                {
                    "cluster_name": spec.cluster_name,
                    "node_group_name": spec.node_group_name,
                    "region": spec.region,
                    "node_role_arn": spec.node_role_arn,
                    "subnet_ids": list(spec.subnet_ids),
                    "capacity_type": spec.capacity_type,
                    "instance_types": list(spec.instance_types) or None,
                    "ami_type": spec.ami_type,
                    "scaling_config": {
                        "desired_size": spec.desired_size,
                        "min_size": spec.min_size,
                        "max_size": spec.max_size,
                    },
                    "labels": spec.labels,
                    "taint": [
                        {"key": t.key, "value": t.value, "effect": upper_snake_effect(t.effect)} for t in spec.taints
                    ],
                    "launch_template": {
                        "id": Ref(f"${{{template.address}.id}}"),
                        "version": Ref(f"${{{template.address}.latest_version}}"),
                    },
                }
            ),
            depends_on=(reservation.address,) if reservation else (),
            # the cluster autoscaler (or a capacity block's schedule) owns the desired size
            ignore_changes=("scaling_config[0].desired_size",) if autoscaled or spec.scheduled_scaling else (),
        )
    )
    group_name = Ref(f"${{{out[-1].address}.resources[0].autoscaling_groups[0].name}}")
    out += [
        TfResource(
            "aws_autoscaling_schedule",
            tf_name(action.scheduled_action_name),
            "aws",
            {
                "scheduled_action_name": action.scheduled_action_name,
                "autoscaling_group_name": group_name,
                "region": spec.region,
                "start_time": action.start_time,
                "min_size": action.min_size,
                "max_size": action.max_size,
                "desired_capacity": action.desired_capacity,
            },
            # Declared only while its start is ahead when Terraform plans: AWS refuses a past start time and
            # deletes an action once it has run, so JSON synthesised before and applied after would recreate it.
            count=f'${{timecmp(plantimestamp(), "{action.start_time}") < 0 ? 1 : 0}}',
        )
        for action in spec.scheduled_scaling
    ]
    return out


def aws_capacity_reservation(spec: AwsCapacityReservationSpec) -> TfResource:
    """`aws_ec2_capacity_reservation` (ODCR), protected from destroy."""
    return TfResource(
        "aws_ec2_capacity_reservation",
        tf_name(spec.name),
        "aws",
        {
            "region": spec.region,
            "instance_type": spec.instance_type,
            "availability_zone": spec.availability_zone,
            "instance_count": spec.instance_count,
            "instance_platform": spec.instance_platform,
            "instance_match_criteria": spec.instance_match_criteria,
            "end_date_type": spec.end_date_type,
            "end_date": spec.end_date,
            "tags": {"quartermaster.dev/commitment": spec.name},
        },
        prevent_destroy=True,
    )


def aws_service_quota(spec: AwsServiceQuotaSpec) -> list[TfResource]:
    """The `aws_servicequotas_service_quota` data source (the applied value now) and the resource raising it to the
    larger of that and the need: raising `value` files an increase request, and a value below the applied one
    would fail on the next apply."""
    name = tf_name(f"{spec.quota_code}-{spec.region}")
    key = {"service_code": spec.service_code, "quota_code": spec.quota_code, "region": spec.region}
    applied = TfResource("aws_servicequotas_service_quota", name, "aws", key, data=True)
    value = Ref(f"${{max({spec.value:g}, {applied.address}.value)}}")
    return [applied, TfResource("aws_servicequotas_service_quota", name, "aws", {**key, "value": value})]


RESOURCES = TerraformResources(PINS, POOL_TYPES, terraform)
