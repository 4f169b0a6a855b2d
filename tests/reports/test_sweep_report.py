"""The finance report's plan-sweep section (issue 21): the cost spread per quarter and the commitments across
scenarios, shown when the plan folder holds a sweep of that plan, in every format."""

from __future__ import annotations

import json
from decimal import Decimal

from typer.testing import CliRunner

from quartermaster.cli import app
from quartermaster.pricing import cents
from quartermaster.sweep_result import load_sweep
from quartermaster.units import quarter_hours
from tests.planner.test_sweep import write_inventory

H1 = quarter_hours("2027Q1")
runner = CliRunner()


def plan_with_sweep(tmp_path, *sweep: str):
    inv = write_inventory(tmp_path / "inv")
    out = tmp_path / "plan"
    result = runner.invoke(app, ["plan", str(inv), "--horizon", "1q", "--out", str(out), "--backend", "serial", *sweep])
    assert result.exit_code == 0, result.output
    return inv, out


def test_the_report_shows_the_sweeps_cost_spread_and_the_commitments_bought_across_it(tmp_path):
    """Demand -50 % and as forecast: 5 and 10 committed nodes at $6 x 2,160 h (tests/planner/test_sweep.py)."""
    inv, plan = plan_with_sweep(tmp_path, "--sweep", "demand=-50%,0")
    out = tmp_path / "report"
    result = runner.invoke(
        app, ["report", str(inv), "--plan", str(plan), "--out", str(out), "--formats", "html,json,csv"]
    )
    assert result.exit_code == 0, result.output
    costs = [Decimal(n * 6 * H1) for n in (5, 10)]
    doc = json.loads((out / "report.json").read_text())
    tables = {t["name"]: t for t in doc["tables"]}
    [row] = tables["sweep_cost"]["rows"]
    assert row["quarter"] == "2027Q1" and row["scenarios"] == 2
    # issue 26: a two-value what-if grid is no sample: its lowest and highest, not p10 / p50 / p90
    assert (Decimal(row["low"]), Decimal(row["high"])) == (min(costs), max(costs))
    assert [c["label"] for c in tables["sweep_cost"]["columns"]][2:4] == ["Lowest", "Highest"]
    assert Decimal(row["plan"]) == costs[1]  # this plan is the forecast as written: 10 nodes
    assert tables["sweep_cost"]["total"]["quarter"] == "Horizon"
    assert "2 scenarios: demand -50%, 0" in tables["sweep_cost"]["note"]
    [bought] = tables["sweep_commitments"]["rows"]
    assert (
        bought["pricing_model"],
        bought["term_months"],
        bought["bought_in"],
        bought["min_nodes"],
        bought["max_nodes"],
        bought["plan_nodes"],
    ) == ("commit", 12, 2, 5, 10, 10)
    html = (out / "report.html").read_text()
    assert '<section id="sweep">' in html and 'id="table-sweep_commitments"' in html
    assert "basis: planned" in html and f"${cents(min(costs)):,}" in html
    assert (out / "sweep_cost.csv").read_text().splitlines()[0] == "quarter,scenarios,low,high,plan"


def test_without_a_sweep_the_report_has_no_sweep_section(tmp_path):
    inv, plan = plan_with_sweep(tmp_path)
    out = tmp_path / "report"
    result = runner.invoke(app, ["report", str(inv), "--plan", str(plan), "--out", str(out), "--formats", "html"])
    assert result.exit_code == 0, result.output
    assert load_sweep(plan) is None and 'id="sweep"' not in (out / "report.html").read_text()


def test_a_sweep_of_another_plan_is_refused_with_the_way_out(tmp_path):
    inv, plan = plan_with_sweep(tmp_path, "--sweep", "demand=-50%,0")
    doc = json.loads((plan / "sweep.json").read_text())
    (plan / "sweep.json").write_text(json.dumps({**doc, "plan_expected_cost_usd": "1.000000"}))
    result = runner.invoke(
        app, ["report", str(inv), "--plan", str(plan), "--out", str(tmp_path / "r"), "--formats", "json"]
    )
    assert result.exit_code == 2, result.output
    assert "sweep.json was written with another plan" in " ".join(result.output.split())
