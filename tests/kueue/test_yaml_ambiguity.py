"""Every file Quartermaster emits keeps YAML 1.1's ambiguous strings strings (issue 28, point 4): an inventory whose
names, cost centres and labels are `0800`, `yes`, `no`, `on`, `1e3`, `null`, `~` and `0x1F` renders files that
PyYAML (a YAML 1.1 reader) and kubectl (Kubernetes' reader, sigs.k8s.io/yaml over go-yaml) read back as strings."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from quartermaster.cli import app
from tests.builders import make_inventory

AMBIGUOUS = ("0800", "yes", "no", "on", "1e3", "null", "~", "0x1F")
KUBECTL = shutil.which("kubectl")


def ambiguous_inventory(folder: Path) -> Path:
    """Teams, namespaces, a pool, a cohort and cost centres named with every ambiguous value the schema allows there
    (a name is a DNS label, so `~` and `0x1F` go into a description, a cost centre and a node label)."""
    builder = make_inventory().pool("1e3", nodes=4, labels={"northwind.ai/tier": "0x1F", "northwind.ai/hot": "on"})
    builder.add("cohorts", name="no", parent="org")
    builder.add("priority_classes", name="yes", value=5, description="~")
    for name, cost_center in (("0800", "0800"), ("yes", "yes"), ("no", "0x1F"), ("on", "on"), ("1e3", "1e3")):
        gpus = 16 if name == "1e3" else 1  # the RayJob's team: a head and a worker, 8 GPUs each
        builder.team(name, quotas={"1e3": gpus, "h100": 1}, cost_center=cost_center, namespaces=[name], cohort="no")
    builder.team("null", quotas={"1e3": 1}, cost_center="null", namespaces=["null"], priority_class="yes")
    inventory = builder.write(folder / "inventory")
    (inventory / "demand.csv").write_text(
        "period,team,accelerator,site,p50,p90,preemptible_share\n2027Q1,1e3,H100-80GB,,4,6,0\n"
    )
    return inventory


def strings_of(document: Any) -> set[str]:
    """Every string (keys and values) of a document."""
    if isinstance(document, dict):
        return set(document) | {s for v in document.values() for s in strings_of(v)}
    if isinstance(document, list):
        return {s for v in document for s in strings_of(v)}
    return {document} if isinstance(document, str) else set()


def kubectl_reads(path: Path) -> list[dict[str, Any]]:
    """The objects of a manifest file as kubectl decodes them (client side, no cluster): a string that Kubernetes'
    YAML reader took for a number or a boolean fails the decoding of a name or a label, or comes back retyped."""
    assert KUBECTL
    run = subprocess.run(
        [KUBECTL, "annotate", "--local", "-f", str(path), "-o", "json", "quartermaster.dev/read=1"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    objects, decoder, at = [], json.JSONDecoder(), 0
    while run.stdout[at:].strip():  # one JSON object per manifest, one after the other
        obj, end = decoder.raw_decode(run.stdout, at + len(run.stdout[at:]) - len(run.stdout[at:].lstrip()))
        objects.append(obj)
        at = end
    for obj in objects:
        del obj["metadata"]["annotations"]["quartermaster.dev/read"]
        if not obj["metadata"]["annotations"]:
            del obj["metadata"]["annotations"]
        if not obj["metadata"]:
            del obj["metadata"]
    return objects


@pytest.fixture(scope="module")
def emitted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every emitted file of the ambiguous inventory, by what it is."""
    folder = tmp_path_factory.mktemp("ambiguous")
    inventory = ambiguous_inventory(folder)
    runner = CliRunner()
    files: dict[str, Path] = {}
    result = runner.invoke(app, ["render", str(inventory), "--out", str(folder / "kueue")])
    assert result.exit_code == 0, result.output
    files["Kueue objects"] = folder / "kueue" / "gke-a.yaml"
    result = runner.invoke(app, ["render", str(inventory), "--kueue-config"])
    assert result.exit_code == 0, result.output
    (folder / "kueue-config.yaml").write_text(result.stdout)
    files["Kueue Configuration"] = folder / "kueue-config.yaml"
    result = runner.invoke(
        app,
        [
            *("observability", "render", str(inventory), "--out", str(folder / "obs")),
            *("--namespace", "null", "--rule-label", "release=on", "--gmp", "gke-a"),
        ],
    )
    assert result.exit_code == 0, result.output
    files["rules file"] = folder / "obs" / "quartermaster.rules.yaml"
    files["PrometheusRule"] = folder / "obs" / "quartermaster-prometheusrule.yaml"
    files["dashboard ConfigMap"] = folder / "obs" / "quartermaster-dashboard-configmap.yaml"
    files["GMP Rules"] = folder / "obs" / "quartermaster-gmp-rules-gke-a.yaml"
    result = runner.invoke(
        app,
        [
            *("plan", str(inventory), "--draws", "2", "--rayjob", "1e3"),
            *("--image", "registry.example/qm:1", "--results-claim", "0800"),
        ],
    )
    assert result.exit_code == 0, result.output
    (folder / "rayjob.yaml").write_text(result.stdout)
    files["RayJob"] = folder / "rayjob.yaml"
    return files


# The ambiguous values each file must hold as strings (a file that names no team, like Kueue's Configuration, is
# still read back by both readers below).
WANT_STRINGS = {
    "Kueue objects": set(AMBIGUOUS),
    "Kueue Configuration": set(),
    "rules file": {"0800", "yes", "no", "on", "1e3", "null"},
    "PrometheusRule": {"0800", "yes", "no", "on", "1e3", "null"},  # and its label release=on
    "GMP Rules": {"0800", "yes", "no", "on", "1e3", "null"},
    "dashboard ConfigMap": {"null"},  # its namespace (--namespace null)
    "RayJob": {"1e3", "0800"},  # its team, namespace and queue; its results claim
}
KUBERNETES_OBJECTS = (
    "Kueue objects",
    "Kueue Configuration",
    "PrometheusRule",
    "GMP Rules",
    "dashboard ConfigMap",
    "RayJob",
)


@pytest.mark.parametrize("what", sorted(WANT_STRINGS))
def test_a_yaml_1_1_reader_reads_every_ambiguous_value_back_as_a_string(emitted: dict[str, Path], what: str) -> None:
    documents = list(yaml.safe_load_all(emitted[what].read_text(encoding="utf-8")))
    assert documents and all(isinstance(d, dict) for d in documents)
    assert WANT_STRINGS[what] <= strings_of(documents)


@pytest.mark.kubectl
@pytest.mark.parametrize("what", KUBERNETES_OBJECTS)
def test_kubernetes_reads_every_object_as_pyyaml_does(emitted: dict[str, Path], what: str) -> None:
    """kubectl decodes with Kubernetes' YAML rules (`0800`, `1e3`, `0x1F` are numbers there, `y` a boolean): equal
    documents mean no value was retyped by either reader."""
    documents = list(yaml.safe_load_all(emitted[what].read_text(encoding="utf-8")))
    assert kubectl_reads(emitted[what]) == documents


def test_the_rules_file_is_the_prometheus_rule_spec(emitted: dict[str, Path]) -> None:
    """The rules file has no kind for kubectl to read; it is the PrometheusRule's spec, which kubectl reads above."""
    rule = yaml.safe_load(emitted["PrometheusRule"].read_text(encoding="utf-8"))
    assert yaml.safe_load(emitted["rules file"].read_text(encoding="utf-8")) == rule["spec"]
    assert rule["metadata"]["namespace"] == "null"
