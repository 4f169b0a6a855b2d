"""Validate Kueue manifests offline against what Kueue itself enforces (docs/reference/kueue-rules.md, section 0):

A. the served version's openAPIV3Schema, B. its CEL rules, C. the webhook rules, D. the API server's name
rules, E. the cross-object conditions that leave a ClusterQueue inactive (warnings). Objects of other API
groups (Namespaces, RBAC, ...) are not validated, but Namespaces inform the selector checks.

Every problem is an `Issue` located as `<file>:<line> <Kind>/<name> <field.path>`, naming the rule:
`kueue-<n>` for rule n of docs/reference/kueue-rules.md (messages end `[Kueue rule n, <layer>]`), `kueue-schema` /
`kueue-cel` for CRD constraints that page does not number.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from quartermaster.issues import Issue, Location, Severity
from quartermaster.loader import YamlTooLarge, nesting_issue, plain_data, value_budget
from quartermaster.modules.kueue import runtime, webhooks
from quartermaster.modules.kueue.crds import (
    GROUP,
    PLURALS,
    SchemaError,
    apply_defaults,
    crd,
    schema_errors,
    served_versions,
)
from quartermaster.modules.kueue.k8s import is_dns_label, is_dns_subdomain

YamlPath = tuple[str | int, ...]
MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")

# CRD constraints -> Kueue rule numbers (docs/reference/kueue-rules.md), by field path ([] = any list index);
# the nearest enclosing path wins.
_COMMON_RG = {
    "spec.resourceGroups": 8,
    "spec.resourceGroups[]": 9,
    "spec.resourceGroups[].coveredResources": 9,
    "spec.resourceGroups[].coveredResources[]": 19,
    "spec.resourceGroups[].flavors": 9,
    "spec.resourceGroups[].flavors[]": 10,
    "spec.resourceGroups[].flavors[].name": 2,
    "spec.resourceGroups[].flavors[].resources": 10,
    "spec.resourceGroups[].flavors[].resources[]": 10,
}
SCHEMA_RULES: dict[str, dict[str, int]] = {
    "ClusterQueue": {
        **_COMMON_RG,
        "spec.cohortName": 29,
        "spec.cohort": 29,
        "spec.queueingStrategy": 31,
        "spec.stopPolicy": 32,
        "spec.preemption.reclaimWithinCohort": 33,
        "spec.preemption.withinClusterQueue": 34,
        "spec.preemption.borrowWithinCohort": 35,
        "spec.flavorFungibility": 37,
        "spec.flavorFungibility.preference": 38,
        "spec.admissionScope": 39,
        "spec.admissionChecksStrategy.admissionChecks": 41,
        "spec.admissionChecksStrategy.admissionChecks[]": 41,
        "spec.admissionChecksStrategy.admissionChecks[].name": 3,
        "spec.admissionChecksStrategy.admissionChecks[].onFlavors": 41,
        "spec.admissionChecksStrategy.admissionChecks[].onFlavors[]": 2,
        "spec.concurrentAdmissionPolicy": 46,
    },
    "Cohort": {**{k: 49 for k in _COMMON_RG}, "spec.parentName": 48},
    "ResourceFlavor": {"spec.nodeLabels": 55, "spec.nodeTaints": 56, "spec.tolerations": 57, "spec.topologyName": 2},
    "LocalQueue": {"spec.clusterQueue": 63, "spec.stopPolicy": 64, "spec.fairSharing": 65},
    "Topology": {"spec": 68, "spec.levels": 68, "spec.levels[]": 69},
    "WorkloadPriorityClass": {"": 74},
    "AdmissionCheck": {"spec": 77, "spec.controllerName": 77, "spec.parameters": 78, "spec.parameters.name": 7},
    "ProvisioningRequestConfig": {"spec": 79},
    "MultiKueueConfig": {"spec": 80},
    "MultiKueueCluster": {"spec": 81},
}
CEL_RULES = {
    "flavors must have the same number of resources as the coveredResources": 15,
    "borrowingLimit must be nil when cohort is empty": 25,
    "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never": 36,
    "preference can only be set when both whenCanBorrow and whenCanPreempt are TryNextFlavor": 38,
    "at least one nodeLabel is required when topology is set": 58,
    "the kubernetes.io/hostname label can only be used at the lowest level of topology": 71,
    "exactly one of the fields in [kubeConfig clusterProfileRef] must be set": 81,
}
# Fields a v1beta1 author may carry into v1beta2 (docs/reference/kueue-rules.md 1.9):
# kind -> field -> (replacement, rule).
RENAMED = {
    "ClusterQueue": {"cohort": ("spec.cohortName", 83), "admissionChecks": ("spec.admissionChecksStrategy", 84)},
    "MultiKueueCluster": {
        "kubeConfig": ("spec.clusterSource.kubeConfig", 87),
        "clusterProfileRef": ("spec.clusterSource.clusterProfileRef", 87),
    },
    "AdmissionCheck": {"retryDelayMinutes": ("nothing (removed)", 88)},
    "MultiKueueConfig": {"quotaManagement": ("nothing in v1beta1 (v1beta2 only)", 89)},
}


@dataclass
class Manifest:
    """One object and where it came from: file and a map from YAML path to line."""

    obj: Any
    file: str
    lines: dict[YamlPath, int] = field(default_factory=dict)
    prefix: YamlPath = ()  # path of the object inside its document (items of a List)

    def locate(self, path: YamlPath) -> int | None:
        full = self.prefix + path
        for end in range(len(full), -1, -1):
            if full[:end] in self.lines:
                return self.lines[full[:end]]
        return None


# --- entry points ----------------------------------------------------------------------------------


def validate_manifests(objects: list[dict[str, Any]], source: str = "") -> list[Issue]:
    """Every problem in `objects` (plain dicts, e.g. from `objects_for_cluster`); `source` names them."""
    return validate(Manifest(obj, source or "<objects>") for obj in objects)


def validate_path(path: str | Path) -> tuple[list[Manifest], list[Issue]]:
    """Load every manifest under a file or directory and validate them together."""
    manifests, issues = load_manifests(Path(path))
    return manifests, issues + validate(manifests)


def validate(manifests: Iterable[Manifest]) -> list[Issue]:
    """Per-object layers A-D, then the cross-object layer E over the whole set."""
    manifests = list(manifests)
    issues: list[Issue] = []
    defaulted: list[tuple[str, dict[str, Any]]] = []
    owners: list[Manifest] = []
    for m in manifests:
        obj = m.obj
        if not isinstance(obj, dict) or not obj.get("kind") or not obj.get("apiVersion"):
            issues.append(
                _issue(
                    m,
                    (),
                    "not a Kubernetes object (apiVersion and kind are required)",
                    None,
                    "Give the document `apiVersion` and `kind`, or remove it.",
                    rule_name="kueue-object",
                )
            )
            continue
        kind, api_version = str(obj["kind"]), str(obj["apiVersion"])
        group, _, version = api_version.rpartition("/")
        if group != GROUP:
            defaulted.append((kind, obj))  # not Kueue's: kept for the selector checks only
            owners.append(m)
            continue
        c = crd(kind, version)
        if c is None:
            if kind in PLURALS:
                served = ", ".join(served_versions(kind))
                what = f"Kueue v0.19.2 does not serve {kind} at {version} (it serves {served})"
                fix = "Use kueue.x-k8s.io/v1beta2."
            else:
                what, fix = f"`{kind}` is not a Kueue kind", f"Use one of {', '.join(sorted(PLURALS))}."
            issues.append(_issue(m, ("kind",), what, None, fix, rule_name="kueue-schema", got=kind))
            continue
        issues += _metadata(m, kind, c.namespaced)
        full = apply_defaults(c.schema, obj)
        refused = [_schema_issue(m, kind, version, error) for error in schema_errors(c, full)]
        issues += refused
        if refused:  # the webhook and runtime checks read an object of the schema's shape
            continue
        for finding in webhooks.check(kind, full):
            issues.append(
                _finding_issue(m, finding, "webhook" if finding.rule not in (4, 5, 6, 63, 65) else "practical limit")
            )
        defaulted.append((kind, full))
        owners.append(m)
    for index, findings in runtime.cross_object(defaulted).items():
        for finding in findings:
            layer = "Quartermaster tenancy" if finding.rule == runtime.TENANCY_RULE else "runtime"
            issues.append(_finding_issue(owners[index], finding, layer))
    return issues


# --- one object ------------------------------------------------------------------------------------


def _metadata(m: Manifest, kind: str, namespaced: bool) -> list[Issue]:
    meta = m.obj.get("metadata")
    if not isinstance(meta, dict) or not meta.get("name"):
        return [_issue(m, ("metadata",), "metadata.name is required", 1, "Name the object.")]
    out = []
    name = meta["name"]
    if not is_dns_subdomain(str(name)):
        out.append(
            _issue(
                m,
                ("metadata", "name"),
                "name must be a DNS-1123 subdomain (lower-case alphanumerics, '-' and '.', at most 253 characters)",
                1,
                "Rename the object.",
                got=name,
                layer="API server",
            )
        )
    namespace = meta.get("namespace")
    if namespaced and namespace is not None and not is_dns_label(str(namespace)):
        out.append(
            _issue(
                m,
                ("metadata", "namespace"),
                "namespace must be a DNS-1123 label",
                1,
                "Use an existing namespace name.",
                got=namespace,
                layer="API server",
            )
        )
    return out


def _rule_for_path(kind: str, path: YamlPath) -> int | None:
    table = SCHEMA_RULES.get(kind, {})
    parts = [p for p in path]
    while True:
        key = "".join("[]" if isinstance(p, int) else (f".{p}" if i else str(p)) for i, p in enumerate(parts))
        if key in table:
            return table[key]
        if not parts:
            return None
        parts.pop()


def _schema_issue(m: Manifest, kind: str, version: str, e: SchemaError) -> Issue:
    if e.cel is not None:
        rule = CEL_RULES.get(e.cel.message) or _rule_for_path(kind, e.path)
        if kind == "Cohort" and rule == 15:
            rule = 49
        if e.path[-1:] == ("tolerations",) or "tolerations" in e.path:
            rule = 57
        elif "nodeTaints" in e.path:
            rule = 56
        elif kind in ("Topology", "MultiKueueConfig") and e.cel.message == "must be unique":
            rule = 70 if kind == "Topology" else 80
        return _issue(
            m,
            e.path,
            e.message,
            rule,
            "Change the object so that the CRD's rule holds.",
            layer=f"CEL `{e.cel.rule}`",
            rule_name=None if rule else "kueue-cel",
        )
    if e.keyword == "additionalProperties":
        unknown = [k for k in (e.value or {}) if k not in e.known_fields]
        renamed = [RENAMED.get(kind, {}).get(k) for k in unknown]
        hint = "; ".join(
            f"`{k}` is {r[0]} in {'v1beta2' if version == 'v1beta2' else 'v1beta1'} (Kueue rule {r[1]})"
            for k, r in zip(unknown, renamed, strict=True)
            if r
        )
        rule = next((r[1] for r in renamed if r), None)
        return _issue(
            m,
            e.path,
            f"unknown field{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(f'`{k}`' for k in unknown)} (the API server drops or rejects it)",
            rule,
            (hint + ".") if hint else "Remove it or fix its spelling.",
            layer="schema",
            rule_name=None if rule else "kueue-schema",
        )
    rule = (
        11
        if e.keyword == "x-kubernetes-list-type" and kind in ("ClusterQueue", "Cohort")
        else _rule_for_path(kind, e.path)
    )
    return _issue(
        m,
        e.path,
        e.message,
        rule,
        "See the field's definition in the Kueue CRD.",
        layer=f"schema `{e.keyword}`",
        rule_name=None if rule else "kueue-schema",
    )


def _finding_issue(m: Manifest, f: webhooks.Finding, layer: str) -> Issue:
    return _issue(m, f.path, f.message, f.rule, f.fix, got=f.got, layer=layer, severity=f.severity)


_MISSING = object()


def _issue(
    m: Manifest,
    path: YamlPath,
    what: str,
    rule: int | None,
    fix: str,
    *,
    got: Any = _MISSING,
    layer: str = "",
    rule_name: str | None = None,
    severity: Severity = "error",
) -> Issue:
    obj = m.obj if isinstance(m.obj, dict) else {}
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        meta = {}
    name = "/".join(str(p) for p in (meta.get("namespace"), meta.get("name")) if p) or "<unnamed>"
    where = f"{obj.get('kind', '<no kind>')}/{name}"
    dotted = "".join(f"[{p}]" if isinstance(p, int) else (f".{p}" if i else str(p)) for i, p in enumerate(path))
    tag = ", ".join(t for t in (f"Kueue rule {rule}" if rule else "", layer) if t)
    kwargs: dict[str, Any] = {} if got is _MISSING or got is None else {"got": got}
    return Issue(
        rule_name or f"kueue-{rule}",
        f"{what} [{tag}]" if tag else what,
        fix,
        severity,
        location=Location(m.file, m.locate(path), f"{where} {dotted}".rstrip()),
        **kwargs,
    )


# --- loading manifests with line numbers -----------------------------------------------------------


def manifest_files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    return sorted(
        p
        for p in root.rglob("*")
        if p.is_file()
        and p.suffix in MANIFEST_SUFFIXES
        and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )


def load_manifests(root: Path) -> tuple[list[Manifest], list[Issue]]:
    """Every object in the YAML/JSON files under `root` (List kinds expanded), with line maps."""
    manifests: list[Manifest] = []
    issues: list[Issue] = []
    files = manifest_files(root)
    if not files:
        issues.append(
            Issue(
                "kueue-files",
                f"no manifests (*.yaml, *.yml, *.json) under {root}",
                "Point at a manifest file or a directory of them.",
            )
        )
    for path in files:
        shown = str(path)
        try:
            text = path.read_text(encoding="utf-8-sig")
            deep = nesting_issue(text, shown)
            if deep is not None:
                issues.append(deep)
                continue
            docs = list(yaml.compose_all(text, Loader=yaml.CSafeLoader))
        except (yaml.YAMLError, UnicodeDecodeError) as exc:
            mark = getattr(exc, "problem_mark", None)
            issues.append(
                Issue(
                    "yaml",
                    f"malformed YAML: {getattr(exc, 'problem', None) or exc}",
                    "Fix the syntax at that line.",
                    location=Location(shown, mark.line + 1 if mark else None, ""),
                )
            )
            continue
        budget = value_budget(text)
        for node in docs:
            if node is None:
                continue
            lines: dict[YamlPath, int] = {}
            try:
                data = plain_data(node, (), lines, shown, issues, budget)
            except YamlTooLarge as exc:
                issues.append(exc.issue(shown, node.start_mark.line + 1))
                break
            if isinstance(data, dict) and str(data.get("kind", "")).endswith("List") and "items" in data:
                for i, item in enumerate(data.get("items") or []):
                    manifests.append(Manifest(item, shown, lines, ("items", i)))
            elif data is not None:
                manifests.append(Manifest(data, shown, lines))
    return manifests, issues
