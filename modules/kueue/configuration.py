"""Kueue's manager Configuration for a cluster (`qm render --kueue-config`), and its check against the rules Kueue
v0.19.2 applies when the manager starts.

What the objects of a cluster need from the manager (each entry says why; the defaults are those of
kubernetes-sigs/kueue v0.19.2, tag commit 8eab687, `apis/config/v1beta2/defaults.go`,
`config/components/manager/controller_manager_config.yaml`):
- `metrics.enableClusterQueueResources: true`: without it Kueue exports no quota, reservation or usage gauges
  (`cmd/kueue/main.go` passes it to the cache as `WithResourceMetrics`; off by default), and the alert rules,
  the dashboard and `qm usage pull` see nothing;
- `fairSharing.preemptionStrategies` whenever a team or cohort sets a weight: Configuration v1beta2 turns fair
  sharing on by the stanza's presence, and without it the weights do nothing;
- `integrations.frameworks`: the workload kinds teams may create (their Role, `builders.WORKLOAD_RESOURCES`),
  RayJob among them (`qm plan --rayjob`); a kind left out is not queued at all;
- `waitForPodsReady` on every cluster: Configuration v1beta2 turns it on with a 30-minute timeout when it is
  omitted (`SetDefaults_Configuration`, `apis/config/v1beta2/defaults.go`; only the deprecated alpha gate
  `DisableWaitForPodsReady` turns it off), so the values each manager runs with are written out, the MultiKueue
  manager's included; where queues admit gangs (RayJobs everywhere, multi-host TPU slices, GPUDirect pools) an
  admitted gang whose pods do not all start within the timeout is evicted and requeued instead of holding quota;
- `featureGates.TopologyAwareScheduling: true` on topology-aware clusters (beta, on by default since v0.14;
  written so that a gate flipped off elsewhere is seen); ProvisioningRequest needs no gate (`ProvisioningACC`
  went GA in v0.14 and was removed in v0.15, so naming it would stop the manager);
- `resources.quotaCheckStrategy: IgnoreUndeclared` only where a ClusterQueue leaves cpu or memory undeclared.

`configuration_problems` re-implements what the manager checks before it starts: strict decoding (unknown fields
stop it, `pkg/config/config.go` `serializer.EnableStrict`), `config.LoadAndValidateFeatureGates` (unknown or
locked gates) and `config.Validate` (`pkg/config/validation.go`), for the fields this module writes and the
checks they meet.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from quartermaster.capacity import nodes_per_slice
from quartermaster.model import Cluster, Inventory
from quartermaster.modules.kueue import api
from quartermaster.modules.kueue.builders import WORKLOAD_RESOURCES
from quartermaster.modules.kueue.k8s import label_selector_problems, selector_matches

CONFIG_API = "config.kueue.x-k8s.io/v1beta2"
KUEUE_NAMESPACE = "kueue-system"  # DefaultNamespace
POD_RESOURCES = ("cpu", "memory")

# Kueue's integration (framework) name for each workload kind a team may create (`pkg/controller/jobs/*`,
# `FrameworkName`); CronJobs create batch Jobs, so `batch/job` queues them.
FRAMEWORK_OF_RESOURCE = {
    ("", "pods"): "pod",
    ("apps", "deployments"): "deployment",
    ("apps", "statefulsets"): "statefulset",
    ("batch", "cronjobs"): "batch/job",
    ("batch", "jobs"): "batch/job",
    ("jobset.x-k8s.io", "jobsets"): "jobset.x-k8s.io/jobset",
    ("kubeflow.org", "jaxjobs"): "kubeflow.org/jaxjob",
    ("kubeflow.org", "mpijobs"): "kubeflow.org/mpijob",
    ("kubeflow.org", "paddlejobs"): "kubeflow.org/paddlejob",
    ("kubeflow.org", "pytorchjobs"): "kubeflow.org/pytorchjob",
    ("kubeflow.org", "tfjobs"): "kubeflow.org/tfjob",
    ("kubeflow.org", "xgboostjobs"): "kubeflow.org/xgboostjob",
    ("leaderworkerset.x-k8s.io", "leaderworkersets"): "leaderworkerset.x-k8s.io/leaderworkerset",
    ("ray.io", "rayclusters"): "ray.io/raycluster",
    ("ray.io", "rayjobs"): "ray.io/rayjob",
    ("trainer.kubeflow.org", "trainjobs"): "trainer.kubeflow.org/trainjob",
}
# Every integration Kueue v0.19.2 registers (`jobframework.GetIntegrationsList()`): the names `config.Validate`
# accepts in `integrations.frameworks`.
KNOWN_FRAMEWORKS = frozenset(
    {
        *FRAMEWORK_OF_RESOURCE.values(),
        "ray.io/rayservice",
        "sparkoperator.k8s.io/sparkapplication",
        "workload.codeflare.dev/appwrapper",
    }
)
# `validation.go` validStrategySets, the only accepted lists.
PREEMPTION_STRATEGY_SETS = (
    ["LessThanOrEqualToFinalShare"],
    ["LessThanInitialShare"],
    ["LessThanOrEqualToFinalShare", "LessThanInitialShare"],
)
WAIT_FOR_PODS_READY = {
    "timeout": "30m",  # DefaultWaitForPodsReadyTimeout
    "recoveryTimeout": "30m",  # defaults to timeout
    "blockAdmission": False,
    "requeuingStrategy": {"timestamp": "Eviction", "backoffBaseSeconds": 60, "backoffMaxSeconds": 3600},
}

# The JSON field names of the Configuration's structs that this module writes (`apis/config/v1beta2/
# configuration_types.go`, v0.19.2); strict decoding refuses any other key. None: a map with free keys.
FIELDS: dict[str, Any] = {
    "apiVersion": str,
    "kind": str,
    "namespace": str,
    "manageJobsWithoutQueueName": bool,
    "managedJobsNamespaceSelector": dict,
    "webhook": {"port": int, "host": str, "certDir": str},
    "leaderElection": {
        "leaderElect": bool,
        "leaseDuration": str,
        "renewDeadline": str,
        "retryPeriod": str,
        "resourceLock": str,
        "resourceName": str,
        "resourceNamespace": str,
    },
    "metrics": {
        "bindAddress": str,
        "enableClusterQueueResources": bool,
        "customLabels": list,
        "localQueueMetrics": dict,
    },
    "health": {"healthProbeBindAddress": str, "readinessEndpointName": str, "livenessEndpointName": str},
    "pprofBindAddress": str,
    "controller": {"groupKindConcurrency": None, "cacheSyncTimeout": str},
    "tls": dict,
    "internalCertManagement": {"enable": bool, "webhookServiceName": str, "webhookSecretName": str},
    "waitForPodsReady": {
        "timeout": str,
        "blockAdmission": bool,
        "recoveryTimeout": str,
        "requeuingStrategy": {
            "timestamp": str,
            "backoffLimitCount": int,
            "backoffBaseSeconds": int,
            "backoffMaxSeconds": int,
        },
    },
    "clientConnection": {"qps": int, "burst": int},
    "integrations": {"frameworks": list, "externalFrameworks": list, "labelKeysToCopy": list},
    "multiKueue": dict,
    "fairSharing": {"preemptionStrategies": list},
    "admissionFairSharing": dict,
    "resources": {
        "quotaCheckStrategy": str,
        "excludeResourcePrefixes": list,
        "transformations": list,
        "deviceClassMappings": list,
    },
    "featureGates": None,
    "objectRetentionPolicies": dict,
    "visibilityServer": dict,
}


@cache
def feature_gates() -> dict[str, tuple[bool, bool]]:
    """Kueue v0.19.2's feature gates: name -> (default, locked to default). `feature_gates.csv` is extracted from
    `pkg/features/kube_features.go` at tag v0.19.2 (the last versioned spec of each gate)."""
    with (Path(__file__).parent / "feature_gates.csv").open(newline="") as f:
        return {r["gate"]: (r["default"] == "true", r["locked"] == "true") for r in csv.DictReader(f)}


def uses_gangs(inventory: Inventory, cluster: Cluster) -> bool:
    """Whether the cluster's queues admit workloads of several pods that must all start: every team queue may run
    the sweep's RayJob, and multi-host TPU slices and GPUDirect pools run multi-node jobs. A MultiKueue manager
    runs no pods (its workers do)."""
    if cluster.multikueue_role == "manager":
        return False
    multi_node = any(p.gpudirect or nodes_per_slice(p, inventory.machine_by_name[p.machine]) > 1 for p in cluster.pools)
    flavors = {p.name for p in cluster.pools}
    has_queues = any(q.flavor in flavors for t in inventory.teams for q in t.quotas)
    return multi_node or has_queues


def manager_configuration(
    inventory: Inventory, cluster: str, queues: Iterable[api.ClusterQueue]
) -> tuple[dict[str, Any], list[str]]:
    """The complete Configuration for `cluster`'s Kueue manager and, for each setting that the cluster's
    ClusterQueues (`queues`, typed) need, why (one line each)."""
    c = inventory.cluster_by_name[cluster]
    why = [
        "metrics.enableClusterQueueResources: Kueue exports quota, reservation and usage per ClusterQueue only "
        "with it (the alert rules, the dashboard and `qm usage pull` read them)"
    ]
    frameworks = sorted(
        {FRAMEWORK_OF_RESOURCE[(g, r)] for g, resources in WORKLOAD_RESOURCES.items() for r in resources}
    )
    why.append(
        "integrations.frameworks: the workload kinds teams may create in their namespaces (RayJob: `qm plan "
        "--rayjob`); Kueue queues no other kind"
    )
    config: dict[str, Any] = {
        "apiVersion": CONFIG_API,
        "kind": "Configuration",
        "namespace": KUEUE_NAMESPACE,
        "health": {"healthProbeBindAddress": ":8081"},
        "metrics": {"bindAddress": ":8443", "enableClusterQueueResources": True},
        "webhook": {"port": 9443},
        "leaderElection": {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"},
        "clientConnection": {"qps": 300, "burst": 500},
        "manageJobsWithoutQueueName": False,
        "managedJobsNamespaceSelector": {
            "matchExpressions": [
                {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system", KUEUE_NAMESPACE]}
            ]
        },
        "integrations": {"frameworks": frameworks},
    }
    if inventory.fair_sharing:
        config["fairSharing"] = {"preemptionStrategies": list(PREEMPTION_STRATEGY_SETS[2])}
        why.append("fairSharing: teams or cohorts set `fair_sharing_weight`; without the stanza the weights do nothing")
    config["waitForPodsReady"] = dict(WAIT_FOR_PODS_READY)
    why.append(
        "waitForPodsReady: the queues admit gangs (RayJobs, multi-node jobs); one whose pods do not all start in "
        "30m is evicted and requeued instead of holding quota"
        if uses_gangs(inventory, c)
        else "waitForPodsReady: Configuration v1beta2 turns it on with these values even when omitted; written out "
        "so that what the manager runs with is seen"
    )
    if c.topology_aware:
        config["featureGates"] = {"TopologyAwareScheduling": True}
        why.append("featureGates.TopologyAwareScheduling: the cluster's flavors are topology-aware")
    undeclared = sorted(
        q.metadata.name
        for q in queues
        if not set(POD_RESOURCES) <= {r for g in (q.spec and q.spec.resource_groups) or [] for r in g.covered_resources}
    )
    if undeclared:
        config["resources"] = {"quotaCheckStrategy": "IgnoreUndeclared"}
        why.append(
            "resources.quotaCheckStrategy: IgnoreUndeclared: ClusterQueues "
            f"{', '.join(undeclared)} leave cpu or memory undeclared; without it Kueue admits none of their pods "
            "that request them"
        )
    return config, why


def configuration_problems(config: dict[str, Any]) -> list[str]:
    """Why Kueue v0.19.2's manager would refuse to start with `config`, as `<field.path>: <what>`; empty when it
    starts. Strict decoding, feature gates, then `config.Validate` on the defaulted Configuration."""
    out = _unknown_fields(config, FIELDS, "")
    if config.get("apiVersion") != CONFIG_API or config.get("kind") != "Configuration":
        out.append(f"apiVersion/kind: must be {CONFIG_API} Configuration")
    gates = feature_gates()
    out += _feature_gate_problems(config, gates)
    enabled = {g: (config.get("featureGates") or {}).get(g, d) for g, (d, _) in gates.items()}
    out += _framework_problems(config)
    out += _namespace_selector_problems(config)
    if not enabled["DisableWaitForPodsReady"]:
        out += _wait_for_pods_ready_problems(config)
    fair = config.get("fairSharing")
    if fair is not None and list(fair.get("preemptionStrategies") or []) not in [
        list(s) for s in PREEMPTION_STRATEGY_SETS
    ]:
        out.append("fairSharing.preemptionStrategies: Required or Unsupported value (one of the three valid lists)")
    if enabled["QuotaCheckStrategy"]:
        out += _quota_check_problems(config)
    return out


def _feature_gate_problems(config: dict[str, Any], gates: Mapping[str, tuple[bool, bool]]) -> list[str]:
    """Gates the manager does not know, and locked gates set against their locked value."""
    out = []
    for gate, value in (config.get("featureGates") or {}).items():
        if gate not in gates:
            out.append(f"featureGates: unrecognized feature gate: {gate}")
        elif gates[gate][1] and value != gates[gate][0]:
            out.append(
                f"featureGates: cannot set feature gate {gate} to {value}, feature is locked to {gates[gate][0]}"
            )
    return out


def _framework_problems(config: dict[str, Any]) -> list[str]:
    """Unknown and repeated `integrations.frameworks`."""
    out = []
    frameworks = (config.get("integrations") or {}).get("frameworks") or ["batch/job"]  # defaults.go
    seen: set[str] = set()
    for i, name in enumerate(frameworks):
        if name not in KNOWN_FRAMEWORKS:
            out.append(f"integrations.frameworks[{i}]: Unsupported value: {name!r}")
        elif name in seen:
            out.append(f"integrations.frameworks[{i}]: Duplicate value: {name!r}")
        seen.add(name)
    return out


def _namespace_selector_problems(config: dict[str, Any]) -> list[str]:
    """An invalid `managedJobsNamespaceSelector` (or its default), or one that matches kube-system or Kueue's own
    namespace."""
    namespace = config.get("namespace") or KUEUE_NAMESPACE
    selector = config.get("managedJobsNamespaceSelector")
    if selector is None:
        selector = {
            "matchExpressions": [
                {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system", namespace]}
            ]
        }
    out = [
        f"managedJobsNamespaceSelector.{'.'.join(str(p) for p in path)}: {reason}"
        for path, reason in label_selector_problems(selector)
    ]
    for protected in ("kube-system", namespace):
        if selector_matches(selector, {"kubernetes.io/metadata.name": protected}):
            out.append(f'managedJobsNamespaceSelector: should not match the "{protected}" namespace')
    return out


def _wait_for_pods_ready_problems(config: dict[str, Any]) -> list[str]:
    """A negative or unreadable timeout and invalid requeuing values of `waitForPodsReady`, when it is set."""
    wait = config.get("waitForPodsReady")
    if wait is None:
        return []
    out = []
    timeout = _seconds(wait.get("timeout", "30m"))
    if timeout is None or timeout < 0:
        out.append("waitForPodsReady.timeout: must be a non-negative duration")
    strategy = wait.get("requeuingStrategy") or {}
    if strategy.get("timestamp", "Eviction") not in ("Creation", "Eviction"):
        out.append('waitForPodsReady.requeuingStrategy.timestamp: Unsupported value (use "Creation" or "Eviction")')
    for key in ("backoffLimitCount", "backoffBaseSeconds", "backoffMaxSeconds"):
        if (strategy.get(key) or 0) < 0:
            out.append(f"waitForPodsReady.requeuingStrategy.{key}: must be greater than or equal to 0")
    return out


def _quota_check_problems(config: dict[str, Any]) -> list[str]:
    """An unknown `resources.quotaCheckStrategy`, or IgnoreUndeclared with excluded resource prefixes."""
    resources = config.get("resources") or {}
    strategy = resources.get("quotaCheckStrategy")
    out = []
    if strategy is not None and strategy not in ("IgnoreUndeclared", "BlockUndeclared"):
        out.append(f"resources.quotaCheckStrategy: Unsupported value: {strategy!r}")
    if strategy == "IgnoreUndeclared" and resources.get("excludeResourcePrefixes"):
        out.append("resources.quotaCheckStrategy: excludeResourcePrefixes is not allowed with IgnoreUndeclared")
    return out


def _unknown_fields(value: dict[str, Any], fields: dict[str, Any], prefix: str) -> list[str]:
    out = []
    for key, item in value.items():
        if key not in fields:
            out.append(f'{prefix}{key}: unknown field "{key}" (the manager decodes its Configuration strictly)')
        elif isinstance(fields[key], dict) and isinstance(item, dict):
            out += _unknown_fields(item, fields[key], f"{prefix}{key}.")
    return out


def _seconds(duration: Any) -> float | None:
    """A Go duration (`30m`, `1h30m`, `90s`) in seconds; None if it is not one."""
    text = str(duration)
    parts = re.findall(r"(-?[0-9.]+)(h|ms|us|ns|m|s)", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    scale = {"h": 3600, "m": 60, "s": 1, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
    return sum(float(n) * scale[u] for n, u in parts)
