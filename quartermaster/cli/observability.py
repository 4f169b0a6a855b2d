"""`qm observability render`: Prometheus alert rules from the inventory and the price book, as a plain rules file
(`quartermaster.rules.yaml`, for `rule_files:`) and a prometheus-operator PrometheusRule
(`quartermaster-prometheusrule.yaml`, for `kubectl apply`), and a Grafana dashboard (`quartermaster-dashboard.json`,
for import) with its ConfigMap for Grafana's dashboard sidecar (`quartermaster-dashboard-configmap.yaml`)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import typer

from quartermaster.cli.common import check_output, console, err_console, inventory_argument, load_or_exit
from quartermaster.errors import UsageError
from quartermaster.modules.observability.metrics import DEFAULT_CLUSTER_LABEL
from quartermaster.names import DNS_LABEL_RE
from quartermaster.textsafety import log_line, promql_label_name

app = typer.Typer(help="Alerts (and dashboards) from the inventory.", no_args_is_help=True)

RULES_FILE = "quartermaster.rules.yaml"
PROMETHEUS_RULE_FILE = "quartermaster-prometheusrule.yaml"
DASHBOARD_FILE = "quartermaster-dashboard.json"
CONFIGMAP_FILE = "quartermaster-dashboard-configmap.yaml"


@app.command("render")
def render(
    path: Path = inventory_argument(),
    out: Path = typer.Option(
        ..., "--out", "-o", help="Folder for the rules, the PrometheusRule and the dashboard.", file_okay=False
    ),
    commitment_days: int = typer.Option(3, min=1, max=90, help="Days of mean utilisation below break-even."),
    pending_hours: int = typer.Option(6, min=1, max=720, help="Hours of demand above nominal quota."),
    capacity_minutes: int = typer.Option(30, min=1, max=1440, help="Minutes a full flavor has waiting workloads."),
    cluster_label: str = typer.Option(
        DEFAULT_CLUSTER_LABEL, help="The label naming a series' cluster (an external label)."
    ),
    namespace: str = typer.Option("monitoring", help="Namespace of the PrometheusRule and the dashboard ConfigMap."),
    at: str = typer.Option(None, help="Day whose active commitments get alerts (YYYY-MM-DD); default: today (UTC)."),
) -> None:
    """Write alert rules whose thresholds come from the inventory (each alert's runbook names the file to change)
    and a Grafana dashboard of usage vs quota, commitments vs break-even, pending demand and forecast vs actual."""
    # imported when run, so that `qm --help` stays fast
    from quartermaster.modules.observability.emit import dashboard
    from quartermaster.modules.observability.rules import Options, build_rules, prometheus_rule
    from quartermaster.yamlwriter import dump_yaml

    check_output(out, "--out", path, folder=True)
    try:
        day = dt.date.fromisoformat(at) if at else None
    except ValueError:
        raise UsageError(f"--at {at}: not a date; write YYYY-MM-DD, e.g. 2026-10-01.") from None
    try:
        promql_label_name(cluster_label)
    except ValueError as error:
        raise UsageError(f"--cluster-label: {error}.") from None
    if not DNS_LABEL_RE.fullmatch(namespace) or len(namespace) > 63:
        raise UsageError(
            f"--namespace {log_line(namespace)}: not a Kubernetes namespace name (lower-case letters, digits and "
            "'-', at most 63 characters)."
        )
    result = load_or_exit(path)
    options = Options(commitment_days, pending_hours, capacity_minutes, cluster_label, day)
    model = dashboard(result, options)
    # after dashboard(), which names the extra to install when grafana-foundation-sdk (imported here) is missing
    from quartermaster.modules.observability.dashboard import dashboard_configmap, to_json

    rules, notes = build_rules(result, options)
    out.mkdir(parents=True, exist_ok=True)
    texts = {
        RULES_FILE: dump_yaml(rules),
        PROMETHEUS_RULE_FILE: dump_yaml(prometheus_rule(rules, namespace)),
        DASHBOARD_FILE: to_json(model),
        CONFIGMAP_FILE: dump_yaml(dashboard_configmap(model, namespace)),
    }
    for name, text in texts.items():
        (out / name).write_text(text, encoding="utf-8")
        console.print(f"wrote {out / name}")
    counts: dict[str, int] = {}
    for group in rules["groups"]:
        for rule in group["rules"]:
            if "alert" in rule:
                counts[rule["alert"]] = counts.get(rule["alert"], 0) + 1
    console.print("alerts: " + ", ".join(f"{name} x{n}" for name, n in counts.items()))
    for note in notes:
        err_console.print(f"note: {note}", markup=False)
