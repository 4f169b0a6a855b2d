"""Alert rules from the example inventory: `promtool check rules` on the rendered files, and `promtool test rules`
with series that should and should not fire, for every alert (issue 20)."""

from __future__ import annotations

import copy
import dataclasses
import datetime as dt
import json
import subprocess
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from quartermaster.budget_status import BudgetStatus
from quartermaster.capacity import pool_accelerators
from quartermaster.cli import app
from quartermaster.loader import LoadResult, load
from quartermaster.model import Budget, Inventory
from quartermaster.modules.observability.rules import BREAK_EVEN, Options, PlannedBudgets, build_rules
from quartermaster.plan_contract import load_result
from quartermaster.plan_figures import planned_status, planned_use
from quartermaster.pricing import break_even, cents, pool_rate
from quartermaster.reports.finance import build_report
from quartermaster.yamlwriter import dump_yaml
from tests.observability.promserver import PROMTOOL, needs_promtool
from tests.paths import DATA, INVENTORY

AT = dt.date(2026, 11, 1)
# Samples every 5 minutes, as often as Prometheus' default lookback (5m) needs for an instant value at any time.
EVERY = "5m"
LEADER = 'replica_role="leader"'


@pytest.fixture(scope="module")
def loaded() -> LoadResult:
    return load(INVENTORY)


def run_promtool(
    tmp_path: Path, rules: dict[str, Any], tests: list[dict[str, Any]], keep_annotations: bool = False
) -> None:
    """`promtool test rules` on the rules, without annotations unless kept (their templates are checked by `check
    rules`; promtool compares annotations verbatim)."""
    bare = copy.deepcopy(rules)
    for group in bare["groups"]:
        for rule in group["rules"]:
            if not keep_annotations:
                rule.pop("annotations", None)
    (tmp_path / "rules.yaml").write_text(dump_yaml(bare), encoding="utf-8")
    (tmp_path / "tests.yaml").write_text(
        yaml.safe_dump({"rule_files": ["rules.yaml"], "evaluation_interval": "5m", "tests": tests}, sort_keys=False),
        encoding="utf-8",
    )
    assert PROMTOOL
    run = subprocess.run(
        [PROMTOOL, "test", "rules", "tests.yaml"], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stdout + run.stderr


def usage(
    flavor: str,
    queue: str,
    resource: str,
    values: str,
    metric: str = "kueue_cluster_queue_resource_usage",
    cluster: str = "",
) -> dict[str, str]:
    where = f',cluster="{cluster}"' if cluster else ""
    return {
        "series": f'{metric}{{cluster_queue="{queue}",flavor="{flavor}",resource="{resource}",{LEADER}{where}}}',
        "values": values,
    }


@needs_promtool
def test_the_rendered_files_pass_promtool_check(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["observability", "render", str(INVENTORY), "--out", str(tmp_path), "--at", AT.isoformat()]
    )
    assert result.exit_code == 0, result.output
    assert PROMTOOL
    check = subprocess.run(
        [PROMTOOL, "check", "rules", str(tmp_path / "quartermaster.rules.yaml")], capture_output=True, text=True
    )
    assert check.returncode == 0, check.stdout + check.stderr
    operator = yaml.safe_load((tmp_path / "quartermaster-prometheusrule.yaml").read_text())
    assert operator["kind"] == "PrometheusRule"
    assert operator["spec"] == yaml.safe_load((tmp_path / "quartermaster.rules.yaml").read_text())
    assert "no break-even alert" not in result.output  # every active commitment of the example has one


def test_a_commitment_without_on_demand_price_is_compared_with_what_it_is_worth(loaded: LoadResult) -> None:
    """The example's DGX B200 commitment: no B200 is sold on demand, so its break-even is against the cheapest
    on-demand H100-80GB (p5.48xlarge, prices.csv) times 2.2, what a B200 is worth (org.yaml policy.equivalence), as the
    finance report computes it (one function, pricing.break_even); without that equivalence it gets a note."""
    inv = loaded.inventory
    c = inv.commitment_by_name["sjc-dgx-b200-2026"]
    h100 = min(
        p.usd_per_node_hour / inv.machine_by_name[p.machine].accelerators_per_node
        for p in inv.prices
        if p.pricing_model == "on-demand" and inv.machine_by_name[p.machine].accelerator == "H100-80GB"
    )
    want = c.usd_per_node_hour / 8 / (h100 * Decimal("2.2"))  # 8 B200 per DGX B200 node
    rules, notes = build_rules(loaded, Options(at=AT))
    records = [
        r
        for g in rules["groups"]
        for r in g["rules"]
        if r.get("record") == BREAK_EVEN and r["labels"]["commitment"] == c.name
    ]
    assert [r["expr"] for r in records] == [f"vector({want:.6f})"]  # 0.202332: 6 decimals
    assert break_even(inv, c.machine, c.site, c.usd_per_node_hour).utilisation == want
    assert not [n for n in notes if c.name in n]
    alone = dataclasses.replace(
        loaded, inventory=inv.model_copy(update={"policy": inv.policy.model_copy(update={"equivalence": {}})})
    )
    _, notes = build_rules(alone, Options(at=AT))
    assert (
        f"commitment {c.name}: no break-even alert (the price book has no on-demand price for its accelerator nor "
        "for one it is worth under policy.equivalence)" in notes
    )


def moved_to_1970(loaded: LoadResult, commitment: str, days: int) -> LoadResult:
    """The inventory with `commitment` starting 1970-01-01 for `days` days: promtool's clock starts at the epoch."""
    inv = loaded.inventory
    moved = inv.commitment_by_name[commitment].model_copy(
        update={"start": dt.date(1970, 1, 1), "term_months": 0, "term_days": days}
    )
    commitments = tuple(moved if c.name == commitment else c for c in inv.commitments)
    result = LoadResult.__new__(LoadResult)
    result.__dict__.update(loaded.__dict__)
    result.inventory = inv.model_copy(update={"commitments": commitments})
    return result


@needs_promtool
@pytest.mark.slow
def test_commitment_below_break_even_fires_only_under_break_even_and_only_during_its_term(
    loaded: LoadResult, tmp_path: Path
) -> None:
    """Issue 28: the alert had no end-of-term guard (rendered during a 91-day capacity block, it fired forever after)
    and, without Kueue's quota gauges, read the usage as 0 through `or vector(0)`."""
    under = "gcp-east4-h100-3y"  # 16 a3-mega nodes x 8 GPUs, consumed by pool h100-mega-resv
    moved = moved_to_1970(loaded, under, days=5)  # runs 1970-01-01 to 1970-01-06: 120 hours
    rules, _ = build_rules(moved, Options(at=dt.date(1970, 1, 2)))
    inv = loaded.inventory
    capacity = 16 * 8
    c = inv.commitment_by_name[under]
    break_even_share = break_even(inv, c.machine, c.site, c.usd_per_node_hour).utilisation
    assert break_even_share is not None  # 40.4867 / 92.9376 = 0.4356
    ratio = float(break_even_share)
    below, above = int(capacity * ratio) - 1, int(capacity * ratio) + 1
    quota = usage(
        "h100-mega-resv", "inference", "nvidia.com/gpu", f"{capacity}x1800", "kueue_cluster_queue_nominal_quota"
    )

    def case(used: int, at_hours: int, firing: bool, gauges: bool = True) -> dict[str, Any]:
        series = [usage("h100-mega-resv", "inference", "nvidia.com/gpu", f"{used}x1800")]
        return {
            "interval": EVERY,
            "input_series": [*series, quota] if gauges else series,
            "alert_rule_test": [
                {
                    "eval_time": f"{at_hours}h",
                    "alertname": "QuartermasterCommitmentBelowBreakEven",
                    "exp_alerts": [{"exp_labels": {"commitment": under, "severity": "warning"}}] if firing else [],
                }
            ],
        }

    run_promtool(
        tmp_path,
        rules,
        [
            case(below, 80, True),  # below break-even for 3 days of the term
            case(above, 80, False),  # above it
            case(below, 130, False),  # the commitment has ended (at 120 h): nothing to alert on
            case(0, 80, False, gauges=False),  # Kueue exports no quota gauges: no usage is not idle capacity
        ],
    )


@needs_promtool
def test_pending_above_quota_fires_after_the_window_and_not_while_borrowing(loaded: LoadResult, tmp_path: Path) -> None:
    rules, _ = build_rules(loaded, Options(at=AT, pending_hours=6))
    nominal = 16  # inventory/teams/inference.yaml: p5-od nominal 16, the team's only quota in eks-us-east-1
    gpu, cluster = "nvidia.com/gpu", "eks-us-east-1"
    pending = (
        f'kueue_cluster_queue_resource_pending{{cluster="{cluster}",cluster_queue="inference",resource="{gpu}",'
        f"{LEADER}}}"
    )
    held = usage("p5-od", "inference", gpu, f"{nominal}x200", "kueue_cluster_queue_resource_reservation", cluster)
    labels = {"team": "inference", "cluster": cluster, "resource": gpu, "severity": "warning"}
    run_promtool(
        tmp_path,
        rules,
        [
            {
                "interval": EVERY,
                "input_series": [held, {"series": pending, "values": "4x200"}],
                "alert_rule_test": [
                    # 4 pending on top of 16 held: above 16 since t=0; pending for 5 h, firing from 6 h
                    {"eval_time": "5h", "alertname": "QuartermasterPendingAboveQuota", "exp_alerts": []},
                    {
                        "eval_time": "7h",
                        "alertname": "QuartermasterPendingAboveQuota",
                        "exp_alerts": [{"exp_labels": labels}],
                    },
                ],
            },
            # borrowing 4 beyond quota with nothing pending: no alert
            {
                "interval": EVERY,
                "input_series": [
                    usage(
                        "p5-od",
                        "inference",
                        gpu,
                        f"{nominal + 4}x200",
                        "kueue_cluster_queue_resource_reservation",
                        cluster,
                    ),
                    {"series": pending, "values": "0x200"},
                ],
                "alert_rule_test": [
                    {"eval_time": "10h", "alertname": "QuartermasterPendingAboveQuota", "exp_alerts": []}
                ],
            },
        ],
    )


@needs_promtool
def test_flavor_at_capacity_fires_only_when_full_with_waiting_workloads(loaded: LoadResult, tmp_path: Path) -> None:
    """Issue 28: the alert said 128 pending workloads where 2 were pending (its value was the reserved accelerators);
    its value is now the workloads not admitted, read here from the rendered description."""
    rules, _ = build_rules(loaded, Options(at=AT, capacity_minutes=30))
    capacity = pool_accelerators(loaded.inventory, loaded.inventory.pool_by_name["p5-od"])  # 4 nodes x 8 = 32
    cluster = "eks-us-east-1"
    waiting = {
        "series": f'kueue_pending_workloads{{cluster="{cluster}",cluster_queue="speech",status="active",{LEADER}}}',
        "values": "2x20",
    }
    alert = next(
        r
        for g in rules["groups"]
        for r in g["rules"]
        if r.get("alert") == "QuartermasterFlavorAtCapacity" and r["labels"]["flavor"] == "p5-od"
    )
    annotations = {k: v.replace("{{ $value }}", "2") for k, v in alert["annotations"].items()}
    assert "have 2 pending workloads (not admitted)" in annotations["description"]

    def case(reserved: int, firing: bool) -> dict[str, Any]:
        labels = {"flavor": "p5-od", "cluster": cluster, "severity": "info"}
        return {
            "interval": EVERY,
            "input_series": [
                usage(
                    "p5-od",
                    "inference",
                    "nvidia.com/gpu",
                    f"{reserved}x20",
                    "kueue_cluster_queue_resource_reservation",
                    cluster,
                ),
                waiting,
            ],
            "alert_rule_test": [
                {
                    "eval_time": "1h",
                    "alertname": "QuartermasterFlavorAtCapacity",
                    "exp_alerts": [{"exp_labels": labels, "exp_annotations": annotations}] if firing else [],
                }
            ],
        }

    run_promtool(tmp_path, rules, [case(capacity, True), case(capacity - 1, False)], keep_annotations=True)


def _with_inventory(loaded: LoadResult, inventory: Inventory) -> LoadResult:
    """The example as loaded, with `inventory` in place of its own (promtool's clock starts at the epoch, so the
    tests move dates to 1970)."""
    moved = LoadResult.__new__(LoadResult)
    moved.__dict__.update(loaded.__dict__)
    moved.inventory = inventory
    return moved


def _cc2001_budget_in_1970q1(loaded: LoadResult) -> tuple[LoadResult, Budget]:
    """The example with CC-2001's budget, its only one, moved to 1970Q1 (90 days, 2160 hours), and that budget."""
    inv = loaded.inventory
    budget = next(b for b in inv.policy.budgets if b.cost_center == "CC-2001").model_copy(update={"quarter": "1970Q1"})
    policy = inv.policy.model_copy(update={"budgets": (budget,)})
    return _with_inventory(loaded, inv.model_copy(update={"policy": policy})), budget


@needs_promtool
@pytest.mark.slow  # promtool evaluates every rule of the example every 5 minutes over 200 hours
def test_budget_on_track_fires_when_the_week_rate_times_the_quarter_exceeds_it(
    loaded: LoadResult, tmp_path: Path
) -> None:
    # promtool's clock starts at the epoch: move CC-2001's budget to 1970Q1 (90 days, 2160 hours) for the test.
    inv = loaded.inventory
    moved, budget = _cc2001_budget_in_1970q1(loaded)
    rules, _ = build_rules(moved, Options(at=AT))
    rate = float(pool_rate(inv, "p5-od") or 0)  # inference's on-demand p5 pool: $55.04 per node-hour / 8 GPUs
    break_even_gpus = float(budget.usd) / (rate * 2160)  # GPUs used all quarter that spend exactly the budget

    def case(gpus: int, firing: bool) -> dict[str, Any]:
        return {
            "interval": EVERY,
            "input_series": [usage("p5-od", "inference", "nvidia.com/gpu", f"{gpus}x2500")],
            "alert_rule_test": [
                {
                    "eval_time": "200h",
                    "alertname": "QuartermasterBudgetOnTrack",
                    "exp_alerts": [
                        {"exp_labels": {"cost_center": "CC-2001", "quarter": "1970Q1", "severity": "warning"}}
                    ]
                    if firing
                    else [],
                }
            ],
        }

    run_promtool(tmp_path, rules, [case(int(break_even_gpus) + 1, True), case(int(break_even_gpus), False)])


def _budget_alerts(rules: dict[str, Any]) -> dict[tuple[str, str, str], dict[str, Any]]:
    return {
        (r["alert"], r["labels"]["cost_center"], r["labels"]["quarter"]): r
        for g in rules["groups"]
        for r in g["rules"]
        if r.get("alert") in ("QuartermasterBudgetOnTrack", "QuartermasterSpendAbovePlan")
    }


def test_budget_alerts_carry_the_finance_reports_budget_status_and_say_when_there_is_no_plan(
    loaded: LoadResult,
) -> None:
    """Issue 26, point 4: the alerts' budget and planned figures are the report's `budget_status` rows, to the cent,
    with their basis; without a plan they say so and no planned figure is written."""
    plan_dir = DATA / "reports" / "plan"
    plan = load_result(plan_dir)
    report = json.loads(build_report(loaded.inventory, plan).to_json())
    table = next(t for t in report["tables"] if t["name"] == "budget_status")
    assert table["rows"], "the example plan has budgets"
    use = planned_use(plan)
    rules, notes = build_rules(
        loaded, Options(at=AT), PlannedBudgets(planned_status(loaded.inventory.policy.budgets, plan), use, "p/")
    )
    alerts = _budget_alerts(rules)
    for row in table["rows"]:
        key = (row["cost_center"], row["quarter"])
        on_track, above_plan = (
            alerts[("QuartermasterBudgetOnTrack", *key)],
            alerts[("QuartermasterSpendAbovePlan", *key)],
        )
        # the budget alert's threshold is the report's budget to the cent; the plan alert's is the cost centre's
        # planned use without idle share, the basis of the metered projection (review of issue 26): the plan's
        # cost_by_team usage of its teams, within a cent a team, and below the planned charge by the idle share
        assert Decimal(on_track["expr"].split(" > ")[1].split(" ")[0]) == Decimal(row["budget_usd"])
        threshold = Decimal(above_plan["expr"].split(" > ")[1].split(" ")[0])
        teams = [r for r in plan.cost_by_team if (r.cost_center, r.quarter) == key]
        assert abs(threshold - sum(r.usage_usd for r in teams)) <= Decimal("0.01") * len(teams)
        idle = sum(r.idle_share_usd for r in teams)
        assert abs(Decimal(row["usd"]) - threshold - idle) <= Decimal("0.01") * len(teams)
        assert threshold == use[key]
        planned = f"${Decimal(row['usd']):,.2f}"
        for alert in (on_track, above_plan):
            assert alert["annotations"]["planned"].startswith(f"{planned}, ")
            assert "basis planned" in alert["annotations"]["planned"] and "p/" in alert["annotations"]["planned"]
        assert on_track["annotations"]["threshold"].startswith(f"budget ${Decimal(row['budget_usd']):,.2f}")
        assert above_plan["annotations"]["threshold"].startswith(f"planned use ${threshold:,.2f} (basis planned use")
        assert "idle capacity not shared" in above_plan["annotations"]["threshold"]
    assert not [n for n in notes if n.startswith("budget alerts: no plan")]

    bare, notes = build_rules(loaded, Options(at=AT))
    alerts = _budget_alerts(bare)
    assert alerts and {name for name, _, _ in alerts} == {"QuartermasterBudgetOnTrack"}
    for alert in alerts.values():
        assert alert["annotations"]["planned"].startswith("no plan given")
        assert "$" not in alert["annotations"]["planned"]
    assert any(n.startswith("budget alerts: no plan given") for n in notes)


@needs_promtool
@pytest.mark.slow  # promtool evaluates every rule of the example every 5 minutes over 200 hours
def test_spend_above_plan_fires_above_the_planned_charge_before_the_budget_alert(
    loaded: LoadResult, tmp_path: Path
) -> None:
    # promtool's clock starts at the epoch: CC-2001's budget moved to 1970Q1 (2160 hours), its planned use at 40 % of
    # it and its planned charge (use plus idle share) at 50 %
    inv = loaded.inventory
    moved, budget = _cc2001_budget_in_1970q1(loaded)
    planned_usd = cents(budget.usd * Decimal("0.4"))
    row = BudgetStatus("CC-2001", "1970Q1", "planned", cents(budget.usd * Decimal("0.5")), cents(budget.usd))
    rules, _ = build_rules(moved, Options(at=AT), PlannedBudgets((row,), {("CC-2001", "1970Q1"): planned_usd}, "plan/"))
    rate = pool_rate(inv, "p5-od") or Decimal(0)  # inference's on-demand p5 pool, the only CC-2001 use here
    at_plan = int(planned_usd / (rate * 2160))  # GPUs used all quarter that spend no more than the planned use
    at_budget = int(cents(budget.usd) / (rate * 2160))
    assert at_plan + 1 < at_budget  # room between the two thresholds
    assert (at_plan + 1) * rate * 2160 < row.usd  # above the planned use, still below the planned charge: it fires
    # issue 35, point 4: the budget alert counts the planned idle share (charge - use) as the budget status does, so
    # it fires once use plus that share passes the budget, before use alone does
    with_idle = int((cents(budget.usd) - (row.usd - planned_usd)) / (rate * 2160)) + 1
    assert at_plan + 1 < with_idle - 1 and with_idle < at_budget

    def case(gpus: int, above_plan: bool, over_budget: bool) -> dict[str, Any]:
        labels = {"cost_center": "CC-2001", "quarter": "1970Q1"}
        return {
            "interval": EVERY,
            "input_series": [usage("p5-od", "inference", "nvidia.com/gpu", f"{gpus}x2500")],
            "alert_rule_test": [
                {
                    "eval_time": "200h",
                    "alertname": "QuartermasterSpendAbovePlan",
                    "exp_alerts": [{"exp_labels": {**labels, "severity": "info"}}] if above_plan else [],
                },
                {
                    "eval_time": "200h",
                    "alertname": "QuartermasterBudgetOnTrack",
                    "exp_alerts": [{"exp_labels": {**labels, "severity": "warning"}}] if over_budget else [],
                },
            ],
        }

    run_promtool(
        tmp_path,
        rules,
        [
            case(at_plan, False, False),
            case(with_idle - 1, True, False),  # above the planned use, below the budget with the idle share
            case(with_idle, True, True),
        ],
    )


def test_a_pools_alert_rate_is_the_rate_metering_charges_its_use_at(loaded: LoadResult) -> None:
    """One rate rule (pricing.pool_rate): a pool that consumes a commitment charges use at the commitment block's
    rate, any other pool at its own block's rate, as `qm meter` does."""
    from quartermaster.metering.rates import blocks

    inv = loaded.inventory
    metered, _ = blocks(inv, dt.datetime(2026, 10, 1), dt.datetime(2026, 11, 1))
    rate_of = {b.key: b.rate for b in metered}
    for pool in inv.pools:
        block = f"commitment:{pool.commitment}" if pool.commitment else f"pool:{pool.name}"
        assert pool_rate(inv, pool.name) == rate_of[block], pool.name


@needs_promtool
def test_forecast_and_actual_records_give_the_quarters_forecast_next_to_the_teams_use(
    loaded: LoadResult, tmp_path: Path
) -> None:
    # promtool's clock starts at the epoch: move the forecast of inference's H100s to 1970Q1 (two site-free rows
    # of the same quarter add up) and 1970Q2.
    inv = loaded.inventory
    row = next(r for r in inv.demand if r.team == "inference" and r.accelerator == "H100-80GB")
    demand = (
        row.model_copy(update={"period": "1970Q1", "p50": 10.0, "p90": 14.0}),
        row.model_copy(update={"period": "1970Q1", "p50": 2.5, "p90": None}),
        row.model_copy(update={"period": "1970Q2", "p50": 99.0, "p90": 99.0}),
    )
    moved = _with_inventory(loaded, inv.model_copy(update={"demand": demand}))
    rules, _ = build_rules(moved, Options(at=AT))
    h100 = sorted(p.name for p in inv.pools if inv.machine_by_name[p.machine].accelerator == "H100-80GB")[:2]
    a100_or_tpu = next(p for p in inv.pools if inv.machine_by_name[p.machine].accelerator != "H100-80GB")
    other = usage(a100_or_tpu.name, "inference", inv.machine_by_name[a100_or_tpu.machine].resource_name, "7x20")
    forecast = 'quartermaster:demand_forecast:accelerators{team="inference",accelerator="H100-80GB",quantile="%s"}'
    run_promtool(
        tmp_path,
        rules,
        [
            {
                "interval": EVERY,
                "input_series": [
                    usage(h100[0], "inference", "nvidia.com/gpu", "3x20"),
                    usage(h100[1], "inference", "nvidia.com/gpu", "5x20"),
                    other,
                ],
                "promql_expr_test": [
                    {
                        "expr": forecast % "p50",
                        "eval_time": "1h",
                        "exp_samples": [  # 10 + 2.5: both rows of 1970Q1
                            {"labels": forecast % "p50", "value": 12.5}
                        ],
                    },
                    {
                        "expr": forecast % "p90",
                        "eval_time": "1h",
                        "exp_samples": [  # 14 + 2.5 (no p90: its p50)
                            {"labels": forecast % "p90", "value": 16.5}
                        ],
                    },
                    {
                        "expr": 'quartermaster:team_accelerators_used:sum{accelerator="H100-80GB"}',
                        "eval_time": "1h",
                        "exp_samples": [
                            {
                                "labels": 'quartermaster:team_accelerators_used:sum{accelerator="H100-80GB",'
                                'team="inference"}',
                                "value": 8,
                            }
                        ],
                    },  # 3 + 5 in two H100 flavors
                ],
            }
        ],
    )
