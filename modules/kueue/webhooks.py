"""Kueue's validating-webhook rules that no schema carries (docs/reference/kueue-rules.md
section 1, layer C), plus the practical limits a generator must keep for kinds without a webhook (Kueue rules 4,
5, 63, 65).

Each check takes a defaulted object and returns `Finding`s: path inside the object, what is wrong, the
Kueue rule number (docs/reference/kueue-rules.md), how to fix it. Webhooks run on v1beta2; v1beta1 objects are
converted first (section 0 of that page), which for these rules only renames `cohort` to `cohortName`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from quartermaster.issues import Severity
from quartermaster.modules.kueue.k8s import (
    is_dns_label,
    is_label_value,
    is_qualified_name,
    label_selector_problems,
    parse_quantity,
)

Path = tuple[str | int, ...]
MAX_TOTAL_FLAVORS = 256  # rule 12, pkg/webhooks/clusterqueue_webhook.go validateTotalFlavors
MAX_TOTAL_COVERED = 256  # rule 13, validateTotalCoveredResources
MAX_FLAVOR_RESOURCE_PAIRS = 512  # rule 14, validateFlavorResourceCombinations
MIN_WEIGHT = Decimal("1e-9")  # rule 40, pkg/webhooks/common.go validateFairSharing


@dataclass(frozen=True)
class Finding:
    """One rule violation inside one object."""

    path: Path
    message: str
    rule: int
    fix: str
    got: Any = None
    severity: Severity = "error"


def check(kind: str, obj: dict[str, Any]) -> list[Finding]:
    """The webhook (and practical) rules of `kind` on a defaulted object."""
    checker = CHECKS.get(kind)
    return checker(obj) if checker else []


# --- ClusterQueue and Cohort -----------------------------------------------------------------------


def _cluster_queue(obj: dict[str, Any]) -> list[Finding]:
    spec = obj.get("spec") or {}
    out = _resource_groups(
        spec, has_parent=bool(spec.get("cohortName") or spec.get("cohort")), parent_field="cohort", is_cohort=False
    )
    groups = spec.get("resourceGroups") or []
    flavors = sum(len(g.get("flavors") or []) for g in groups)
    if flavors > MAX_TOTAL_FLAVORS:
        out.append(
            Finding(
                ("spec", "resourceGroups"),
                f"{flavors} flavors across all resource groups; at most {MAX_TOTAL_FLAVORS} are allowed",
                12,
                "Split the ClusterQueue.",
                flavors,
            )
        )
    covered = sum(len(g.get("coveredResources") or []) for g in groups)
    if covered > MAX_TOTAL_COVERED:
        out.append(
            Finding(
                ("spec", "resourceGroups"),
                f"{covered} covered resources across all resource groups; at most {MAX_TOTAL_COVERED} are allowed",
                13,
                "Cover fewer resources.",
                covered,
            )
        )
    for i, group in enumerate(groups):
        pairs = len(group.get("coveredResources") or []) * len(group.get("flavors") or [])
        if pairs > MAX_FLAVOR_RESOURCE_PAIRS:
            out.append(
                Finding(
                    ("spec", "resourceGroups", i),
                    f"{pairs} flavor x resource quotas in one resource group; at most {MAX_FLAVOR_RESOURCE_PAIRS}",
                    14,
                    "Split the resource group.",
                    pairs,
                )
            )
        for j, flavor in enumerate(group.get("flavors") or []):
            for k, res in enumerate(flavor.get("resources") or []):
                nominal, lending = parse_quantity(res.get("nominalQuota")), parse_quantity(res.get("lendingLimit"))
                if nominal is not None and lending is not None and lending > nominal:
                    out.append(
                        Finding(
                            ("spec", "resourceGroups", i, "flavors", j, "resources", k, "lendingLimit"),
                            "lendingLimit must be less than or equal to the nominalQuota",
                            27,
                            "Lower lendingLimit to at most nominalQuota.",
                            res.get("lendingLimit"),
                        )
                    )
    selector = spec.get("namespaceSelector")
    for rel, reason in label_selector_problems(selector):
        out.append(
            Finding(
                ("spec", "namespaceSelector", *rel),
                f"invalid label selector: {reason}",
                30,
                "Use valid label keys, values and operators (In, NotIn, Exists, DoesNotExist).",
            )
        )
    out += _weight(spec, 40)  # rules 25, 36 and 38 are also CEL rules; only the CEL error is reported
    out += _on_flavors(spec, groups)
    return out


def _cohort(obj: dict[str, Any]) -> list[Finding]:
    spec = obj.get("spec") or {}
    out = _resource_groups(spec, has_parent=bool(spec.get("parentName")), parent_field="parent", is_cohort=True)
    return out + _weight(spec, 51)


def _resource_groups(spec: dict[str, Any], *, has_parent: bool, parent_field: str, is_cohort: bool) -> list[Finding]:
    """Rules 16-19, 22-24, 26 (CQ) and 49-50 (Cohort) over spec.resourceGroups."""
    out: list[Finding] = []
    seen_resources: dict[str, int] = {}
    seen_flavors: dict[str, int] = {}
    for i, group in enumerate(spec.get("resourceGroups") or []):
        base: Path = ("spec", "resourceGroups", i)
        covered = group.get("coveredResources") or []
        for k, name in enumerate(covered):
            if not is_qualified_name(name):
                out.append(
                    Finding(
                        (*base, "coveredResources", k),
                        f"resource name `{name}` is not a valid qualified "
                        "name (optional DNS prefix and '/', then at most 63 of [A-Za-z0-9-_.])",
                        19,
                        "Use a name like `cpu`, `memory` or `nvidia.com/gpu`.",
                        name,
                    )
                )
            if name in seen_resources:
                out.append(
                    Finding(
                        (*base, "coveredResources", k),
                        f"resource `{name}` is already covered by "
                        f"resourceGroups[{seen_resources[name]}]; a resource may be in one group only",
                        49 if is_cohort else 17,
                        "Cover each resource in exactly one resource group.",
                        name,
                    )
                )
            else:
                seen_resources[name] = i
        for j, flavor in enumerate(group.get("flavors") or []):
            fpath: Path = (*base, "flavors", j)
            fname = flavor.get("name")
            if fname in seen_flavors:
                out.append(
                    Finding(
                        (*fpath, "name"),
                        f"flavor `{fname}` is already in resourceGroups"
                        f"[{seen_flavors[fname]}]; a flavor may be in one group only",
                        49 if is_cohort else 18,
                        "Put all of the flavor's resources in one resource group.",
                        fname,
                    )
                )
            elif fname is not None:
                seen_flavors[fname] = i
            for k, res in enumerate(flavor.get("resources") or []):
                rpath: Path = (*fpath, "resources", k)
                if k < len(covered) and res.get("name") != covered[k]:
                    out.append(
                        Finding(
                            (*rpath, "name"),
                            f"must match the name in coveredResources[{k}] "
                            f"(`{covered[k]}`): same resources in the same order",
                            49 if is_cohort else 16,
                            "List the flavor's resources in the order of coveredResources.",
                            res.get("name"),
                        )
                    )
                for field_name, rule in (("nominalQuota", 22), ("borrowingLimit", 23), ("lendingLimit", 24)):
                    amount = parse_quantity(res.get(field_name))
                    if amount is not None and amount < 0:
                        out.append(
                            Finding(
                                (*rpath, field_name),
                                f"{field_name} must be greater than or equal to 0",
                                49 if is_cohort else rule,
                                "Use a quantity of 0 or more.",
                                res.get(field_name),
                            )
                        )
                if not has_parent:
                    limited = [f for f in ("lendingLimit", "borrowingLimit") if f in res]
                    if is_cohort:
                        for f in limited:
                            out.append(
                                Finding(
                                    (*rpath, f),
                                    f"{f} must be nil when parent is empty",
                                    50,
                                    "Set spec.parentName or remove the limit.",
                                    res[f],
                                )
                            )
                    elif "lendingLimit" in res:  # borrowingLimit is caught by the CRD's CEL rule (rule 25)
                        out.append(
                            Finding(
                                (*rpath, "lendingLimit"),
                                "lendingLimit must be nil when cohort is empty",
                                26,
                                "Set spec.cohortName or remove lendingLimit.",
                                res["lendingLimit"],
                            )
                        )
    return out


def _weight(spec: dict[str, Any], rule: int) -> list[Finding]:
    raw = (spec.get("fairSharing") or {}).get("weight")
    weight = parse_quantity(raw)
    if weight is None:
        return []
    if weight < 0:
        return [
            Finding(
                ("spec", "fairSharing", "weight"),
                "fairSharing.weight must be greater than or equal to 0",
                rule,
                "Use 0 (always last) or a positive weight.",
                raw,
            )
        ]
    if 0 < weight <= MIN_WEIGHT:
        return [
            Finding(
                ("spec", "fairSharing", "weight"),
                "fairSharing.weight must be 0 or greater than 1e-9",
                rule,
                "Use a larger weight, or 0.",
                raw,
            )
        ]
    return []


def _on_flavors(spec: dict[str, Any], groups: list[dict[str, Any]]) -> list[Finding]:
    """Rule 42: every onFlavors entry names a flavor of this ClusterQueue's resource groups."""
    flavors = {f.get("name") for g in groups for f in g.get("flavors") or []}
    out = []
    for i, ac in enumerate((spec.get("admissionChecksStrategy") or {}).get("admissionChecks") or []):
        for j, name in enumerate(ac.get("onFlavors") or []):
            if name not in flavors:
                out.append(
                    Finding(
                        ("spec", "admissionChecksStrategy", "admissionChecks", i, "onFlavors", j),
                        f"onFlavors names flavor `{name}`, which is not in this ClusterQueue's "
                        "resourceGroups (rejected since Kueue v0.18)",
                        42,
                        "Add the flavor to spec.resourceGroups or remove it from onFlavors.",
                        name,
                    )
                )
    return out


# --- ResourceFlavor --------------------------------------------------------------------------------


def _resource_flavor(obj: dict[str, Any]) -> list[Finding]:
    spec = obj.get("spec") or {}
    out: list[Finding] = []
    for key, value in (spec.get("nodeLabels") or {}).items():
        if not is_qualified_name(key):
            out.append(
                Finding(
                    ("spec", "nodeLabels", key),
                    f"`{key}` is not a valid label key",
                    55,
                    "Use a label key such as `cloud.google.com/gke-nodepool`.",
                    key,
                )
            )
        if not is_label_value(value):
            out.append(
                Finding(
                    ("spec", "nodeLabels", key),
                    f"`{value}` is not a valid label value",
                    55,
                    "Use at most 63 of [A-Za-z0-9-_.], starting and ending alphanumeric.",
                    value,
                )
            )
    seen: set[tuple[Any, Any]] = set()
    for i, taint in enumerate(spec.get("nodeTaints") or []):
        path: Path = ("spec", "nodeTaints", i)
        if not is_qualified_name(taint.get("key", "")):
            out.append(
                Finding(
                    (*path, "key"),
                    "taint key is not a valid qualified name",
                    56,
                    "Use a label-key style name.",
                    taint.get("key"),
                )
            )
        if "value" in taint and not is_label_value(taint["value"]):
            out.append(
                Finding(
                    (*path, "value"),
                    "taint value is not a valid label value",
                    56,
                    "Use at most 63 of [A-Za-z0-9-_.].",
                    taint["value"],
                )
            )
        pair = (taint.get("key"), taint.get("effect"))
        if pair in seen:
            out.append(
                Finding(
                    path,
                    f"duplicate taint key={pair[0]} effect={pair[1]}",
                    56,
                    "Keep one taint per key and effect.",
                    pair[0],
                )
            )
        seen.add(pair)
    for i, toleration in enumerate(spec.get("tolerations") or []):
        key = toleration.get("key")
        if key and not is_qualified_name(key):
            out.append(
                Finding(
                    ("spec", "tolerations", i, "key"),
                    "toleration key is not a valid label name",
                    57,
                    "Use a label-key style name.",
                    key,
                )
            )
    return out


# --- kinds without a webhook: practical limits a generator keeps (docs/reference/kueue-rules.md section 5) ---


def _local_queue(obj: dict[str, Any]) -> list[Finding]:
    spec = obj.get("spec") or {}
    out: list[Finding] = []
    name = (obj.get("metadata") or {}).get("name", "")
    if isinstance(name, str) and len(name) > 63:
        out.append(
            Finding(
                ("metadata", "name"),
                "LocalQueue name longer than 63 characters cannot be used in the `kueue.x-k8s.io/queue-name` label",
                4,
                "Shorten the name to at most 63 characters.",
                len(name),
            )
        )
    if not spec.get("clusterQueue"):
        out.append(
            Finding(
                ("spec", "clusterQueue"),
                "LocalQueue has no clusterQueue, so it can never admit anything (and the field is immutable once set)",
                63,
                "Set spec.clusterQueue.",
            )
        )
    weight = parse_quantity((spec.get("fairSharing") or {}).get("weight"))
    if weight is not None and weight < 0:
        out.append(
            Finding(
                ("spec", "fairSharing", "weight"),
                "fairSharing.weight must be greater than or equal "
                "to 0 (not checked by Kueue: LocalQueue has no webhook)",
                65,
                "Use 0 or more.",
                spec["fairSharing"]["weight"],
            )
        )
    return out


def _priority_class(obj: dict[str, Any]) -> list[Finding]:
    name = (obj.get("metadata") or {}).get("name", "")
    if isinstance(name, str) and len(name) > 63:
        return [
            Finding(
                ("metadata", "name"),
                "WorkloadPriorityClass name longer than 63 characters cannot be used "
                "in the `kueue.x-k8s.io/priority-class` label",
                5,
                "Shorten the name.",
                len(name),
            )
        ]
    return []


def _cluster_queue_label(obj: dict[str, Any]) -> list[Finding]:
    name = (obj.get("metadata") or {}).get("name", "")
    if isinstance(name, str) and name and not is_dns_label(name):
        return [
            Finding(
                ("metadata", "name"),
                "ClusterQueue name is not a DNS-1123 label (<= 63, no dots), so "
                "Kueue will not copy it onto pods as a label",
                6,
                "Use a name of at most 63 characters without dots.",
                name,
                severity="warning",
            )
        ]
    return []


CHECKS: dict[str, Callable[[dict[str, Any]], list[Finding]]] = {
    "ClusterQueue": lambda o: _cluster_queue(o) + _cluster_queue_label(o),
    "Cohort": _cohort,
    "ResourceFlavor": _resource_flavor,
    "LocalQueue": _local_queue,
    "WorkloadPriorityClass": _priority_class,
}
