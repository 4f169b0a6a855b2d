"""The Grafana dashboard: what Grafana's dashboard model needs, queries that read only series Kueue exports or the
rules record, deterministic output, and the sidecar ConfigMap."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from quartermaster.cli import app
from quartermaster.loader import load
from quartermaster.modules.observability import metrics
from quartermaster.modules.observability.rules import RECORDS
from tests.observability.promserver import PROMTOOL, needs_promtool
from tests.paths import INVENTORY

AT = "2026-11-01"
DASHBOARD_MODULE = "quartermaster.modules.observability.dashboard"
KUEUE_METRICS = {v for k, v in vars(metrics).items() if k.startswith("KUEUE_")}
# PromQL words the dashboard's queries may use besides metric names (functions, aggregations, operators).
PROMQL_WORDS = {"sum", "by", "avg_over_time", "label_replace", "and", "or", "on", "vector", "time"}


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("observability")
    result = CliRunner().invoke(app, ["observability", "render", str(INVENTORY), "--out", str(out), "--at", AT])
    assert result.exit_code == 0, result.output
    return out


def panels(model: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for p in model["panels"] if p["type"] != "row"]


def metric_names(expr: str) -> set[str]:
    """The metric (and recorded series) names a PromQL expression reads: its identifiers once strings, label
    matchers and `by (...)` groupings are removed, minus PromQL's own words."""
    bare = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    bare = re.sub(r"\{[^}]*\}", "", bare)
    bare = re.sub(r"\bby\s*\([^)]*\)", "", bare)
    return set(re.findall(r"[a-zA-Z_:][a-zA-Z0-9_:]*", bare)) - PROMQL_WORDS


def test_the_dashboard_has_what_grafana_needs(rendered: Path) -> None:
    model = json.loads((rendered / "quartermaster-dashboard.json").read_text())
    assert model["uid"] == "quartermaster-fleet" and len(model["uid"]) <= 40  # Grafana's limit for a uid
    assert model["title"] and model["schemaVersion"] >= 39
    ids = [p["id"] for p in model["panels"]]
    assert len(ids) == len(set(ids)), "panel ids are unique"
    assert [v["name"] for v in model["templating"]["list"]] == ["datasource", "cluster", "team"]
    for panel in panels(model):
        assert panel["title"] and panel["gridPos"]["w"] > 0 and panel["gridPos"]["h"] > 0
        refs = [t["refId"] for t in panel["targets"]]
        assert refs and len(refs) == len(set(refs)), panel["title"]
        for target in panel["targets"]:
            assert target["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
            assert target["expr"].strip(), panel["title"]


def test_every_query_reads_only_kueue_metrics_or_series_the_rules_record(rendered: Path) -> None:
    model = json.loads((rendered / "quartermaster-dashboard.json").read_text())
    rules = yaml.safe_load((rendered / "quartermaster.rules.yaml").read_text())
    recorded = {r["record"] for g in rules["groups"] for r in g["rules"] if "record" in r}
    read = set().union(*(metric_names(t["expr"]) for p in panels(model) for t in p["targets"]))
    assert read <= KUEUE_METRICS | set(RECORDS), read - KUEUE_METRICS - set(RECORDS)
    assert read & set(RECORDS) <= recorded, "every recorded series the dashboard reads is in the rendered rules"
    # the four views the issue asks for
    titles = " | ".join(p["title"] for p in panels(model))
    for view in ("vs nominal quota", "utilisation vs break-even", "Pending", "Forecast vs actual"):
        assert view in titles


def test_metric_names_sees_through_matchers_and_groupings() -> None:
    expr = 'sum by (flavor) (kueue_cluster_queue_resource_usage{cluster_queue="$team",resource=~"a|b"}) / other_x'
    assert metric_names(expr) == {"kueue_cluster_queue_resource_usage", "other_x"}


@needs_promtool
def test_every_query_is_valid_promql(rendered: Path, tmp_path: Path) -> None:
    """promtool parses each panel query as a recording rule, variables replaced by a value of theirs."""
    model = json.loads((rendered / "quartermaster-dashboard.json").read_text())
    queries = [
        t["expr"].replace("$team", "inference").replace("$cluster", "gke-us-east4")
        for p in panels(model)
        for t in p["targets"]
    ]
    rules = {
        "groups": [
            {
                "name": "dashboard",
                "rules": [{"record": f"dashboard:query_{i}", "expr": q} for i, q in enumerate(queries)],
            }
        ]
    }
    (tmp_path / "queries.yaml").write_text(yaml.safe_dump(rules), encoding="utf-8")
    assert PROMTOOL
    check = subprocess.run(
        [PROMTOOL, "check", "rules", str(tmp_path / "queries.yaml")], capture_output=True, text=True, timeout=120
    )
    assert check.returncode == 0, check.stdout + check.stderr


def test_the_dashboard_lists_the_inventorys_teams_and_clusters(rendered: Path) -> None:
    inventory = load(INVENTORY).inventory
    variables = {
        v["name"]: v for v in json.loads((rendered / "quartermaster-dashboard.json").read_text())["templating"]["list"]
    }
    assert variables["team"]["query"].split(",") == sorted(t.name for t in inventory.teams)
    assert variables["cluster"]["query"].split(",") == sorted(c.name for c in inventory.clusters)


def test_rendering_twice_gives_the_same_bytes(rendered: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["observability", "render", str(INVENTORY), "--out", str(tmp_path), "--at", AT])
    assert result.exit_code == 0, result.output
    for name in ("quartermaster-dashboard.json", "quartermaster-dashboard-configmap.yaml"):
        assert (tmp_path / name).read_bytes() == (rendered / name).read_bytes(), name


def test_the_configmap_carries_the_dashboard_for_grafanas_sidecar(rendered: Path) -> None:
    configmap = yaml.safe_load((rendered / "quartermaster-dashboard-configmap.yaml").read_text())
    assert configmap["kind"] == "ConfigMap" and configmap["metadata"]["namespace"] == "monitoring"
    assert configmap["metadata"]["labels"]["grafana_dashboard"] == "1"  # a string: label values are strings
    assert configmap["data"] == {
        "quartermaster-dashboard.json": (rendered / "quartermaster-dashboard.json").read_text()
    }


def test_without_the_sdk_render_names_the_extra_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in sys.modules if n.startswith(("grafana_foundation_sdk.", DASHBOARD_MODULE))]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "grafana_foundation_sdk", None)  # import fails as if not installed
    result = CliRunner().invoke(app, ["observability", "render", str(INVENTORY), "--out", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert "pip install 'quartermaster[observability]'" in " ".join(result.output.split())
    assert not list(tmp_path.iterdir()), "nothing is written"
