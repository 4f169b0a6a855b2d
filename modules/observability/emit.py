"""The observability objects as Kubernetes manifests: the PrometheusRule and the dashboard ConfigMap, for
`qm observability render`, `qm synth` and the Pulumi program."""

from __future__ import annotations

from typing import Any

from quartermaster.errors import UsageError
from quartermaster.loader import LoadResult
from quartermaster.modules.observability.rules import Options, build_rules, prometheus_rule

EXTRA = "pip install 'quartermaster[observability]'"


def dashboard(result: LoadResult, options: Options) -> dict[str, Any]:
    """The Grafana dashboard; a UsageError naming the extra to install when grafana-foundation-sdk is missing."""
    try:
        from quartermaster.modules.observability.dashboard import build_dashboard
    except ModuleNotFoundError as error:
        if not (error.name or "").startswith("grafana_foundation_sdk"):
            raise
        raise UsageError(f"the Grafana dashboard needs grafana-foundation-sdk: {EXTRA}.") from None
    return build_dashboard(result.inventory, options.cluster_label)


def manifests(result: LoadResult, options: Options, namespace: str) -> tuple[list[dict[str, Any]], list[str]]:
    """[PrometheusRule, dashboard ConfigMap] in `namespace`, and the rules' notes."""
    from quartermaster.modules.observability.dashboard import dashboard_configmap

    model = dashboard(result, options)
    rules, notes = build_rules(result, options)
    return [prometheus_rule(rules, namespace), dashboard_configmap(model, namespace)], notes
