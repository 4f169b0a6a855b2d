"""`qm observability render`: Prometheus alert rules from the inventory and the price book, as a plain rules file
(`quartermaster.rules.yaml`, for `rule_files:`), a prometheus-operator PrometheusRule
(`quartermaster-prometheusrule.yaml`, for `kubectl apply`; `--rule-label` for the operator's ruleSelector),
Google Managed Prometheus Rules per GKE cluster named by `--gmp` (`quartermaster-gmp-rules-<cluster>.yaml`), and
a Grafana dashboard (`quartermaster-dashboard.json`, for import) with its ConfigMap for Grafana's dashboard sidecar
(`quartermaster-dashboard-configmap.yaml`)."""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path

import typer

from quartermaster.cli.command_support import (
    check_output,
    console,
    err_console,
    inventory_argument,
    load_or_exit,
    read_plan_or_exit,
)
from quartermaster.errors import UsageError
from quartermaster.modules.observability.metrics import DEFAULT_CLUSTER_LABEL, KUEUE_NAMESPACE
from quartermaster.names import DNS_LABEL_RE
from quartermaster.textsafety import log_line, promql_label_name

app = typer.Typer(help="Alerts (and dashboards) from the inventory.", no_args_is_help=True)

RULES_FILE = "quartermaster.rules.yaml"
PROMETHEUS_RULE_FILE = "quartermaster-prometheusrule.yaml"
DASHBOARD_FILE = "quartermaster-dashboard.json"
CONFIGMAP_FILE = "quartermaster-dashboard-configmap.yaml"
GMP_FILE = "quartermaster-gmp-rules-{cluster}.yaml"


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
    rule_label: list[str] = typer.Option(
        None,
        "--rule-label",
        metavar="KEY=VALUE",
        help="A label on the PrometheusRule, for the operator's ruleSelector (repeatable; kube-prometheus-stack: "
        "release=<its Helm release>).",
    ),
    gmp: list[str] = typer.Option(
        None,
        "--gmp",
        metavar="CLUSTER",
        help="Also write a Google Managed Prometheus Rules object (monitoring.googleapis.com/v1) with this GKE "
        "cluster's rules (repeatable).",
    ),
    gmp_namespace: str = typer.Option(
        KUEUE_NAMESPACE, help="Namespace of the GMP Rules: where Kueue runs (GMP scopes rules to their namespace)."
    ),
    at: str = typer.Option(None, help="Day whose active commitments get alerts (YYYY-MM-DD); default: today (UTC)."),
    plan_dir: Path = typer.Option(
        None,
        "--plan",
        help="A plan folder written by `qm plan`: each budget alert states the plan's planned charge (the finance "
        "report's budget status) and an alert fires when spend runs above its use part (the charge less the idle "
        "share). Without it, the budget alerts say there is no plan.",
    ),
) -> None:
    """Write alert rules whose thresholds come from the inventory and, with --plan, the plan's budget status (each
    alert's runbook names the file to change) and a Grafana dashboard of usage vs quota, commitments vs break-even,
    pending demand and forecast vs actual."""
    # imported when run, so that `qm --help` stays fast
    from quartermaster.modules.kueue.k8s import is_dns_label, is_label_value, is_qualified_name
    from quartermaster.modules.observability.emit import dashboard
    from quartermaster.modules.observability.rules import (
        Options,
        PlannedBudgets,
        build_rules,
        gmp_refusal,
        gmp_rules,
        prometheus_rule,
    )
    from quartermaster.plan_figures import planned_status, planned_use
    from quartermaster.yamlwriter import dump_yaml

    labels: dict[str, str] = {}
    for item in rule_label or []:
        key, sep, value = item.partition("=")
        if not sep or not is_qualified_name(key) or not is_label_value(value):
            raise UsageError(
                f"--rule-label {item!r}: not KEY=VALUE with a Kubernetes label key and value. Write it like "
                "release=kube-prometheus-stack (the label your Prometheus' ruleSelector matches)."
            )
        labels[key] = value
    if not is_dns_label(gmp_namespace):
        raise UsageError(
            f"--gmp-namespace {log_line(gmp_namespace)}: not a Kubernetes namespace name (lower-case letters, digits "
            "and '-', at most 63 characters)."
        )

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
    plan = read_plan_or_exit(plan_dir) if plan_dir is not None else None
    planned = (
        None
        if plan is None
        else PlannedBudgets(planned_status(result.inventory.policy.budgets, plan), planned_use(plan), str(plan_dir))
    )
    known = [c.name for c in result.inventory.clusters]
    for name in gmp or []:
        if name not in known:
            raise UsageError(f"--gmp {name}: no such cluster in {path}. Clusters: {', '.join(known)}.")
        refusal = gmp_refusal(result, name)
        if refusal is not None:
            raise UsageError(refusal)
    options = Options(commitment_days, pending_hours, capacity_minutes, cluster_label, day)
    model = dashboard(result, options)
    # after dashboard(), which names the extra to install when grafana-foundation-sdk (imported here) is missing
    from quartermaster.modules.observability.dashboard import dashboard_configmap, to_json

    rules, notes = build_rules(result, options, planned)
    out.mkdir(parents=True, exist_ok=True)
    texts = {
        RULES_FILE: dump_yaml(rules),
        PROMETHEUS_RULE_FILE: dump_yaml(prometheus_rule(rules, namespace, labels)),
        DASHBOARD_FILE: to_json(model),
        CONFIGMAP_FILE: dump_yaml(dashboard_configmap(model, namespace)),
    }
    for name in gmp or []:  # one cluster's rules: GMP evaluates them within that cluster (and namespace)
        cluster_rules, cluster_notes = build_rules(result, dataclasses.replace(options, cluster=name))
        texts[GMP_FILE.format(cluster=name)] = dump_yaml(gmp_rules(cluster_rules, gmp_namespace))
        notes += [n for n in cluster_notes if n not in notes]
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
