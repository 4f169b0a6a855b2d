"""Kueue's manager Configuration from the inventory (`qm render --kueue-config`, issue 28, point 1), checked against
the rules Kueue v0.19.2 applies when its manager starts (`pkg/config/validation.go`, `pkg/config/config.go`,
`LoadAndValidateFeatureGates`; re-implemented in `modules/kueue/configuration.py`)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from quartermaster.cli import app
from quartermaster.loader import load
from quartermaster.model import Inventory
from quartermaster.modules.kueue import api, kueue_objects
from quartermaster.modules.kueue.builders import WORKLOAD_RESOURCES
from quartermaster.modules.kueue.configuration import configuration_problems, manager_configuration
from tests.builders import DURING_THE_BLOCK, make_inventory
from tests.paths import INVENTORY


@pytest.fixture(scope="module")
def inventory() -> Inventory:
    return load(INVENTORY).inventory


def rendered(inventory: Inventory, cluster: str) -> dict[str, Any]:
    queues = [o for o in kueue_objects(inventory, cluster, DURING_THE_BLOCK) if isinstance(o, api.ClusterQueue)]
    config, _ = manager_configuration(inventory, cluster, queues)
    return config


def test_every_cluster_of_the_example_gets_a_configuration_kueue_starts_with(inventory: Inventory) -> None:
    result = CliRunner().invoke(app, ["render", str(INVENTORY), "--kueue-config"])
    assert result.exit_code == 0, result.output
    documents = [d for d in yaml.safe_load_all(result.stdout) if d]
    assert len(documents) == len(inventory.clusters)
    for document in documents:
        assert configuration_problems(document) == []
        assert document["metrics"]["enableClusterQueueResources"] is True  # the alerts' gauges


def test_the_frameworks_are_the_kinds_teams_may_create_rayjob_among_them(inventory: Inventory) -> None:
    frameworks = rendered(inventory, "gke-gpu-us-east4")["integrations"]["frameworks"]
    assert {"batch/job", "ray.io/rayjob", "ray.io/raycluster", "jobset.x-k8s.io/jobset", "pod"} <= set(frameworks)
    kinds = sum(len(resources) for resources in WORKLOAD_RESOURCES.values())
    assert len(frameworks) == kinds - 1  # jobs and cronjobs are both queued as batch/job


def test_fair_sharing_is_on_exactly_when_a_weight_is_set(inventory: Inventory) -> None:
    """The example's `research` cohort has weight 2 (org.yaml): fair sharing on; without any weight it is off."""
    assert rendered(inventory, "gke-gpu-us-east4")["fairSharing"] == {
        "preemptionStrategies": ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]
    }
    assert "fairSharing" not in rendered(make_inventory().build(), "gke-a")
    weighted = make_inventory().edit("teams", "ml", fair_sharing_weight=3).build()
    assert "fairSharing" in rendered(weighted, "gke-a")


def test_topology_aware_clusters_name_the_gate_and_no_cluster_names_a_removed_gate(inventory: Inventory) -> None:
    for cluster in inventory.clusters:
        gates = rendered(inventory, cluster.name).get("featureGates", {})
        assert gates == ({"TopologyAwareScheduling": True} if cluster.topology_aware else {}), cluster.name


def v1beta2_wait_for_pods_ready(config: dict[str, Any]) -> dict[str, Any]:
    """What Kueue v0.19.2's manager runs with: `SetDefaults_Configuration` (apis/config/v1beta2/defaults.go) turns
    waitForPodsReady on when omitted, timeout 30m (DefaultWaitForPodsReadyTimeout), recoveryTimeout = timeout,
    blockAdmission false, requeuing by Eviction timestamp with backoff 60 s base, 3600 s max."""
    wait = dict(config.get("waitForPodsReady") or {})
    wait.setdefault("timeout", "30m")
    wait.setdefault("blockAdmission", False)
    wait.setdefault("recoveryTimeout", wait["timeout"])
    strategy = dict(wait.get("requeuingStrategy") or {})
    strategy.setdefault("timestamp", "Eviction")
    strategy.setdefault("backoffBaseSeconds", 60)
    strategy.setdefault("backoffMaxSeconds", 3600)
    wait["requeuingStrategy"] = strategy
    return wait


def test_wait_for_pods_ready_is_written_as_every_manager_runs_it(inventory: Inventory) -> None:
    """Issue 36: the MultiKueue manager's Configuration left waitForPodsReady out, which v1beta2 turns on with a
    30-minute timeout (the docs said it was off); every cluster now writes what its manager runs with."""
    assert v1beta2_wait_for_pods_ready({})["timeout"] == "30m"  # omitted is on
    for cluster in inventory.clusters:
        config = rendered(inventory, cluster.name)
        assert config["waitForPodsReady"] == v1beta2_wait_for_pods_ready(config), cluster.name
        assert config["waitForPodsReady"] == v1beta2_wait_for_pods_ready({}), cluster.name


def test_quota_check_strategy_only_for_queues_that_leave_cpu_or_memory_undeclared() -> None:
    gpu_only = make_inventory().build()
    assert rendered(gpu_only, "gke-a")["resources"] == {"quotaCheckStrategy": "IgnoreUndeclared"}
    declared = make_inventory().edit(
        "teams", "ml", quotas=[{"flavor": "h100", "nominal": 8, "cpu": 9, "memory_gib": 9}]
    )
    assert "resources" not in rendered(declared.build(), "gke-a")


# Upstream's own manager configuration (config/components/manager/controller_manager_config.yaml at v0.19.2, the
# commented lines left out): it starts, so the checks must accept it.
UPSTREAM_DEFAULT = {
    "apiVersion": "config.kueue.x-k8s.io/v1beta2",
    "kind": "Configuration",
    "health": {"healthProbeBindAddress": ":8081"},
    "metrics": {"bindAddress": ":8443"},
    "webhook": {"port": 9443},
    "leaderElection": {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"},
    "controller": {"groupKindConcurrency": {"Job.batch": 5, "Pod": 5, "Workload.kueue.x-k8s.io": 10}},
    "clientConnection": {"qps": 300, "burst": 500},
    "integrations": {
        "frameworks": [
            "batch/job",
            "kubeflow.org/mpijob",
            "ray.io/rayjob",
            "ray.io/raycluster",
            "ray.io/rayservice",
            "jobset.x-k8s.io/jobset",
            "workload.codeflare.dev/appwrapper",
            "trainer.kubeflow.org/trainjob",
            "pod",
            "deployment",
            "statefulset",
            "leaderworkerset.x-k8s.io/leaderworkerset",
        ]
    },
}


def test_upstreams_default_configuration_passes() -> None:
    assert configuration_problems(UPSTREAM_DEFAULT) == []


def changed(path: str, value: Any) -> dict[str, Any]:
    config = copy.deepcopy(UPSTREAM_DEFAULT)
    *parents, last = path.split(".")
    node = config
    for key in parents:
        node = node.setdefault(key, {})
    node[last] = value
    return config


@pytest.mark.parametrize(
    ("path", "value", "want"),
    [
        # strict decoding: v1beta1's `fairSharing.enable` is not a v1beta2 field
        ("fairSharing.enable", True, 'fairSharing.enable: unknown field "enable"'),
        # a typo at the top level stops the manager
        ("waitForPodReady", {"timeout": "5m"}, 'waitForPodReady: unknown field "waitForPodReady"'),
        # ProvisioningACC went GA in v0.14 and was removed in v0.15
        ("featureGates", {"ProvisioningACC": True}, "featureGates: unrecognized feature gate: ProvisioningACC"),
        # HierarchicalCohorts is GA and locked to on
        ("featureGates", {"HierarchicalCohorts": False}, "cannot set feature gate HierarchicalCohorts to False"),
        (
            "integrations.frameworks",
            ["batch/job", "ray.io/rayjobs"],
            "frameworks[1]: Unsupported value: 'ray.io/rayjobs'",
        ),
        ("integrations.frameworks", ["batch/job", "batch/job"], "frameworks[1]: Duplicate value: 'batch/job'"),
        # the pod integration must never manage kube-system
        ("managedJobsNamespaceSelector", {}, 'should not match the "kube-system" namespace'),
        ("fairSharing", {"preemptionStrategies": []}, "fairSharing.preemptionStrategies: Required or Unsupported"),
        (
            "fairSharing",
            {"preemptionStrategies": ["LessThanInitialShare", "LessThanOrEqualToFinalShare"]},  # wrong order
            "fairSharing.preemptionStrategies",
        ),
        ("resources", {"quotaCheckStrategy": "OnlyDeclared"}, "quotaCheckStrategy: Unsupported value: 'OnlyDeclared'"),
        (
            "resources",
            {"quotaCheckStrategy": "IgnoreUndeclared", "excludeResourcePrefixes": ["ephemeral"]},
            "excludeResourcePrefixes is not allowed with IgnoreUndeclared",
        ),
        ("waitForPodsReady", {"timeout": "-5m"}, "waitForPodsReady.timeout: must be a non-negative duration"),
        (
            "waitForPodsReady",
            {"timeout": "5m", "requeuingStrategy": {"timestamp": "Admission"}},
            "requeuingStrategy.timestamp: Unsupported value",
        ),
        (
            "waitForPodsReady",
            {"timeout": "5m", "requeuingStrategy": {"backoffBaseSeconds": -1}},
            "backoffBaseSeconds: must be greater than or equal to 0",
        ),
    ],
)
def test_each_rule_kueue_starts_with_is_checked(path: str, value: Any, want: str) -> None:
    problems = configuration_problems(changed(path, value))
    assert any(want in p for p in problems), problems
