"""A cluster with `observability.enabled` gets its PrometheusRule and dashboard ConfigMap from the Pulumi program
and from `qm synth`, the same objects in both; a cluster without it gets neither."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from quartermaster.loader import LoadResult, load
from quartermaster.model import Inventory, ObservabilitySettings
from quartermaster.modules.observability.emit import cluster_manifests, kubernetes_objects
from quartermaster.yamlwriter import dump_yaml
from tests.builders import BEFORE_THE_BLOCK
from tests.observability.promserver import PROMTOOL, needs_promtool
from tests.paths import INVENTORY
from tests.pulumi.harness import run_cluster
from tests.terraform.parity import differences, pulumi_view, terraform_view

CLUSTER = "gke-gpu-us-east4"


@pytest.fixture(scope="module")
def loaded() -> LoadResult:
    return load(INVENTORY)


def enabled(inventory: Inventory, cluster: str = CLUSTER, namespace: str = "observability") -> Inventory:
    """The example with observability on for one cluster."""
    clusters = tuple(
        c.model_copy(update={"observability": ObservabilitySettings(enabled=True, namespace=namespace)})
        if c.name == cluster
        else c
        for c in inventory.clusters
    )
    return inventory.model_copy(update={"clusters": clusters})


def kinds(objects: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {o["kind"]: o for o in objects if o["kind"] in ("PrometheusRule", "ConfigMap")}


def test_observability_is_off_by_default_and_emits_nothing(loaded: LoadResult) -> None:
    inventory = loaded.inventory
    assert not any(c.observability.enabled for c in inventory.clusters)
    assert all(cluster_manifests(inventory, c.name, BEFORE_THE_BLOCK) == [] for c in inventory.clusters)


def test_an_enabled_cluster_gets_its_own_rules_and_dashboard(loaded: LoadResult) -> None:
    inventory = enabled(loaded.inventory)
    objects = kinds(kubernetes_objects(inventory, CLUSTER, BEFORE_THE_BLOCK, loaded.sources))
    rule, configmap = objects["PrometheusRule"], objects["ConfigMap"]
    assert rule["metadata"]["namespace"] == configmap["metadata"]["namespace"] == "observability"
    assert configmap["metadata"]["labels"]["grafana_dashboard"] == "1"
    alerts = [r for g in rule["spec"]["groups"] for r in g["rules"] if "alert" in r]
    # the cluster's own Prometheus: no matcher on the cluster label, only this cluster's flavors and queues
    assert alerts and not any('cluster="' in r["expr"] for r in alerts)
    flavors = {p.name for p in inventory.cluster_by_name[CLUSTER].pools}
    capacity = [r["labels"]["flavor"] for r in alerts if r["alert"] == "QuartermasterFlavorAtCapacity"]
    assert capacity and set(capacity) <= flavors
    assert {r["labels"]["cluster"] for r in alerts if r["alert"] == "QuartermasterPendingAboveQuota"} == {CLUSTER}
    assert not any(r["alert"] == "QuartermasterBudgetOnTrack" for r in alerts)  # needs every cluster's series
    assert "inventory/teams/" in json.dumps(alerts)  # runbooks name the files: the sources came along
    dashboard = json.loads(configmap["data"]["quartermaster-dashboard.json"])
    assert dashboard["uid"] == f"quartermaster-fleet-{CLUSTER}"
    assert [v["name"] for v in dashboard["templating"]["list"]] == ["datasource", "team"]
    # the Kueue objects are unchanged and come first, as without observability
    other = kubernetes_objects(loaded.inventory, CLUSTER, BEFORE_THE_BLOCK)
    assert kubernetes_objects(inventory, CLUSTER, BEFORE_THE_BLOCK)[: len(other)] == other


def test_an_enabled_clusters_rule_carries_the_labels_its_operator_selects(loaded: LoadResult) -> None:
    """Issue 28: kube-prometheus-stack loads only PrometheusRules labelled with its release; the cluster's
    `observability.rule_labels` put it on the rule its stack declares (Pulumi and `qm synth` alike)."""
    settings = ObservabilitySettings(enabled=True, rule_labels={"release": "kube-prometheus-stack"})
    clusters = tuple(
        c.model_copy(update={"observability": settings}) if c.name == CLUSTER else c for c in loaded.inventory.clusters
    )
    inventory = loaded.inventory.model_copy(update={"clusters": clusters})
    rule = kinds(kubernetes_objects(inventory, CLUSTER, BEFORE_THE_BLOCK))["PrometheusRule"]
    assert rule["metadata"]["labels"] == {
        "app.kubernetes.io/managed-by": "quartermaster",
        "release": "kube-prometheus-stack",
    }


@needs_promtool
def test_the_clusters_rules_pass_promtool_check(loaded: LoadResult, tmp_path: Path) -> None:
    rule = kinds(kubernetes_objects(enabled(loaded.inventory), CLUSTER, BEFORE_THE_BLOCK))["PrometheusRule"]
    (tmp_path / "rules.yaml").write_text(dump_yaml(rule["spec"]), encoding="utf-8")
    assert PROMTOOL
    check = subprocess.run(
        [PROMTOOL, "check", "rules", str(tmp_path / "rules.yaml")], capture_output=True, text=True, timeout=120
    )
    assert check.returncode == 0, check.stdout + check.stderr


@pytest.mark.slow
@pytest.mark.node
def test_pulumi_and_terraform_declare_the_same_observability_objects(loaded: LoadResult, tmp_path: Path) -> None:
    from quartermaster.modules.terraform.app import synth

    inventory = enabled(loaded.inventory)
    pulumi = pulumi_view(run_cluster(inventory, CLUSTER))
    [path] = synth(inventory, [CLUSTER], tmp_path / "cdktf.out", BEFORE_THE_BLOCK)
    terraform = terraform_view(json.loads(path.read_text()))
    assert differences(pulumi, terraform) == []
    keys = set(terraform["kubernetes_object"])
    assert {
        "monitoring.coreos.com/v1/PrometheusRule/observability/quartermaster",
        "v1/ConfigMap/observability/quartermaster-dashboard",
    } <= keys
    # the dashboard's `${datasource}` reaches Grafana as written, not as a Terraform template
    stack = path.read_text()
    assert "$${datasource}" in stack  # escaped: Terraform reads `$${` as a literal `${`
