"""For each rule of docs/reference/kueue-rules.md that the validator enforces, a violating object is caught with
the rule named.

Each case starts from a valid set (ResourceFlavor, Cohort, ClusterQueue, LocalQueue, ...) and breaks one thing.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from quartermaster.modules.kueue import validate_manifests

V2 = "kueue.x-k8s.io/v1beta2"


def valid_set() -> list[dict[str, Any]]:
    """A small, complete, valid set: no issue at all."""
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml", "labels": {"team": "ml"}}},
        {
            "apiVersion": V2,
            "kind": "Topology",
            "metadata": {"name": "gke"},
            "spec": {
                "levels": [
                    {"nodeLabel": "cloud.google.com/gce-topology-block"},
                    {"nodeLabel": "kubernetes.io/hostname"},
                ]
            },
        },
        {
            "apiVersion": V2,
            "kind": "ResourceFlavor",
            "metadata": {"name": "h100"},
            "spec": {
                "nodeLabels": {"cloud.google.com/gke-nodepool": "h100"},
                "topologyName": "gke",
                "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
            },
        },
        {
            "apiVersion": V2,
            "kind": "ResourceFlavor",
            "metadata": {"name": "spot"},
            "spec": {
                "nodeLabels": {"pool": "spot"},
                "nodeTaints": [{"key": "spot", "value": "true", "effect": "NoSchedule"}],
            },
        },
        {"apiVersion": V2, "kind": "Cohort", "metadata": {"name": "org"}, "spec": {}},
        {
            "apiVersion": V2,
            "kind": "Cohort",
            "metadata": {"name": "research"},
            "spec": {
                "parentName": "org",
                "fairSharing": {"weight": "0.5"},
                "resourceGroups": [
                    {
                        "coveredResources": ["nvidia.com/gpu"],
                        "flavors": [
                            {
                                "name": "h100",
                                "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 8, "lendingLimit": 16}],
                            }
                        ],
                    }
                ],
            },
        },
        {
            "apiVersion": V2,
            "kind": "ProvisioningRequestConfig",
            "metadata": {"name": "dws"},
            "spec": {"provisioningClassName": "queued-provisioning.gke.io", "managedResources": ["nvidia.com/gpu"]},
        },
        {
            "apiVersion": V2,
            "kind": "AdmissionCheck",
            "metadata": {"name": "dws"},
            "spec": {
                "controllerName": "kueue.x-k8s.io/provisioning-request",
                "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": "ProvisioningRequestConfig", "name": "dws"},
            },
        },
        {
            "apiVersion": V2,
            "kind": "MultiKueueCluster",
            "metadata": {"name": "worker"},
            "spec": {"clusterSource": {"kubeConfig": {"location": "worker-kubeconfig", "locationType": "Secret"}}},
        },
        {"apiVersion": V2, "kind": "MultiKueueConfig", "metadata": {"name": "mk"}, "spec": {"clusters": ["worker"]}},
        {
            "apiVersion": V2,
            "kind": "AdmissionCheck",
            "metadata": {"name": "mk"},
            "spec": {
                "controllerName": "kueue.x-k8s.io/multikueue",
                "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": "MultiKueueConfig", "name": "mk"},
            },
        },
        {
            "apiVersion": V2,
            "kind": "ClusterQueue",
            "metadata": {"name": "ml"},
            "spec": {
                "cohortName": "research",
                "namespaceSelector": {
                    "matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["ml"]}]
                },
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu", "nvidia.com/gpu"],
                        "flavors": [
                            {
                                "name": "h100",
                                "resources": [
                                    {"name": "cpu", "nominalQuota": 100},
                                    {
                                        "name": "nvidia.com/gpu",
                                        "nominalQuota": 16,
                                        "borrowingLimit": 8,
                                        "lendingLimit": 8,
                                    },
                                ],
                            },
                            {
                                "name": "spot",
                                "resources": [
                                    {"name": "cpu", "nominalQuota": "500m"},
                                    {"name": "nvidia.com/gpu", "nominalQuota": 0},
                                ],
                            },
                        ],
                    }
                ],
                "admissionChecksStrategy": {"admissionChecks": [{"name": "dws", "onFlavors": ["h100"]}]},
                "preemption": {"reclaimWithinCohort": "Any", "borrowWithinCohort": {"policy": "LowerPriority"}},
                "fairSharing": {"weight": 2},
            },
        },
        {
            "apiVersion": V2,
            "kind": "LocalQueue",
            "metadata": {"name": "default", "namespace": "ml"},
            "spec": {"clusterQueue": "ml"},
        },
        {
            "apiVersion": V2,
            "kind": "WorkloadPriorityClass",
            "metadata": {"name": "training"},
            "value": 100,
            "description": "training runs",
        },
    ]


def _find(objects: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    return next(o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name)


def cq(objects: list[dict[str, Any]]) -> dict[str, Any]:
    return _find(objects, "ClusterQueue", "ml")["spec"]


def rg(objects: list[dict[str, Any]]) -> dict[str, Any]:
    return cq(objects)["resourceGroups"][0]


def gpu(objects: list[dict[str, Any]]) -> dict[str, Any]:
    return rg(objects)["flavors"][0]["resources"][1]


def rf(objects: list[dict[str, Any]], name: str = "h100") -> dict[str, Any]:
    return _find(objects, "ResourceFlavor", name)["spec"]


def add(obj: dict[str, Any]) -> Callable[[list[dict[str, Any]]], None]:
    return lambda objects: objects.append(obj)


def flavor(name: str, *resources: str, quota: Any = 1) -> dict[str, Any]:
    return {"name": name, "resources": [{"name": r, "nominalQuota": quota} for r in resources]}


def big_cq(groups: int, flavors: int, resources: int) -> Callable[[list[dict[str, Any]]], None]:
    def mutate(objects: list[dict[str, Any]]) -> None:
        cq(objects)["resourceGroups"] = [
            {
                "coveredResources": [f"r{g}-{k}" for k in range(resources)],
                "flavors": [flavor(f"f{g}-{j}", *[f"r{g}-{k}" for k in range(resources)]) for j in range(flavors)],
            }
            for g in range(groups)
        ]
        cq(objects).pop("admissionChecksStrategy")

    return mutate


def set_in(getter: Callable[[list[dict[str, Any]]], dict[str, Any]], **fields: Any) -> Callable[..., None]:
    return lambda objects: getter(objects).update(fields)


def lq(namespace: str = "ml", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": V2, "kind": "LocalQueue", "metadata": {"name": "q", "namespace": namespace}, "spec": spec}


CASES: list[tuple[str, str, Callable[[list[dict[str, Any]]], None], str]] = [
    # (rule, severity, how the valid set is broken, case name)
    (
        "kueue-1",
        "error",
        lambda o: _find(o, "ResourceFlavor", "spot")["metadata"].update(name="Spot_Nodes"),
        "object name not a DNS subdomain",
    ),
    ("kueue-2", "error", lambda o: rg(o)["flavors"][1].update(name="Spot"), "flavor reference not a DNS subdomain"),
    (
        "kueue-3",
        "error",
        lambda o: cq(o)["admissionChecksStrategy"]["admissionChecks"][0].update(name="x" * 317),
        "admission check reference longer than 316",
    ),
    (
        "kueue-4",
        "error",
        add(lq(clusterQueue="ml") | {"metadata": {"name": "q" * 70, "namespace": "ml"}}),
        "local queue name longer than 63",
    ),
    (
        "kueue-5",
        "error",
        add({"apiVersion": V2, "kind": "WorkloadPriorityClass", "metadata": {"name": "p" * 64}, "value": 1}),
        "priority class name longer than 63",
    ),
    (
        "kueue-6",
        "warning",
        lambda o: _find(o, "ClusterQueue", "ml")["metadata"].update(name="ml.team"),
        "dotted ClusterQueue name is not propagated as a label",
    ),
    (
        "kueue-7",
        "error",
        lambda o: _find(o, "AdmissionCheck", "dws")["spec"]["parameters"].update(name="dws.v1"),
        "admission check parameters name with a dot",
    ),
    ("kueue-8", "error", big_cq(17, 1, 1), "17 resource groups"),
    ("kueue-9", "error", set_in(rg, coveredResources=[]), "no covered resources"),
    ("kueue-10", "error", lambda o: gpu(o).pop("nominalQuota"), "resource without nominalQuota"),
    (
        "kueue-11",
        "error",
        lambda o: rg(o)["flavors"].append(copy.deepcopy(rg(o)["flavors"][1])),
        "same flavor twice in a group",
    ),
    ("kueue-12", "error", big_cq(16, 17, 1), "272 flavors in total"),
    ("kueue-13", "error", big_cq(5, 1, 60), "300 covered resources in total"),
    ("kueue-14", "error", big_cq(1, 9, 60), "540 flavor x resource pairs in one group"),
    ("kueue-15", "error", lambda o: rg(o)["flavors"][1]["resources"].pop(), "flavor lists fewer resources"),
    ("kueue-16", "error", lambda o: rg(o)["flavors"][1]["resources"].reverse(), "resources in another order"),
    (
        "kueue-17",
        "error",
        lambda o: cq(o)["resourceGroups"].append({"coveredResources": ["cpu"], "flavors": [flavor("other", "cpu")]}),
        "resource in two groups",
    ),
    (
        "kueue-18",
        "error",
        lambda o: cq(o)["resourceGroups"].append(
            {"coveredResources": ["memory"], "flavors": [flavor("spot", "memory")]}
        ),
        "flavor in two groups",
    ),
    (
        "kueue-19",
        "error",
        lambda o: (
            rg(o).update(coveredResources=["@cpu", "nvidia.com/gpu"]),
            [f["resources"][0].update(name="@cpu") for f in rg(o)["flavors"]],
        ),
        "resource name not a qualified name",
    ),
    ("kueue-21", "warning", lambda o: rg(o)["flavors"][1].update(name="a100"), "flavor without ResourceFlavor"),
    ("kueue-22", "error", lambda o: gpu(o).update(nominalQuota=-1), "negative nominal quota"),
    ("kueue-23", "error", lambda o: gpu(o).update(borrowingLimit="-2"), "negative borrowing limit"),
    ("kueue-24", "error", lambda o: gpu(o).update(lendingLimit=-1), "negative lending limit"),
    (
        "kueue-25",
        "error",
        lambda o: (cq(o).pop("cohortName"), gpu(o).pop("lendingLimit")),
        "borrowing limit without cohort",
    ),
    (
        "kueue-26",
        "error",
        lambda o: (cq(o).pop("cohortName"), gpu(o).pop("borrowingLimit")),
        "lending limit without cohort",
    ),
    ("kueue-27", "error", lambda o: gpu(o).update(lendingLimit=32), "lending limit above nominal"),
    ("kueue-29", "error", set_in(cq, cohortName="x" * 254), "cohort name longer than 253"),
    (
        "kueue-30",
        "error",
        lambda o: cq(o)["namespaceSelector"]["matchExpressions"][0].update(operator="Has"),
        "invalid selector operator",
    ),
    ("kueue-30", "warning", lambda o: cq(o).update(namespaceSelector={}), "selector admits every namespace"),
    ("kueue-31", "error", set_in(cq, queueingStrategy="FIFO"), "unknown queueing strategy"),
    ("kueue-32", "error", set_in(cq, stopPolicy="Pause"), "unknown stop policy"),
    ("kueue-32", "warning", set_in(cq, stopPolicy="Hold"), "stopped queue is inactive"),
    ("kueue-33", "error", lambda o: cq(o)["preemption"].update(reclaimWithinCohort="Always"), "bad reclaim policy"),
    ("kueue-34", "error", lambda o: cq(o)["preemption"].update(withinClusterQueue="Any"), "bad within-queue policy"),
    (
        "kueue-35",
        "error",
        lambda o: cq(o)["preemption"]["borrowWithinCohort"].update(policy="Any"),
        "bad borrow-within-cohort policy",
    ),
    (
        "kueue-36",
        "error",
        lambda o: cq(o)["preemption"].update(reclaimWithinCohort="Never"),
        "borrowWithinCohort without reclaim",
    ),
    ("kueue-37", "error", set_in(cq, flavorFungibility={"whenCanBorrow": "Borrow"}), "v1beta1-only fungibility value"),
    (
        "kueue-38",
        "error",
        set_in(cq, flavorFungibility={"preference": "BorrowingOverPreemption"}),
        "preference without TryNextFlavor",
    ),
    ("kueue-39", "error", set_in(cq, admissionScope={"admissionMode": "Fair"}), "bad admission mode"),
    ("kueue-40", "error", set_in(cq, fairSharing={"weight": "1n"}), "weight not above 1e-9"),
    (
        "kueue-41",
        "error",
        lambda o: cq(o)["admissionChecksStrategy"].update(admissionChecks=[]),
        "empty admission check list",
    ),
    (
        "kueue-42",
        "error",
        lambda o: cq(o)["admissionChecksStrategy"]["admissionChecks"][0].update(onFlavors=["a100"]),
        "onFlavors names a flavor the queue does not list",
    ),
    (
        "kueue-43",
        "warning",
        lambda o: cq(o)["admissionChecksStrategy"]["admissionChecks"][0].update(name="gone"),
        "admission check does not exist",
    ),
    (
        "kueue-43",
        "warning",
        lambda o: _find(o, "AdmissionCheck", "dws")["spec"]["parameters"].update(name="gone"),
        "admission check parameters do not exist",
    ),
    (
        "kueue-44",
        "warning",
        lambda o: cq(o)["admissionChecksStrategy"]["admissionChecks"].append({"name": "mk"}),
        "MultiKueue together with ProvisioningRequest",
    ),
    (
        "kueue-44",
        "warning",
        lambda o: cq(o)["admissionChecksStrategy"].update(admissionChecks=[{"name": "mk", "onFlavors": ["h100"]}]),
        "MultiKueue check scoped with onFlavors",
    ),
    (
        "kueue-48",
        "error",
        lambda o: _find(o, "Cohort", "research")["spec"].update(parentName="Org!"),
        "parent name not a DNS subdomain",
    ),
    (
        "kueue-49",
        "error",
        lambda o: _find(o, "Cohort", "research")["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0].update(
            nominalQuota=-4
        ),
        "negative cohort quota",
    ),
    (
        "kueue-50",
        "error",
        lambda o: _find(o, "Cohort", "research")["spec"].pop("parentName"),
        "cohort lending limit without parent",
    ),
    (
        "kueue-51",
        "error",
        lambda o: _find(o, "Cohort", "research")["spec"].update(fairSharing={"weight": -1}),
        "negative cohort weight",
    ),
    ("kueue-53", "warning", lambda o: _find(o, "Cohort", "org")["spec"].update(parentName="research"), "cohort cycle"),
    ("kueue-55", "error", lambda o: rf(o)["nodeLabels"].update({"pool": "not valid!"}), "invalid node label value"),
    (
        "kueue-55",
        "error",
        lambda o: rf(o, "spot").update(nodeLabels={f"k{i}": "v" for i in range(9)}),
        "nine node labels",
    ),
    (
        "kueue-56",
        "error",
        lambda o: rf(o, "spot")["nodeTaints"].append({"key": "spot", "value": "false", "effect": "NoSchedule"}),
        "duplicate taint key and effect",
    ),
    ("kueue-56", "error", lambda o: rf(o, "spot")["nodeTaints"][0].update(effect="Sometimes"), "bad taint effect"),
    ("kueue-57", "error", lambda o: rf(o)["tolerations"][0].update(value="present"), "Exists with a value"),
    ("kueue-57", "error", lambda o: rf(o)["tolerations"][0].update(operator="Lt"), "Lt operator"),
    ("kueue-58", "error", lambda o: rf(o).pop("nodeLabels"), "topology without node labels"),
    ("kueue-61", "warning", lambda o: rf(o).update(topologyName="missing"), "topology does not exist"),
    ("kueue-63", "error", add(lq()), "local queue without cluster queue"),
    ("kueue-63", "warning", add(lq(clusterQueue="nobody")), "local queue to a missing cluster queue"),
    ("kueue-64", "error", add(lq(clusterQueue="ml", stopPolicy="Stop")), "bad local queue stop policy"),
    ("kueue-65", "error", add(lq(clusterQueue="ml", fairSharing={"weight": "-1"})), "negative local queue weight"),
    ("kueue-66", "warning", add(lq("other", clusterQueue="ml")), "namespace not selected by the queue"),
    ("kueue-68", "error", lambda o: _find(o, "Topology", "gke")["spec"].update(levels=[]), "no levels"),
    (
        "kueue-69",
        "error",
        lambda o: _find(o, "Topology", "gke")["spec"]["levels"][0].update(nodeLabel="a b"),
        "level not a qualified name",
    ),
    (
        "kueue-70",
        "error",
        lambda o: _find(o, "Topology", "gke")["spec"]["levels"].insert(
            0, {"nodeLabel": "cloud.google.com/gce-topology-block"}
        ),
        "duplicate level",
    ),
    ("kueue-71", "error", lambda o: _find(o, "Topology", "gke")["spec"]["levels"].reverse(), "hostname not last"),
    ("kueue-74", "error", lambda o: _find(o, "WorkloadPriorityClass", "training").pop("value"), "no value"),
    (
        "kueue-77",
        "error",
        lambda o: _find(o, "AdmissionCheck", "dws")["spec"].pop("controllerName"),
        "no controller name",
    ),
    (
        "kueue-78",
        "error",
        lambda o: _find(o, "AdmissionCheck", "dws")["spec"]["parameters"].pop("kind"),
        "parameters without kind",
    ),
    (
        "kueue-79",
        "error",
        lambda o: _find(o, "ProvisioningRequestConfig", "dws")["spec"].pop("provisioningClassName"),
        "no provisioning class",
    ),
    (
        "kueue-80",
        "error",
        lambda o: _find(o, "MultiKueueConfig", "mk")["spec"].update(clusters=["worker", "worker"]),
        "duplicate worker",
    ),
    (
        "kueue-80",
        "warning",
        lambda o: _find(o, "MultiKueueConfig", "mk")["spec"]["clusters"].append("ghost"),
        "worker without MultiKueueCluster",
    ),
    (
        "kueue-81",
        "error",
        lambda o: _find(o, "MultiKueueCluster", "worker")["spec"]["clusterSource"].update(
            clusterProfileRef={"name": "w"}
        ),
        "kubeConfig and clusterProfileRef",
    ),
    ("kueue-83", "error", lambda o: cq(o).update(cohort=cq(o).pop("cohortName")), "v1beta1 cohort in v1beta2"),
    (
        "kueue-87",
        "error",
        lambda o: _find(o, "MultiKueueCluster", "worker").update(spec={"kubeConfig": {"location": "x"}}),
        "v1beta1 kubeConfig in v1beta2",
    ),
    (
        "kueue-88",
        "error",
        lambda o: _find(o, "AdmissionCheck", "dws")["spec"].update(retryDelayMinutes=5),
        "removed retryDelayMinutes",
    ),
]


def test_the_valid_set_has_no_issue() -> None:
    assert [i.format() for i in validate_manifests(valid_set())] == []


@pytest.mark.parametrize(("rule", "severity", "mutate"), [c[:3] for c in CASES], ids=[f"{c[0]}: {c[3]}" for c in CASES])
def test_violation_is_caught_with_the_rule_named(
    rule: str, severity: str, mutate: Callable[[list[dict[str, Any]]], None]
) -> None:
    objects = valid_set()
    mutate(objects)
    found = [(i.rule, i.severity) for i in validate_manifests(objects, "case.yaml")]
    assert (rule, severity) in found, found


def test_every_issue_names_the_object_the_field_and_the_rule() -> None:
    objects = valid_set()
    rg(objects)["flavors"][1]["resources"].reverse()
    issue, second = validate_manifests(objects, "team.yaml")  # both resources are out of order
    assert second.location is not None and second.location.path.endswith("resources[1].name")
    assert issue.format().startswith(
        "team.yaml:? ClusterQueue/ml spec.resourceGroups[0].flavors[1].resources[0].name: "
        "must match the name in coveredResources[0]"
    )
    assert "[Kueue rule 16, webhook]" in issue.message


def test_cel_errors_quote_the_crd_message_and_rule() -> None:
    objects = valid_set()
    rg(objects)["flavors"][1]["resources"].pop()
    messages = [i.message for i in validate_manifests(objects) if i.rule == "kueue-15"]
    assert messages and "flavors must have the same number of resources as the coveredResources" in messages[0]
    assert "CEL `self.flavors.all(" in messages[0]


def test_other_api_groups_are_skipped() -> None:
    objects = [
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "Not_Valid"}, "spec": {"x": 1}},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "r"}},
    ]
    assert validate_manifests(objects) == []


def test_unknown_kind_and_unserved_version_are_errors() -> None:
    objects = [
        {"apiVersion": V2, "kind": "Queue", "metadata": {"name": "q"}},
        {"apiVersion": "kueue.x-k8s.io/v1alpha1", "kind": "Cohort", "metadata": {"name": "c"}},
    ]
    messages = [i.message for i in validate_manifests(objects)]
    assert any("`Queue` is not a Kueue kind" in m for m in messages)
    assert any("does not serve Cohort at v1alpha1 (it serves v1beta1, v1beta2)" in m for m in messages)


def test_v1beta1_objects_use_their_own_schema() -> None:
    objects = valid_set()
    for obj in objects:
        if obj["apiVersion"] == V2 and obj["kind"] == "ClusterQueue":
            obj["apiVersion"] = "kueue.x-k8s.io/v1beta1"
            obj["spec"]["cohort"] = obj["spec"].pop("cohortName")
    assert validate_manifests(objects) == []
    cq(objects)["flavorFungibility"] = {"whenCanBorrow": "Borrow"}  # deprecated but still served in v1beta1
    assert validate_manifests(objects) == []
