"""Issue 35: the README's main job on the example (`qm plan inventory/`, then `qm report inventory/ --plan out/plan`),
read as a finance analyst reads it: what ends says what it carried, totals are totals, one percentage per figure."""

from __future__ import annotations

import csv
import json
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml
from openpyxl import load_workbook
from typer.testing import CliRunner

from quartermaster.cli import app
from quartermaster.loader import load
from quartermaster.plan_contract import PlanResult, load_result
from quartermaster.pricing import format_pct, format_usd
from quartermaster.units import overlap_hours
from tests.paths import INVENTORY

pytestmark = pytest.mark.slow  # a whole plan of the example inventory, its report and its alert rules
runner = CliRunner()


class MainJob:
    """The main job's outputs: the plan folder, the report folder (HTML, JSON, CSV, XLSX) and the alert rules."""

    def __init__(self, root: Path) -> None:
        self.plan_dir, self.report_dir, self.rules_dir = root / "plan", root / "report", root / "rules"
        planned = runner.invoke(app, ["plan", str(INVENTORY), "--out", str(self.plan_dir)])
        assert planned.exit_code == 0, planned.output
        self.plan_output = planned.output
        reported = runner.invoke(
            app,
            ["report", str(INVENTORY), "--plan", str(self.plan_dir), "--out", str(self.report_dir), "--formats",
             "html,json,csv,xlsx"],
        )  # fmt: skip
        assert reported.exit_code == 0, reported.output
        rules = runner.invoke(
            app, ["observability", "render", str(INVENTORY), "--plan", str(self.plan_dir), "-o", str(self.rules_dir)]
        )
        assert rules.exit_code == 0, rules.output
        self.report: dict[str, Any] = json.loads((self.report_dir / "report.json").read_text())
        self.html = (self.report_dir / "report.html").read_text()

    @property
    def plan(self) -> PlanResult:
        return load_result(self.plan_dir)

    def table(self, name: str) -> dict[str, Any]:
        return next(t for t in self.report["tables"] if t["name"] == name)

    def html_table(self, name: str) -> list[list[str]]:
        """The cells of a table of report.html (`id="table-<name>"`), head, body and total rows, tags stripped."""
        found = re.search(rf'<table class="data" id="table-{name}">(.*?)</table>', self.html, re.S)
        assert found, name
        return [
            [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)]
            for row in re.findall(r"<tr>(.*?)</tr>", found.group(1), re.S)
        ]


@pytest.fixture(scope="module")
def job(tmp_path_factory: pytest.TempPathFactory) -> MainJob:
    return MainJob(tmp_path_factory.mktemp("main-job"))


def test_the_quarter_after_a_commitment_ends_names_it_with_what_it_carried(job: MainJob) -> None:
    """Issue 35, point 2: 2027Q1 said "ending: none (demand moved, not commitments)" while the capacity block
    aws-p5-cb-2026q4 (4 nodes at $39.33 a node-hour from 2026-10-01 for 91 days, inventory/commitments.yaml) is
    paid in 2026Q4 and not in 2027Q1."""
    block = load(INVENTORY).inventory.commitment_by_name["aws-p5-cb-2026q4"]
    carried = block.count * block.usd_per_node_hour * overlap_hours(block.start, block.end, "2026Q4")
    assert carried == 4 * Decimal("39.33") * 2184  # 91 days of 24 hours, all inside 2026Q4
    row = next(r for r in job.table("commitment_expiry")["rows"] if r["quarter"] == "2027Q1")
    assert f"aws-p5-cb-2026q4 (ends {block.end}; {format_usd(carried)} in 2026Q4)" in row["ending"]
    assert Decimal(row["ending_before"]) >= carried
    shown = next(r for r in job.html_table("commitment_expiry") if r[0] == "2027Q1")
    assert "aws-p5-cb-2026q4" in " ".join(shown)


def test_the_capital_total_row_counts_the_nodes_bought_in_every_format(job: MainJob) -> None:
    """Issue 35, point 3: the capital table's Total row showed Nodes 0, Life 0 and Hours 0 in HTML, CSV and XLSX;
    its nodes are the on-prem nodes of the plan's purchase schedule (8 on the example when this was written), and
    the assets already held have a table and a Total of their own (the example's on-prem commitments' nodes)."""
    nodes = sum(r.nodes for r in job.plan.purchase_schedule if r.pricing_model == "onprem")
    assert nodes > 0
    total = job.table("capital_purchases")["total"]
    assert (total["nodes"], total["life_months"]) == (nodes, None)
    assert Decimal(total["capital"]) == Decimal(total["upfront"]) + Decimal(total["financed"])
    html_total = job.html_table("capital_purchases")[-1]
    assert html_total[0] == "Total" and html_total[3] == str(nodes) and html_total[4] == ""
    with (job.report_dir / "capital_purchases.csv").open(newline="") as f:
        csv_total = list(csv.DictReader(f))[-1]
    assert (csv_total["start_quarter"], csv_total["nodes"], csv_total["life_months"]) == ("Total", str(nodes), "")
    sheet = load_workbook(job.report_dir / "report.xlsx")["Capital purchases"]
    last = [c.value for c in sheet[sheet.max_row]]
    assert (last[0], last[3], last[4]) == ("Total", nodes, None)
    held = sum(c.count for c in load(INVENTORY).inventory.commitments if c.kind == "on-prem-purchase")
    assert job.table("capital_assets")["total"]["nodes"] == held


def test_the_budget_alert_and_the_report_print_the_same_percentage(job: MainJob) -> None:
    """Issue 35, point 4: the alert text said 19.6 % where the report said 19.7 % for CC-1001 in 2027Q1 ($825,396.36
    of $4,200,000 is 19.652 %): the share was rounded to 4 places, then again to 1 by two formatters. Each view now
    rounds the same Decimal once."""
    rules = yaml.safe_load((job.rules_dir / "quartermaster.rules.yaml").read_text())
    planned = {
        (r["labels"]["cost_center"], r["labels"]["quarter"]): r["annotations"]["planned"]
        for g in rules["groups"]
        for r in g["rules"]
        if r.get("alert") == "QuartermasterBudgetOnTrack"
    }
    rows = job.table("budget_status")["rows"]
    assert rows and set(planned) == {(r["cost_center"], r["quarter"]) for r in rows}
    shown = {(r[0], r[2]): r[-1] for r in job.html_table("budget_status")[1:]}
    for r in rows:
        share = Decimal(r["usd"]) / Decimal(r["budget_usd"])  # the charge over the budget, both to the cent
        want = format_pct(share)
        assert f"{format_usd(Decimal(r['usd']))}, {want} of the budget" in planned[r["cost_center"], r["quarter"]]
        assert shown[r["cost_center"], r["quarter"]] == want
        assert want in job.plan_output  # qm plan's budget table


def printed_line(output: str, item: str) -> Decimal:
    """The USD of a line of `qm plan`'s bridge table (`│ item │ -$1,234.56 │`)."""
    found = re.search(rf"│ {re.escape(item)}\s+│\s+([-+]?)\$([\d,]+\.\d\d) │", output)
    assert found, (item, output)
    return Decimal(found[1] + found[2].replace(",", ""))


def test_the_demand_change_is_the_same_under_any_horizon_floor_or_price_what_if(job: MainJob, tmp_path: Path) -> None:
    """Issue 35, point 1: the same 2026Q4 demand gave three demand changes (-$507,322.07 with the default horizon,
    -$463,348.08 with `--horizon 4q`, -$420,343.52 with a utilisation floor and a price what-if on top): the line
    counted H100 work served on B200 nodes in B200-hours. It now depends on the quarter's demand alone."""
    rows = {r["item"]: Decimal(r["usd"]) for r in job.table("bridge")["rows"]}
    demand = rows["demand change"]
    assert printed_line(job.plan_output, "demand change") == demand
    assert "work moved between accelerator types" in rows and "demand not served" in rows
    for extra in (
        ["--horizon", "4q"],
        ["--horizon", "4q", "--min-utilisation", "0.8", "--what-if", "price:gcp-us-east4/a3-megagpu-8g=-10%"],
    ):
        planned = runner.invoke(app, ["plan", str(INVENTORY), "--out", str(tmp_path / "plan"), *extra])
        assert planned.exit_code == 0, planned.output
        assert printed_line(planned.output, "demand change") == demand, extra
    # the lines between the two ends add up to the difference, to the cent
    values = list(rows.values())
    assert sum(values[1:-1], Decimal(0)) == values[-1] - values[0]
