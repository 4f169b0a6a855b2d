"""Rules that real Prometheus set-ups load (issue 28, point 5): kube-prometheus-stack selects PrometheusRules by its
`release` label (`--rule-label`), in a namespace of the operator's choosing (`--namespace`); Google Managed
Prometheus reads `monitoring.googleapis.com/v1` Rules, scoped to a cluster and namespace (`--gmp`)."""

from __future__ import annotations

import datetime as dt
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from quartermaster.cli import app
from quartermaster.loader import load
from quartermaster.modules.observability.rules import Options, build_rules
from tests.observability.promserver import PROMTOOL, needs_promtool
from tests.paths import INVENTORY

AT = "2026-11-01"


def render(tmp_path: Path, *extra: str) -> tuple[int, str]:
    result = CliRunner().invoke(
        app, ["observability", "render", str(INVENTORY), "--out", str(tmp_path), "--at", AT, *extra]
    )
    return result.exit_code, " ".join(result.output.split())


def test_rule_labels_and_namespace_reach_the_prometheus_rule(tmp_path: Path) -> None:
    code, output = render(
        tmp_path, "--rule-label", "release=kube-prometheus-stack", "--rule-label", "team=platform", "--namespace", "obs"
    )
    assert code == 0, output
    rule = yaml.safe_load((tmp_path / "quartermaster-prometheusrule.yaml").read_text())
    assert rule["metadata"]["namespace"] == "obs"
    assert rule["metadata"]["labels"] == {
        "app.kubernetes.io/managed-by": "quartermaster",
        "release": "kube-prometheus-stack",
        "team": "platform",
    }


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--rule-label", "release"], "--rule-label 'release': not KEY=VALUE"),  # no value
        (["--rule-label", "release=kube prometheus"], "not KEY=VALUE with a Kubernetes label key and value"),
        (["--namespace", "Monitoring"], "--namespace Monitoring: not a Kubernetes namespace name"),
        (["--gmp-namespace", "Kueue_System"], "--gmp-namespace Kueue_System: not a Kubernetes namespace name"),
        (["--gmp", "gke-nowhere"], "--gmp gke-nowhere: no such cluster"),
    ],
)
def test_a_label_namespace_or_cluster_kubernetes_would_refuse_exits_2(
    tmp_path: Path, extra: list[str], message: str
) -> None:
    code, output = render(tmp_path / "out", *extra)
    assert code == 2, output
    assert message in output
    assert not (tmp_path / "out").exists()


@needs_promtool
def test_the_gmp_rules_hold_the_clusters_rules_in_kueues_namespace(tmp_path: Path) -> None:
    code, output = render(tmp_path, "--gmp", "gke-gpu-us-east4")
    assert code == 0, output
    gmp = yaml.safe_load((tmp_path / "quartermaster-gmp-rules-gke-gpu-us-east4.yaml").read_text())
    assert (gmp["apiVersion"], gmp["kind"]) == ("monitoring.googleapis.com/v1", "Rules")
    assert gmp["metadata"]["namespace"] == "kueue-system"  # GMP scopes the rules to it: Kueue's metrics are there
    want, _ = build_rules(load(INVENTORY), Options(at=dt.date.fromisoformat(AT), cluster="gke-gpu-us-east4"))
    for group in want["groups"]:
        for rule in group["rules"]:
            rule.get("labels", {}).pop("cluster", None)  # GMP sets it itself
    assert gmp["spec"] == want
    assert 'cluster="' not in yaml.safe_dump(gmp["spec"])  # GMP adds the cluster scope itself
    (tmp_path / "gmp.rules.yaml").write_text(yaml.safe_dump(gmp["spec"]))
    assert PROMTOOL
    check = subprocess.run(
        [PROMTOOL, "check", "rules", str(tmp_path / "gmp.rules.yaml")], capture_output=True, text=True
    )
    assert check.returncode == 0, check.stdout + check.stderr


# --- issue 36: the rules GMP accepts -----------------------------------------------------------------------------

GMP_SCOPE = {
    "project_id": "northwind-ml-prod",
    "location": "us-east4",
    "cluster": "gke-gpu-us-east4",
    "namespace": "kueue-system",
}
"""What GMP's operator scopes a namespaced Rules object to (`Rules.RuleGroupsConfig`: project, location, cluster,
and the object's namespace)."""
MATCHER = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"')


def gmp_scope_errors(spec: dict[str, Any], scope: dict[str, str]) -> list[str]:
    """A re-implementation of GMP's `scope` (pkg/operator/apis/monitoring/v1/rules_config.go in
    GoogleCloudPlatform/prometheus-engine, read 2026-11-27), which its webhook and operator run on every Rules
    object: a rule whose labels already hold a scope label is refused (`setLabel`: "label %q already set on rule
    with unexpected value %q"), and so is a selector matching a scope label other than `name="value"`
    (`setSelector`: "conflicting label matcher")."""
    errors = []
    for group in spec["groups"]:
        for rule in group["rules"]:
            what = rule.get("alert") or rule.get("record")
            for name, value in scope.items():
                if name in rule.get("labels", {}):
                    errors.append(
                        f"{what}: label {name!r} already set on rule with unexpected value {rule['labels'][name]!r}"
                    )
                for found, op, have in MATCHER.findall(rule["expr"]):
                    if found == name and (op, have) != ("=", value):
                        errors.append(f"{what}: conflicting label matcher {found}{op}{have!r}")
    return errors


def test_the_check_refuses_what_gmp_refuses() -> None:
    """The re-implementation fails on the two shapes GMP refuses, so the test below can fail."""
    labelled = {"groups": [{"name": "g", "rules": [{"alert": "A", "expr": "up", "labels": {"cluster": "x"}}]}]}
    matched = {"groups": [{"name": "g", "rules": [{"record": "r", "expr": 'sum(up{cluster="other"})'}]}]}
    assert gmp_scope_errors(labelled, GMP_SCOPE) == ["A: label 'cluster' already set on rule with unexpected value 'x'"]
    assert gmp_scope_errors(matched, GMP_SCOPE) == ["r: conflicting label matcher cluster='other'"]


def test_the_gmp_rules_pass_gmps_scope_check(tmp_path: Path) -> None:
    """Before issue 36 the GMP Rules carried a `cluster` label on 8 alerts of gke-gpu-us-east4 and 4 of
    gke-tpu-us-east5, and GMP refused the whole object ("label cluster already set"); the PrometheusRule for a
    Prometheus of its own keeps it."""
    clusters = ["gke-gpu-us-east4", "gke-tpu-us-east5"]
    code, output = render(tmp_path, *[arg for c in clusters for arg in ("--gmp", c)])
    assert code == 0, output
    for cluster in clusters:
        gmp = yaml.safe_load((tmp_path / f"quartermaster-gmp-rules-{cluster}.yaml").read_text())
        assert gmp_scope_errors(gmp["spec"], {**GMP_SCOPE, "cluster": cluster}) == []
        own, _ = build_rules(load(INVENTORY), Options(at=dt.date.fromisoformat(AT), cluster=cluster))
        assert gmp_scope_errors(own, {**GMP_SCOPE, "cluster": cluster}) != []  # what was emitted before


def test_gmp_rules_for_a_cluster_that_is_not_gke_are_a_located_usage_error(tmp_path: Path) -> None:
    code, output = render(tmp_path / "out", "--gmp", "eks-us-east-1")
    assert code == 2, output
    flat = " ".join(output.split())
    assert "--gmp eks-us-east-1: inventory/clusters.yaml (clusters[2]) is not a GKE cluster (kind eks)" in flat.replace(
        str(INVENTORY), "inventory"
    )
    assert not (tmp_path / "out").exists()
