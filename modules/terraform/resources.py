"""Terraform resource bodies from the cloud specs and Kueue manifests: pure, no cdktf import.

Each builder mirrors one Pulumi component of `modules.pulumi` argument for argument, in the Terraform
spelling (`guest_accelerator` and `taint` blocks where `pulumi_gcp` says `guest_accelerators` / `taints`,
as its NodePool docs name them; `taint` blocks on `aws_eks_node_group`; `priority` / `eviction_policy` /
`auto_scaling_enabled` on `azurerm_kubernetes_cluster_node_pool`). Argument names were checked against
the provider docs of the versions pinned in `provider_pins()` (sources in `modules/terraform/__init__.py`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from quartermaster.model import Inventory
from quartermaster.modules.cloud import (
    AksAgentPoolSpec,
    AwsCapacityReservationSpec,
    AwsServiceQuotaSpec,
    ClusterSpec,
    EksCapacity,
    EksNodeGroupSpec,
    GcpQuotaPreferenceSpec,
    GcpReservationSpec,
    GkeCapacity,
    GkeNodePoolSpec,
    ProviderPin,
    SpecError,
    cloud_module,
    cloud_modules,
    conflicts,
    upper_snake_effect,
)
from quartermaster.modules.cloud.base import Body
from quartermaster.modules.cloud.gcp import UNLIMITED_QUOTA

Manifest = dict[str, Any]

KUBERNETES_PIN = ProviderPin("hashicorp/kubernetes", "~> 2.38")
KUBECONFIG_VARIABLE = "kubeconfig_path"


def provider_pins() -> dict[str, ProviderPin]:
    """Every Terraform provider the stacks may use and the version its argument names were read at (see the module
    docstring of modules.terraform): the registered cloud modules' and `kubernetes` for the Kueue objects."""
    pins = {name: pin for module in cloud_modules() for name, pin in module.terraform_pins.items()}
    return {**pins, "kubernetes": KUBERNETES_PIN}


@dataclass(frozen=True)
class TfResource:
    """One Terraform resource: `resource.<type>.<name>` with its arguments and meta-arguments."""

    type: str
    name: str
    provider: str
    """Key of the stack's provider; empty for Terraform's built-in `terraform_data`."""
    body: Body
    depends_on: tuple[str, ...] = ()
    """Addresses `<type>.<name>` of resources in the same stack this one waits for."""
    prevent_destroy: bool = False
    ignore_changes: tuple[str, ...] = ()
    data: bool = False
    """A data source (read, never created): addressed `data.<type>.<name>`."""
    count: str | None = None
    """The `count` meta-argument, a Terraform expression (`${...}`); None: one instance."""

    @property
    def address(self) -> str:
        return f"data.{self.type}.{self.name}" if self.data else f"{self.type}.{self.name}"


@dataclass(frozen=True)
class TfStackSpec:
    """Everything one cluster's Terraform stack declares."""

    cluster: str
    providers: dict[str, Body]
    """Provider name -> its configuration block."""
    resources: list[TfResource] = field(default_factory=list)
    variables: dict[str, Body] = field(default_factory=dict)


def stack_clusters(inventory: Inventory) -> list[str]:
    """The clusters that get a stack: every cluster whose provider has cloud resources (on-prem pools are
    inventory-only, as in Pulumi)."""
    return [c.name for c in inventory.clusters if cloud_module(c.kind) is not None]


def tf_name(value: str) -> str:
    """A Terraform resource name for `value`: letters, digits, `_` and `-`, not starting with a digit or `-`."""
    name = re.sub(r"[^A-Za-z0-9_-]", "_", value)
    return name if re.match(r"[A-Za-z_]", name) else f"_{name}"


class Ref(str):
    """A Terraform expression this module writes (`${aws_launch_template.x.id}`), kept as it is by `literal`."""


def literal(value: Any) -> Any:
    """`value` with `${` and `%{` escaped in every string but a `Ref`, so Terraform reads inventory text as text,
    never as a template (a project named `${file("~/.ssh/id_rsa")}` would otherwise be evaluated)."""
    if isinstance(value, Ref):
        return value
    if isinstance(value, str):
        return value.replace("${", "$${").replace("%{", "%%{")
    if isinstance(value, dict):
        return {k: literal(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [literal(v) for v in value]
    return value


def compact(value: Any) -> Any:
    """`value` without None entries (an absent argument), recursively; tuples become lists."""
    if isinstance(value, dict):
        return {k: compact(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [compact(v) for v in value]
    return value


def stack_spec(spec: ClusterSpec, manifests: Sequence[Manifest]) -> TfStackSpec:
    """The providers, variables and resources of one cluster's stack; a SpecError when the cluster's node pool specs
    contradict themselves (the `conflicts` guard the Pulumi components apply too)."""
    problems = conflicts(spec)
    if problems:
        raise SpecError(f"cluster {spec.cluster}: " + "; ".join(problems) + ".")
    module = cloud_module(spec.kind)
    providers, resources = module.terraform(spec) if module else ({}, [])
    pool_types = module.terraform_pool_types if module else ()
    variables: dict[str, Body] = {}
    if manifests:
        providers["kubernetes"] = {"config_path": Ref(f"${{var.{KUBECONFIG_VARIABLE}}}")}
        variables[KUBECONFIG_VARIABLE] = {
            "type": "string",
            "description": f"Path of a kubeconfig whose current context is cluster {spec.cluster} "
            "(for the Kueue objects).",
        }
        pools = tuple(r.address for r in resources if r.type in pool_types)
        barrier = TfResource("terraform_data", "node_pools", "", {}, depends_on=pools) if pools else None
        resources += [barrier] if barrier else []
        resources += kueue_manifests(manifests, (barrier.address,) if barrier else ())
    _check_unique(resources)
    return TfStackSpec(
        spec.cluster, literal(providers), [replace(r, body=literal(r.body)) for r in resources], variables
    )


def _check_unique(resources: list[TfResource]) -> None:
    seen: set[str] = set()
    for r in resources:
        if r.address in seen:
            raise ValueError(f"two Terraform resources are named {r.address}; rename one of the objects behind it")
        seen.add(r.address)


# --- GKE -----------------------------------------------------------------------------------------------


def gcp_resources(spec: GkeCapacity) -> list[TfResource]:
    """Reservations, node pools (after the reservation they consume) and quota preferences."""
    reservations = {r.name: gcp_reservation(r) for r in spec.gcp_reservations}
    pools = [
        gke_node_pool(p, tuple(reservations[v].address for v in p.reservation_affinity.values if v in reservations))
        for p in spec.gke_node_pools
    ]
    return [*reservations.values(), *pools, *(r for q in spec.gcp_quota_preferences for r in gcp_quota_preference(q))]


def gke_node_pool(spec: GkeNodePoolSpec, depends_on: tuple[str, ...] = ()) -> TfResource:
    """`google_container_node_pool` (Pulumi: `gcp.container.NodePool`, modules/pulumi/gke.py)."""
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
    # modules.cloud.gcp.quota_to_ask: grants without details are none; an unlimited grant (-1) stays unlimited
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


# --- EKS -----------------------------------------------------------------------------------------------


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


# --- AKS -----------------------------------------------------------------------------------------------


def aks_cluster_id(subscription: str, spec: AksAgentPoolSpec) -> str:
    """The ARM id of the existing managed cluster the node pool joins."""
    return (
        f"/subscriptions/{subscription}/resourceGroups/{spec.resource_group_name}"
        f"/providers/Microsoft.ContainerService/managedClusters/{spec.resource_name}"
    )


def aks_node_pool(spec: AksAgentPoolSpec, subscription: str) -> TfResource:
    """`azurerm_kubernetes_cluster_node_pool` (Pulumi: `containerservice.AgentPool`; `gpu_driver` needs
    azurerm >= 4.40)."""
    return TfResource(
        "azurerm_kubernetes_cluster_node_pool",
        tf_name(spec.agent_pool_name),
        "azurerm",
        compact(
            {
                "name": spec.agent_pool_name,
                "kubernetes_cluster_id": aks_cluster_id(subscription, spec),
                "vm_size": spec.vm_size,
                "node_count": spec.count,
                "auto_scaling_enabled": spec.enable_auto_scaling,
                "min_count": spec.min_count,
                "max_count": spec.max_count,
                "zones": list(spec.availability_zones),
                "mode": spec.mode,
                "os_type": spec.os_type,
                "os_sku": spec.os_sku,
                "node_labels": spec.node_labels,
                "node_taints": list(spec.node_taints),
                "priority": spec.scale_set_priority,
                "eviction_policy": spec.scale_set_eviction_policy,
                "spot_max_price": spec.spot_max_price,
                "capacity_reservation_group_id": spec.capacity_reservation_group_id,
                "gpu_driver": spec.gpu_driver,
            }
        ),
        ignore_changes=("node_count",) if spec.enable_auto_scaling else (),
    )  # the autoscaler owns it


# --- Kueue ---------------------------------------------------------------------------------------------


def manifest_name(m: Manifest) -> str:
    """`<kind>_<namespace>_<name>` (cluster-scoped: `<kind>_<name>`), as a Terraform name."""
    meta = m["metadata"]
    return tf_name("_".join(p for p in (m["kind"].lower(), meta.get("namespace"), meta["name"]) if p))


def kueue_manifests(manifests: Sequence[Manifest], pools: tuple[str, ...]) -> list[TfResource]:
    """A `kubernetes_manifest` per object; namespaced objects wait for their Namespace, Kueue objects for
    the node pools their flavors select (as in the Pulumi component) through `pools`: the built-in
    `terraform_data.node_pools`, which waits for every pool (M + P dependency edges instead of M x P).
    Namespaces are protected from destroy: deleting one deletes every workload in it (Pulumi retains them)."""
    namespaces = {m["metadata"]["name"]: manifest_name(m) for m in manifests if m["kind"] == "Namespace"}
    out = []
    for m in manifests:
        namespace = m["metadata"].get("namespace")
        after = (f"kubernetes_manifest.{namespaces[namespace]}",) if namespace in namespaces else ()
        if m["apiVersion"].startswith("kueue.x-k8s.io/"):
            after = (*after, *pools)
        out.append(
            TfResource(
                "kubernetes_manifest",
                manifest_name(m),
                "kubernetes",
                {"manifest": m},
                depends_on=after,
                prevent_destroy=m["kind"] == "Namespace",
            )
        )
    return out
