"""Pure builders: inventory -> the Kueue objects (plus Namespaces and RBAC) of one cluster, as typed objects
(`api.py`, generated from Kueue's v1beta2 CRDs; `manifest.py`), and the manifests `qm render` writes from them.

Rules of the derivation (Kueue rule n is rule n of docs/reference/kueue-rules.md; copied facts cite their source):
- one ResourceFlavor per pool, its `nodeLabels` selecting exactly that pool's nodes;
- one ClusterQueue per team with quota in the cluster, named after the team, admitting only the team's
  namespaces; flavors in preference order reservation > capacity-block > on-demand > flex-start > spot;
- resource groups are the smallest groups in which no resource appears twice (rules 15-18);
- a Cohort object for every cohort of the tree (on every cluster, so the tree is the same everywhere);
- LocalQueues `<team>` and `default` in every team namespace (rule 67);
- an AdmissionCheck + ProvisioningRequestConfig per flex-start pool, scoped with `onFlavors` (rule 42);
- on a MultiKueue manager: one logical flavor per accelerator with the sum of the workers' quotas, and
  per team a MultiKueue AdmissionCheck + MultiKueueConfig listing the workers where the team has quota;
- Kueue's CRD defaults are written out explicitly so that live objects do not show drift (kueue-rules.md section 0);
- quotas follow the dates of the capacity they offer: at an instant when a pool's nodes cannot exist (a capacity
  block before it starts or after it ends, a reservation outside its commitment's term, on-prem servers not yet
  delivered: `quartermaster.capacity.pool_window`), every quota in its flavor is 0 and cannot borrow, and the
  manager's sums leave it out; the objects stay, so a window's change is a quota change only.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from quartermaster import cycle_collector
from quartermaster.capacity import open_pools
from quartermaster.model import Cluster, Cohort, Inventory, Pool, Quota, Team
from quartermaster.modules.kueue import api
from quartermaster.modules.kueue.k8s import canonical_quantity
from quartermaster.modules.kueue.manifest import (
    KUEUE_GROUP,
    RBAC_GROUP,
    Emitted,
    Namespace,
    PolicyRule,
    Role,
    RoleBinding,
    RoleRef,
    Subject,
    to_manifest,
)
from quartermaster.modules.kueue.meta import ObjectMeta
from quartermaster.names import ClusterKind
from quartermaster.pricing import Provisioning
from quartermaster.providers import provider_of

LABEL_PREFIX = "quartermaster.dev"
TEAM_LABEL = f"{LABEL_PREFIX}/team"
COST_CENTER_LABEL = f"{LABEL_PREFIX}/cost-center"
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"  # set by the API server on every namespace
DEFAULT_LOCAL_QUEUE = "default"  # the namespace's default queue (Kueue rule 67)


# Flavor preference inside a ClusterQueue: paid-for capacity first, interruptible capacity last.
PROVISIONING_PREFERENCE = {
    Provisioning.RESERVATION: 0,
    Provisioning.CAPACITY_BLOCK: 1,
    Provisioning.ON_DEMAND: 2,
    Provisioning.FLEX_START: 3,
    Provisioning.SPOT: 4,
}

# GKE Dynamic Workload Scheduler (queued provisioning); kueue-rules.md section 2, ProvisioningRequest row.
QUEUED_PROVISIONING_CLASS = "queued-provisioning.gke.io"
PROVISIONING_CONTROLLER = "kueue.x-k8s.io/provisioning-request"
MULTIKUEUE_CONTROLLER = "kueue.x-k8s.io/multikueue"

# Kueue v0.19.2 CRD defaults (kueue-rules.md section 0), emitted explicitly.
RETRY_STRATEGY_DEFAULT = api.RetryStrategy(backoff_limit_count=3, backoff_base_seconds=60, backoff_max_seconds=1800)
FLAVOR_FUNGIBILITY_DEFAULT = api.FlavorFungibility(when_can_borrow="MayStopSearch", when_can_preempt="TryNextFlavor")

# Workload kinds a team may create in its own namespaces (Kueue's built-in integrations).
WORKLOAD_RESOURCES = {
    "": ("pods",),
    "apps": ("deployments", "statefulsets"),
    "batch": ("cronjobs", "jobs"),
    "jobset.x-k8s.io": ("jobsets",),
    "kubeflow.org": ("jaxjobs", "mpijobs", "paddlejobs", "pytorchjobs", "tfjobs", "xgboostjobs"),
    "leaderworkerset.x-k8s.io": ("leaderworkersets",),
    "ray.io": ("rayclusters", "rayjobs"),
    "trainer.kubeflow.org": ("trainjobs",),
}
WRITE_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
READ_VERBS = ("get", "list", "watch")
TEAM_ROLE = "quartermaster-team-workloads"

# The order objects are applied in: namespaces and RBAC, then what others reference, then referrers.
KIND_ORDER = (
    "Namespace",
    "Role",
    "RoleBinding",
    "WorkloadPriorityClass",
    "Topology",
    "ResourceFlavor",
    "Cohort",
    "ProvisioningRequestConfig",
    "MultiKueueCluster",
    "MultiKueueConfig",
    "AdmissionCheck",
    "ClusterQueue",
    "LocalQueue",
)
RESOURCE_ORDER = ("cpu", "memory")  # then accelerator resources, sorted


@dataclass(frozen=True)
class FlavorQuota:
    """Quota of one ClusterQueue or Cohort in one flavor: resource -> (nominal, borrowing, lending)."""

    flavor: str
    resources: dict[str, tuple[Any, Any, Any]]


# --- entry points ----------------------------------------------------------------------------------


@cycle_collector.paused()
def objects_for_cluster(inventory: Inventory, cluster: str, at: dt.datetime) -> list[dict[str, Any]]:
    """Every object for `cluster` valid at `at` (an aware datetime) as the manifest `qm render` writes, in apply
    order, in the cluster's `kueue_api_version`."""
    version = inventory.cluster_by_name[cluster].kueue_api_version
    return [to_manifest(obj, version) for obj in kueue_objects(inventory, cluster, at)]


@cycle_collector.paused()
def kueue_objects(inventory: Inventory, cluster: str, at: dt.datetime) -> list[Emitted]:
    """Every object for `cluster` valid at `at` (an aware datetime), typed, in apply order."""
    c = inventory.cluster_by_name[cluster]
    now_open = open_pools(inventory, at)
    quotas = _team_quotas(inventory, c, now_open)
    objects: list[Emitted] = list(_quota_objects(inventory, c, now_open, quotas))
    objects += [_priority_class(p.name, p.value, p.description) for p in inventory.priority_classes]
    if c.topology_aware:
        levels = {
            provider_of(c.kind).topology_levels(p.machine, p.provisioning)
            for p in c.pools
            if topology_aware_flavor(c, p)
        }
        objects += [_topology(c, level_set) for level_set in sorted(levels)]
    objects += [_pool_flavor(inventory, c, p) for p in c.pools]
    objects += [_logical_flavor(name) for name in sorted(_manager_flavors(inventory, c))]
    for pool in c.pools:
        if pool.provisioning == "flex-start":
            objects += _provisioning_check(inventory, pool)
    if c.multikueue_role == "manager":
        objects += [_multikueue_cluster(inventory, w) for w in c.multikueue_workers]
        for team_name in sorted(quotas):
            objects += _multikueue_check(team_name, _workers_of_team(inventory, c, team_name))
    for name in sorted(quotas):
        team = inventory.team_by_name[name]
        objects += _tenancy(team, c.kind)
        objects += _local_queues(team)
    return sorted(objects, key=_apply_order)


def quota_objects(inventory: Inventory, cluster: str, at: dt.datetime) -> list[api.Cohort | api.ClusterQueue]:
    """The Cohorts and ClusterQueues of `kueue_objects` alone (what the quota tree reads, without the rest)."""
    c = inventory.cluster_by_name[cluster]
    now_open = open_pools(inventory, at)
    return _quota_objects(inventory, c, now_open, _team_quotas(inventory, c, now_open))


def _quota_objects(
    inventory: Inventory, c: Cluster, now_open: frozenset[str], quotas: dict[str, list[FlavorQuota]]
) -> list[api.Cohort | api.ClusterQueue]:
    flex = [p for p in c.pools if p.provisioning == "flex-start"]
    fair = inventory.fair_sharing
    out: list[api.Cohort | api.ClusterQueue] = [_cohort(inventory, c, cohort, now_open) for cohort in inventory.cohorts]
    for name in sorted(quotas):
        multikueue = multikueue_check_name(name) if c.multikueue_role == "manager" else None
        out.append(_cluster_queue(inventory, c, inventory.team_by_name[name], quotas[name], flex, multikueue, fair))
    return out


def _apply_order(obj: Emitted) -> tuple[int, str, str]:
    return KIND_ORDER.index(obj.KIND), obj.metadata.namespace or "", obj.metadata.name


# --- quotas ----------------------------------------------------------------------------------------


def _team_quotas(inventory: Inventory, cluster: Cluster, now_open: frozenset[str]) -> dict[str, list[FlavorQuota]]:
    """Team -> its quotas in this cluster's flavors, in flavor preference order; teams without quota left out."""
    out: dict[str, list[FlavorQuota]] = {}
    for team in inventory.teams:
        flavors = _quotas_here(inventory, cluster, team.quotas, now_open, lending_allowed=team.cohort is not None)
        if flavors:
            out[team.name] = flavors
    return out


def _quotas_here(
    inventory: Inventory, cluster: Cluster, quotas: Iterable[Quota], now_open: frozenset[str], *, lending_allowed: bool
) -> list[FlavorQuota]:
    """Quotas in this cluster's own pools, plus (on a manager) the workers' quotas summed per accelerator; a quota
    in a pool whose nodes cannot exist now (not in `now_open`) is 0."""
    own = {p.name: p for p in cluster.pools}
    quotas = tuple(quotas)
    result = [
        _flavor_quota(inventory, own[q.flavor], q, lending_allowed, q.flavor in now_open)
        for q in sorted((q for q in quotas if q.flavor in own), key=lambda q: _preference(own[q.flavor], cluster))
    ]
    if cluster.multikueue_role == "manager":
        result += _summed_worker_quotas(inventory, cluster, quotas, now_open, lending_allowed)
    return result


def _preference(pool: Pool, cluster: Cluster) -> tuple[int, int]:
    return PROVISIONING_PREFERENCE[pool.provisioning], [p.name for p in cluster.pools].index(pool.name)


def _flavor_quota(inventory: Inventory, pool: Pool, quota: Quota, lending_allowed: bool, is_open: bool) -> FlavorQuota:
    """The quota entry as written; when the pool's nodes cannot exist (`is_open` false), nominal 0 in every
    resource and, in a cohort, a borrowing limit of 0: the queue neither holds nor borrows what is not there."""
    resource = inventory.machine_by_name[pool.machine].resource_name
    resources: dict[str, tuple[Any, Any, Any]]
    if not is_open:
        closed = (0, 0 if lending_allowed else None, None)
        resources = {resource: closed}
        if quota.cpu is not None:
            resources["cpu"] = closed
        if quota.memory_gib is not None:
            resources["memory"] = ("0Gi", *closed[1:])
        return FlavorQuota(pool.name, resources)
    borrowing = quota.borrowing_limit if lending_allowed else None
    lending = quota.lending_limit if lending_allowed else None
    resources = {resource: (quota.nominal, borrowing, lending)}
    if quota.cpu is not None:
        resources["cpu"] = (quota.cpu, None, None)
    if quota.memory_gib is not None:
        resources["memory"] = (f"{quota.memory_gib}Gi", None, None)
    return FlavorQuota(pool.name, resources)


def accelerator_flavor_name(accelerator: str) -> str:
    """The manager's logical flavor for an accelerator: `H100-80GB` -> `h100-80gb`."""
    return "".join(ch if ch.isalnum() else "-" for ch in accelerator.lower()).strip("-")


def _worker_pools(inventory: Inventory, manager: Cluster) -> dict[str, tuple[str, Pool]]:
    """Pool name -> (worker cluster, pool) for every pool of the manager's workers."""
    return {
        p.name: (w, p)
        for w in manager.multikueue_workers
        if w in inventory.cluster_by_name
        for p in inventory.cluster_by_name[w].pools
    }


def _manager_flavors(inventory: Inventory, cluster: Cluster) -> set[str]:
    if cluster.multikueue_role != "manager":
        return set()
    return {
        accelerator_flavor_name(inventory.machine_by_name[p.machine].accelerator)
        for _, p in _worker_pools(inventory, cluster).values()
    }


def _summed_worker_quotas(
    inventory: Inventory, manager: Cluster, quotas: tuple[Quota, ...], now_open: frozenset[str], lending_allowed: bool
) -> list[FlavorQuota]:
    """Manager quota = the sum of the workers' quotas, per accelerator (kueue-rules.md section 2, MultiKueue row).

    A borrowing limit sums only if every part has one (unset = unlimited); an unset lending limit counts
    as the whole nominal (all of it may be lent) and the sum is left unset when it equals the nominal. A part in a
    pool whose nodes cannot exist now adds nothing (the flavor stays, with 0 when no part is open).
    """
    pools = _worker_pools(inventory, manager)
    sums: dict[str, dict[str, list[Any]]] = {}
    for q in quotas:
        if q.flavor not in pools:
            continue
        machine = inventory.machine_by_name[pools[q.flavor][1].machine]
        flavor = accelerator_flavor_name(machine.accelerator)
        part = _flavor_quota(inventory, pools[q.flavor][1], q, lending_allowed, True).resources
        acc = sums.setdefault(flavor, {})
        for resource, (nominal, borrowing, lending) in part.items():
            total = acc.setdefault(resource, [0, 0, 0, False, False])  # nominal, borrow, lend, unlimited, any-lend
            if q.flavor not in now_open:
                continue
            value = _number(nominal)
            total[0] += value
            total[3] = total[3] or borrowing is None
            total[1] += borrowing or 0
            total[4] = total[4] or lending is not None
            total[2] += value if lending is None else lending
    out = []
    for flavor in sorted(sums):
        resources: dict[str, tuple[Any, Any, Any]] = {}
        for resource, (nominal, borrowing, lending, unlimited, any_lend) in sums[flavor].items():
            resources[resource] = (
                f"{nominal}Gi" if resource == "memory" else nominal,
                None if unlimited or not lending_allowed else borrowing,
                lending if any_lend and lending_allowed and lending != nominal else None,
            )
        out.append(FlavorQuota(flavor, resources))
    return out


def _number(quantity: Any) -> int:
    return int(str(quantity).removesuffix("Gi"))


def resource_groups(flavors: list[FlavorQuota]) -> list[api.ResourceGroup]:
    """Group flavors so that no resource is in two groups (Kueue rule 17) and no flavor in two (18).

    Each group covers the union of its flavors' resources, cpu and memory first; a flavor that does not set a
    covered resource gets nominalQuota 0 for it, because every flavor lists every covered resource in the
    same order (Kueue rule 15, 16). Flavors keep the order given (preference order).
    """
    parent: dict[str, str] = {}

    def find(r: str) -> str:
        while parent.setdefault(r, r) != r:
            r = parent[r]
        return r

    for fq in flavors:
        first, *rest = list(fq.resources)
        for r in rest:
            parent[find(r)] = find(first)
        find(first)
    groups: dict[str, list[FlavorQuota]] = {}
    for fq in flavors:
        groups.setdefault(find(next(iter(fq.resources))), []).append(fq)
    return [
        api.ResourceGroup(
            covered_resources=(covered := sorted({r for fq in members for r in fq.resources}, key=_resource_order)),
            flavors=[
                api.FlavorQuotas(name=fq.flavor, resources=[_resource_quota(r, fq.resources.get(r)) for r in covered])
                for fq in members
            ],
        )
        for members in groups.values()
    ]


def _resource_order(resource: str) -> tuple[int, str]:
    return (RESOURCE_ORDER.index(resource) if resource in RESOURCE_ORDER else len(RESOURCE_ORDER), resource)


def _resource_quota(resource: str, quota: tuple[Any, Any, Any] | None) -> api.ResourceQuota:
    nominal, borrowing, lending = quota or (0, None, None)
    return api.ResourceQuota(
        name=resource,
        nominal_quota=_canonical(nominal),
        borrowing_limit=None if borrowing is None else _canonical(borrowing),
        lending_limit=None if lending is None else _canonical(lending),
    )


def _canonical(amount: Any) -> int | str:
    """A quota amount (a count, or `<n>Gi` of memory) in the API server's canonical form (`1000` -> `1k`)."""
    if isinstance(amount, str):
        return canonical_quantity(_number(amount), gib=True)
    return canonical_quantity(amount)


# --- objects ---------------------------------------------------------------------------------------


def _meta(name: str, namespace: str | None = None, labels: dict[str, str] | None = None) -> ObjectMeta:
    return ObjectMeta(name=name, namespace=namespace, labels=labels or None)


def _priority_class(name: str, value: int, description: str) -> api.WorkloadPriorityClass:
    # description is at the top level, there is no spec (Kueue rule 74)
    return api.WorkloadPriorityClass(metadata=_meta(name), value=value, description=description or None)


def topology_name(cluster: Cluster, levels: tuple[str, ...]) -> str:
    """A Topology's name: the cluster's kind and its levels' short names (`gke-block-subblock-host-hostname`)."""
    short = [
        level.rsplit("/", 1)[-1].removeprefix("gce-topology-").removeprefix("network-node-").removeprefix("gke-")
        for level in levels
    ]
    return "-".join([cluster.kind, *short])


def _topology(cluster: Cluster, levels: tuple[str, ...]) -> api.Topology:
    """A Topology with the levels, coarsest first, that the platform labels its nodes with (Kueue rule 71, 73)."""
    return api.Topology(
        metadata=_meta(topology_name(cluster, levels)),
        spec=api.TopologySpec(levels=[api.TopologyLevel(node_label=label) for label in levels]),
    )


def flavor_node_labels(inventory: Inventory, cluster: Cluster, pool: Pool) -> dict[str, str]:
    """Node labels selecting exactly the pool's nodes: the pool's own labels plus those its provider names the
    pool's nodes by (its node-pool label; for GKE TPU slices, which are one node pool each, the TPU labels plus
    POOL_LABEL)."""
    machine = inventory.machine_by_name[pool.machine]
    return {**pool.labels, **provider_of(cluster.kind).flavor_node_labels(machine, pool)}


def flavor_tolerations(inventory: Inventory, cluster: Cluster, pool: Pool) -> list[api.Toleration]:
    """Tolerations for the accelerator taint (always on accelerator nodes), the taints the platform puts on nodes
    of the pool's provisioning (GKE flex-start, AKS Spot; TAS checks them against these) and the pool's own."""
    resource = inventory.machine_by_name[pool.machine].resource_name
    out = [api.Toleration(key=resource, operator="Exists", effect="NoSchedule")]
    taints = [(t.key, t.value, t.effect) for t in provider_of(cluster.kind).platform_taints(pool.provisioning)]
    for key, value, effect in [*taints, *((t.key, t.value, t.effect) for t in pool.taints)]:
        toleration = api.Toleration(
            key=key, effect=effect, operator="Equal" if value else "Exists", value=value or None
        )
        if toleration not in out:
            out.append(toleration)
    return out


def _pool_flavor(inventory: Inventory, cluster: Cluster, pool: Pool) -> api.ResourceFlavor:
    topology = None
    if topology_aware_flavor(cluster, pool):
        topology = topology_name(cluster, provider_of(cluster.kind).topology_levels(pool.machine, pool.provisioning))
    spec = api.ResourceFlavorSpec(
        node_labels=flavor_node_labels(inventory, cluster, pool),
        tolerations=flavor_tolerations(inventory, cluster, pool),
        topology_name=topology,
    )
    return api.ResourceFlavor(metadata=_meta(pool.name), spec=spec)


def nodes_exist(pool: Pool) -> bool:
    """Whether all of the pool's nodes are there without anyone asking for them: a fixed size, TPU slices, or
    autoscaling whose minimum is its maximum."""
    return pool.autoscaling is None or pool.autoscaling.min_nodes == pool.autoscaling.max_nodes


def topology_aware_flavor(cluster: Cluster, pool: Pool) -> bool:
    """Whether the pool's flavor is topology-aware: on a `topology_aware` cluster, when its nodes exist or its
    ProvisioningRequest admission check brings them up (flex-start). Kueue's Topology-Aware Scheduling places
    workloads only on nodes that exist; v0.19.2 supports autoscaling with TAS only through a ProvisioningRequest
    check (kueue.sigs.k8s.io, "Topology Aware Scheduling", read 2026-11-25). A spot or scale-from-zero pool
    therefore gets a plain flavor: as a TAS flavor its quota could never be used."""
    return cluster.topology_aware and (nodes_exist(pool) or pool.provisioning == "flex-start")


def _logical_flavor(name: str) -> api.ResourceFlavor:
    """A manager-side flavor: no nodes of its own, it only counts quota for the workers."""
    return api.ResourceFlavor(metadata=_meta(name), spec=api.ResourceFlavorSpec())


def _cohort(inventory: Inventory, cluster: Cluster, cohort: Cohort, now_open: frozenset[str]) -> api.Cohort:
    # Cohort limits need a parent (Kueue rule 50).
    flavors = _quotas_here(inventory, cluster, cohort.quotas, now_open, lending_allowed=cohort.parent is not None)
    spec = api.CohortSpec(
        fair_sharing=api.CohortFairSharing(weight=canonical_quantity(cohort.fair_sharing_weight or 1)),
        parent_name=cohort.parent or None,
        resource_groups=resource_groups(flavors) if flavors else None,
    )
    return api.Cohort(metadata=_meta(cohort.name), spec=spec)


def label_name(base: str, suffix: str) -> str:
    """`<base>-<suffix>` as a DNS-1123 label (<= 63, Kueue rule 7), shortened with a hash when too long."""
    name = f"{base}-{suffix}"
    if len(name) <= 63:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{base[: 63 - len(suffix) - 10].rstrip('-')}-{digest}-{suffix}"


def provisioning_check_name(pool: Pool) -> str:
    return label_name(pool.name, "flex-start")


def _provisioning_check(inventory: Inventory, pool: Pool) -> tuple[api.ProvisioningRequestConfig, api.AdmissionCheck]:
    """AdmissionCheck + ProvisioningRequestConfig for a flex-start (GKE DWS queued provisioning) pool."""
    name = provisioning_check_name(pool)
    resource = inventory.machine_by_name[pool.machine].resource_name
    seconds = pool.max_run_duration_hours and pool.max_run_duration_hours * 3600
    config = api.ProvisioningRequestConfigSpec(
        provisioning_class_name=QUEUED_PROVISIONING_CLASS,
        managed_resources=[resource],
        retry_strategy=RETRY_STRATEGY_DEFAULT,
        parameters={"maxRunDurationSeconds": str(seconds)} if seconds else None,
    )
    check = api.AdmissionCheckSpec(
        controller_name=PROVISIONING_CONTROLLER,
        parameters=api.Parameters(api_group=KUEUE_GROUP, kind="ProvisioningRequestConfig", name=name),
    )
    return (
        api.ProvisioningRequestConfig(metadata=_meta(name), spec=config),
        api.AdmissionCheck(metadata=_meta(name), spec=check),
    )


def _workers_of_team(inventory: Inventory, manager: Cluster, team: str) -> list[str]:
    flavors = {q.flavor for q in inventory.team_by_name[team].quotas}
    return [
        w
        for w in manager.multikueue_workers
        if w in inventory.cluster_by_name and any(p.name in flavors for p in inventory.cluster_by_name[w].pools)
    ]


def _multikueue_cluster(inventory: Inventory, worker: str) -> api.MultiKueueCluster:
    c = inventory.cluster_by_name[worker]
    kubeconfig = api.KubeConfig(location=c.kubeconfig_secret or f"{worker}-kubeconfig", location_type="Secret")
    source = api.ClusterSource(kube_config=kubeconfig)  # v1beta1: spec.kubeConfig (Kueue rule 87, to_manifest)
    return api.MultiKueueCluster(metadata=_meta(worker), spec=api.MultiKueueClusterSpec(cluster_source=source))


def multikueue_check_name(team: str) -> str:
    return label_name(team, "multikueue")


def _multikueue_check(team: str, workers: list[str]) -> tuple[api.AdmissionCheck, api.MultiKueueConfig]:
    """Per team: a MultiKueue AdmissionCheck and a MultiKueueConfig listing the workers where it has quota."""
    name = multikueue_check_name(team)
    check = api.AdmissionCheckSpec(
        controller_name=MULTIKUEUE_CONTROLLER,
        parameters=api.Parameters(api_group=KUEUE_GROUP, kind="MultiKueueConfig", name=name),
    )
    return (
        api.AdmissionCheck(metadata=_meta(name), spec=check),
        api.MultiKueueConfig(metadata=_meta(name), spec=api.MultiKueueConfigSpec(clusters=workers)),
    )


def preemption(inventory: Inventory, team: Team, fair_sharing: bool) -> api.Preemption:
    """Preemption from the team's priority and the organisation's fair-sharing choice.

    Within the queue, higher priority preempts lower. In a cohort, a team reclaims its lent nominal quota
    from anyone; under classic preemption a borrowing team may preempt only lower-priority work, up to its
    own priority class's value; with fair sharing, borrowing preemption is left to fair sharing (Kueue rule 36).
    """
    if team.cohort is None:
        return api.Preemption(
            borrow_within_cohort=api.BorrowWithinCohort(policy="Never"),
            reclaim_within_cohort="Never",
            within_cluster_queue="LowerPriority",
        )
    borrow = api.BorrowWithinCohort(policy="Never")
    if not fair_sharing:
        priority = inventory.priority_class_by_name.get(team.priority_class or "")
        borrow = api.BorrowWithinCohort(
            policy="LowerPriority", max_priority_threshold=None if priority is None else priority.value
        )
    return api.Preemption(
        borrow_within_cohort=borrow, reclaim_within_cohort="Any", within_cluster_queue="LowerPriority"
    )


def namespace_selector(team: Team) -> api.NamespaceSelector:
    """Selects exactly the team's namespaces by their immutable name label (never `{}`, Kueue rule 30)."""
    expression = api.MatchExpression(key=NAMESPACE_NAME_LABEL, operator="In", values=sorted(team.namespaces))
    return api.NamespaceSelector(match_expressions=[expression])


def _cluster_queue(
    inventory: Inventory,
    cluster: Cluster,
    team: Team,
    flavors: list[FlavorQuota],
    flex: list[Pool],
    multikueue_check: str | None,
    fair_sharing: bool,
) -> api.ClusterQueue:
    used = {fq.flavor for fq in flavors}
    checks = [
        api.AdmissionCheckStrategyRule(name=provisioning_check_name(p), on_flavors=[p.name])
        for p in flex
        if p.name in used
    ]
    if multikueue_check:
        checks.append(api.AdmissionCheckStrategyRule(name=multikueue_check))  # never with onFlavors (Kueue rule 44)
    weight = team.fair_sharing_weight if team.fair_sharing_weight is not None else 1
    spec = api.ClusterQueueSpec(
        namespace_selector=namespace_selector(team),
        resource_groups=resource_groups(flavors),
        queueing_strategy="BestEffortFIFO",
        stop_policy="None",
        flavor_fungibility=FLAVOR_FUNGIBILITY_DEFAULT,
        preemption=preemption(inventory, team, fair_sharing),
        fair_sharing=api.FairSharing(weight=canonical_quantity(weight)),
        cohort_name=team.cohort or None,  # v1beta1: cohort (Kueue rule 83, to_manifest)
        admission_checks_strategy=(
            api.AdmissionChecksStrategy(admission_checks=sorted(checks, key=lambda c: c.name)) if checks else None
        ),
    )
    return api.ClusterQueue(metadata=_meta(team.name, labels=_team_labels(team)), spec=spec)


def _team_labels(team: Team) -> dict[str, str]:
    return {COST_CENTER_LABEL: team.cost_center, TEAM_LABEL: team.name}


def _local_queues(team: Team) -> list[api.LocalQueue]:
    spec = api.LocalQueueSpec(
        cluster_queue=team.name, stop_policy="None", fair_sharing=api.LocalQueueFairSharing(weight=1)
    )
    return [
        api.LocalQueue(metadata=_meta(name, namespace, _team_labels(team)), spec=spec)
        for namespace in team.namespaces
        for name in sorted({team.name, DEFAULT_LOCAL_QUEUE})
    ]


def _team_rules() -> list[PolicyRule]:
    """Write workloads, read LocalQueues and Workloads; nothing else."""
    rules = [
        PolicyRule(api_groups=[group], resources=list(resources), verbs=list(WRITE_VERBS))
        for group, resources in sorted(WORKLOAD_RESOURCES.items())
    ]
    rules.append(PolicyRule(api_groups=[KUEUE_GROUP], resources=["localqueues", "workloads"], verbs=list(READ_VERBS)))
    return rules


def _tenancy(team: Team, cluster_kind: ClusterKind) -> list[Emitted]:
    """Namespace, Role and RoleBinding per team namespace: the team's group may create workloads there and
    read its LocalQueues and Workloads; it gets nothing cluster-scoped, so it cannot write ClusterQueues,
    Cohorts or ResourceFlavors."""
    labels = _team_labels(team)
    group = Subject(api_group=RBAC_GROUP, kind="Group", name=team.rbac_group(cluster_kind))
    out: list[Emitted] = []
    for namespace in team.namespaces:
        out.append(Namespace(metadata=_meta(namespace, labels=labels)))
        out.append(Role(metadata=_meta(TEAM_ROLE, namespace, labels), rules=_team_rules()))
        out.append(
            RoleBinding(
                metadata=_meta(TEAM_ROLE, namespace, labels),
                role_ref=RoleRef(api_group=RBAC_GROUP, kind="Role", name=TEAM_ROLE),
                subjects=[group],
            )
        )
    return out
