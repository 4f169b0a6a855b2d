"""GKE components: an accelerator pool (one NodePool, or one per TPU slice), a reservation, a quota request; and
`declare_capacity`, which declares a GKE cluster's capacity with them (`cloud.GkeModule`'s specs)."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_gcp as gcp

from quartermaster.modules.cloud import ClusterSpec, upper_snake_effect
from quartermaster.modules.pulumi.provider_components import PulumiComponents
from quartermaster.modules.pulumi.resource_error import ResourceError
from quartermaster.providers.gke.cloud import (
    GcpQuotaPreferenceSpec,
    GcpReservationSpec,
    GkeCapacity,
    GkeNodePoolSpec,
    conflicts,
    quota_to_ask,
)


class GkeAcceleratorPool(pulumi.ComponentResource):
    """One inventory pool on GKE: a `container.NodePool` per spec (a GPU pool has one, a TPU pool one per slice)."""

    def __init__(
        self, name: str, node_pools: list[GkeNodePoolSpec], opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("quartermaster:gke:AcceleratorPool", name, None, opts)
        for spec in node_pools:
            problems = conflicts(spec)
            if problems:
                raise ResourceError(f"node pool {spec.name}: " + "; ".join(problems), self)
        self.node_pools = [
            gcp.container.NodePool(spec.name, args=node_pool_args(spec), opts=pulumi.ResourceOptions(parent=self))
            for spec in node_pools
        ]
        self.register_outputs({"node_pools": [p.name for p in self.node_pools]})


def node_pool_args(spec: GkeNodePoolSpec) -> gcp.container.NodePoolArgs:
    """The typed NodePool arguments of a spec (a misspelt argument is a TypeError)."""
    autoscaling = None
    if spec.autoscaling is not None:
        a = spec.autoscaling
        autoscaling = gcp.container.NodePoolAutoscalingArgs(
            location_policy=a.location_policy,
            min_node_count=a.min_node_count,
            max_node_count=a.max_node_count,
            total_min_node_count=a.total_min_node_count,
            total_max_node_count=a.total_max_node_count,
        )
    accelerators = None
    if spec.guest_accelerator is not None:
        g = spec.guest_accelerator
        accelerators = [
            gcp.container.NodePoolNodeConfigGuestAcceleratorArgs(
                type=g.type,
                count=g.count,
                gpu_driver_installation_config=(
                    gcp.container.NodePoolNodeConfigGuestAcceleratorGpuDriverInstallationConfigArgs(
                        gpu_driver_version=g.gpu_driver_version
                    )
                ),
            )
        ]
    affinity = spec.reservation_affinity
    node_config = gcp.container.NodePoolNodeConfigArgs(
        machine_type=spec.machine_type,
        guest_accelerators=accelerators,
        labels=spec.labels,
        taints=[
            gcp.container.NodePoolNodeConfigTaintArgs(key=t.key, value=t.value, effect=upper_snake_effect(t.effect))
            for t in spec.taints
        ],
        reservation_affinity=gcp.container.NodePoolNodeConfigReservationAffinityArgs(
            consume_reservation_type=affinity.consume_reservation_type,
            key=affinity.key,
            values=list(affinity.values) or None,
        ),
        spot=spec.spot or None,
        flex_start=spec.flex_start or None,
        max_run_duration=spec.max_run_duration,
        gvnic=gcp.container.NodePoolNodeConfigGvnicArgs(enabled=True) if spec.gvnic else None,
        gpudirect_strategy=spec.gpudirect_strategy,
    )
    network_config = None
    if spec.additional_networks:
        network_config = gcp.container.NodePoolNetworkConfigArgs(
            additional_node_network_configs=[
                gcp.container.NodePoolNetworkConfigAdditionalNodeNetworkConfigArgs(
                    network=n.network, subnetwork=n.subnetwork
                )
                for n in spec.additional_networks
            ]
        )
    placement = None
    if spec.placement_type is not None:
        placement = gcp.container.NodePoolPlacementPolicyArgs(type=spec.placement_type, tpu_topology=spec.tpu_topology)
    return gcp.container.NodePoolArgs(
        cluster=spec.cluster,
        project=spec.project,
        location=spec.location,
        name=spec.name,
        node_locations=list(spec.node_locations),
        node_count=spec.node_count,
        autoscaling=autoscaling,
        management=gcp.container.NodePoolManagementArgs(auto_repair=spec.auto_repair, auto_upgrade=spec.auto_upgrade),
        queued_provisioning=(
            gcp.container.NodePoolQueuedProvisioningArgs(enabled=True) if spec.queued_provisioning else None
        ),
        placement_policy=placement,
        network_config=network_config,
        node_config=node_config,
    )


class GcpReservation(pulumi.ComponentResource):
    """A commitment's Compute Engine reservation (protected: deleting it gives the capacity away)."""

    def __init__(self, name: str, spec: GcpReservationSpec, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("quartermaster:gcp:Reservation", name, None, opts)
        accelerators = None
        if spec.accelerator_type is not None:
            accelerators = [
                gcp.compute.ReservationSpecificReservationInstancePropertiesGuestAcceleratorArgs(
                    accelerator_type=spec.accelerator_type, accelerator_count=spec.accelerator_count
                )
            ]
        self.reservation = gcp.compute.Reservation(
            spec.name,
            args=gcp.compute.ReservationArgs(
                name=spec.name,
                project=spec.project,
                zone=spec.zone,
                specific_reservation_required=spec.specific_reservation_required,
                specific_reservation=gcp.compute.ReservationSpecificReservationArgs(
                    count=spec.count,
                    instance_properties=gcp.compute.ReservationSpecificReservationInstancePropertiesArgs(
                        machine_type=spec.machine_type, guest_accelerators=accelerators
                    ),
                ),
                description=f"Quartermaster commitment {spec.commitment}",
            ),
            opts=pulumi.ResourceOptions(parent=self, protect=True),
        )
        self.register_outputs({"reservation": self.reservation.name})


class GcpQuotaRequest(pulumi.ComponentResource):
    """A Cloud Quotas preference for the accelerators the cluster's pools need (a request, not a grant)."""

    def __init__(self, name: str, spec: GcpQuotaPreferenceSpec, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("quartermaster:gcp:QuotaRequest", name, None, opts)
        # ask for the larger of the need and what is granted now (for these dimensions, or the default for all):
        # a preference below the grant would be a decrease request
        info = gcp.cloudquota.get_s_quota_info_output(parent=spec.parent, service=spec.service, quota_id=spec.quota_id)

        def ask(infos: list[Any] | None) -> str:
            granted = [
                int(i.details[0].value)
                for i in infos or []
                if i.details and (not i.dimensions or dict(i.dimensions) == spec.dimensions)
            ]
            return str(quota_to_ask(int(spec.preferred_value), granted))

        preferred = info.dimensions_infos.apply(ask)
        self.preference = gcp.cloudquota.SQuotaPreference(
            spec.name,
            args=gcp.cloudquota.SQuotaPreferenceArgs(
                name=spec.name,
                parent=spec.parent,
                service=spec.service,
                quota_id=spec.quota_id,
                dimensions=spec.dimensions,
                justification=spec.justification,
                contact_email=spec.contact_email,
                quota_config=gcp.cloudquota.SQuotaPreferenceQuotaConfigArgs(preferred_value=preferred),
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.register_outputs({"quota_id": spec.quota_id, "preferred_value": spec.preferred_value})


def declare_capacity(
    parent: pulumi.ComponentResource, spec: ClusterSpec[GkeCapacity]
) -> dict[str, pulumi.ComponentResource]:
    """The GKE cluster's reservations (created, or read so that preview fails when one is absent), its pools (after
    the reservations they consume) and its quota requests, as children of `parent`; the component of each pool."""
    capacity = spec.capacity
    child = pulumi.ResourceOptions(parent=parent)
    reservations = {r.name: GcpReservation(r.commitment, r, opts=child) for r in capacity.gcp_reservations if r.create}
    for existing in (r for r in capacity.gcp_reservations if not r.create):
        gcp.compute.get_reservation(name=existing.name, project=existing.project, zone=existing.zone)
    by_pool: dict[str, list[GkeNodePoolSpec]] = {}
    for node_pool in capacity.gke_node_pools:
        by_pool.setdefault(node_pool.pool, []).append(node_pool)
    pools: dict[str, pulumi.ComponentResource] = {}
    for pool, node_pools in by_pool.items():
        consumed = {v for n in node_pools for v in n.reservation_affinity.values}
        pools[pool] = GkeAcceleratorPool(
            pool,
            node_pools,
            opts=pulumi.ResourceOptions(
                parent=parent, depends_on=[reservations[r] for r in sorted(consumed) if r in reservations]
            ),
        )
    for preference in capacity.gcp_quota_preferences:
        GcpQuotaRequest(preference.name, preference, opts=child)
    return pools


COMPONENTS = PulumiComponents(declare_capacity)
