"""GKE node pools, Compute Engine reservations and Cloud Quotas preferences from the inventory.

Field names follow the provider arguments (`pulumi_gcp` 10.2 / Terraform google-beta), so the Pulumi
components and the Terraform emitter copy them without translating. Rules follow GoogleCloudPlatform/cluster-toolkit's
gke-node-pool module and the GKE docs (plan-tpus, troubleshooting/tpus, provisioningrequest), each cited below.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from quartermaster.capacity import nodes_per_slice, pool_accelerators, pool_max_nodes, pool_min_nodes
from quartermaster.model import Cluster, Commitment, Inventory, Machine, Pool
from quartermaster.modules.cloud.provider_emitters import CloudModule, DeclaredNodes, ManualQuota
from quartermaster.modules.cloud.spec_support import (
    SpecError,
    TaintSpec,
    per_zone,
    pool_taints,
    read_table,
    sorted_labels,
)
from quartermaster.names import POOL_LABEL
from quartermaster.providers.gke import PROVIDER, TPU_ACCELERATOR_LABEL, TPU_TOPOLOGY_LABEL

RESERVATION_KEY = "compute.googleapis.com/reservation-name"
QUOTA_SERVICE = "compute.googleapis.com"
GPU_DRIVER_VERSION = "DEFAULT"  # GKE installs the driver its version recommends (pulumi_gcp NodePool docs)
SECONDS_PER_HOUR = 3600

DATA = Path(__file__).parent / "data"
"""The provider's fact tables, each row with its source."""


@dataclass(frozen=True)
class GkeAutoscaling:
    """Autoscaling limits: per zone (`min/max_node_count`) or over all zones (`total_*`), never both."""

    location_policy: str
    min_node_count: int | None = None
    max_node_count: int | None = None
    total_min_node_count: int | None = None
    total_max_node_count: int | None = None


@dataclass(frozen=True)
class GkeGuestAccelerator:
    """`node_config.guest_accelerators[0]`: GPU type and count per node, driver installed by GKE."""

    type: str
    count: int
    gpu_driver_version: str = GPU_DRIVER_VERSION


@dataclass(frozen=True)
class GkeReservationAffinity:
    """`node_config.reservation_affinity`."""

    consume_reservation_type: str
    key: str | None = None
    values: tuple[str, ...] = ()


@dataclass(frozen=True)
class GkeNetwork:
    """One entry of `network_config.additional_node_network_configs`."""

    network: str
    subnetwork: str


@dataclass(frozen=True)
class GkeNodePoolSpec:
    """One `container.NodePool`: a GPU pool, or one slice `<pool>-<i>` of a TPU pool."""

    name: str
    pool: str
    cluster: str
    project: str
    location: str
    node_locations: tuple[str, ...]
    machine_type: str
    node_count: int | None
    autoscaling: GkeAutoscaling | None
    guest_accelerator: GkeGuestAccelerator | None
    labels: dict[str, str]
    taints: tuple[TaintSpec, ...]
    reservation_affinity: GkeReservationAffinity
    spot: bool = False
    flex_start: bool = False
    max_run_duration: str | None = None
    queued_provisioning: bool = False
    placement_type: str | None = None
    tpu_topology: str | None = None
    auto_repair: bool = True
    auto_upgrade: bool = True
    gvnic: bool = False
    gpudirect_strategy: str | None = None
    additional_networks: tuple[GkeNetwork, ...] = ()
    accelerators: int = 0
    """Most accelerators (GPUs or TPU chips) this node pool can hold; not a provider argument."""


@dataclass(frozen=True)
class GcpReservationSpec:
    """A `compute.Reservation` holding a commitment's capacity (consumed by SPECIFIC_RESERVATION pools)."""

    name: str
    commitment: str
    project: str
    zone: str
    machine_type: str
    count: int
    accelerator_type: str | None
    accelerator_count: int | None
    specific_reservation_required: bool = True
    create: bool = False
    """True: the stack creates the reservation; False: it exists and the stack only reads it."""


@dataclass(frozen=True)
class GcpQuotaPreferenceSpec:
    """A `cloudquota.SQuotaPreference`: a request for the regional accelerator quota the pools need."""

    name: str
    parent: str
    service: str
    quota_id: str
    dimensions: dict[str, str]
    preferred_value: str
    """What the pools need; the emitters ask for the larger of this and what is already granted (read when
    planned), so a request never lowers a quota."""
    justification: str
    contact_email: str
    pools: tuple[str, ...]


@dataclass(frozen=True)
class GkeCapacity:
    """What a GKE cluster's stack declares: node pools, the reservations they consume, quota preferences."""

    gke_node_pools: list[GkeNodePoolSpec] = field(default_factory=list)
    gcp_reservations: list[GcpReservationSpec] = field(default_factory=list)
    gcp_quota_preferences: list[GcpQuotaPreferenceSpec] = field(default_factory=list)


def gke_node_pools(inventory: Inventory, cluster: Cluster) -> list[GkeNodePoolSpec]:
    """Every node pool of a GKE cluster: one per GPU pool, one per TPU slice (`<pool>-<i>`)."""
    project, region = _project(cluster), inventory.site_by_name[cluster.site].region
    specs: list[GkeNodePoolSpec] = []
    for pool in cluster.pools:
        machine = inventory.machine_by_name[pool.machine]
        if pool.tpu is not None:
            specs.extend(_tpu_slices(inventory, cluster, project, region, pool, machine))
        else:
            specs.append(_gpu_pool(inventory, cluster, project, region, pool, machine))
    return specs


def _gpu_pool(
    inventory: Inventory, cluster: Cluster, project: str, region: str, pool: Pool, machine: Machine
) -> GkeNodePoolSpec:
    zones = len(pool.zones)
    node_count = autoscaling = None
    if pool.autoscaling is None:
        node_count = per_zone(pool_max_nodes(pool, machine), zones, pool.name, "`nodes`")
    else:
        autoscaling = _autoscaling(pool, machine)
    flex = pool.provisioning == "flex-start"
    labels = dict(pool.labels)
    if flex:
        labels["cloud.google.com/gke-queued"] = "true"  # GoogleCloudPlatform/cluster-toolkit's label for queued pools
    networks, strategy = _gpudirect(cluster, pool) if pool.gpudirect else ((), None)
    return replace(
        _node_pool(inventory, cluster, project, region, pool, machine),
        node_count=node_count,
        autoscaling=autoscaling,
        guest_accelerator=GkeGuestAccelerator(machine.accelerator_label, machine.accelerators_per_node),
        labels=sorted_labels(labels),
        flex_start=flex,
        max_run_duration=_max_run_duration(pool),
        queued_provisioning=flex,
        # flex-start with queued provisioning: no auto-repair, no auto-upgrade (cluster-toolkit gke-node-pool)
        auto_repair=not flex,
        auto_upgrade=not flex,
        gvnic=pool.gpudirect,
        gpudirect_strategy=strategy,
        additional_networks=networks,
        accelerators=pool_accelerators(inventory, pool),
    )


def _tpu_slices(
    inventory: Inventory, cluster: Cluster, project: str, region: str, pool: Pool, machine: Machine
) -> list[GkeNodePoolSpec]:
    assert pool.tpu is not None
    hosts = nodes_per_slice(pool, machine)
    labels = sorted_labels(
        {
            **pool.labels,
            TPU_ACCELERATOR_LABEL: machine.accelerator_label,
            TPU_TOPOLOGY_LABEL: pool.tpu.topology,
            POOL_LABEL: pool.name,  # GKE names each slice's nodes `<pool>-<i>`; the Kueue flavor selects this label
        }
    )
    shared = _node_pool(inventory, cluster, project, region, pool, machine)
    return [
        replace(
            shared,
            name=f"{pool.name}-{i}",
            node_count=hosts,
            labels=labels,
            placement_type="COMPACT",
            tpu_topology=pool.tpu.topology,
            accelerators=hosts * machine.accelerators_per_node,
        )
        for i in range(pool.tpu.slices)
    ]


def _node_pool(
    inventory: Inventory, cluster: Cluster, project: str, region: str, pool: Pool, machine: Machine
) -> GkeNodePoolSpec:
    """The fields a GPU pool and each slice of a TPU pool share, the rest at their defaults and no size, accelerator
    or labels yet: `_gpu_pool` and `_tpu_slices` fill in their own."""
    return GkeNodePoolSpec(
        name=pool.name,
        pool=pool.name,
        cluster=cluster.name,
        project=project,
        location=region,
        node_locations=pool.zones,
        machine_type=pool.machine,
        node_count=None,
        autoscaling=None,
        guest_accelerator=None,
        labels={},
        taints=pool_taints(pool, machine, PROVIDER),
        reservation_affinity=_reservation_affinity(inventory, pool),
        spot=pool.provisioning == "spot",
    )


def _autoscaling(pool: Pool, machine: Machine) -> GkeAutoscaling:
    """Per-zone limits (cluster-toolkit: TPU and flex-start need them; total_* and per-zone exclude each other)."""
    zones = len(pool.zones)
    policy = "ANY" if pool.provisioning in ("spot", "flex-start") else "BALANCED"
    return GkeAutoscaling(
        location_policy=policy,
        min_node_count=per_zone(pool_min_nodes(pool, machine), zones, pool.name, "`autoscaling.min_nodes`"),
        max_node_count=per_zone(pool_max_nodes(pool, machine), zones, pool.name, "`autoscaling.max_nodes`"),
    )


def _reservation_affinity(inventory: Inventory, pool: Pool) -> GkeReservationAffinity:
    """SPECIFIC for reservation pools; NO_RESERVATION otherwise so no pool eats another pool's reservation."""
    if pool.provisioning != "reservation":
        return GkeReservationAffinity("NO_RESERVATION")
    commitment = inventory.commitment_by_name[pool.commitment or ""]
    if not commitment.reservation_name:
        raise SpecError(
            f"pool {pool.name}: commitment {commitment.name} has no `reservation_name`, so the pool has no "
            "reservation to consume. Add `reservation_name` to the commitment or use `provisioning: on-demand`."
        )
    return GkeReservationAffinity("SPECIFIC_RESERVATION", RESERVATION_KEY, (commitment.reservation_name,))


def _max_run_duration(pool: Pool) -> str | None:
    """`max_run_duration` in the API's `<seconds>s` form."""
    if pool.max_run_duration_hours is None:
        return None
    return f"{pool.max_run_duration_hours * SECONDS_PER_HOUR}s"


def _gpudirect(cluster: Cluster, pool: Pool) -> tuple[tuple[GkeNetwork, ...], str | None]:
    """The extra node networks and GPUDirect strategy of the machine (`gke_gpudirect.csv`, with its sources).

    Networks are referenced by name, `<cluster>-gpunet-<i>` (subnet `<cluster>-gpusub-<i>`) for gVNIC
    networks and `<cluster>-rdma` (subnets `<cluster>-rdma-sub-<i>`) for RDMA; they must exist.
    """
    row = next((r for r in read_table(DATA / "gke_gpudirect.csv") if r["machine"] == pool.machine), None)
    if row is None:
        known = ", ".join(r["machine"] for r in read_table(DATA / "gke_gpudirect.csv"))
        raise SpecError(
            f"pool {pool.name}: GKE has no GPUDirect networking for {pool.machine} "
            f"(known: {known}). Remove `gpudirect: true` or use one of those machines."
        )
    gvnic = tuple(
        GkeNetwork(f"{cluster.name}-gpunet-{i}", f"{cluster.name}-gpusub-{i}")
        for i in range(int(row["gvnic_networks"]))
    )
    rdma = tuple(
        GkeNetwork(f"{cluster.name}-rdma", f"{cluster.name}-rdma-sub-{i}") for i in range(int(row["rdma_subnets"]))
    )
    return gvnic + rdma, row["gpudirect_strategy"] or None


def gcp_reservations(inventory: Inventory, cluster: Cluster) -> list[GcpReservationSpec]:
    """A reservation per commitment with a `reservation_name` that the cluster's pools consume: created, or read
    when it exists (`reservation: existing`, the default)."""
    project = _project(cluster)
    specs: dict[str, GcpReservationSpec] = {}
    for pool in cluster.pools:
        if pool.provisioning != "reservation" or pool.commitment is None:
            continue
        commitment = inventory.commitment_by_name[pool.commitment]
        if commitment.reservation_name and commitment.name not in specs:
            specs[commitment.name] = _reservation(inventory, project, commitment, pool)
    return sorted(specs.values(), key=lambda s: s.name)


def _reservation(inventory: Inventory, project: str, commitment: Commitment, pool: Pool) -> GcpReservationSpec:
    machine = inventory.machine_by_name[commitment.machine]
    zone = commitment.zone or (pool.zones[0] if len(pool.zones) == 1 else None)
    if zone is None:
        raise SpecError(
            f"commitment {commitment.name}: a Compute Engine reservation is zonal. Set the commitment's `zone`."
        )
    gpu = machine.kind == "gpu"  # TPU machine types carry their chips; GPUs are declared (pulumi_gcp NodePool docs)
    assert commitment.reservation_name is not None
    return GcpReservationSpec(
        name=commitment.reservation_name,
        commitment=commitment.name,
        project=project,
        zone=zone,
        machine_type=commitment.machine,
        count=commitment.count,
        accelerator_type=machine.accelerator_label if gpu else None,
        accelerator_count=machine.accelerators_per_node if gpu else None,
        create=commitment.reservation == "create",
    )


UNLIMITED_QUOTA = -1
"""What Cloud Quotas reports, and accepts as a preferred value, for a quota without a limit."""


def quota_to_ask(need: int, granted: list[int]) -> int:
    """The preferred value of a quota request: the need, or more when more is granted (a preference is absolute, so
    asking for less than the grant would be a decrease request), or unlimited when the grant is unlimited (-1 is
    below every need, so a plain maximum would turn an unlimited quota into a limited one). `granted`: the values of
    the grants that apply (the request's dimensions, or the default for all); a grant without details is not one
    (the provider returns an empty `details` list then: terraform-provider-google,
    `data_source_google_cloud_quotas_quota_info.go`). The Pulumi and Terraform emitters encode this rule."""
    if UNLIMITED_QUOTA in granted:
        return UNLIMITED_QUOTA
    return max([need, *granted])


def quota_class(pool: Pool, machine: Machine) -> str | None:
    """Which regional quota a pool draws on: `on-demand`, `preemptible`, or None (needs no quota).

    Spot and flex-start VMs use preemptible quota; GPU reservations hold on-demand quota; reserved TPU
    pools need none (GKE docs, troubleshooting/tpus).
    """
    if pool.provisioning in ("spot", "flex-start"):
        return "preemptible"
    if pool.provisioning == "reservation" and machine.kind == "tpu":
        return None
    return "on-demand"


def gcp_quota_preferences(
    inventory: Inventory, cluster: Cluster
) -> tuple[list[GcpQuotaPreferenceSpec], list[ManualQuota]]:
    """One preference per (quota id, dimensions) in the cluster's region: the sum of its pools' accelerators."""
    project, region = _project(cluster), inventory.site_by_name[cluster.site].region
    needs: dict[tuple[str, str], tuple[int, list[str]]] = {}
    for pool in cluster.pools:
        machine = inventory.machine_by_name[pool.machine]
        klass = quota_class(pool, machine)
        if klass is not None:
            total, pools = needs.get((machine.accelerator_label, klass), (0, []))
            key = (machine.accelerator_label, klass)
            needs[key] = (total + pool_accelerators(inventory, pool), [*pools, pool.name])
    table = {
        (r["accelerator_label"], r["quota_class"]): r
        for r in read_table(DATA / "gcp_gpu_quota.csv")
        if r["verified"] == "yes"
    }  # an unverified id is left to a person, never filed
    preferences, manual = [], []
    for (label, klass), (total, pools) in sorted(needs.items()):
        row = table.get((label, klass))
        if row is None:
            manual.append(
                ManualQuota(
                    region,
                    label,
                    klass,
                    total,
                    tuple(pools),
                    "no verified Cloud Quotas id (quartermaster/providers/gke/data/gcp_gpu_quota.csv); find it with "
                    "`gcloud beta quotas info list --service=compute.googleapis.com`",
                )
            )
            continue
        contact = inventory.policy.quota_contact_email
        if contact is None:
            raise SpecError(
                f"cluster {cluster.name}: pools {', '.join(pools)} need {label} quota, and Google "
                "Cloud needs a contact for an increase request. Set `policy.quota_contact_email`."
            )
        dimensions = {"region": region}
        if row["gpu_family"]:
            dimensions["gpu_family"] = row["gpu_family"]
        suffix = f"-{row['gpu_family'].lower()}" if row["gpu_family"] else ""
        preferences.append(
            GcpQuotaPreferenceSpec(
                name=f"compute_googleapis_com-{row['quota_id']}-{region}{suffix}",
                parent=f"projects/{project}",
                service=QUOTA_SERVICE,
                quota_id=row["quota_id"],
                dimensions=dimensions,
                preferred_value=str(total),
                justification=f"Quartermaster: {total} {label} for pools {', '.join(pools)} in {region}",
                contact_email=contact,
                pools=tuple(pools),
            )
        )
    return preferences, manual


def _project(cluster: Cluster) -> str:
    if not cluster.project:
        raise SpecError(f"cluster {cluster.name}: a GKE cluster needs its GCP `project`. Set `project: <id>`.")
    return cluster.project


def conflicts(spec: GkeNodePoolSpec) -> list[str]:
    """Arguments of a node pool spec that contradict each other, each naming both and the way out."""
    out: list[str] = []
    if (spec.node_count is None) == (spec.autoscaling is None):
        out.append("set exactly one of `node_count` (fixed size) and `autoscaling`")
    if spec.spot and spec.flex_start:
        out.append("`spot` and `flex_start` exclude each other; keep one")
    if (spec.spot or spec.flex_start) and spec.reservation_affinity.consume_reservation_type != "NO_RESERVATION":
        out.append("`spot`/`flex_start` need reservation_affinity NO_RESERVATION; drop the reservation")
    if spec.queued_provisioning and not spec.flex_start:
        out.append("`queued_provisioning` needs `flex_start`; set flex_start or drop queued provisioning")
    if spec.flex_start and spec.node_count is not None:
        out.append("`flex_start` pools autoscale from 0; replace `node_count` with `autoscaling`")
    if spec.flex_start and spec.auto_repair:
        out.append("`flex_start` needs `auto_repair` off; set auto_repair=False")
    if spec.placement_type == "COMPACT" and len(spec.node_locations) != 1:
        out.append("COMPACT `placement_type` needs exactly one zone in `node_locations`")
    if spec.tpu_topology and spec.guest_accelerator is not None:
        out.append("`tpu_topology` (TPU) and `guest_accelerator` (GPU) exclude each other")
    return out


class GkeModule(CloudModule[GkeCapacity, GkeNodePoolSpec]):
    """GKE's capacity specs: node pools, reservations and Cloud Quotas preferences (Pulumi: `pulumi_components`;
    Terraform: google-beta, `terraform_resources`)."""

    provider = PROVIDER

    def capacity(
        self, inventory: Inventory, cluster: Cluster, now: dt.datetime
    ) -> tuple[GkeCapacity, list[ManualQuota]]:
        preferences, manual = gcp_quota_preferences(inventory, cluster)
        specs = GkeCapacity(gke_node_pools(inventory, cluster), gcp_reservations(inventory, cluster), preferences)
        return specs, manual

    def pool_specs(self, capacity: GkeCapacity) -> Sequence[GkeNodePoolSpec]:
        return capacity.gke_node_pools

    def declared_nodes(self, capacity: GkeCapacity) -> list[DeclaredNodes]:
        return [
            DeclaredNodes(
                p.pool, p.name, p.labels, tuple((t.key, t.value, t.effect) for t in p.taints), p.queued_provisioning
            )
            for p in capacity.gke_node_pools
        ]

    def conflicts(self, pool_spec: GkeNodePoolSpec) -> list[str]:
        return conflicts(pool_spec)

    def pool_title(self, pool_spec: GkeNodePoolSpec) -> str:
        return f"node pool {pool_spec.name}"


MODULE = GkeModule()
