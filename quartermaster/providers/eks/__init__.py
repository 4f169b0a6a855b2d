"""EKS on AWS: the core facts (the cluster's `eks` settings, EFA rules, Kueue labels, FOCUS names). Emitters:
`cloud`, `pulumi_components`, `terraform_resources`."""

from __future__ import annotations

import datetime as dt
from typing import ClassVar, Literal

from quartermaster.issues import Issue
from quartermaster.model import Cluster, Commitment, Inventory, Pool, Strict
from quartermaster.names import Provisioning, ZoneName
from quartermaster.providers.base import Provider

# Capacity Blocks last whole days and all end at 11:30 UTC (EC2 user guide, capacity-blocks-purchase,
# https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/capacity-blocks-purchase.html); EC2 warns 40 minutes before
# the end and terminates the instances from 30 minutes before it (capacity-blocks-monitor; both read 2026-11-24).
# The node group stays at 0 outside the block (EKS user guide, capacity-blocks-mng).
CAPACITY_BLOCK_TIME = dt.time(11, 30)
SCALE_DOWN_BEFORE_END = dt.timedelta(minutes=40)


class EksSettings(Strict):
    """What an EKS node group needs that the cluster already has."""

    node_role_arn: str
    """node_role_arn: IAM role ARN the node groups' instances assume."""
    subnets: dict[ZoneName, str]
    """subnets: subnet id per availability zone, e.g. `{us-east-1a: subnet-0abc}`."""
    security_group_ids: tuple[str, ...] = ()
    """security_group_ids: security groups of the EFA network interfaces of GPUDirect pools (the cluster security
    group and one that allows all traffic between its members); required for such pools."""


class EksCluster(Cluster):
    """An EKS cluster at an AWS site."""

    kind: Literal["eks"]
    """kind: `eks`: an EKS cluster; `project` is its AWS account id."""
    eks: EksSettings | None = None
    """eks: EKS-only settings (node role, subnets); required."""


class Eks(Provider):
    kind = "eks"
    order = 20
    cloud = "aws"
    title = "EKS"
    cluster_model = EksCluster
    provisioning = frozenset(
        {Provisioning.ON_DEMAND, Provisioning.SPOT, Provisioning.RESERVATION, Provisioning.CAPACITY_BLOCK}
    )
    exclusive_provisioning: ClassVar[dict[Provisioning, tuple[str, str]]] = {
        Provisioning.CAPACITY_BLOCK: (
            "capacity blocks are an EC2 (EKS) provisioning mode",
            "Use `reservation` for reserved capacity elsewhere.",
        )
    }
    zones_named_after_region = True
    node_pool_label = "eks.amazonaws.com/nodegroup"
    focus_provider_name = "AWS"
    focus_service = ("Amazon Elastic Compute Cloud", "Virtual Machines")
    placeholder_machines: ClassVar[dict[str, str]] = {"gpu": "p5.48xlarge"}
    import_settings: ClassVar[dict[str, object]] = {"eks": {"node_role_arn": "todo", "subnets": {}}}

    def capacity_window(self, commitment: Commitment) -> tuple[dt.datetime, dt.datetime | None]:
        """A capacity block's nodes: from 11:30 UTC of its first day to the node group's scale-down, forty minutes
        before it ends at 11:30 UTC; other commitments as every cloud's."""
        if commitment.kind != "capacity-block":
            return super().capacity_window(commitment)
        start = dt.datetime.combine(commitment.start, CAPACITY_BLOCK_TIME, dt.UTC)
        return start, dt.datetime.combine(commitment.end, CAPACITY_BLOCK_TIME, dt.UTC) - SCALE_DOWN_BEFORE_END

    def cluster_issues(self, inventory: Inventory, cluster: Cluster) -> list[Issue]:
        assert isinstance(cluster, EksCluster)
        if cluster.eks is None:
            return [
                Issue(
                    "",
                    "an EKS cluster needs `eks: {node_role_arn, subnets}`",
                    "Add the `eks` block.",
                    ref=("clusters", cluster.name, "kind"),
                )
            ]
        return [
            Issue(
                "",
                f"no subnet for zone `{zone}` in cluster `{cluster.name}`",
                f"Add `{zone}: subnet-...` under the cluster's `eks.subnets`.",
                ref=("pools", p.name, "zones", i),
            )
            for p in cluster.pools
            for i, zone in enumerate(p.zones)
            if zone not in cluster.eks.subnets
        ]

    def pool_issues(self, cluster: Cluster, pool: Pool) -> list[Issue]:
        """EFA pools: one zone (a cluster placement group) and the security groups of their interfaces."""
        assert isinstance(cluster, EksCluster)
        if not pool.gpudirect:
            return []
        ref = ("pools", pool.name)
        out = []
        if len(pool.zones) != 1:
            out.append(
                Issue("", "EFA needs a cluster placement group in one zone", "List one zone.", ref=(*ref, "zones"))
            )
        if cluster.eks is not None and not cluster.eks.security_group_ids:
            out.append(
                Issue(
                    "",
                    "EFA interfaces need the cluster's security groups: a launch template's network "
                    "interfaces carry none by default, and EC2 refuses EFA interfaces without them",
                    "Set `eks.security_group_ids` on the cluster (its cluster security group and one "
                    "that allows all traffic between its members).",
                    ref=(*ref, "gpudirect"),
                )
            )
        return out


PROVIDER = Eks()
