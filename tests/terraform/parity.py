"""A normalised key-argument view of one cluster's resources, from either program, and their differences.

`pulumi_view(registered)` reads what the Pulumi program registered under mocks (tests/pulumi/harness);
`terraform_view(stack)` reads a synthesized `cdk.tf.json`. Both give {kind: {key: {field: value}}}, with
one `Kind` per resource type naming the fields compared (Terraform paths; the Pulumi path is the same in
camelCase unless `renamed`). `differences(pulumi, terraform)` lists every mismatch as a sentence.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.pulumi.harness import Registered

Getter = Callable[[dict[str, Any]], Any]
View = dict[str, dict[str, dict[str, Any]]]


def camel(path: str) -> str:
    """`node_config.machine_type` -> `nodeConfig.machineType` (Pulumi's engine names)."""
    return re.sub(r"_([a-z0-9])", lambda m: m.group(1).upper(), path)


def get(obj: Any, path: str) -> Any:
    """The value at a dotted path (`a.b[0].c`); a one-element block list is stepped into like a block."""
    for step in re.findall(r"[^.\[\]]+|\[\d+\]", path):
        if isinstance(obj, list) and not step.startswith("[") and len(obj) == 1:
            obj = obj[0]
        if step.startswith("["):
            index = int(step[1:-1])
            obj = obj[index] if isinstance(obj, list) and len(obj) > index else None
        else:
            obj = obj.get(step) if isinstance(obj, dict) else None
        if obj is None:
            return None
    return obj


def normal(value: Any, *, snake_blocks: bool = False) -> Any:
    """Integral floats as ints (the engine sends numbers as floats), None and empty collections as None;
    with `snake_blocks`, the argument names inside block lists in Terraform spelling."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        value = {
            k: normal(v, snake_blocks=snake_blocks)
            for k, v in value.items()
            if normal(v, snake_blocks=snake_blocks) is not None
        }
        return value or None
    if isinstance(value, list):
        items = [normal(v, snake_blocks=snake_blocks) for v in value]
        if snake_blocks:
            items = [{snake(k): v for k, v in i.items()} if isinstance(i, dict) else i for i in items]
        return items or None
    return value


def snake(name: str) -> str:
    """`acceleratorCount` -> `accelerator_count`."""
    return re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), name)


@dataclass(frozen=True)
class Kind:
    """One resource type in both programs and the fields whose values must agree."""

    name: str
    pulumi_type: str
    terraform_type: str
    key: str
    fields: tuple[str, ...]
    renamed: dict[str, str] = field(default_factory=dict)
    """Terraform path prefix -> Pulumi path prefix where the SDKs spell an argument differently."""
    derived: dict[str, tuple[Getter, Getter]] = field(default_factory=dict)
    """Fields computed from several arguments: name -> (from Pulumi inputs, from a Terraform body)."""

    def pulumi_path(self, path: str) -> str:
        for tf, pulumi in sorted(self.renamed.items(), key=lambda kv: -len(kv[0])):
            if path == tf or path.startswith((tf + ".", tf + "[")):
                return pulumi + camel(path[len(tf) :])
        return camel(path)


def _floor(expression: Any) -> float:
    """The need a quota request asks for at least: Terraform writes `${max(<need>, <granted read at plan>)}` (GCP:
    behind `contains(<grants>, -1) ? -1 :`, an unlimited grant kept); under mocks Pulumi reads no grant, so it asks
    for the need itself."""
    match = re.fullmatch(r"\$\{(?:contains\(.*\) \? -1 : )?max\(([0-9.]+), .*\)\}", str(expression), re.DOTALL)
    return float(match.group(1) if match else expression)


def _aks_cluster_from_pulumi(inputs: dict[str, Any]) -> str:
    return f"{inputs['resourceGroupName']}/{inputs['resourceName']}"


def _aks_cluster_from_terraform(body: dict[str, Any]) -> str:
    parts = body["kubernetes_cluster_id"].split("/")
    return f"{parts[parts.index('resourceGroups') + 1]}/{parts[-1]}"


KINDS = (
    Kind(
        "node_pool",
        "gcp:container/nodePool:NodePool",
        "google_container_node_pool",
        "name",
        (
            "cluster",
            "project",
            "location",
            "node_locations",
            "node_count",
            "autoscaling.location_policy",
            "autoscaling.min_node_count",
            "autoscaling.max_node_count",
            "autoscaling.total_min_node_count",
            "autoscaling.total_max_node_count",
            "management.auto_repair",
            "management.auto_upgrade",
            "queued_provisioning.enabled",
            "placement_policy.type",
            "placement_policy.tpu_topology",
            "network_config.additional_node_network_configs",
            "node_config.machine_type",
            "node_config.guest_accelerator[0].type",
            "node_config.guest_accelerator[0].count",
            "node_config.guest_accelerator[0].gpu_driver_installation_config.gpu_driver_version",
            "node_config.labels",
            "node_config.taint",
            "node_config.reservation_affinity.consume_reservation_type",
            "node_config.reservation_affinity.key",
            "node_config.reservation_affinity.values",
            "node_config.spot",
            "node_config.flex_start",
            "node_config.max_run_duration",
            "node_config.gvnic.enabled",
            "node_config.gpudirect_strategy",
        ),
        renamed={
            "node_config.guest_accelerator": "nodeConfig.guestAccelerators",
            "node_config.taint": "nodeConfig.taints",
        },
    ),
    Kind(
        "reservation",
        "gcp:compute/reservation:Reservation",
        "google_compute_reservation",
        "name",
        (
            "project",
            "zone",
            "specific_reservation_required",
            "specific_reservation.count",
            "specific_reservation.instance_properties.machine_type",
            "specific_reservation.instance_properties.guest_accelerators",
        ),
    ),
    Kind(
        "quota_preference",
        "gcp:cloudquota/sQuotaPreference:SQuotaPreference",
        "google_cloud_quotas_quota_preference",
        "name",
        ("parent", "service", "quota_id", "dimensions", "justification", "contact_email"),
        derived={
            "asks_at_least": (
                lambda i: _floor(i["quotaConfig"]["preferredValue"]),
                lambda b: _floor(b["quota_config"]["preferred_value"]),
            )
        },
    ),
    Kind(
        "launch_template",
        "aws:ec2/launchTemplate:LaunchTemplate",
        "aws_launch_template",
        "name",
        (
            "region",
            "instance_type",
            "instance_market_options.market_type",
            "capacity_reservation_specification.capacity_reservation_target.capacity_reservation_id",
            "network_interfaces",
            "placement.group_name",
        ),
    ),
    Kind(
        "node_group",
        "aws:eks/nodeGroup:NodeGroup",
        "aws_eks_node_group",
        "node_group_name",
        (
            "cluster_name",
            "region",
            "node_role_arn",
            "subnet_ids",
            "capacity_type",
            "instance_types",
            "ami_type",
            "scaling_config.desired_size",
            "scaling_config.min_size",
            "scaling_config.max_size",
            "labels",
            "taint",
        ),
        renamed={"taint": "taints"},
    ),
    Kind(
        "placement_group",
        "aws:ec2/placementGroup:PlacementGroup",
        "aws_placement_group",
        "name",
        ("region", "strategy"),
    ),
    Kind(
        "capacity_reservation",
        "aws:ec2/capacityReservation:CapacityReservation",
        "aws_ec2_capacity_reservation",
        "end_date",
        (
            "region",
            "instance_type",
            "availability_zone",
            "instance_count",
            "instance_platform",
            "instance_match_criteria",
            "end_date_type",
            "tags",
        ),
    ),
    Kind(
        "scheduled_scaling",
        "aws:autoscaling/schedule:Schedule",
        "aws_autoscaling_schedule",
        "scheduled_action_name",
        ("region", "start_time", "min_size", "max_size", "desired_capacity"),
    ),
    Kind(
        "service_quota",
        "aws:servicequotas/serviceQuota:ServiceQuota",
        "aws_servicequotas_service_quota",
        "quota_code",
        ("service_code", "region"),
        derived={"asks_at_least": (lambda i: _floor(i["value"]), lambda b: _floor(b["value"]))},
    ),
    Kind(
        "agent_pool",
        "azure-native:containerservice:AgentPool",
        "azurerm_kubernetes_cluster_node_pool",
        "name",
        (
            "vm_size",
            "node_count",
            "auto_scaling_enabled",
            "min_count",
            "max_count",
            "zones",
            "mode",
            "os_type",
            "os_sku",
            "node_labels",
            "node_taints",
            "priority",
            "eviction_policy",
            "spot_max_price",
            "capacity_reservation_group_id",
            "gpu_driver",
        ),
        renamed={
            "name": "agentPoolName",
            "node_count": "count",
            "auto_scaling_enabled": "enableAutoScaling",
            "zones": "availabilityZones",
            "priority": "scaleSetPriority",
            "eviction_policy": "scaleSetEvictionPolicy",
            "gpu_driver": "gpuProfile.driver",
            "os_sku": "osSKU",
        },
        derived={"cluster": (_aks_cluster_from_pulumi, _aks_cluster_from_terraform)},
    ),
)
PROTECTED = {"reservation", "capacity_reservation"}  # both programs must refuse to destroy these
NOT_COMPARED = {"pulumi:providers:", "quartermaster:"}  # providers and components have no Terraform resource


def _fields(kind: Kind, read: Callable[[str], Any], obj: dict[str, Any], side: int) -> dict[str, Any]:
    out = {f: normal(read(f), snake_blocks=True) for f in kind.fields}
    out.update({name: getters[side](obj) for name, getters in kind.derived.items()})
    return out


def pulumi_view(registered: Registered) -> View:
    """The key arguments of every cloud resource and Kubernetes object the Pulumi program registered."""
    by_type = {k.pulumi_type: k for k in KINDS}
    view: View = {k.name: {} for k in KINDS} | {"kubernetes_object": {}}
    unknown = []
    for r in registered.resources:
        if any(r.type.startswith(p) for p in NOT_COMPARED):
            continue
        if r.type.startswith("kubernetes:"):
            view["kubernetes_object"][_object_key(r.inputs)] = {"object": normal(r.inputs)}
            continue
        kind = by_type.get(r.type)
        if kind is None:
            unknown.append(r.type)
            continue
        fields = _fields(kind, lambda f, k=kind, i=r.inputs: get(i, k.pulumi_path(f)), r.inputs, 0)
        if kind.name in PROTECTED:
            fields["protected"] = r.protect
        view[kind.name][str(normal(get(r.inputs, kind.pulumi_path(kind.key))))] = fields
    assert not unknown, f"Pulumi registers {sorted(set(unknown))}, which the parity view does not know; add a Kind"
    return view


def terraform_view(stack: dict[str, Any]) -> View:
    """The same view of a synthesized Terraform JSON stack."""
    resources: dict[str, dict[str, Any]] = stack.get("resource", {})
    by_type = {k.terraform_type: k for k in KINDS}
    unknown = set(resources) - set(by_type) - {"kubernetes_manifest", "terraform_data"}
    assert not unknown, f"Terraform declares {sorted(unknown)}, which the parity view does not know; add a Kind"
    view: View = {k.name: {} for k in KINDS} | {"kubernetes_object": {}}
    for body in resources.get("kubernetes_manifest", {}).values():
        manifest = _unescape(body["manifest"])
        view["kubernetes_object"][_object_key(manifest)] = {"object": normal(manifest)}
    for type_, bodies in resources.items():
        kind = by_type.get(type_)
        if kind is None:
            continue
        for body in bodies.values():

            def read(f: str, b: dict[str, Any] = body) -> Any:
                return _resolve(get(b, f), resources)

            fields = _fields(kind, read, body, 1)
            if kind.name in PROTECTED:
                fields["protected"] = bool(get(body, "lifecycle.prevent_destroy"))
            view[kind.name][str(normal(read(kind.key)))] = fields
    return view


def _object_key(obj: dict[str, Any]) -> str:
    meta = obj["metadata"]
    return "/".join(p for p in (obj["apiVersion"], obj["kind"], meta.get("namespace"), meta["name"]) if p)


def _unescape(value: Any) -> Any:
    """Undo `modules.terraform.resources.literal` (Terraform reads `$${` as a literal `${`)."""
    if isinstance(value, str):
        return value.replace("$${", "${").replace("%%{", "%{")
    if isinstance(value, dict):
        return {k: _unescape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unescape(v) for v in value]
    return value


REFERENCE = re.compile(r"^\$\{([a-z0-9_]+)\.([A-Za-z0-9_-]+)\.([a-z_]+)\}$")


def _resolve(value: Any, resources: dict[str, dict[str, Any]]) -> Any:
    """A reference `${type.name.attr}` as the value Pulumi sees under mocks: the referenced argument, or
    for `id` `<name>-id`, the id tests/pulumi/harness.EchoMocks gives a resource."""
    match = REFERENCE.match(value) if isinstance(value, str) else None
    if match is None:
        return value
    type_, name, attr = match.groups()
    body = resources[type_][name]
    return f"{name}-id" if attr == "id" and "id" not in body else body[attr]


def differences(pulumi: View, terraform: View) -> list[str]:
    """Every resource or key argument on which the two programs disagree, as a sentence."""
    out = []
    for kind in sorted(set(pulumi) | set(terraform)):
        p, t = pulumi.get(kind, {}), terraform.get(kind, {})
        for key in sorted(set(p) - set(t)):
            out.append(f"{kind} {key}: only Pulumi declares it")
        for key in sorted(set(t) - set(p)):
            out.append(f"{kind} {key}: only Terraform declares it")
        for key in sorted(set(p) & set(t)):
            for f in sorted(set(p[key]) | set(t[key])):
                if p[key].get(f) != t[key].get(f):
                    out.append(f"{kind} {key}: {f} is {p[key].get(f)!r} in Pulumi but {t[key].get(f)!r} in Terraform")
    return out
