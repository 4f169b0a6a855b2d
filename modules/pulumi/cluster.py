"""The component of one cluster's stack: cloud capacity (pools, reservations, quota requests) and Kueue."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

import pulumi

from quartermaster.loader import SourceMap
from quartermaster.model import Inventory
from quartermaster.modules.cloud import ClusterSpec, cluster_spec
from quartermaster.modules.observability.emit import kubernetes_objects
from quartermaster.modules.pulumi.errors import ResourceError
from quartermaster.modules.pulumi.kueue import KueueObjects


class ClusterCapacity(pulumi.ComponentResource):
    """Everything a cluster's stack declares. The cluster itself exists already and is referenced by name."""

    def __init__(
        self,
        name: str,
        spec: ClusterSpec,
        manifests: Sequence[dict[str, Any]] = (),
        kubeconfig: pulumi.Input[str] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("quartermaster:cluster:ClusterCapacity", name, None, opts)
        self.spec = spec
        if manifests and kubeconfig is None:
            raise ResourceError(
                f"cluster {spec.cluster}: Kueue objects need a kubeconfig; set "
                "`pulumi config set --secret quartermaster:kubeconfig ...`",
                self,
            )
        self.pools: dict[str, pulumi.ComponentResource] = {}
        if spec.kind == "gke":
            self._gcp(spec)
        elif spec.kind == "eks":
            self._aws(spec)
        elif spec.kind == "aks":
            self._azure(spec)
        self.kueue = None
        if manifests:
            assert kubeconfig is not None
            self.kueue = KueueObjects(
                f"{spec.cluster}-kueue",
                manifests,
                kubeconfig,
                pools=self.pools,
                opts=pulumi.ResourceOptions(parent=self),
            )
        self.pool_names = sorted(self.pools)
        self.register_outputs({"pools": self.pool_names})

    def _gcp(self, spec: ClusterSpec) -> None:
        # Each cloud's SDK is imported only for a cluster on that cloud: importing one takes seconds.
        import pulumi_gcp as gcp

        from quartermaster.modules.pulumi.gke import GcpQuotaRequest, GcpReservation, GkeAcceleratorPool

        child = pulumi.ResourceOptions(parent=self)
        reservations = {r.name: GcpReservation(r.commitment, r, opts=child) for r in spec.gcp_reservations if r.create}
        for existing in (r for r in spec.gcp_reservations if not r.create):  # read: preview fails when it is absent
            gcp.compute.get_reservation(name=existing.name, project=existing.project, zone=existing.zone)
        by_pool: dict[str, list[Any]] = {}
        for node_pool in spec.gke_node_pools:
            by_pool.setdefault(node_pool.pool, []).append(node_pool)
        for pool, node_pools in by_pool.items():
            consumed = {v for n in node_pools for v in n.reservation_affinity.values}
            self.pools[pool] = GkeAcceleratorPool(
                pool,
                node_pools,
                opts=pulumi.ResourceOptions(
                    parent=self, depends_on=[reservations[r] for r in sorted(consumed) if r in reservations]
                ),
            )
        for preference in spec.gcp_quota_preferences:
            GcpQuotaRequest(preference.name, preference, opts=child)

    def _aws(self, spec: ClusterSpec) -> None:
        # Each cloud's SDK is imported only for a cluster on that cloud: importing one takes seconds.
        import pulumi_aws as aws

        from quartermaster.modules.pulumi.eks import AwsCapacityReservation, AwsQuotaRequest, EksAcceleratorNodeGroup

        provider = aws.Provider(f"aws-{spec.region}", region=spec.region, opts=pulumi.ResourceOptions(parent=self))
        child = pulumi.ResourceOptions(parent=self, providers={"aws": provider})
        reservations = {r.name: AwsCapacityReservation(r.name, r, opts=child) for r in spec.aws_capacity_reservations}
        for group in spec.eks_node_groups:
            target = reservations.get(group.launch_template.capacity_reservation or "")
            self.pools[group.pool] = EksAcceleratorNodeGroup(
                group.pool,
                group,
                capacity_reservation_id=target.reservation.id if target else None,
                opts=pulumi.ResourceOptions(
                    parent=self, providers={"aws": provider}, depends_on=[target] if target else None
                ),
            )
        for quota in spec.aws_service_quotas:
            AwsQuotaRequest(quota.quota_code, quota, opts=child)

    def _azure(self, spec: ClusterSpec) -> None:
        # Each cloud's SDK is imported only for a cluster on that cloud: importing one takes seconds.
        import pulumi_azure_native as azure_native

        from quartermaster.modules.pulumi.aks import AksAcceleratorPool

        provider = azure_native.Provider(
            f"azure-{spec.region}", subscription_id=spec.project, opts=pulumi.ResourceOptions(parent=self)
        )
        for pool in spec.aks_agent_pools:
            self.pools[pool.pool] = AksAcceleratorPool(
                pool.pool, pool, opts=pulumi.ResourceOptions(parent=self, providers={"azure-native": provider})
            )


def declare_cluster(
    inventory: Inventory,
    cluster_name: str,
    kubeconfig: pulumi.Input[str] | None,
    now: dt.datetime,
    sources: SourceMap | None = None,
) -> ClusterCapacity:
    """Declare one cluster's stack as it should be at `now`: its cloud specs and, when Kueue is in use, its Kueue
    objects, with its alert rules and dashboard when `observability.enabled` (`sources`: for runbooks to name
    inventory files)."""
    spec = cluster_spec(inventory, cluster_name, now)
    objects = kubernetes_objects(inventory, cluster_name, now.date(), sources)
    return ClusterCapacity(cluster_name, spec, objects, kubeconfig)
