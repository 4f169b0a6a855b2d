"""An offline admission check of what `qm render` emits: would Kueue admit a workload, and could it get nodes?

For every team ClusterQueue of a cluster and every flavor in it, a one-node workload of that flavor (one pod
requesting one node's accelerators, plus cpu and memory as every ordinary pod does) is checked against the emitted
objects, the cluster's Kueue Configuration and the nodes the pool really gets (labels and taints from the cloud specs
the node-pool modules declare, plus those the platform adds):

- quota: the flavor covers every requested resource (else Kueue's default quota check, `BlockUndeclared`, refuses
  it unless the Configuration says `IgnoreUndeclared` for cpu and memory: `flavorassigner.go`, "resource %s
  unavailable in ClusterQueue"), and what the queue can hold (nominal quota plus what its cohort tree lends, within
  every lending and borrowing limit of queues and cohorts: `quota.QuotaTree`) holds the request; a pool closed at the
  instant holds no quota;
- node labels: every `nodeLabels` entry of the flavor is a label the pool's nodes carry;
- taints: every NoSchedule/NoExecute taint of the pool's nodes is tolerated by the flavor (Kueue adds the flavor's
  tolerations to admitted pods);
- TAS: a topology-aware flavor's Topology exists and its levels are labels of the nodes (Kueue ignores nodes that
  lack one), and its nodes exist, or a ProvisioningRequest admission check on the flavor brings them up (TAS places
  workloads only on existing nodes: `tas_flavorassigner.go`); in a ClusterQueue whose flavors are all
  topology-aware every workload gets TAS, in a mixed one only workloads with a topology annotation reach the
  topology-aware flavors (`checkPodSetAndFlavorMatchForTAS`), so the sample carries one there;
- admission checks: each check the queue applies to the flavor exists with its parameters object, and a pool whose
  nodes come only through a ProvisioningRequest (GKE queued provisioning) has one.

`workload_refusals` checks any workload given as pod sets (the plan sweep's RayJob, `planner/rayjob.py`, as Kueue
builds its pod sets: `pod_sets_of`) the same way, and `job_refusals` adds the flavor Kueue assigns it
(`kueue_flavor`: flavor order and `whenCanBorrow`). A MultiKueue manager runs no pods, so it has nothing to check.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from quartermaster.capacity import pool_min_nodes, pool_window
from quartermaster.issues import Issue, Location
from quartermaster.model import Cluster, Inventory
from quartermaster.modules.cloud.spec_support import ACCELERATOR_TAINT_VALUE
from quartermaster.modules.kueue import api
from quartermaster.modules.kueue.builders import PROVISIONING_CONTROLLER, objects_for_cluster
from quartermaster.modules.kueue.k8s import parse_quantity
from quartermaster.modules.kueue.manifest import from_manifest
from quartermaster.modules.kueue.quota_tree import QuotaTree
from quartermaster.providers import provider_of

ANY = "*"
"""A label the platform sets on every node with a value of its own (topology levels, the hostname)."""
HOSTNAME = "kubernetes.io/hostname"
BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")
POD_RESOURCES = {"cpu": Decimal(1), "memory": Decimal(2**30)}
"""What the sample pod asks for besides the accelerators: every ordinary pod requests cpu and memory."""


@dataclass(frozen=True)
class NodeGroup:
    """Nodes of one provider node pool (a GKE node pool or TPU slice, an EKS node group, an AKS agent pool)."""

    name: str
    labels: dict[str, str]
    taints: tuple[tuple[str, str, str], ...]


@dataclass(frozen=True)
class PoolNodes:
    """A pool's nodes as the platform makes them."""

    pool: str
    resource: str
    per_node: int
    existing: int
    """Nodes that are there without anyone asking (a fixed size, or the autoscaling minimum; 0 while closed)."""
    groups: tuple[NodeGroup, ...]
    provisioned_by_request: bool
    """Nodes come only through a ProvisioningRequest (GKE queued provisioning)."""
    is_open: bool = True
    """The pool's nodes can exist at the instant (its capacity block, reservation term or delivery holds it)."""


@dataclass(frozen=True)
class PodSet:
    """`count` pods, each requesting `requests` (resource -> amount), optionally with a topology annotation."""

    name: str
    count: int
    requests: dict[str, Decimal]
    topology_request: bool = False


@dataclass(frozen=True)
class Refusal:
    """Why a workload of a ClusterQueue would not be admitted in a flavor, or never get nodes there."""

    cluster: str
    queue: str
    flavor: str | None
    reason: str

    def format(self) -> str:
        where = f" flavor {self.flavor}" if self.flavor else ""
        return f"cluster {self.cluster}: ClusterQueue {self.queue}{where}: {self.reason}"


def pool_nodes(inventory: Inventory, cluster: Cluster, now: dt.datetime) -> dict[str, PoolNodes]:
    """Every pool of the cluster: the labels and taints its nodes get, from the cloud specs (what the node-pool
    modules declare) plus what the platform adds, and how many exist without a request. Pools without cloud
    resources (on-prem) carry their own labels and taints and the accelerator taint."""
    from quartermaster.modules.cloud import cloud_module, cluster_spec

    provider = provider_of(cluster.kind)
    spec = cluster_spec(inventory, cluster.name, now)
    module = cloud_module(cluster.kind)
    named = provider.node_pool_label
    groups: dict[str, list[NodeGroup]] = {}
    queued: set[str] = set()
    for g in module.declared_nodes(spec.capacity) if module else []:
        labels = {**g.labels, **({named: g.name} if named else {})}
        groups.setdefault(g.pool, []).append(NodeGroup(g.name, labels, g.taints))
        if g.queued:
            queued.add(g.pool)
    out = {}
    for pool in cluster.pools:
        machine = inventory.machine_by_name[pool.machine]
        if not provider.cloud_resources:
            own = tuple((t.key, t.value, t.effect) for t in pool.taints)
            accelerator = (machine.resource_name, ACCELERATOR_TAINT_VALUE, "NoSchedule")
            taints = own if any(t[0] == machine.resource_name for t in own) else (*own, accelerator)
            groups[pool.name] = [NodeGroup(pool.name, dict(pool.labels), taints)]
        platform = {HOSTNAME: ANY, **dict.fromkeys(provider.topology_levels(pool.machine, pool.provisioning), ANY)}
        added = tuple((t.key, t.value, t.effect) for t in provider.platform_taints(pool.provisioning))
        is_open = pool_window(inventory, pool).holds(now)
        out[pool.name] = PoolNodes(
            pool=pool.name,
            resource=machine.resource_name,
            per_node=machine.accelerators_per_node,
            existing=pool_min_nodes(pool, machine) if is_open else 0,
            groups=tuple(
                NodeGroup(g.name, {**platform, **g.labels}, tuple(dict.fromkeys((*g.taints, *added))))
                for g in groups.get(pool.name, [])
            ),
            provisioned_by_request=pool.name in queued,
            is_open=is_open,
        )
    return out


class _Objects:
    """The emitted objects, typed (`api.py`, read from the manifests with `from_manifest`), by kind and name, and
    the quota tree of their ClusterQueues and Cohorts (`quota.QuotaTree`, Kueue's quota arithmetic)."""

    def __init__(self, objects: list[dict[str, Any]]) -> None:
        self.by_kind: dict[str, dict[str, Any]] = {}
        for doc in objects:
            obj = from_manifest(doc)
            if obj is not None:
                self.by_kind.setdefault(obj.KIND, {})[obj.metadata.name] = obj
        self.quota = QuotaTree(self.queues(), self.by_kind.get("Cohort", {}).values())

    def get(self, kind: str, name: str) -> Any:
        return self.by_kind.get(kind, {}).get(name)

    def queues(self) -> list[api.ClusterQueue]:
        return list(self.by_kind.get("ClusterQueue", {}).values())

    def queue(self, name: str) -> api.ClusterQueue | None:
        found: api.ClusterQueue | None = self.get("ClusterQueue", name)
        return found

    def topology_aware(self, flavor: str) -> bool:
        found: api.ResourceFlavor | None = self.get("ResourceFlavor", flavor)
        return bool(found and found.spec and found.spec.topology_name)

    def checks_on(self, queue: api.ClusterQueue, flavor: str) -> list[str]:
        """The admission checks the queue applies to workloads admitted in `flavor`."""
        strategy = queue.spec.admission_checks_strategy if queue.spec else None
        rules = strategy.admission_checks if strategy else []
        return [c.name for c in rules if not c.on_flavors or flavor in c.on_flavors]

    def provisioning(self, queue: api.ClusterQueue, flavor: str) -> bool:
        """Whether a ProvisioningRequest admission check applies to `flavor` of the queue."""
        checks = [self.get("AdmissionCheck", c) for c in self.checks_on(queue, flavor)]
        return any(c and c.spec and c.spec.controller_name == PROVISIONING_CONTROLLER for c in checks)


def resource_groups(queue: api.ClusterQueue) -> list[api.ResourceGroup]:
    return (queue.spec.resource_groups if queue.spec else None) or []


def flavors_of(queue: api.ClusterQueue) -> list[str]:
    """The queue's flavors in Kueue's order (resource groups, then flavors)."""
    return [f.name for g in resource_groups(queue) for f in g.flavors]


def _tolerated(taint: tuple[str, str, str], tolerations: list[api.Toleration]) -> bool:
    """Kubernetes' toleration match (`v1.Toleration.ToleratesTaint`)."""
    key, value, effect = taint
    for t in tolerations:
        if t.effect and t.effect != effect:
            continue
        if (t.operator or "Equal") == "Exists":
            if not t.key or t.key == key:
                return True
        elif t.key == key and (t.value or "") == value:
            return True
    return False


def _carries(group: NodeGroup, key: str, value: str) -> bool:
    have = group.labels.get(key)
    return have in (value, ANY)


@dataclass(frozen=True)
class _Attempt:
    """A workload tried in one flavor of a ClusterQueue, with what every check reads."""

    queue: api.ClusterQueue
    flavor: str
    flavor_spec: api.ResourceFlavorSpec
    pod_sets: list[PodSet]
    objects: _Objects
    pool: PoolNodes
    ignore_undeclared: bool

    @property
    def covered(self) -> dict[str, api.ResourceGroup]:
        return {r: g for g in resource_groups(self.queue) for r in g.covered_resources}

    @property
    def flavor_group(self) -> api.ResourceGroup | None:
        return next((g for g in resource_groups(self.queue) if any(f.name == self.flavor for f in g.flavors)), None)

    @property
    def totals(self) -> dict[str, Decimal]:
        totals: dict[str, Decimal] = {}
        for ps in self.pod_sets:
            for resource, amount in ps.requests.items():
                totals[resource] = totals.get(resource, Decimal(0)) + amount * ps.count
        return totals

    @property
    def tas_only(self) -> bool:
        return all(self.objects.topology_aware(f) for f in flavors_of(self.queue))

    @property
    def node_labels(self) -> dict[str, str]:
        return self.flavor_spec.node_labels or {}

    @property
    def matching(self) -> list[NodeGroup]:
        """The pool's node groups that carry every node label of the flavor."""
        return [g for g in self.pool.groups if all(_carries(g, k, v) for k, v in self.node_labels.items())]

    @property
    def provisioning(self) -> bool:
        return self.objects.provisioning(self.queue, self.flavor)


# --- one check per reason, as Kueue's flavor assigner and scheduler refuse a workload ---------------------------


def _undeclared_resources(a: _Attempt) -> list[str]:
    """Kueue's quota check (`BlockUndeclared` unless the Configuration says `IgnoreUndeclared` for cpu and memory)."""
    return [
        f"the workload requests `{resource}`, which the ClusterQueue does not cover: Kueue's quota check refuses it "
        "(resource unavailable in ClusterQueue)"
        for resource in sorted(a.totals)
        if resource not in a.covered and not (a.ignore_undeclared and resource in POD_RESOURCES)
    ]


def _quota(a: _Attempt) -> list[str]:
    """Each resource of the flavor's group fits what the queue can hold there (nominal plus what it may borrow)."""
    out = []
    covered, group = a.covered, a.flavor_group
    for resource, amount in sorted(a.totals.items()):
        if resource not in covered or covered[resource] is not group:
            continue  # refused above, or assigned in another resource group's flavors
        available = a.objects.quota.available(a.queue.metadata.name, a.flavor, resource)
        if available < amount:
            out.append(
                f"the workload requests {amount} `{resource}` but the queue holds at most {available} there "
                "(nominal quota plus what it may borrow)"
            )
    return out


def _node_labels(a: _Attempt) -> list[str]:
    """Some node of the pool carries every `nodeLabels` entry of the flavor."""
    if a.matching:
        return []
    missing = [
        f"{k}={v}" for k, v in sorted(a.node_labels.items()) if not any(_carries(g, k, v) for g in a.pool.groups)
    ]
    return [f"no node of pool {a.pool.pool} carries the flavor's node labels ({', '.join(missing)})"]


def _taints(a: _Attempt) -> list[str]:
    """Every NoSchedule/NoExecute taint of the matching nodes is tolerated by the flavor."""
    tolerations = a.flavor_spec.tolerations or []
    return [
        f"nodes of {g.name} are tainted {taint[0]}={taint[1]}:{taint[2]} and the flavor does not tolerate it, so its "
        "pods never schedule there"
        for g in a.matching
        for taint in g.taints
        if taint[2] in BLOCKING_EFFECTS and not _tolerated(taint, tolerations)
    ]


def _admission_checks(a: _Attempt) -> list[str]:
    """Each admission check on the flavor exists, with its parameters object."""
    out = []
    for check in a.objects.checks_on(a.queue, a.flavor):
        ac: api.AdmissionCheck | None = a.objects.get("AdmissionCheck", check)
        if ac is None:
            out.append(f"admission check {check} is not emitted: the ClusterQueue is inactive")
            continue
        params = ac.spec.parameters if ac.spec else None
        if params and a.objects.get(params.kind, params.name) is None:
            out.append(f"admission check {check} names {params.kind} {params.name}, not emitted")
    return out


def _queued_provisioning(a: _Attempt) -> list[str]:
    """A pool whose nodes come only through a ProvisioningRequest has that admission check on its flavor."""
    if a.pool.provisioned_by_request and not a.provisioning:
        return [
            f"pool {a.pool.pool}'s nodes come only through a ProvisioningRequest (queued provisioning), and no "
            "ProvisioningRequest admission check applies to this flavor"
        ]
    return []


def _topology(a: _Attempt) -> list[str]:
    """TAS: the Topology exists, its levels label the nodes and the nodes exist (or a ProvisioningRequest brings
    them up); a plain flavor gets no workload asking for a topology."""
    if not a.objects.topology_aware(a.flavor):
        group = a.flavor_group
        asks = any(ps.topology_request for ps in a.pod_sets)
        here = any(a.covered.get(r) is group for ps in a.pod_sets for r in ps.requests)
        return ["the workload asks for a topology and the flavor is not topology-aware"] if asks and here else []
    out = []
    if not a.tas_only and not all(ps.topology_request for ps in a.pod_sets):
        out.append(
            "the flavor is topology-aware in a ClusterQueue that also has plain flavors: only workloads with a "
            "topology annotation (kueue.x-k8s.io/podset-preferred-topology) reach it"
        )
    name = a.flavor_spec.topology_name
    topology: api.Topology | None = a.objects.get("Topology", name or "")
    if topology is None or topology.spec is None:
        return [*out, f"Topology {name} is not emitted (TopologyNotFound)"]
    matching, pool = a.matching, a.pool
    for level in topology.spec.levels:
        if matching and not any(level.node_label in g.labels for g in matching):
            out.append(
                f"topology level {level.node_label} is not a label of pool {pool.pool}'s nodes; TAS ignores them"
            )
    if a.provisioning:
        return out  # the ProvisioningRequest brings the nodes up before TAS places the workload
    if pool.existing == 0:
        return [
            *out,
            f"it is topology-aware and pool {pool.pool} scales from 0 nodes with no ProvisioningRequest admission "
            "check: TAS places workloads only on nodes that exist, so the queue never gets nodes here",
        ]
    nodes = 0
    for ps in a.pod_sets:
        amount = ps.requests.get(pool.resource, Decimal(0))
        if amount == 0:
            # no accelerator: under IgnoreUndeclared a pod set asking only undeclared cpu and memory is admitted
            # with no flavor, outside TAS (flavorassigner.go skips undeclared resources); one asking declared cpu
            # shares the nodes the others need (BlockUndeclared refused undeclared cpu above)
            continue
        if amount > pool.per_node:  # a pod never spans nodes
            out.append(f"pod set {ps.name} asks {amount} {pool.resource} per pod; a node has {pool.per_node}")
            continue
        nodes += -(-ps.count // int(pool.per_node // amount))  # pods of a set packed onto whole nodes
    if nodes > pool.existing:
        out.append(f"the workload needs {nodes} nodes and only {pool.existing} exist (TAS does not scale up)")
    return out


WORKLOAD_CHECKS = (_node_labels, _taints, _admission_checks, _queued_provisioning, _topology)
"""The checks of a workload in a flavor whose pool is known, in the order their reasons are reported (after the
quota checks, which need no pool)."""


def workload_refusals(
    cluster: str,
    queue: api.ClusterQueue,
    flavor: str,
    pod_sets: list[PodSet],
    objects: _Objects,
    nodes: dict[str, PoolNodes],
    ignore_undeclared: bool,
) -> list[Refusal]:
    """Why `pod_sets`, all admitted in `flavor` of `queue`, would be refused or never get nodes; empty if admissible.
    One small check per reason (`_undeclared_resources`, `_quota`, then `WORKLOAD_CHECKS`)."""

    def refuse(reason: str) -> Refusal:
        return Refusal(cluster, queue.metadata.name, flavor, reason)

    flavor_obj: api.ResourceFlavor | None = objects.get("ResourceFlavor", flavor)
    if flavor_obj is None:
        return [refuse("no ResourceFlavor of that name is emitted")]
    placeholder = PoolNodes(flavor, "", 0, 0, (), False)
    pool = nodes.get(flavor)
    attempt = _Attempt(
        queue,
        flavor,
        flavor_obj.spec or api.ResourceFlavorSpec(),
        pod_sets,
        objects,
        pool or placeholder,
        ignore_undeclared,
    )
    reasons = [*_undeclared_resources(attempt), *_quota(attempt)]
    if pool is None:
        reasons.append("no pool of this cluster provides the flavor's nodes")
    else:
        reasons += [reason for check in WORKLOAD_CHECKS for reason in check(attempt)]
    return [refuse(r) for r in reasons]


def sample_pod_sets(pool: PoolNodes, topology_request: bool) -> list[PodSet]:
    """A one-node workload of the pool's flavor: one pod requesting a node's accelerators, cpu and memory."""
    return [PodSet("main", 1, {pool.resource: Decimal(pool.per_node), **POD_RESOURCES}, topology_request)]


def admission_refusals(
    inventory: Inventory, cluster: str, objects: list[dict[str, Any]], now: dt.datetime
) -> list[Refusal]:
    """For every ClusterQueue of `objects` (one cluster's, valid at `now`) and each of its flavors whose nodes can
    exist at `now`, why a one-node workload of that flavor would be refused or never get nodes; empty when every
    one is admissible. A flavor whose pool is closed at `now` must hold no quota (nominal or borrowed)."""
    from quartermaster.modules.kueue.configuration import manager_configuration

    c = inventory.cluster_by_name[cluster]
    if c.multikueue_role == "manager":
        return []
    index = _Objects(objects)
    nodes = pool_nodes(inventory, c, now)
    config, _ = manager_configuration(inventory, cluster, index.queues())
    ignore = (config.get("resources") or {}).get("quotaCheckStrategy") == "IgnoreUndeclared"
    out = []
    for queue in index.queues():
        flavors = flavors_of(queue)
        topology = [index.topology_aware(f) for f in flavors]
        for flavor, aware in zip(flavors, topology, strict=True):
            pool = nodes.get(flavor)
            if pool is None:
                out.append(Refusal(cluster, queue.metadata.name, flavor, "no pool of this cluster is this flavor"))
                continue
            if not pool.is_open:
                held = index.quota.available(queue.metadata.name, flavor, pool.resource)
                if held > 0:
                    out.append(
                        Refusal(
                            cluster,
                            queue.metadata.name,
                            flavor,
                            f"pool {flavor}'s nodes cannot exist at {now:%Y-%m-%d %H:%M} UTC (its commitment's dates), "
                            f"yet the queue holds {held} `{pool.resource}` there: Kueue admits work that never starts",
                        )
                    )
                continue
            explicit = aware and not all(topology)  # a mixed queue: only annotated workloads reach TAS flavors
            out += workload_refusals(cluster, queue, flavor, sample_pod_sets(pool, explicit), index, nodes, ignore)
    return out


FIX = (
    "Change the inventory (the pool's size, provisioning, labels or taints, or the team's quota) and render the "
    "objects again with `qm render`; docs/how-to/kueue-configuration.md explains each rule."
)


def manifest_refusals(inventory: Inventory, manifests: list[Any], now: dt.datetime) -> list[Issue]:
    """`qm validate INVENTORY --kueue FILES`: for each file whose ResourceFlavors are pools of the inventory, the
    admission check of its objects against that cluster's nodes, each refusal located at its ClusterQueue."""
    by_file: dict[str, list[Any]] = {}
    for m in manifests:
        if isinstance(m.obj, dict) and str(m.obj.get("apiVersion", "")).startswith("kueue.x-k8s.io/"):
            by_file.setdefault(m.file, []).append(m)
    out = []
    for found in by_file.values():
        clusters = {
            inventory.cluster_of_pool[m.obj["metadata"]["name"]].name
            for m in found
            if m.obj.get("kind") == "ResourceFlavor"
            and m.obj.get("metadata", {}).get("name") in inventory.cluster_of_pool
        }
        if len(clusters) != 1:
            continue  # not one cluster of this inventory
        cluster = clusters.pop()
        queues = {m.obj["metadata"]["name"]: m for m in found if m.obj.get("kind") == "ClusterQueue"}
        for refusal in admission_refusals(inventory, cluster, [m.obj for m in found], now):
            where = queues[refusal.queue]
            line = where.locate(())
            out.append(
                Issue(
                    rule="kueue-admission",
                    message=refusal.format(),
                    fix=FIX,
                    location=Location(where.file, line, f"ClusterQueue/{refusal.queue}"),
                )
            )
    return out


TOPOLOGY_ANNOTATION = "kueue.x-k8s.io/podset-preferred-topology"


@dataclass(frozen=True)
class QueueTarget:
    """Where a team's multi-pod job is queued and what each of its pods asks for: one node's accelerators of the
    first flavor of the team's first ClusterQueue on a cluster that runs pods."""

    cluster: str
    queue: str
    namespace: str
    flavor: str
    resource: str
    per_node: int
    nodes: int
    """Whole nodes the queue's nominal quota holds there (never borrowed quota, which the lenders reclaim by
    preempting the job mid-sweep), and for a TAS flavor without a ProvisioningRequest no more than the nodes that
    exist."""
    pod_resources: bool
    """The flavor's resource group covers cpu and memory, so pods must request them (and may)."""
    topology_annotation: str | None
    """A level to ask for when the flavor is topology-aware in a ClusterQueue with plain flavors too (without it the
    job would never reach the flavor)."""


def team_target(inventory: Inventory, team: str, now: dt.datetime) -> QueueTarget | None:
    """The queue a team's RayJob goes to (`qm plan --rayjob`): on the team's first cluster that runs pods and where
    it has a ClusterQueue, the first flavor (Kueue's order) whose nominal quota holds a head and a worker, else the
    first flavor; None when the team has no queue on a cluster that runs pods."""
    found = inventory.team_by_name[team]
    for cluster in inventory.clusters:
        if cluster.multikueue_role == "manager":
            continue
        objects = _Objects(objects_for_cluster(inventory, cluster.name, now))
        queue = objects.queue(team)
        if queue is None:
            continue
        nodes = pool_nodes(inventory, cluster, now)
        aware = {f: objects.topology_aware(f) for f in flavors_of(queue)}
        candidates = []
        for group in resource_groups(queue):
            for entry in group.flavors:
                pool = nodes.get(entry.name)
                if pool is None or pool.resource not in group.covered_resources:
                    continue
                held = int(objects.quota.nominal(team, pool.pool, pool.resource) // pool.per_node)
                provisioning = objects.provisioning(queue, pool.pool)
                if aware[pool.pool] and not provisioning:
                    held = min(held, pool.existing)
                mixed = aware[pool.pool] and not all(aware.values())
                candidates.append(
                    QueueTarget(
                        cluster=cluster.name,
                        queue=team,
                        namespace=found.namespaces[0],
                        flavor=pool.pool,
                        resource=pool.resource,
                        per_node=pool.per_node,
                        nodes=held,
                        pod_resources=set(POD_RESOURCES) <= set(group.covered_resources),
                        topology_annotation=HOSTNAME if mixed else None,
                    )
                )
        if candidates:
            return next((c for c in candidates if c.nodes >= 2), candidates[0])
    return None


SUBMITTER_REQUESTS = {"cpu": Decimal("0.5"), "memory": Decimal(200 * 2**20)}
"""The requests of KubeRay's default submitter container, which Kueue counts (`defaultSubmitterResources`,
pkg/controller/jobs/rayjob/rayjob_controller.go, kubernetes-sigs/kueue v0.19.2,
https://github.com/kubernetes-sigs/kueue/blob/v0.19.2/pkg/controller/jobs/rayjob/rayjob_controller.go)."""
K8S_JOB_MODE = "K8sJobMode"
"""KubeRay's default `submissionMode` (`+kubebuilder:default:=K8sJobMode`, ray-operator/apis/ray/v1/rayjob_types.go,
ray-project/kuberay v1.7.0)."""


def _requests(template: dict[str, Any]) -> dict[str, Decimal]:
    """What a pod template's containers request, summed; a container's requests default to its limits, as Kubernetes
    does."""
    requests: dict[str, Decimal] = {}
    for container in (template.get("spec") or {}).get("containers") or []:
        resources = container.get("resources") or {}
        asked = {**(resources.get("limits") or {}), **(resources.get("requests") or {})}
        for resource, amount in asked.items():
            requests[resource] = requests.get(resource, Decimal(0)) + (parse_quantity(amount) or Decimal(0))
    return requests


def _annotated(template: dict[str, Any]) -> bool:
    return TOPOLOGY_ANNOTATION in ((template.get("metadata") or {}).get("annotations") or {})


def pod_sets_of(job: dict[str, Any]) -> list[PodSet]:
    """A KubeRay RayJob's pod sets as Kueue v0.19.2 builds its Workload (`RayJob.PodSets` and
    `raycluster.BuildPodSets`): `head` (one pod), each worker group (`replicas`, default 1, times `numOfHosts`), and
    with `submissionMode` K8sJobMode (KubeRay's default when unset) a `submitter` pod set of one pod, from
    `submitterPodTemplate` or KubeRay's default submitter (cpu 500m, memory 200Mi); in SidecarMode the submitter
    container is counted in the head. In HTTPMode (and InteractiveMode) the operator submits the job itself: no
    submitter pod."""
    spec = job["spec"]
    cluster = spec["rayClusterSpec"]
    mode = spec.get("submissionMode") or K8S_JOB_MODE
    head_template = cluster["headGroupSpec"]["template"]
    head = _requests(head_template)
    if mode == "SidecarMode":
        for resource, amount in SUBMITTER_REQUESTS.items():
            head[resource] = head.get(resource, Decimal(0)) + amount
    out = [PodSet("head", 1, head, _annotated(head_template))]
    for group in cluster.get("workerGroupSpecs") or []:
        count = group.get("replicas", 1) * max(1, group.get("numOfHosts", 1))
        out.append(PodSet(group["groupName"], count, _requests(group["template"]), _annotated(group["template"])))
    if mode == K8S_JOB_MODE:
        template = spec.get("submitterPodTemplate")
        requests = dict(SUBMITTER_REQUESTS) if template is None else _requests(template)
        out.append(PodSet("submitter", 1, requests, template is not None and _annotated(template)))
    return out


BORROW_AND_STOP = ("MayStopSearch", "Borrow")
"""`whenCanBorrow` values with which Kueue takes the first flavor that fits by borrowing instead of looking for one
that fits without (v1beta2 `MayStopSearch`, its default; v1beta1 `Borrow`)."""


def kueue_flavor(queue: api.ClusterQueue, requests: dict[str, Decimal], objects: _Objects) -> tuple[str | None, bool]:
    """The flavor Kueue's flavor assigner gives a workload asking `requests` (resource -> total) in the resource
    group of its first requested resource the queue covers, on an otherwise empty cohort, and whether it borrows
    there: flavors are tried in order; one whose nominal quota holds the request is taken; one that holds it only by
    borrowing is taken at once under `whenCanBorrow: MayStopSearch` (the default), or kept while the next flavors
    are tried under `TryNextFlavor` (`flavorassigner.go`, kubernetes-sigs/kueue v0.19.2). (None, False): no flavor
    holds it."""
    group = next((g for g in resource_groups(queue) if any(r in g.covered_resources for r in requests)), None)
    if group is None:
        return None, False
    asked = {r: amount for r, amount in requests.items() if r in group.covered_resources}
    fungibility = queue.spec.flavor_fungibility if queue.spec else None
    stop = ((fungibility.when_can_borrow if fungibility else None) or "MayStopSearch") in BORROW_AND_STOP
    name, quota = queue.metadata.name, objects.quota
    fallback: str | None = None
    for entry in group.flavors:
        flavor = entry.name
        if any(quota.available(name, flavor, r) < amount for r, amount in asked.items()):
            continue
        if all(quota.nominal(name, flavor, r) >= amount for r, amount in asked.items()):
            return flavor, False
        if stop:
            return flavor, True
        fallback = fallback or flavor
    return fallback, fallback is not None


def job_refusals(inventory: Inventory, job: dict[str, Any], target: QueueTarget, now: dt.datetime) -> list[Refusal]:
    """Why Kueue, with its default quota check (`BlockUndeclared`: a resource the queue does not cover refuses the
    job), would not admit `job` in the target's flavor or it would never get nodes; empty when admissible."""
    cluster = inventory.cluster_by_name[target.cluster]
    objects = _Objects(objects_for_cluster(inventory, cluster.name, now))
    queue = objects.queue(target.queue)
    assert queue is not None
    nodes = pool_nodes(inventory, cluster, now)
    pod_sets = pod_sets_of(job)
    out = workload_refusals(cluster.name, queue, target.flavor, pod_sets, objects, nodes, False)
    totals: dict[str, Decimal] = {}
    for ps in pod_sets:
        for resource, amount in ps.requests.items():
            totals[resource] = totals.get(resource, Decimal(0)) + amount * ps.count
    flavor, borrows = kueue_flavor(queue, {target.resource: totals.get(target.resource, Decimal(0))}, objects)
    if flavor is not None and flavor != target.flavor:
        out.append(
            Refusal(
                cluster.name,
                target.queue,
                target.flavor,
                f"Kueue assigns the job flavor {flavor} first (flavor order and whenCanBorrow), not {target.flavor}",
            )
        )
    elif borrows:
        out.append(
            Refusal(
                cluster.name,
                target.queue,
                target.flavor,
                "the job fits only by borrowing: it waits for an idle cohort and, once admitted, the lenders reclaim "
                "their quota by preempting it",
            )
        )
    return out
