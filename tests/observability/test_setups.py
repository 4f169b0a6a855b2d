"""Rules that real Prometheus set-ups load (issue 28, point 5): kube-prometheus-stack selects PrometheusRules by its
`release` label (`--rule-label`), in a namespace of the operator's choosing (`--namespace`); Google Managed
Prometheus reads `monitoring.googleapis.com/v1` Rules, scoped to a cluster and namespace (`--gmp`)."""

from __future__ import annotations

import datetime as dt
import subprocess
from pathlib import Path

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
    assert gmp["spec"] == want
    assert 'cluster="' not in yaml.safe_dump(gmp["spec"])  # GMP adds the cluster scope itself
    (tmp_path / "gmp.rules.yaml").write_text(yaml.safe_dump(gmp["spec"]))
    assert PROMTOOL
    check = subprocess.run(
        [PROMTOOL, "check", "rules", str(tmp_path / "gmp.rules.yaml")], capture_output=True, text=True
    )
    assert check.returncode == 0, check.stdout + check.stderr
