"""GKE's Terraform resources (google-beta): node pools, Compute Engine reservations and Cloud Quotas preferences,
each mirroring a component of `pulumi_components` argument for argument in the Terraform spelling
(`guest_accelerator` and `taint` blocks where `pulumi_gcp` says `guest_accelerators` / `taints`, as its NodePool
docs name them)."""

from __future__ import annotations

from quartermaster.modules.cloud import ClusterSpec, upper_snake_effect
from quartermaster.modules.cloud.provider_emitters import Body
from quartermaster.modules.terraform.resources import ProviderPin, Ref, TerraformResources, TfResource, compact, tf_name
from quartermaster.providers.gke.cloud import (
    UNLIMITED_QUOTA,
    GcpQuotaPreferenceSpec,
    GcpReservationSpec,
    GkeCapacity,
    GkeNodePoolSpec,
)

PINS = {"google-beta": ProviderPin("hashicorp/google-beta", "~> 7.34")}
"""The Terraform providers the resources use, by the name they use, and the version their arguments were read at
(`tests/terraform/test_provider_arguments.py` checks every emitted name against the provider's source at its floor
tag):
hashicorp/google-beta `~> 7.34` (the first version with node_config `gpudirect_strategy`):
`google_container_node_pool` / node_config (terraform-provider-google-beta
`website/docs/r/container_node_pool.html.markdown`, `container_cluster.html.markdown`),
`google_compute_reservation` (resource and data source), `google_cloud_quotas_quota_preference`
(`quota_config { preferred_value }`, `contact_email`) and the `google_cloud_quotas_quota_info` data source.
pulumi_gcp 10.x bridges google-beta 7.x (pulumi/pulumi-gcp PR #3870, google-beta 7.39), so the Pulumi
and Terraform programs read the same schema; TF names `guest_accelerator` / `taint` (pulumi_gcp NodePool docs).
"""
POOL_TYPES = ("google_container_node_pool",)
"""The resource types that hold nodes: the Kueue objects wait for them."""


def terraform(spec: ClusterSpec[GkeCapacity]) -> tuple[dict[str, Body], list[TfResource]]:
    """The provider block and the resources of a GKE cluster's capacity."""
    return {"google-beta": {"project": spec.project, "region": spec.region}}, gcp_resources(spec.capacity)


def gcp_resources(spec: GkeCapacity) -> list[TfResource]:
    """Reservations, node pools (after the reservation they consume) and quota preferences."""
    reservations = {r.name: gcp_reservation(r) for r in spec.gcp_reservations}
    pools = [
        gke_node_pool(p, tuple(reservations[v].address for v in p.reservation_affinity.values if v in reservations))
        for p in spec.gke_node_pools
    ]
    return [*reservations.values(), *pools, *(r for q in spec.gcp_quota_preferences for r in gcp_quota_preference(q))]


def gke_node_pool(spec: GkeNodePoolSpec, depends_on: tuple[str, ...] = ()) -> TfResource:
    """`google_container_node_pool` (Pulumi: `gcp.container.NodePool`, pulumi_components.py)."""
    accelerator = spec.guest_accelerator
    affinity = spec.reservation_affinity
    node_config = {
        "machine_type": spec.machine_type,
        "guest_accelerator": [
            {
                "type": accelerator.type,
                "count": accelerator.count,
                "gpu_driver_installation_config": {"gpu_driver_version": accelerator.gpu_driver_version},
            }
        ]
        if accelerator is not None
        else None,
        "labels": spec.labels,
        "taint": [{"key": t.key, "value": t.value, "effect": upper_snake_effect(t.effect)} for t in spec.taints],
        "reservation_affinity": {
            "consume_reservation_type": affinity.consume_reservation_type,
            "key": affinity.key,
            "values": list(affinity.values) or None,
        },
        "spot": spec.spot or None,
        "flex_start": spec.flex_start or None,
        "max_run_duration": spec.max_run_duration,
        "gvnic": {"enabled": True} if spec.gvnic else None,
        "gpudirect_strategy": spec.gpudirect_strategy,
    }
    autoscaling = None
    if spec.autoscaling is not None:
        a = spec.autoscaling
        autoscaling = {
            "location_policy": a.location_policy,
            "min_node_count": a.min_node_count,
            "max_node_count": a.max_node_count,
            "total_min_node_count": a.total_min_node_count,
            "total_max_node_count": a.total_max_node_count,
        }
    body = {
        "name": spec.name,
        "cluster": spec.cluster,
        "project": spec.project,
        "location": spec.location,
        "node_locations": list(spec.node_locations),
        "node_count": spec.node_count,
        "autoscaling": autoscaling,
        "management": {"auto_repair": spec.auto_repair, "auto_upgrade": spec.auto_upgrade},
        "queued_provisioning": {"enabled": True} if spec.queued_provisioning else None,
        "placement_policy": (
            {"type": spec.placement_type, "tpu_topology": spec.tpu_topology}
            if spec.placement_type is not None
            else None
        ),
        "network_config": (
            {
                "additional_node_network_configs": [
                    {"network": n.network, "subnetwork": n.subnetwork} for n in spec.additional_networks
                ]
            }
            if spec.additional_networks
            else None
        ),
        "node_config": node_config,
    }
    return TfResource("google_container_node_pool", tf_name(spec.name), "google-beta", compact(body), depends_on)


def gcp_reservation(spec: GcpReservationSpec) -> TfResource:
    """`google_compute_reservation`: created and protected from destroy (Pulumi: `protect=True`), or, when the
    reservation exists, the data source that reads it (plan fails if it is not there; Pulumi: `get_reservation`)."""
    if not spec.create:
        return TfResource(
            "google_compute_reservation",
            tf_name(spec.name),
            "google-beta",
            {"name": spec.name, "project": spec.project, "zone": spec.zone},
            data=True,
        )
    accelerators = None
    if spec.accelerator_type is not None:
        accelerators = [{"accelerator_type": spec.accelerator_type, "accelerator_count": spec.accelerator_count}]
    body = {
        "name": spec.name,
        "project": spec.project,
        "zone": spec.zone,
        "specific_reservation_required": spec.specific_reservation_required,
        "specific_reservation": {
            "count": spec.count,
            "instance_properties": {"machine_type": spec.machine_type, "guest_accelerators": accelerators},
        },
        "description": f"Quartermaster commitment {spec.commitment}",
    }
    return TfResource(
        "google_compute_reservation", tf_name(spec.name), "google-beta", compact(body), prevent_destroy=True
    )


def gcp_quota_preference(spec: GcpQuotaPreferenceSpec) -> list[TfResource]:
    """`google_cloud_quotas_quota_info` (what is granted now) and `google_cloud_quotas_quota_preference` asking for
    the larger of the need and the grant for these dimensions (or the default for all), so it never asks for less:
    a preference below the grant would be a decrease request."""
    info = TfResource(
        "google_cloud_quotas_quota_info",
        tf_name(spec.name),
        "google-beta",
        {"parent": spec.parent, "service": spec.service, "quota_id": spec.quota_id},
        data=True,
    )
    dimensions = ", ".join(f'"{k}" = "{v}"' for k, v in sorted(spec.dimensions.items()))
    # cloud.quota_to_ask: grants without details are none; an unlimited grant (-1) stays unlimited
    granted = (
        f"[for d in {info.address}.dimensions_infos : tonumber(d.details[0].value) "
        f"if length(d.details) > 0 && (length(d.dimensions) == 0 || d.dimensions == tomap({{{dimensions}}}))]"
    )
    unlimited = UNLIMITED_QUOTA
    body = {
        "name": spec.name,
        "parent": spec.parent,
        "service": spec.service,
        "quota_id": spec.quota_id,
        "dimensions": spec.dimensions,
        "justification": spec.justification,
        "contact_email": spec.contact_email,
        "quota_config": {
            "preferred_value": Ref(
                f"${{contains({granted}, {unlimited}) ? {unlimited} : max({spec.preferred_value}, {granted}...)}}"
            )
        },
    }
    return [info, TfResource("google_cloud_quotas_quota_preference", tf_name(spec.name), "google-beta", compact(body))]


RESOURCES = TerraformResources(PINS, POOL_TYPES, terraform)
