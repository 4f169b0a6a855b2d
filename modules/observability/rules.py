"""Prometheus alert rules from the inventory and the price book: a plain rules file and a PrometheusRule.

Every threshold is a number of the inventory or the price book, written into the expression; every alert names
in its `runbook` annotation the inventory file (and YAML path) to change. Alerts:

- `QuartermasterCommitmentBelowBreakEven` (per commitment active on the render date): the mean utilisation of
  the commitment's capacity (accelerators admitted by Kueue in the pools that consume it / count x accelerators
  per node) over the last `commitment_days` days is below its break-even, commit price / on-demand price
  (`quartermaster.pricing.break_even`): on-demand for the same use would have been cheaper.
- `QuartermasterPendingAboveQuota` (per team, cluster and accelerator resource): the team's demand there (quota
  reserved + pending requests) exceeds its nominal quota, with workloads pending, for `pending_hours` hours.
- `QuartermasterFlavorAtCapacity` (per pool): the pool's accelerators are all reserved while a ClusterQueue with
  quota in it has pending workloads, for `capacity_minutes` minutes.
- `QuartermasterBudgetOnTrack` (per budget): during the budget's quarter, the cost centre's spend per hour over
  the last 7 days (admitted accelerators x the rate of the pool: its commitment's price, else the price of its
  provisioning, via `quartermaster.pricing`; idle commitment capacity not shared) times the quarter's hours
  exceeds the budget.
- `QuartermasterSpendAbovePlan` (per budget, with a plan): the same projection exceeds the cost centre's planned
  use for the quarter without its share of idle (`plan_figures.planned_use`), the projection's own basis.

Budget thresholds come from `budget_status.budget_status`, the function the finance report and `qm diff` use: given the
plan's rows (`planned`, basis planned: the finance report's `budget_status` table), each budget alert states its
budget and the planned charge, with their bases, in its annotations (`threshold`, `planned`). The threshold of
`QuartermasterSpendAbovePlan` is the planned use alone (`PlannedBudgets.use`): the projection shares no idle, so
holding it to the planned charge (use plus idle share) would fire late by the idle share. Without a plan the
annotation says there is none; no figure stands in for it.

Kueue's gauges used here need `metrics.enableClusterQueueResources: true` (see `metrics`). Series are matched to a
cluster by the `cluster_label` (an external label) because a ClusterQueue has the same name in every cluster;
flavor names are unique across the inventory and need no cluster. With `Options.cluster` (the rules a cluster's own
Prometheus evaluates, `observability.enabled`), only that cluster's objects get rules and no expression matches
the cluster label (a Prometheus does not add its external labels to the series its rules read); the budget alerts
and the forecast records, which need every cluster's series, are left out with a note.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from quartermaster.budget_status import BudgetStatus
from quartermaster.capacity import pool_accelerators
from quartermaster.issues import format_path
from quartermaster.loader import LoadResult
from quartermaster.model import Budget, Inventory
from quartermaster.modules.observability.metrics import (
    DEFAULT_CLUSTER_LABEL,
    KUEUE_NAMESPACE,
    KUEUE_NOMINAL_QUOTA,
    KUEUE_PENDING_WORKLOADS,
    KUEUE_RESERVATION,
    KUEUE_RESOURCE_PENDING,
    KUEUE_USAGE,
    NOT_FOLLOWER,
)
from quartermaster.pricing import (
    BASES,
    MissingPrice,
    break_even,
    cents,
    format_pct,
    format_usd,
    missing_prices,
    pool_rate,
)
from quartermaster.providers import provider_of
from quartermaster.textsafety import prometheus_template_text
from quartermaster.units import Quarter, quarter_bounds, quarter_hours

UTILISATION = "quartermaster:commitment_utilisation:ratio"
BREAK_EVEN = "quartermaster:commitment_break_even:ratio"
SPEND = "quartermaster:cost_center_usd_per_hour"
FORECAST = "quartermaster:demand_forecast:accelerators"
USED_BY_CLASS = "quartermaster:team_accelerators_used:sum"
RECORDS = (UTILISATION, BREAK_EVEN, SPEND, FORECAST, USED_BY_CLASS)
"""The series the rules record (the dashboard reads them next to Kueue's own)."""
PROMETHEUS_RULE_API = "monitoring.coreos.com/v1"  # prometheus-operator's PrometheusRule CRD
GMP_RULES_API = "monitoring.googleapis.com/v1"  # Google Cloud Managed Service for Prometheus


@dataclass(frozen=True)
class Options:
    """Alert windows; the thresholds themselves come from the inventory."""

    commitment_days: int = 3
    pending_hours: int = 6
    capacity_minutes: int = 30
    cluster_label: str = DEFAULT_CLUSTER_LABEL
    at: dt.date | None = None
    """Commitments active on this day get a break-even alert (default: today, UTC)."""
    cluster: str | None = None
    """Rules for this cluster's own Prometheus only (None: one Prometheus that sees every cluster)."""

    def where(self, cluster: str) -> dict[str, str]:
        """The label matcher that picks `cluster`'s series: none when the Prometheus sees that cluster only."""
        return {} if self.cluster else {self.cluster_label: cluster}


def _sel(metric: str, **labels: str) -> str:
    """`metric{a="x",b=~"y|z",replica_role!="follower"}`: a value containing `|` is matched as alternatives."""
    parts = [f'{k}{"=~" if "|" in v else "="}"{v}"' for k, v in labels.items()]
    return f"{metric}{{{','.join([*parts, NOT_FOLLOWER])}}}"


def _num(value: Decimal | float | int) -> str:
    """A threshold as PromQL text: at most 6 decimals, no exponent, no trailing zeros."""
    text = f"{Decimal(str(value)):.6f}".rstrip("0").rstrip(".")
    return text or "0"


def _where(result: LoadResult, *key: str) -> str:
    """`inventory/teams/x.yaml (teams[0])`: the file and YAML path that define an object."""
    file, path = result.sources.objects.get(key, ("the inventory", ()))
    dotted = format_path(path)
    return f"{file} ({dotted})" if dotted else str(file)


def _resource(inventory: Inventory, pool: str) -> str:
    return inventory.machine_by_name[inventory.pool_by_name[pool].machine].resource_name


@dataclass(frozen=True)
class PlannedBudgets:
    """A plan's budget status (`budget_status.budget_status`, basis planned), as the finance report shows it, and where
    the plan was read from."""

    rows: tuple[BudgetStatus, ...]
    use: Mapping[tuple[str, Quarter], Decimal]
    """use: (cost centre, quarter) -> its planned use without idle share (`plan_figures.planned_use`), the basis of the
    metered spend the alerts project, so QuartermasterSpendAbovePlan compares like with like."""
    plan: str
    """plan: the plan folder, named in the alerts' annotations."""


def build_rules(
    result: LoadResult, options: Options | None = None, planned: PlannedBudgets | None = None
) -> tuple[dict[str, Any], list[str]]:
    """The rules file (`groups:`) as a plain dict, deterministic for a given inventory and options, and a note for
    each object that gets no alert and why. With `planned`, the budget alerts carry the plan's figures."""
    o = options or Options()
    at = o.at or dt.datetime.now(dt.UTC).date()
    notes: list[str] = []
    records, alerts = _commitment_rules(result, o, at, notes)
    alerts += _pending_alerts(result, o)
    alerts += _capacity_alerts(result, o)
    if o.cluster:
        notes.append(
            f"cluster {o.cluster}: no budget alerts and no forecast records (they need every cluster's "
            "series; render them with `qm observability render` for a Prometheus that sees all clusters)"
        )
    else:
        spend, budget_alerts = _budget_rules(result, planned, notes)
        records += spend
        alerts += budget_alerts
        records += forecast_records(result.inventory, notes)
    groups = []
    if records:
        groups.append({"name": "quartermaster.records", "interval": "5m", "rules": records})
    groups.append({"name": "quartermaster.alerts", "rules": alerts})
    return {"groups": groups}, notes


def _commitment_rules(
    result: LoadResult, o: Options, at: dt.date, notes: list[str]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The utilisation and break-even records and the `QuartermasterCommitmentBelowBreakEven` alert of each
    commitment active on `at`; a note for each commitment left out and why."""
    inventory = result.inventory
    records: list[dict[str, Any]] = []
    alerts: list[dict[str, Any]] = []
    consumers: dict[str, list[str]] = {}
    for pool in inventory.pools:
        if pool.commitment:
            consumers.setdefault(pool.commitment, []).append(pool.name)
    for c in inventory.commitments:
        pools = consumers.get(c.name, [])
        if o.cluster:
            inside = [p for p in pools if inventory.cluster_of_pool[p].name == o.cluster]
            if not inside:
                continue
            if len(inside) < len(pools):
                notes.append(
                    f"commitment {c.name}: no break-even alert in {o.cluster} (pools in other clusters consume it too)"
                )
                continue
        even = break_even(inventory, c.machine, c.site, c.usd_per_node_hour)
        ratio = even.utilisation
        if not pools or ratio is None or not (c.start <= at < c.end):
            why = (
                "no pool consumes it"
                if not pools
                else "the price book has no on-demand price for its accelerator nor for one it is worth under "
                "policy.equivalence"
                if ratio is None
                else f"its term [{c.start}, {c.end}) does not cover {at}"
            )
            notes.append(f"commitment {c.name}: no break-even alert ({why})")
            continue
        capacity = c.count * inventory.machine_by_name[c.machine].accelerators_per_node
        flavors = "|".join(sorted(pools))
        used = _sel(KUEUE_USAGE, flavor=flavors, resource=_resource(inventory, pools[0]))
        # The term: the rules were rendered while it runs, and must go quiet when it ends (a capacity block ends
        # after 91 days; its usage then drops to 0, which would read as "below break-even" forever).
        term = f"on() (vector(time()) >= {_epoch(c.start)}) and on() (vector(time()) < {_epoch(c.end)})"
        # Kueue exports its quota gauges only with metrics.enableClusterQueueResources; without them the usage
        # would read as 0 through `or vector(0)`.
        reported = f"on() (count({_sel(KUEUE_NOMINAL_QUOTA, flavor=flavors)}) > 0)"
        records.append(
            {
                "record": UTILISATION,
                "labels": {"commitment": c.name},
                "expr": f"((sum({used}) or vector(0)) / {capacity}) and {term}",
            }
        )
        records.append({"record": BREAK_EVEN, "labels": {"commitment": c.name}, "expr": f"vector({_num(ratio)})"})
        alerts.append(
            _alert(
                "QuartermasterCommitmentBelowBreakEven",
                {"commitment": c.name, "severity": "warning"},
                f'avg_over_time({UTILISATION}{{commitment="{c.name}"}}[{o.commitment_days}d]) < {_num(ratio)}'
                f"\nand {term}\nand {reported}",
                "1h",
                f"Commitment {c.name} is used below its break-even ({format_pct(ratio)}) over {o.commitment_days} days",
                f"Mean utilisation of {c.name} ({capacity} accelerators in {', '.join(sorted(pools))}) over "
                f"{o.commitment_days} days is {{{{ $value | humanizePercentage }}}}, below {format_pct(ratio)} = "
                f"commit price {format_usd(even.committed_rate, 4)}/accelerator-hour "
                f"({format_usd(c.usd_per_node_hour, 4)}/node-hour) / on-demand price ({even.on_demand_basis}: "
                f"{format_usd(even.on_demand_rate, 4)}/accelerator-hour). The term runs {c.start} to {c.end}.",
                f"Move demand onto {', '.join(sorted(pools))}: give teams quota there in their files under "
                f"inventory/teams/ (`quotas`), or lower the on-demand pools' quotas; at renewal, size the commitment "
                f"down in {_where(result, 'commitments', c.name)} (`count`).",
            )
        )
    return records, alerts


def _pending_alerts(result: LoadResult, o: Options) -> list[dict[str, Any]]:
    """`QuartermasterPendingAboveQuota` per team, cluster and accelerator resource the team has quota for."""
    inventory = result.inventory
    alerts = []
    for team in inventory.teams:
        per_cluster: dict[tuple[str, str], int] = {}
        for q in team.quotas:
            if q.flavor in inventory.pool_by_name:
                key = (inventory.cluster_of_pool[q.flavor].name, _resource(inventory, q.flavor))
                per_cluster[key] = per_cluster.get(key, 0) + q.nominal
        for (cluster, resource), nominal in sorted(per_cluster.items()):
            if o.cluster and cluster != o.cluster:
                continue
            where = {**o.where(cluster), "cluster_queue": team.name, "resource": resource}
            pending = f"sum({_sel(KUEUE_RESOURCE_PENDING, **where)})"
            held = f"(sum({_sel(KUEUE_RESERVATION, **where)}) or vector(0))"
            alerts.append(
                _alert(
                    "QuartermasterPendingAboveQuota",
                    {"team": team.name, o.cluster_label: cluster, "resource": resource, "severity": "warning"},
                    f"({held} + {pending}) > {nominal} and {pending} > 0",
                    f"{o.pending_hours}h",
                    f"Team {team.name} wants more {resource} than its quota in {cluster}",
                    f"{team.name}'s demand in {cluster} (reserved + pending) is {{{{ $value }}}} {resource}, above its "
                    f"nominal quota of {nominal} for {o.pending_hours} hours; its workloads wait or borrow.",
                    f"Raise the team's `nominal` for the flavors of {cluster} in {_where(result, 'teams', team.name)} "
                    "(`quotas`), or move work to a cluster where it has quota; `qm diff` shows the cost of the change.",
                )
            )
    return alerts


def _capacity_alerts(result: LoadResult, o: Options) -> list[dict[str, Any]]:
    """`QuartermasterFlavorAtCapacity` per pool with capacity that some team has quota in."""
    inventory = result.inventory
    alerts = []
    for pool in inventory.pools:
        capacity = pool_accelerators(inventory, pool)
        queues = sorted(t.name for t in inventory.teams if any(q.flavor == pool.name for q in t.quotas))
        cluster = inventory.cluster_of_pool[pool.name].name
        if capacity == 0 or not queues or (o.cluster and cluster != o.cluster):
            continue
        reserved = f"sum({_sel(KUEUE_RESERVATION, flavor=pool.name, resource=_resource(inventory, pool.name))})"
        waiting = f"sum({_sel(KUEUE_PENDING_WORKLOADS, **o.where(cluster), cluster_queue='|'.join(queues))})"
        alerts.append(
            _alert(
                "QuartermasterFlavorAtCapacity",
                {"flavor": pool.name, o.cluster_label: cluster, "severity": "info"},
                # the value is the pending workloads (not admitted), the condition that the flavor is full
                f"{waiting} > 0 and on() ({reserved} >= {capacity})",
                f"{o.capacity_minutes}m",
                f"Flavor {pool.name} is full and workloads are waiting",
                f"All {capacity} accelerators of {pool.name} ({cluster}) are reserved while ClusterQueues "
                f"{', '.join(queues)} have {{{{ $value }}}} pending workloads (not admitted).",
                f"Grow the pool in {_where(result, 'pools', pool.name)} (`nodes` or `autoscaling.max_nodes`), or give "
                "the waiting teams quota in another flavor in their files under inventory/teams/.",
            )
        )
    return alerts


def _budget_rules(
    result: LoadResult, planned: PlannedBudgets | None, notes: list[str]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Per budget with priced pools: the cost centre's spend record, `QuartermasterBudgetOnTrack` and, with a plan
    that covers the budget's quarter, `QuartermasterSpendAbovePlan`; a note for what is left out and why."""
    inventory = result.inventory
    records: list[dict[str, Any]] = []
    alerts: list[dict[str, Any]] = []
    plan_rows = {} if planned is None else {(r.cost_center, r.quarter): r for r in planned.rows}
    if planned is None and inventory.policy.budgets:
        notes.append(
            "budget alerts: no plan given (--plan DIR), so they show no planned charge and no "
            "QuartermasterSpendAbovePlan alert is written"
        )
    unpriced = {m.pool: m for m in missing_prices(inventory)}
    for budget in inventory.policy.budgets:
        teams = sorted(t.name for t in inventory.teams if t.cost_center == budget.cost_center)
        terms = _spend_terms(inventory, budget, teams, unpriced, notes)
        if not terms:
            continue
        row = plan_rows.get((budget.cost_center, budget.quarter))
        if planned is not None and row is None:
            notes.append(
                f"budget {budget.cost_center} {budget.quarter}: the plan in {planned.plan} does not cover "
                f"{budget.quarter}; no planned charge and no QuartermasterSpendAbovePlan alert"
            )
        records.append({"record": SPEND, "labels": {"cost_center": budget.cost_center}, "expr": "\n+ ".join(terms)})
        alerts += _budget_alerts(result, budget, teams, planned, row)
    return records, alerts


def _spend_terms(
    inventory: Inventory,
    budget: Budget,
    teams: list[str],
    unpriced: Mapping[str, MissingPrice],
    notes: list[str],
) -> list[str]:
    """The cost centre's spend per hour, one term per pool its teams have quota in: the accelerators in use times
    the pool's rate; a pool without a price is left out with a note."""
    terms = []
    for pool in inventory.pools:
        if not any(q.flavor == pool.name for t in teams for q in inventory.team_by_name[t].quotas):
            continue
        rate = pool_rate(inventory, pool.name)
        if rate is None:
            notes.append(f"budget {budget.cost_center} {budget.quarter}: leaves out {unpriced[pool.name].message}")
            continue
        used = _sel(
            KUEUE_USAGE, flavor=pool.name, cluster_queue="|".join(teams), resource=_resource(inventory, pool.name)
        )
        terms.append(f"(sum({used}) or vector(0)) * {_num(rate)}")
    return terms


def _budget_alerts(
    result: LoadResult, budget: Budget, teams: list[str], planned: PlannedBudgets | None, row: BudgetStatus | None
) -> list[dict[str, Any]]:
    """`QuartermasterBudgetOnTrack` for `budget`, and `QuartermasterSpendAbovePlan` when the plan has its `row`."""
    start, end = quarter_bounds(budget.quarter)
    hours = quarter_hours(budget.quarter)
    budget_usd = cents(budget.usd)  # the budget_status rows' budget_usd, to the cent
    projected = f'avg_over_time({SPEND}{{cost_center="{budget.cost_center}"}}[7d]) * {hours}'
    during = f"on() (vector(time()) >= {_epoch(start)}) and on() (vector(time()) < {_epoch(end)})"
    value = (
        f"At the last 7 days' rate, {budget.cost_center} spends {{{{ $value | humanize }}}} USD in "
        f"{budget.quarter} ({hours} hours; basis: metered usage at the pools' rates, idle capacity not shared)"
    )
    use = None if planned is None or row is None else planned.use.get((budget.cost_center, budget.quarter), Decimal(0))
    # the budget status counts the cost centre's share of idle capacity: the budget alert counts the same share
    idle = None if row is None or use is None else row.usd - use
    charge = projected if idle is None else f"{projected} + {_num(idle)}"
    charged = (
        f"At the last 7 days' rate of metered use (the pools' rates) plus its planned share of idle capacity, "
        f"{format_usd(idle)} (basis planned, as the budget status counts it), {budget.cost_center} is charged "
        f"{{{{ $value | humanize }}}} USD in {budget.quarter} ({hours} hours)"
        if idle is not None
        else f"{value}; its share of idle capacity is not counted (no plan: `--plan DIR`)"
    )
    annotations = {
        "threshold": f"budget {format_usd(budget_usd)} (policy.budgets, {budget.cost_center} {budget.quarter})",
        "planned": _planned_text(planned, row),
    }
    alerts = [
        _alert(
            "QuartermasterBudgetOnTrack",
            {"cost_center": budget.cost_center, "quarter": budget.quarter, "severity": "warning"},
            f"{charge} > {_num(budget_usd)} and {during}",
            "1h",
            f"Cost centre {budget.cost_center} is on track to exceed its {budget.quarter} budget",
            f"{charged}, above its budget of {format_usd(budget_usd)}.",
            f"Lower the quotas of {', '.join(teams)} in their files under inventory/teams/, or raise the budget in "
            f"{_where(result, 'policy')} (`policy.budgets`, cost_center {budget.cost_center}) with finance's "
            "approval.",
            annotations,
        )
    ]
    if row is not None and use is not None:
        basis = (
            "basis planned use: its teams' planned use at the plan's prices, idle capacity not shared, as the "
            "projection"
        )
        alerts.append(
            _alert(
                "QuartermasterSpendAbovePlan",
                {"cost_center": budget.cost_center, "quarter": budget.quarter, "severity": "info"},
                f"{projected} > {_num(use)} and {during}",
                "1h",
                f"Cost centre {budget.cost_center} spends above its {budget.quarter} plan",
                f"{value}, above its planned use of {format_usd(use)} ({basis}; with their share of idle its "
                f"planned charge is {format_usd(row.usd)}) against a budget of {format_usd(budget_usd)}: the "
                "plan's figure no longer holds.",
                f"Compare the teams' use with the plan's forecast (demand.csv) and re-plan (`qm plan`), or lower "
                f"the quotas of {', '.join(teams)} in their files under inventory/teams/.",
                {**annotations, "threshold": f"planned use {format_usd(use)} ({basis})"},
            )
        )
    return alerts


def _epoch(day: dt.date) -> int:
    return int(dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC).timestamp())


def forecast_records(inventory: Inventory, notes: list[str]) -> list[dict[str, Any]]:
    """The demand forecast next to actual use, per team and accelerator class (the plan's input, `demand.csv`):

    - `FORECAST{team, accelerator, quantile="p50"|"p90"}`: the forecast accelerators of the quarter the rule is
      evaluated in (rows of several sites summed; p90 sums are an upper bound), nothing outside forecast quarters;
    - `USED_BY_CLASS{team, accelerator}`: accelerators of the team's admitted workloads in the flavors of that
      class, all clusters together (the forecast names no cluster).
    Recorded rather than drawn from the dashboard, so that Prometheus keeps the forecast that was current at each
    moment next to what happened. Scenario rows (`policy.scenarios`) have no quantile and are left out (a note)."""
    forecast: dict[tuple[str, str, str], dict[str, float]] = {}
    scenario_rows = 0
    for row in inventory.demand:
        if row.scenario is not None:
            scenario_rows += 1
            continue
        for quantile, value in (("p50", row.p50), ("p90", row.p90 if row.p90 is not None else row.p50)):
            per_quarter = forecast.setdefault((row.team, row.accelerator, quantile), {})
            per_quarter[row.period] = per_quarter.get(row.period, 0.0) + value
    if scenario_rows:
        notes.append(f"demand: {scenario_rows} scenario rows have no p50/p90; the forecast records leave them out")
    out: list[dict[str, Any]] = []
    for (team, accelerator, quantile), per_quarter in sorted(forecast.items()):
        pieces = []
        for quarter, value in sorted(per_quarter.items()):
            start, end = quarter_bounds(quarter)
            pieces.append(
                f"(vector({_num(round(value, 6))}) and on() (vector(time()) >= {_epoch(start)} < {_epoch(end)}))"
            )
        out.append(
            {
                "record": FORECAST,
                "labels": {"team": team, "accelerator": accelerator, "quantile": quantile},
                "expr": "\nor ".join(pieces),
            }
        )
    teams = "|".join(sorted(t.name for t in inventory.teams))
    by_class: dict[tuple[str, str], list[str]] = {}
    for pool in inventory.pools:
        machine = inventory.machine_by_name[pool.machine]
        by_class.setdefault((machine.accelerator, machine.resource_name), []).append(pool.name)
    for (accelerator, resource), pools in sorted(by_class.items()):
        used = _sel(KUEUE_USAGE, flavor="|".join(sorted(pools)), resource=resource, cluster_queue=teams)
        out.append(
            {
                "record": USED_BY_CLASS,
                "labels": {"accelerator": accelerator},
                "expr": f'sum by (team) (label_replace({used}, "team", "$1", "cluster_queue", "(.*)"))',
            }
        )
    return out


def _planned_text(planned: PlannedBudgets | None, row: BudgetStatus | None) -> str:
    """What the plan says of a budget, with its basis, as an annotation: literal text (the plan folder is a path)."""
    if planned is None:
        return (
            "no plan given: rendered without --plan, so no planned charge is shown (`qm observability render --plan "
            "DIR` adds the plan's figure, the one the finance report and `qm diff --plan` show)"
        )
    if row is None:
        return prometheus_template_text(f"none: the plan in {planned.plan} does not cover this quarter")
    used = "" if row.used is None else f", {format_pct(row.used)} of the budget"
    return prometheus_template_text(
        f"{format_usd(row.usd)}{used} (basis planned: {BASES['planned']}; budget_status of the plan in "
        f"{planned.plan}, the finance report's figure)"
    )


def _alert(
    name: str,
    labels: dict[str, str],
    expr: str,
    for_: str,
    summary: str,
    description: str,
    runbook: str,
    more: dict[str, str] | None = None,
) -> dict[str, Any]:
    """An alerting rule; `more` adds annotations (literal text, already escaped)."""
    return {
        "alert": name,
        "expr": expr,
        "for": for_,
        "labels": labels,
        # the runbook names an inventory file: literal text, never a template Prometheus runs
        "annotations": {
            "summary": summary,
            "description": description,
            "runbook": prometheus_template_text(runbook),
            **(more or {}),
        },
    }


def prometheus_rule(
    rules: dict[str, Any], namespace: str = "monitoring", labels: dict[str, str] | None = None
) -> dict[str, Any]:
    """The same groups as a prometheus-operator PrometheusRule object, with `labels` for the operator's
    `ruleSelector` (kube-prometheus-stack selects `release: <its Helm release>` by default)."""
    return {
        "apiVersion": PROMETHEUS_RULE_API,
        "kind": "PrometheusRule",
        "metadata": {
            "name": "quartermaster",
            "namespace": namespace,
            "labels": {**(labels or {}), "app.kubernetes.io/managed-by": "quartermaster"},
        },
        "spec": rules,
    }


GMP_SCOPE_LABELS = ("project_id", "location", "cluster", "namespace")
"""The labels GMP sets on every selector and every result of a namespaced `Rules` object itself; it refuses the
whole object when a rule's labels already hold one ("label %q already set on rule", `setLabel`) or a selector
matches one otherwise than GMP would (`setSelector`): `scope` in pkg/operator/apis/monitoring/v1/rules_config.go,
https://github.com/GoogleCloudPlatform/prometheus-engine (read 2026-11-27), run by its validating webhook and its
operator."""


def gmp_rules(rules: dict[str, Any], namespace: str = KUEUE_NAMESPACE) -> dict[str, Any]:
    """The same groups as a Google Cloud Managed Service for Prometheus `Rules` object. GMP scopes a Rules object's
    queries to its project, cluster and namespace (cloud.google.com/stackdriver/docs/managed-prometheus/
    rules-managed, read 2026-11-25), so it goes into the namespace Kueue's metrics come from, with one cluster's
    rules (`Options.cluster`: no cluster matcher), and without the labels GMP sets itself (GMP_SCOPE_LABELS: its
    `cluster` names the GKE cluster in every alert)."""
    groups = [
        {
            **group,
            "rules": [
                {**rule, "labels": {k: v for k, v in rule["labels"].items() if k not in GMP_SCOPE_LABELS}}
                if "labels" in rule
                else rule
                for rule in group["rules"]
            ],
        }
        for group in rules["groups"]
    ]
    return {
        "apiVersion": GMP_RULES_API,
        "kind": "Rules",
        "metadata": {
            "name": "quartermaster",
            "namespace": namespace,
            "labels": {"app.kubernetes.io/managed-by": "quartermaster"},
        },
        "spec": {**rules, "groups": groups},
    }


def gmp_refusal(result: LoadResult, cluster: str) -> str | None:
    """Why `--gmp CLUSTER` cannot be rendered (not a GKE cluster), naming where the cluster is defined; None if it
    can."""
    found = result.inventory.cluster_by_name[cluster]
    provider = provider_of(found.kind)
    if provider.managed_prometheus_rules:
        return None
    runs = [c.name for c in result.inventory.clusters if provider_of(c.kind).managed_prometheus_rules]
    return (
        f"--gmp {cluster}: {_where(result, 'clusters', cluster)} is not a GKE cluster (kind {found.kind}); Google "
        f"Cloud Managed Service for Prometheus runs Rules on GKE clusters only (GKE clusters: "
        f"{', '.join(runs) or 'none'}). Leave it out of --gmp; its rules are in the PrometheusRule file."
    )
