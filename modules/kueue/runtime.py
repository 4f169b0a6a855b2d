"""Cross-object conditions Kueue accepts but that leave a queue inactive or useless (layer E of
docs/reference/kueue-rules.md), and Quartermaster's tenancy rule (docs/explanation/security.md).

These are warnings: a set of manifests may rely on objects that live elsewhere on the cluster. Each finding
is attached to the object it is about.
"""

from __future__ import annotations

from typing import Any

from quartermaster.modules.kueue.k8s import selector_keys, selector_matches
from quartermaster.modules.kueue.webhooks import Finding

MULTIKUEUE = "kueue.x-k8s.io/multikueue"
PROVISIONING = "kueue.x-k8s.io/provisioning-request"
NAME_LABEL = "kubernetes.io/metadata.name"
TENANCY_RULE = 30  # the selector semantics the tenancy rule rests on


def cross_object(objects: list[tuple[str, dict[str, Any]]]) -> dict[int, list[Finding]]:
    """Findings per index into `objects` (kind, defaulted object)."""
    by_kind: dict[str, dict[str, dict[str, Any]]] = {}
    for kind, obj in objects:
        by_kind.setdefault(kind, {})[_name(obj)] = obj
    flavors, checks = by_kind.get("ResourceFlavor", {}), by_kind.get("AdmissionCheck", {})
    topologies, cohorts = by_kind.get("Topology", {}), by_kind.get("Cohort", {})
    queues, namespaces = by_kind.get("ClusterQueue", {}), by_kind.get("Namespace", {})
    cyclic = _cohort_cycles(cohorts)
    out: dict[int, list[Finding]] = {}
    for index, (kind, obj) in enumerate(objects):
        spec = obj.get("spec") or {}
        found: list[Finding] = []
        if kind == "ClusterQueue":
            found += _queue(spec, flavors, checks, cyclic)
        elif kind == "ResourceFlavor" and spec.get("topologyName") and spec["topologyName"] not in topologies:
            found.append(
                Finding(
                    ("spec", "topologyName"),
                    f"Topology `{spec['topologyName']}` does not exist; "
                    "ClusterQueues using this flavor go inactive (TopologyNotFound)",
                    61,
                    "Create the Topology or fix the name.",
                    spec["topologyName"],
                    "warning",
                )
            )
        elif kind == "Cohort" and _name(obj) in cyclic:
            found.append(
                Finding(
                    ("spec", "parentName"),
                    "cohort is in a parentName cycle; every ClusterQueue in the cycle is disabled",
                    53,
                    "Break the cycle.",
                    spec.get("parentName"),
                    "warning",
                )
            )
        elif kind == "LocalQueue":
            found += _local_queue(obj, queues, namespaces)
        elif kind == "AdmissionCheck":
            found += _admission_check(spec, by_kind)
        elif kind == "MultiKueueConfig":
            for i, cluster in enumerate(spec.get("clusters") or []):
                if cluster not in by_kind.get("MultiKueueCluster", {}):
                    found.append(
                        Finding(
                            ("spec", "clusters", i),
                            f"MultiKueueCluster `{cluster}` does not exist",
                            80,
                            "Create the MultiKueueCluster or remove it from the list.",
                            cluster,
                            "warning",
                        )
                    )
        if found:
            out[index] = found
    return out


def _name(obj: dict[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name", ""))


def _cohort_cycles(cohorts: dict[str, dict[str, Any]]) -> set[str]:
    """Names of cohorts on a parentName cycle."""
    cyclic: set[str] = set()
    for start in cohorts:
        path: list[str] = []
        name: str | None = start
        while name is not None and name in cohorts and name not in path:
            path.append(name)
            name = (cohorts[name].get("spec") or {}).get("parentName")
        if name is not None and name in path:
            cyclic.update(path[path.index(name) :])
    return cyclic


def _queue(spec: dict[str, Any], flavors: dict[str, Any], checks: dict[str, Any], cyclic: set[str]) -> list[Finding]:
    out: list[Finding] = []
    for i, group in enumerate(spec.get("resourceGroups") or []):
        for j, flavor in enumerate(group.get("flavors") or []):
            if flavor.get("name") not in flavors:
                out.append(
                    Finding(
                        ("spec", "resourceGroups", i, "flavors", j, "name"),
                        f"ResourceFlavor `{flavor.get('name')}` does not exist; the ClusterQueue is "
                        "inactive (FlavorNotFound)",
                        21,
                        "Create the ResourceFlavor or fix the name.",
                        flavor.get("name"),
                        "warning",
                    )
                )
    strategy = (spec.get("admissionChecksStrategy") or {}).get("admissionChecks") or []
    names = [a.get("name") for a in strategy] + list(spec.get("admissionChecks") or [])
    controllers = []
    for i, name in enumerate(names):
        path: tuple[str | int, ...] = (
            ("spec", "admissionChecksStrategy", "admissionChecks", i, "name")
            if i < len(strategy)
            else ("spec", "admissionChecks", i - len(strategy))
        )
        if name not in checks:
            out.append(
                Finding(
                    path,
                    f"AdmissionCheck `{name}` does not exist; the ClusterQueue is inactive (AdmissionCheckNotFound)",
                    43,
                    "Create the AdmissionCheck or fix the name.",
                    name,
                    "warning",
                )
            )
            continue
        controller = (checks[name].get("spec") or {}).get("controllerName")
        controllers.append(controller)
        if controller == MULTIKUEUE and i < len(strategy) and strategy[i].get("onFlavors"):
            out.append(
                Finding(
                    (*path[:-1], "onFlavors"),
                    "a MultiKueue admission check must not be restricted "
                    "with onFlavors (MultiKueueAdmissionCheckAppliedPerFlavor)",
                    44,
                    "Remove onFlavors from the MultiKueue check.",
                    strategy[i]["onFlavors"],
                    "warning",
                )
            )
    if controllers.count(MULTIKUEUE) > 1:
        out.append(
            Finding(
                ("spec", "admissionChecksStrategy"),
                "more than one MultiKueue admission check (MultipleMultiKueueAdmissionChecks)",
                44,
                "Keep one MultiKueue check.",
                None,
                "warning",
            )
        )
    if MULTIKUEUE in controllers and PROVISIONING in controllers:
        out.append(
            Finding(
                ("spec", "admissionChecksStrategy"),
                "a MultiKueue check together with a "
                "ProvisioningRequest check makes the ClusterQueue inactive "
                "(MultiKueueWithProvisioningRequest)",
                44,
                "Provision on the worker clusters, not on the manager.",
                None,
                "warning",
            )
        )
    if strategy and spec.get("admissionChecks"):
        out.append(
            Finding(
                ("spec", "admissionChecks"),
                "v1beta1 admissionChecks and admissionChecksStrategy are "
                "both set; on conversion the plain list replaces the strategy",
                45,
                "Keep only admissionChecksStrategy.",
                None,
                "warning",
            )
        )
    cohort = spec.get("cohortName") or spec.get("cohort")
    if cohort in cyclic:
        out.append(
            Finding(
                ("spec", "cohortName"),
                f"cohort `{cohort}` is on a parentName cycle; the ClusterQueue is disabled",
                53,
                "Break the cohort cycle.",
                cohort,
                "warning",
            )
        )
    if spec.get("stopPolicy", "None") != "None":
        out.append(
            Finding(
                ("spec", "stopPolicy"),
                "the ClusterQueue is stopped and admits nothing (Stopped)",
                32,
                "Set stopPolicy: None to admit again.",
                spec["stopPolicy"],
                "warning",
            )
        )
    selector = spec.get("namespaceSelector")
    if selector is None:
        out.append(
            Finding(
                ("spec", "namespaceSelector"),
                "no namespaceSelector: the ClusterQueue admits no namespace",
                TENANCY_RULE,
                "Select the team's namespaces, e.g. matchExpressions on kubernetes.io/metadata.name In [...].",
                None,
                "warning",
            )
        )
    elif not selector_keys(selector):
        out.append(
            Finding(
                ("spec", "namespaceSelector"),
                "namespaceSelector `{}` admits every namespace, so any tenant can use this queue",
                TENANCY_RULE,
                "Select only the team's namespaces, e.g. matchExpressions on kubernetes.io/metadata.name In [...].",
                selector,
                "warning",
            )
        )
    return out


def _local_queue(obj: dict[str, Any], queues: dict[str, Any], namespaces: dict[str, Any]) -> list[Finding]:
    target = (obj.get("spec") or {}).get("clusterQueue")
    if not target:
        return []
    if target not in queues:
        return [
            Finding(
                ("spec", "clusterQueue"),
                f"ClusterQueue `{target}` does not exist; workloads submitted here stay pending",
                63,
                "Create the ClusterQueue or fix the name.",
                target,
                "warning",
            )
        ]
    namespace = (obj.get("metadata") or {}).get("namespace", "default")
    selector = (queues[target].get("spec") or {}).get("namespaceSelector")
    labels = {NAME_LABEL: namespace, **((namespaces.get(namespace, {}).get("metadata") or {}).get("labels") or {})}
    if namespace not in namespaces and not selector_keys(selector) <= {NAME_LABEL}:
        return []  # the namespace's other labels are unknown here
    if not selector_matches(selector, labels):
        return [
            Finding(
                ("metadata", "namespace"),
                f"namespace `{namespace}` is not selected by ClusterQueue "
                f"`{target}`'s namespaceSelector; its workloads are never admitted",
                66,
                "Point the LocalQueue at the namespace's ClusterQueue, or widen that selector.",
                namespace,
                "warning",
            )
        ]
    return []


def _admission_check(spec: dict[str, Any], by_kind: dict[str, dict[str, Any]]) -> list[Finding]:
    params = spec.get("parameters") or {}
    kind, name = params.get("kind"), params.get("name")
    if kind in ("ProvisioningRequestConfig", "MultiKueueConfig") and name not in by_kind.get(kind, {}):
        return [
            Finding(
                ("spec", "parameters", "name"),
                f"{kind} `{name}` does not exist; the check is not Active, "
                "so ClusterQueues using it are inactive (AdmissionCheckInactive)",
                43,
                f"Create the {kind} or fix the name.",
                name,
                "warning",
            )
        ]
    return []
