"""`qm import kueue`: existing Kueue manifests -> an inventory skeleton (one cluster), so a team can adopt
Quartermaster on a running cluster.

What maps: ResourceFlavor -> pool (name; provider node-pool label -> cluster kind; other node labels ->
pool labels; tolerations and node taints -> pool taints), ClusterQueue -> team (name, cohort, fair-sharing
weight, namespaces from its LocalQueues and name selector, quotas for `nvidia.com/gpu` / `google.com/tpu`,
`cpu` and `memory`), Cohort -> cohort (parent, weight, shared quota), WorkloadPriorityClass -> priority
class. The manifests do not say which machine backs a flavor or how many nodes it has: the skeleton names a
placeholder catalog machine and sizes the pool to fit the quotas, each marked `# TODO`. Whatever the
inventory cannot express is listed in `ImportResult.dropped`. Round trip: `equivalence(original, rendered)`.
"""

from __future__ import annotations

import copy
import io
import math
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import yaml as pyyaml
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.scalarstring import DoubleQuotedScalarString

from quartermaster.model import catalog_machines
from quartermaster.modules.kueue.builders import COST_CENTER_LABEL, NAMESPACE_NAME_LABEL
from quartermaster.modules.kueue.k8s import is_dns_label, parse_quantity
from quartermaster.providers import Provider, providers

ACCELERATOR_RESOURCES = ("nvidia.com/gpu", "google.com/tpu")
MODELLED_RESOURCES = (*ACCELERATOR_RESOURCES, "cpu", "memory")
# The placeholder machine when the provider has none for the accelerator kind.
PLACEHOLDER_MACHINE = "dgx-h100"
GIB = Decimal(2) ** 30


@dataclass
class ImportResult:
    """The skeleton as YAML text, and what could not be carried over."""

    text: str
    dropped: list[str] = field(default_factory=list)


def import_kueue(objects: list[dict[str, Any]], cluster: str = "imported") -> ImportResult:
    """Build the skeleton inventory for the Kueue objects in `objects` (other kinds are ignored)."""
    state = _Import(objects, cluster)
    return ImportResult(state.emit(), state.dropped)


def _name(obj: dict[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name", ""))


class _Import:
    def __init__(self, objects: list[dict[str, Any]], cluster: str) -> None:
        self.cluster = cluster
        self.dropped: list[str] = []
        kueue = [
            o for o in objects if isinstance(o, dict) and str(o.get("apiVersion", "")).startswith("kueue.x-k8s.io/")
        ]
        self.by_kind: dict[str, list[dict[str, Any]]] = {}
        for obj in kueue:
            self.by_kind.setdefault(str(obj.get("kind")), []).append(obj)
        for kind in sorted(
            set(self.by_kind) - {"ResourceFlavor", "ClusterQueue", "Cohort", "LocalQueue", "WorkloadPriorityClass"}
        ):
            names = ", ".join(sorted(_name(o) for o in self.by_kind[kind]))
            self.dropped.append(
                f"{kind} {names}: derived by Quartermaster from cluster settings and pools, not imported"
            )
        self.flavors = {_name(rf): rf for rf in self.by_kind.get("ResourceFlavor", [])}
        self.provider = self._provider()
        self.kind = self.provider.kind

    # --- flavors -> pools --------------------------------------------------------------------------

    def _provider(self) -> Provider:
        """The provider whose node-pool label the flavors select; several or none: a provider whose pools are
        selected by their own labels (on-prem)."""
        of_label = {p.node_pool_label: p for p in providers() if p.node_pool_label}
        found = {
            of_label[k].kind: of_label[k]
            for rf in self.flavors.values()
            for k in ((rf.get("spec") or {}).get("nodeLabels") or {})
            if k in of_label
        }
        if len(found) == 1:
            return found.popitem()[1]
        fallback = next(p for p in providers() if p.node_pool_label is None)
        if len(found) > 1:
            self.dropped.append(
                f"flavors name node pools of several providers ({', '.join(sorted(found))}); "
                f"imported as one {fallback.title} cluster with their labels"
            )
        return fallback

    def _used_flavors(self) -> list[str]:
        """Flavor names in order of first use by ClusterQueues, then unused flavors."""
        order: list[str] = []
        for cq in self.by_kind.get("ClusterQueue", []) + self.by_kind.get("Cohort", []):
            for group in (cq.get("spec") or {}).get("resourceGroups") or []:
                for flavor in group.get("flavors") or []:
                    if flavor.get("name") not in order:
                        order.append(flavor.get("name"))
        return order + [n for n in self.flavors if n not in order]

    def _pool(self, name: str, needed: dict[str, Decimal]) -> CommentedMap | None:
        if not is_dns_label(name) or len(name) > 40:
            self.dropped.append(f"flavor {name}: not a pool name (DNS label of at most 40 characters); skipped")
            return None
        spec = (self.flavors.get(name) or {}).get("spec") or {}
        labels = dict(spec.get("nodeLabels") or {})
        pool = CommentedMap()
        pool["name"] = name
        provider_label = self.provider.node_pool_label
        if provider_label and labels.get(provider_label) == name:
            del labels[provider_label]
        tpu = "google.com/tpu" in needed
        machine = self._machine(labels, tpu)
        placeholder = self.provider.placeholder_machines.get("tpu" if tpu else "gpu", PLACEHOLDER_MACHINE)
        pool["machine"] = machine or placeholder
        if machine is None:
            pool.yaml_add_eol_comment("TODO: the manifests do not say the machine; this is a placeholder", "machine")
        pool["zones"] = CommentedSeq()
        catalog = {m.name: m for m in catalog_machines()}
        per_node = catalog[pool["machine"]].accelerators_per_node if pool["machine"] in catalog else 8
        accelerators = max((v for r, v in needed.items() if r in ACCELERATOR_RESOURCES), default=Decimal(0))
        pool["nodes"] = math.ceil(accelerators / per_node)
        pool.yaml_add_eol_comment("TODO: size unknown; set to fit the imported quotas", "nodes")
        if labels:
            pool["labels"] = dict(sorted(labels.items()))
        elif self.provider.node_pool_label is None:
            pool.yaml_add_eol_comment(
                "TODO: the flavor has no nodeLabels (it matches every node); add `labels` that select the pool's nodes",
                "name",
            )
        taints = [
            {"key": t["key"], **({"value": t["value"]} if t.get("value") else {}), "effect": t["effect"]}
            for t in spec.get("nodeTaints") or []
        ]
        if spec.get("nodeTaints"):
            self.dropped.append(
                f"flavor {name}: nodeTaints become pool taints, which Quartermaster renders as flavor tolerations"
            )
        for t in spec.get("tolerations") or []:
            if t.get("key") in ACCELERATOR_RESOURCES or not t.get("key"):
                continue
            taint = {
                "key": t["key"],
                **({"value": t["value"]} if t.get("value") else {}),
                "effect": t.get("effect") or "NoSchedule",
            }
            if taint not in taints:
                taints.append(taint)
        if taints:
            pool["taints"] = taints
        if spec.get("topologyName"):
            self.dropped.append(
                f"flavor {name}: topologyName `{spec['topologyName']}` becomes "
                "`topology_aware: true`; the Topology's levels come from the cluster kind"
            )
        return pool

    def _machine(self, labels: dict[str, str], tpu: bool) -> str | None:
        """A catalog machine the provider's accelerator labels name, if exactly one matches."""
        return self.provider.import_machine(labels, tpu, catalog_machines())

    # --- quotas ------------------------------------------------------------------------------------

    def _quotas(
        self, owner: str, spec: dict[str, Any], limits_allowed: bool
    ) -> tuple[list[CommentedMap], dict[str, dict[str, Decimal]]]:
        """Quota entries per flavor, and the accelerator/cpu/memory amounts per flavor (to size pools)."""
        out: list[CommentedMap] = []
        amounts: dict[str, dict[str, Decimal]] = {}
        for group in spec.get("resourceGroups") or []:
            for flavor in group.get("flavors") or []:
                fname = flavor.get("name")
                quota = CommentedMap()
                quota["flavor"] = fname
                quota["nominal"] = 0
                for res in flavor.get("resources") or []:
                    rname, nominal = res.get("name"), parse_quantity(res.get("nominalQuota")) or Decimal(0)
                    if rname not in MODELLED_RESOURCES:
                        self.dropped.append(
                            f"{owner}: resource `{rname}` in flavor {fname} is not modelled "
                            "(only nvidia.com/gpu, google.com/tpu, cpu, memory)"
                        )
                        continue
                    amounts.setdefault(fname, {})[rname] = nominal
                    if rname in ACCELERATOR_RESOURCES:
                        quota["nominal"] = int(nominal)
                        for src, dst in (("borrowingLimit", "borrowing_limit"), ("lendingLimit", "lending_limit")):
                            if src in res and limits_allowed:
                                quota[dst] = int(parse_quantity(res[src]) or 0)
                    elif rname == "cpu":
                        quota["cpu"] = math.ceil(nominal)
                        if quota["cpu"] != nominal:
                            self.dropped.append(
                                f"{owner}: cpu {res.get('nominalQuota')} in flavor {fname} rounded "
                                f"up to {quota['cpu']} (the inventory counts whole cores)"
                            )
                    else:
                        quota["memory_gib"] = math.ceil(nominal / GIB)
                        if quota["memory_gib"] * GIB != nominal:
                            self.dropped.append(
                                f"{owner}: memory {res.get('nominalQuota')} in flavor {fname} "
                                f"rounded up to {quota['memory_gib']}Gi (the inventory counts GiB)"
                            )
                    if rname in ("cpu", "memory") and ("borrowingLimit" in res or "lendingLimit" in res):
                        self.dropped.append(f"{owner}: borrowing/lending limits on `{rname}` are not modelled")
                out.append(quota)
        return out, amounts

    # --- the skeleton ------------------------------------------------------------------------------

    def emit(self) -> str:
        teams, needed = self._teams()
        cohorts = self._cohorts(needed)
        pools = [p for name in self._used_flavors() if (p := self._pool(name, needed.get(name, {}))) is not None]
        doc = CommentedMap()
        provider = self.provider.cloud
        doc["sites"] = [{"name": f"{provider}-imported", "provider": provider, "region": "todo"}]
        doc["sites"][0] = CommentedMap(doc["sites"][0])
        doc["sites"][0].yaml_add_eol_comment("TODO: the manifests do not say the region", "region")
        cluster = CommentedMap()
        cluster["name"] = self.cluster
        cluster["kind"] = self.kind
        cluster["site"] = f"{provider}-imported"
        if self.provider.needs_project:
            cluster["project"] = "todo"
            cluster.yaml_add_eol_comment("TODO: project, account or subscription id", "project")
        cluster.update(copy.deepcopy(self.provider.import_settings))
        if any((rf.get("spec") or {}).get("topologyName") for rf in self.flavors.values()):
            cluster["topology_aware"] = True
        cluster["pools"] = pools
        doc["clusters"] = [cluster]
        if cohorts:
            doc["cohorts"] = cohorts
        classes = [
            {
                "name": _name(w),
                "value": w.get("value", 0),
                **({"description": w["description"]} if w.get("description") else {}),
            }
            for w in self.by_kind.get("WorkloadPriorityClass", [])
        ]
        if classes:
            doc["priority_classes"] = classes
        if teams:
            doc["teams"] = teams
        stream = io.StringIO()
        stream.write(
            f"# Imported by `qm import kueue` into cluster `{self.cluster}`. Fill in every TODO, then run "
            "`qm validate`.\n"
        )
        yaml = YAML()
        yaml.indent(mapping=2, sequence=4, offset=2)
        yaml.width = 120
        yaml.dump(_quote_ambiguous(doc), stream)
        return stream.getvalue()

    def _teams(self) -> tuple[list[CommentedMap], dict[str, dict[str, Decimal]]]:
        queues_by_namespace: dict[str, list[str]] = {}
        for lq in self.by_kind.get("LocalQueue", []):
            namespace = (lq.get("metadata") or {}).get("namespace", "default")
            target = (lq.get("spec") or {}).get("clusterQueue")
            if target and target not in queues_by_namespace.setdefault(namespace, []):
                queues_by_namespace[namespace].append(target)
            if _name(lq) not in ("default", target):
                self.dropped.append(
                    f"LocalQueue {namespace}/{_name(lq)}: renamed; Quartermaster names a team's "
                    f"queues `{target}` and `default` in each of its namespaces"
                )
        taken: set[str] = set()
        teams: list[CommentedMap] = []
        needed: dict[str, dict[str, Decimal]] = {}
        for cq in self.by_kind.get("ClusterQueue", []):
            name, spec = _name(cq), cq.get("spec") or {}
            if not is_dns_label(name):
                self.dropped.append(f"ClusterQueue {name}: not a team name (DNS label of at most 63); skipped")
                continue
            labels = (cq.get("metadata") or {}).get("labels") or {}
            team = CommentedMap()
            team["name"] = name
            team["cost_center"] = labels.get(COST_CENTER_LABEL, "TODO")
            if COST_CENTER_LABEL not in labels:
                team.yaml_add_eol_comment("TODO: cost centre", "cost_center")
            team["owners"] = ["@TODO"]
            team.yaml_add_eol_comment("TODO: who approves this team's quota changes", "owners")
            namespaces = [ns for ns, targets in queues_by_namespace.items() if targets[0] == name]
            namespaces += [
                v
                for e in (spec.get("namespaceSelector") or {}).get("matchExpressions") or []
                if e.get("key") == NAMESPACE_NAME_LABEL and e.get("operator") == "In"
                for v in e.get("values") or []
                if v not in namespaces
            ]
            namespaces = [ns for ns in namespaces if ns not in taken]
            for ns, targets in queues_by_namespace.items():
                if name in targets[1:]:
                    self.dropped.append(
                        f"LocalQueue in namespace {ns} -> {name}: the namespace already belongs "
                        f"to {targets[0]} (a namespace belongs to one team)"
                    )
            taken.update(namespaces)
            team["namespaces"] = namespaces or [name]
            if spec.get("namespaceSelector") == {}:
                self.dropped.append(
                    f"ClusterQueue {name}: namespaceSelector {{}} admitted every namespace; the "
                    "rendered ClusterQueue admits only the team's namespaces"
                )
            if not namespaces:
                team.yaml_add_eol_comment("TODO: no LocalQueue points at this ClusterQueue", "namespaces")
            cohort = spec.get("cohortName") or spec.get("cohort")
            if cohort:
                team["cohort"] = cohort
            weight = parse_quantity((spec.get("fairSharing") or {}).get("weight"))
            if weight is not None and weight != 1:
                team["fair_sharing_weight"] = float(weight)
            quotas, amounts = self._quotas(f"ClusterQueue {name}", spec, limits_allowed=bool(cohort))
            for flavor, resources in amounts.items():
                for resource, amount in resources.items():
                    needed.setdefault(flavor, {})[resource] = needed.get(flavor, {}).get(resource, 0) + amount
            if quotas:
                team["quotas"] = quotas
            else:
                self.dropped.append(f"ClusterQueue {name}: no quota; a team without quota gets no ClusterQueue")
            teams.append(team)
        return teams, needed

    def _cohorts(self, needed: dict[str, dict[str, Decimal]]) -> list[CommentedMap]:
        objects = {_name(c): c for c in self.by_kind.get("Cohort", [])}
        referenced = {
            (cq.get("spec") or {}).get("cohortName") or (cq.get("spec") or {}).get("cohort")
            for cq in self.by_kind.get("ClusterQueue", [])
        }
        referenced |= {(c.get("spec") or {}).get("parentName") for c in objects.values()}
        out = []
        for name in [*objects, *sorted(n for n in referenced if n and n not in objects)]:
            spec = (objects.get(name) or {}).get("spec") or {}
            cohort = CommentedMap()
            cohort["name"] = name
            if spec.get("parentName"):
                cohort["parent"] = spec["parentName"]
            weight = parse_quantity((spec.get("fairSharing") or {}).get("weight"))
            if weight is not None and weight != 1:
                cohort["fair_sharing_weight"] = float(weight)
            quotas, amounts = self._quotas(f"Cohort {name}", spec, limits_allowed=bool(spec.get("parentName")))
            for flavor, resources in amounts.items():
                for resource, amount in resources.items():
                    needed.setdefault(flavor, {})[resource] = needed.get(flavor, {}).get(resource, 0) + amount
            if quotas:
                cohort["quotas"] = quotas
            out.append(cohort)
        return out


def _quote_ambiguous(node: Any) -> Any:
    """Quote strings a YAML 1.1 reader (PyYAML, the loader) would read as something else (`on`, `1.0`, `null`)."""
    if isinstance(node, dict):
        for key in list(node):
            node[key] = _quote_ambiguous(node[key])
    elif isinstance(node, list):
        for i, item in enumerate(node):
            node[i] = _quote_ambiguous(item)
    elif isinstance(node, str) and node and not _reads_back(node):
        return DoubleQuotedScalarString(node)
    return node


def _reads_back(text: str) -> bool:
    """True when a YAML reader reads `text`, written plain, as the same string (`@x` does not even parse)."""
    try:
        return bool(pyyaml.safe_load(text) == text)
    except pyyaml.YAMLError:
        return False


# --- round trip ------------------------------------------------------------------------------------


def projection(objects: list[dict[str, Any]]) -> dict[str, Any]:
    """What the inventory can express of a set of Kueue objects, normalised for comparison."""
    out: dict[str, Any] = {}
    for obj in objects:
        kind, name, spec = obj.get("kind"), _name(obj), obj.get("spec") or {}
        if kind == "ResourceFlavor":
            out[f"ResourceFlavor/{name}"] = {"nodeLabels": spec.get("nodeLabels") or {}}
        elif kind in ("ClusterQueue", "Cohort"):
            view: dict[str, Any] = {"quotas": _quota_view(spec)}
            if kind == "ClusterQueue" and not view["quotas"]:
                continue  # a team without quota gets no ClusterQueue
            if kind == "ClusterQueue":
                view["cohort"] = spec.get("cohortName") or spec.get("cohort")
            else:
                view["parent"] = spec.get("parentName")
            out[f"{kind}/{name}"] = view
        elif kind == "LocalQueue":
            namespace = (obj.get("metadata") or {}).get("namespace", "default")
            out.setdefault(f"namespace/{namespace}", set()).add(spec.get("clusterQueue"))
        elif kind == "WorkloadPriorityClass":
            out[f"WorkloadPriorityClass/{name}"] = {"value": obj.get("value"), "description": obj.get("description")}
    return out


def _quota_view(spec: dict[str, Any]) -> list[tuple[Any, ...]]:
    """(flavor, resource, nominal, borrowing, lending) for modelled resources, flavors in preference order.

    In the model's units: cpu in whole cores and memory in whole GiB (rounded up), without limits.
    """
    rows: list[tuple[Any, ...]] = []
    for group in spec.get("resourceGroups") or []:
        for flavor in group.get("flavors") or []:
            for res in flavor.get("resources") or []:
                name = res.get("name")
                nominal = parse_quantity(res.get("nominalQuota")) or Decimal(0)
                if name in ACCELERATOR_RESOURCES:
                    limits = [parse_quantity(res[k]) if k in res else None for k in ("borrowingLimit", "lendingLimit")]
                    rows.append((flavor.get("name"), name, nominal, *limits))
                elif name == "cpu":
                    rows.append((flavor.get("name"), name, math.ceil(nominal), None, None))
                elif name == "memory":
                    rows.append((flavor.get("name"), name, math.ceil(nominal / GIB), None, None))
    return rows


def equivalence(original: list[dict[str, Any]], rendered: list[dict[str, Any]]) -> list[str]:
    """Differences between the original objects and the rendered ones, on what the inventory can express.

    Every original object must come back with the same content. The render may add objects (Namespaces, RBAC,
    `default` LocalQueues, implicit Cohorts) and zero quotas for resources the original did not cover.
    """
    want, got = projection(original), projection(rendered)
    out = []
    for key, value in want.items():
        if key not in got:
            out.append(f"{key}: missing from the render")
        elif key.startswith("namespace/"):
            if not value <= got[key]:
                out.append(f"{key}: LocalQueues point at {sorted(value)}, rendered {sorted(got[key])}")
        elif "quotas" in value:
            rendered_rows = [r for r in got[key]["quotas"] if (r[0], r[1]) in {(w[0], w[1]) for w in value["quotas"]}]
            extra = [r for r in got[key]["quotas"] if r not in rendered_rows and r[2] != 0]
            if rendered_rows != value["quotas"] or extra:
                out.append(f"{key}: quotas {value['quotas']} rendered as {got[key]['quotas']}")
            rest = {k: v for k, v in value.items() if k != "quotas"}
            if rest != {k: v for k, v in got[key].items() if k != "quotas"}:
                out.append(f"{key}: {rest} rendered as {got[key]}")
        elif value != got[key]:
            out.append(f"{key}: {value} rendered as {got[key]}")
    return out
