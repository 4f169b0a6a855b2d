"""The observability objects as Kubernetes manifests: the PrometheusRule and the dashboard ConfigMap, for
`qm observability render`, and for `qm synth` and the Pulumi program when a cluster sets `observability.enabled`."""

from __future__ import annotations

import datetime as dt
from typing import Any

from quartermaster.errors import UsageError
from quartermaster.loader import LoadResult, SourceMap
from quartermaster.model import Inventory
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
    return build_dashboard(result.inventory, options.cluster_label, options.cluster)


def cluster_manifests(
    inventory: Inventory, cluster: str, at: dt.date, sources: SourceMap | None = None
) -> list[dict[str, Any]]:
    """The PrometheusRule and the dashboard ConfigMap for `cluster`'s own Prometheus and Grafana, in its
    `observability.namespace`; none unless `observability.enabled`. `sources` lets runbooks name inventory files."""
    settings = inventory.cluster_by_name[cluster].observability
    if not settings.enabled:
        return []
    from quartermaster.modules.observability.dashboard import dashboard_configmap

    result = LoadResult(inventory, [], sources or SourceMap(), [])
    options = Options(at=at, cluster=cluster)
    model = dashboard(result, options)
    rules, _ = build_rules(result, options)
    return [
        prometheus_rule(rules, settings.namespace, dict(settings.rule_labels)),
        dashboard_configmap(model, settings.namespace),
    ]


def kubernetes_objects(
    inventory: Inventory, cluster: str, now: dt.datetime, sources: SourceMap | None = None
) -> list[dict[str, Any]]:
    """Every Kubernetes object a cluster's stack declares at `now` (the Pulumi program and `qm synth` alike): its
    Kueue objects, then its observability objects when enabled."""
    from quartermaster.modules.kueue import objects_for_cluster

    return [*objects_for_cluster(inventory, cluster, now), *cluster_manifests(inventory, cluster, now.date(), sources)]
