"""The quarterly planning report: reconciliation with the planner and the FOCUS export, golden files, the
workbook, and the page as Chromium shows it."""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from openpyxl import load_workbook
from typer.testing import CliRunner

from quartermaster import planner
from quartermaster.cli import app
from quartermaster.loader import load
from quartermaster.model import Inventory
from quartermaster.pricing import SPEND_RULE
from quartermaster.reports.filters import money, pct
from quartermaster.reports.finance import ReportData, build_report, find_chromium, print_pdf, render_html, render_xlsx
from quartermaster.reports.finance.charts import render_svg
from quartermaster.reports.finance.report_formats import RenderOptions, chromium_command, render_json, write_report
from quartermaster.reports.finance.sources import NOT_A_CHECKOUT, inventory_revision
from quartermaster.reports.finance.table import Chart, ChartSeries
from quartermaster.reports.focus import plan_focus_rows
from quartermaster.units import quarter_hours
from tests.builders import make_inventory
from tests.paths import DATA as TEST_DATA
from tests.paths import INVENTORY

DATA = TEST_DATA / "reports"
CENT = Decimal("0.01")
STAND_IN_REVISION = "0123456789ab"  # a made-up commit, so that the golden files do not change with each commit
runner = CliRunner()


@pytest.fixture(scope="module")
def inventory() -> Inventory:
    return load(INVENTORY).inventory


@pytest.fixture(scope="module")
def stored(inventory: Inventory) -> ReportData:
    """The report of a plan the planner wrote for the example (tests/data/reports/plan) against the plan with
    10 % less demand (previous-plan): fixed inputs, so the rendered files can be golden."""
    return build_report(
        inventory,
        planner.load_result(DATA / "plan"),
        "2027Q1",
        planner.load_result(DATA / "previous-plan"),
        revision=STAND_IN_REVISION,
    )


def test_report_equals_planner_equals_focus_to_the_cent(inventory: Inventory) -> None:
    plan = planner.plan(inventory, planner.PlanOptions(horizon=2))
    assert plan.has_plan
    quarter = plan.quarters[0]
    data = build_report(inventory, plan, quarter)
    kpi = plan.kpi(quarter)
    assert kpi is not None
    planner_cost = kpi.cost_usd.quantize(Decimal("0.01"))
    focus = plan_focus_rows(inventory, plan, quarter)
    assert {r["x_Basis"] for r in focus} == {"planned"}
    # quantities are decimals to the millionth in the CSV (focus-validator reads `1` as an integer), and the team
    # shares of one planned line (FOCUS 1.3 split cost allocation) add up to its one quarter
    assert all(re.fullmatch(r"\d+\.\d{6}", str(r[c])) for r in focus for c in ("PricingQuantity", "ConsumedQuantity"))
    lines: dict[tuple[str, str], Decimal] = {}
    for r in focus:
        key = (r["ChargeDescription"], r["SkuPriceId"])
        lines[key] = lines.get(key, Decimal(0)) + r["PricingQuantity"]
    assert set(lines.values()) == {Decimal(1)}
    assert data.summary.spend_quarter.current == planner_cost
    assert sum(r["EffectiveCost"] for r in focus) == planner_cost
    # issue 18: ListCost is what the capacity would cost on demand, so the export shows the plan's savings, not 0 %
    assert sum(r["ListCost"] for r in focus) == kpi.on_demand_equivalent_usd.quantize(Decimal("0.01"))
    spend_row = next(r for r in data.table("spend_by_quarter").rows if r["quarter"] == quarter)
    assert sum(spend_row.by_model.values()) == planner_cost
    assert data.table("teams").total["current"] == planner_cost
    assert data.table("cost_centers").total["current"] == planner_cost


def stored_plan_figures() -> dict[str, Decimal]:
    """The 2027Q1 headline figures straight from the stored plan's tables (tests/data/reports/plan/kpis.csv and
    purchase_schedule.csv), rounded to the cent: what a person reads off those CSVs."""
    plan = planner.load_result(DATA / "plan")
    kpi = plan.frame("kpis").set_index("quarter").loc["2027Q1"]
    cost, on_demand = (Decimal(str(kpi[c])).quantize(CENT) for c in ("cost_usd", "on_demand_equivalent_usd"))
    buys = plan.frame("purchase_schedule")[plan.frame("purchase_schedule")["start_quarter"] == "2027Q1"]
    liabilities = [Decimal(str(v)).quantize(CENT) for v in buys["total_liability_usd"]]
    return {
        "spend": cost,
        "savings": on_demand - cost,
        "rate": Decimal(str(kpi["effective_savings_rate"])),
        "liability": sum(liabilities, Decimal(0)),
        "spend_four": sum((Decimal(str(v)).quantize(CENT) for v in plan.frame("kpis")["cost_usd"].head(4)), Decimal(0)),
    }


def test_summary_of_the_stored_plan(stored: ReportData) -> None:
    s, want = stored.summary, stored_plan_figures()
    assert s.spend_quarter.current == want["spend"]
    assert s.savings_quarter.current == want["savings"]  # on-demand equivalent - cost
    assert s.savings_rate.current == want["rate"]
    plan = planner.load_result(DATA / "plan")
    buys = plan.frame("purchase_schedule")[plan.frame("purchase_schedule")["start_quarter"] == "2027Q1"]
    assert [(c.machine, c.liability) for c in s.approve] == [
        (m, Decimal(str(v)).quantize(CENT)) for m, v in zip(buys["machine"], buys["total_liability_usd"], strict=True)
    ]
    assert len(s.approve) == len(buys) > 0  # every purchase that starts in 2027Q1 (a DGX B200 system in the example)
    assert s.approve_liability == want["liability"]
    assert s.spend_quarter.delta == s.spend_quarter.current - s.spend_quarter.previous
    budget = [r for r in stored.table("budget_status").rows if r["quarter"] == s.quarter]
    assert budget and all(r["variance"] == r["usd"] - r["budget_usd"] for r in budget)
    assert s.budget_total == sum(r["budget_usd"] for r in budget)
    assert s.budget_variance == sum(r["variance"] for r in budget)
    # issue 35: one budget table (budget_variance repeated budget_status's rows of the quarter)
    assert [t.name for t in stored.tables if t.name.startswith("budget")] == ["budget_status"]


def test_rendered_report_matches_golden(stored: ReportData, golden: Callable[[Path, str], None]) -> None:
    golden(DATA / "golden" / "report.json", stored.to_json())
    golden(DATA / "golden" / "report.html", render_html(stored))


def test_workbook_has_a_sheet_per_table_with_numeric_cells(stored: ReportData, tmp_path: Path) -> None:
    path = tmp_path / "report.xlsx"
    path.write_bytes(render_xlsx(stored))
    book = load_workbook(path)
    assert book.sheetnames == ["Summary", *[t.name.replace("_", " ").capitalize()[:31] for t in stored.tables]]
    for table in stored.tables:
        sheet = book[table.name.replace("_", " ").capitalize()[:31]]
        assert sheet.freeze_panes == "A2"
        for i, column in enumerate(table.columns, start=1):
            values = [sheet.cell(r, i) for r in range(2, sheet.max_row + 1) if sheet.cell(r, i).value is not None]
            if column.kind in ("money", "rate", "delta", "pct", "pct_change", "number", "int"):
                assert all(isinstance(c.value, (int, float)) for c in values), (table.name, column.key)
            if column.kind == "money":
                assert all("$" in c.number_format for c in values)
    spend = book["Spend by quarter"]
    assert spend.cell(2, spend.max_column).value == pytest.approx(float(stored_plan_figures()["spend"]))


CHROMIUM = find_chromium()


needs_chromium = pytest.mark.chromium  # skipped without it (tests/conftest.py)


@needs_chromium
def test_chromium_shows_the_headline_figures_and_takes_a_screenshot(stored: ReportData, tmp_path: Path) -> None:
    assert CHROMIUM is not None, "CI=true but Chromium is not installed (apt-get install chromium)"
    html = tmp_path / "report.html"
    html.write_text(render_html(stored), encoding="utf-8")
    shot = tmp_path / "finance-report.png"
    with tempfile.TemporaryDirectory() as profile:
        dom = subprocess.run(
            chromium_command(CHROMIUM, Path(profile), "--dump-dom", html.as_uri()),
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        ).stdout
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(
            chromium_command(CHROMIUM, Path(profile), "--window-size=1280,2000", f"--screenshot={shot}", html.as_uri()),
            capture_output=True,
            timeout=120,
            check=True,
        )
    want = stored_plan_figures()
    for figure in (
        money(want["spend"]),
        money(want["spend_four"]),
        money(want["savings"]),
        pct(want["rate"]),
        money(want["liability"]),
    ):
        assert figure in dom, figure
    # the bridge's waterfall, spend, cost band, coverage, demand vs capacity, payments and depreciation by month
    assert dom.count("<svg") == 7
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000


@needs_chromium
@pytest.mark.pdftotext
def test_pdf_pages_are_numbered_and_no_total_row_is_repeated(stored: ReportData, tmp_path: Path) -> None:
    """Issue 18: the PDF repeated each table's Total row under the first half of a table cut by a page break
    ("All quarters" under 6 of 8 quarters) and had no page numbers and no date. Read back with poppler's
    pdftotext."""
    html = tmp_path / "report.html"
    html.write_text(render_html(stored, RenderOptions(generated=dt.date(2026, 11, 24))), encoding="utf-8")
    assert print_pdf(html, tmp_path / "report.pdf") is None
    text = subprocess.run(
        ["pdftotext", "-layout", str(tmp_path / "report.pdf"), "-"], capture_output=True, text=True, check=True
    ).stdout
    assert text.count(f"{stored.title}, generated 2026-11-24") == text.count("\f")  # every page says when
    assert "Generated 2026-11-24." in html.read_text(encoding="utf-8")  # and so does the page's header
    numbers = re.findall(r"Page (\d+) of (\d+)", text)  # one footer per page: 1 of N ... N of N
    assert len(numbers) > 1 and [int(n) for n, _ in numbers] == list(range(1, len(numbers) + 1))
    assert {int(of) for _, of in numbers} == {len(numbers)} and len(numbers) == text.count("\f")
    totals = [line for line in text.splitlines() if line.strip().startswith("All quarters")]
    assert len(totals) == 1  # the spend table's Total row, once, under its last row


@needs_chromium
def test_pdf_is_printed(stored: ReportData, tmp_path: Path) -> None:
    html = tmp_path / "report.html"
    html.write_text(render_html(stored), encoding="utf-8")
    assert print_pdf(html, tmp_path / "report.pdf") is None
    assert (tmp_path / "report.pdf").read_bytes()[:5] == b"%PDF-"


def test_without_chromium_the_other_formats_are_still_written(stored: ReportData, tmp_path: Path) -> None:
    written, messages = write_report(stored, tmp_path, RenderOptions(chromium="no-such-chromium-binary"))
    assert messages == [
        "no PDF: Chromium is not installed (Debian/Ubuntu: `apt-get install chromium`); "
        "the HTML, XLSX, CSV and JSON files were written"
    ]
    assert {p.name for p in written} >= {"report.html", "report.xlsx", "report.json", "spend_by_quarter.csv"}
    assert not (tmp_path / "report.pdf").exists()


def test_cli_report_from_a_written_plan(tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        [
            "report",
            str(INVENTORY),
            "--plan",
            str(DATA / "plan"),
            "--previous",
            str(DATA / "previous-plan"),
            "--out",
            str(tmp_path),
            "--formats",
            "html,xlsx,csv,json",
        ],
    )
    assert result.exit_code == 0, result.output
    want = stored_plan_figures()
    assert f"spend {money(want['spend'])}" in result.output
    assert f"effective savings rate {pct(want['rate'])}" in result.output
    assert (tmp_path / "report.html").exists() and (tmp_path / "teams.csv").exists()


def test_cli_report_without_a_plan_folder_is_a_usage_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["report", str(INVENTORY), "--plan", str(tmp_path), "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert "no plan.json there; run `qm plan --out" in result.output


def test_the_budget_headline_says_how_many_cost_centres_it_covers(inventory: Inventory, stored: ReportData) -> None:
    """Issue 18: the headline budget figure covered 3 of the cost centres without saying so."""
    quarter = stored.summary.quarter
    with_budget = {b.cost_center for b in inventory.policy.budgets if b.quarter == quarter}
    plan = planner.load_result(DATA / "plan")
    team_centre = {t.name: t.cost_center for t in inventory.teams}
    planned = {team_centre[r.team] for r in plan.cost_by_team if r.quarter == quarter and r.team in team_centre}
    assert stored.summary.budget_centres == (len(with_budget), len(planned))
    assert f"Budgets for {quarter} ({len(with_budget)} of {len(planned)} cost centres have one)" in render_html(stored)


@pytest.fixture(scope="module")
def stored_dom(stored: ReportData, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The stored plan's report as headless Chromium built it."""
    html = tmp_path_factory.mktemp("dom") / "report.html"
    html.write_text(render_html(stored), encoding="utf-8")
    return dump_dom(html)


def dom_table(dom: str, name: str) -> list[list[str]]:
    """The cells of a table of the page (`id="table-<name>"`), head, body and total rows, tags stripped."""
    found = re.search(rf'<table class="data" id="table-{name}">(.*?)</table>', dom, re.S)
    assert found, name
    return [
        [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)]
        for row in re.findall(r"<tr>(.*?)</tr>", found.group(1), re.S)
    ]


def dump_dom(html: Path) -> str:
    """The page as headless Chromium built it (the DOM after parsing, what a person's browser shows)."""
    assert CHROMIUM is not None, "CI=true but Chromium is not installed (apt-get install chromium)"
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run(
            chromium_command(CHROMIUM, Path(profile), "--dump-dom", html.as_uri()),
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        ).stdout


def test_source_trail_names_the_inputs_the_options_and_the_solve(inventory: Inventory, stored: ReportData) -> None:
    """Issue 18: the report did not say which inventory, price book, options and solve it came from."""
    trail = {r["item"]: r["value"] for r in stored.table("source_trail").rows}
    plan = planner.load_result(DATA / "plan")
    dates = sorted(str(p.as_of) for p in inventory.prices if p.as_of)
    assert trail["Inventory revision"] == STAND_IN_REVISION
    assert trail["Price book"].startswith(f"{len(inventory.prices)} prices, read {dates[0]} to {dates[-1]}")
    assert trail["What-ifs"].startswith("none")  # the stored plan is of the forecast as written (plan.json)
    assert trail["Plan horizon"] == f"{plan.quarters[0]} to {plan.quarters[-1]} ({len(plan.quarters)} quarters)"
    assert plan.gap is not None
    assert trail["Solver"].startswith(f"{plan.solver}: status {plan.status}, outcome optimal, MILP gap {plan.gap:.4%}")
    assert f"idle policy {plan.options.idle_policy}" in trail["Plan options"]


def test_generation_date_is_in_the_json_and_the_workbook(stored: ReportData, tmp_path: Path) -> None:
    day = dt.date(2026, 11, 24)
    assert '"generated": "2026-11-24"' in render_json(stored, RenderOptions(generated=day))
    assert '"generated": null' in render_json(stored)  # golden files: not recorded
    path = tmp_path / "report.xlsx"
    path.write_bytes(render_xlsx(stored, RenderOptions(generated=day)))
    summary = {row[0]: row[1] for row in load_workbook(path)["Summary"].iter_rows(values_only=True)}
    assert summary["Generated"] == "2026-11-24" and summary["What-ifs"] == "none"
    assert load_workbook(path)["Source trail"].cell(2, 2).value == STAND_IN_REVISION


def test_inventory_revision_is_the_commit_and_says_when_files_changed(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "inventory").mkdir(parents=True)
    (repo / "inventory" / "org.yaml").write_text("policy: {}\n")

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()

    assert inventory_revision(repo / "inventory") == NOT_A_CHECKOUT
    git("init", "-q")
    git("add", ".")
    git("commit", "-qm", "inventory")
    commit = git("rev-parse", "--short=12", "HEAD")
    assert inventory_revision(repo / "inventory") == commit
    (repo / "inventory" / "org.yaml").write_text("policy: {max_spot_share: 0.5}\n")
    assert inventory_revision(repo / "inventory") == f"{commit} (with uncommitted changes)"


@needs_chromium
def test_a_what_if_plan_says_so_at_the_top(inventory: Inventory, tmp_path: Path) -> None:
    """Issue 18: a report from a `--what-if` plan did not say so. The stored previous plan was planned with
    `--what-if demand=-10%` (its plan.json)."""
    what_if = planner.load_result(DATA / "previous-plan")
    assert what_if.options.what_if == ("demand=-10%",)
    html = tmp_path / "report.html"
    html.write_text(render_html(build_report(inventory, what_if, "2027Q1")), encoding="utf-8")
    dom = dump_dom(html)
    assert re.search(r'<p class="whatif" id="what-if"><strong>What-if plan:</strong> demand=-10%\.', dom)
    assert dom.index('id="what-if"') < dom.index('id="summary"')  # above the executive summary
    # a word with a hyphen is kept whole in a `nowrap` span (issue 26, point 9)
    nw = '<span class="nw">{}</span>'
    assert f'<td class="text">{nw.format("What-ifs")}</td><td class="text">{nw.format("demand=-10%")}</td>' in dom


@needs_chromium
def test_purchases_are_paid_as_the_plan_says_and_totals_keep_payments_apart(
    stored: ReportData, stored_dom: str
) -> None:
    """Issue 18: the schedule's total added monthly amounts to upfront ones; issue 15 point 3: the payments are the
    plan's own (upfront_usd, monthly_usd of purchase_schedule.csv), not guessed from the pricing model. The stored
    plan's purchases (DGX B200 systems and 36-month commitments) have no upfront fee: paid by the hour, monthly."""
    plan = planner.load_result(DATA / "plan")
    assert plan.purchase_schedule and all(r.upfront_usd == 0 < r.monthly_usd for r in plan.purchase_schedule)
    table = stored.table("purchase_schedule")
    for row, raw in zip(table.rows, plan.purchase_schedule, strict=True):
        assert (row["payment"], row["upfront"], row["monthly"]) == ("no upfront", None, raw.monthly_usd.quantize(CENT))
        assert row["over_term"] == row["liability"]  # nothing upfront: every dollar is paid by the hour
    assert table.total is not None
    assert table.total["upfront"] == 0
    assert table.total["monthly"] == sum((r.monthly_usd.quantize(CENT) for r in plan.purchase_schedule), Decimal(0))
    assert table.total["over_term"] == table.total["liability"] == plan.new_commitment_liability_usd.quantize(CENT)
    cells = dom_table(stored_dom, "purchase_schedule-2")  # the page shows what is bought, then how it is paid
    head, total = cells[0], cells[-1]
    assert head[:4] == ["Start", "Site", "Machine", "Pricing"]
    assert head[-6:] == [
        "Payment",
        "Paid upfront",
        "Paid monthly, a 730-hour month",
        "Paid over the term",
        "Total liability",
        "Of which in the plan's horizon",
    ]
    assert total[0] == "Totals by payment"
    assert total[-5:] == [money(table.total[k]) for k in ("upfront", "monthly", "over_term", "liability", "in_horizon")]
    assert all(row[-6:-4] == ["no upfront", "\u2013"] for row in cells[1:-1])  # no upfront amount shown
    s = stored.summary  # 2027Q1: one DGX B200, paid monthly
    assert s.approve_upfront == 0 and s.approve_monthly == sum((c.monthly or 0 for c in s.approve), Decimal(0)) > 0
    assert f"{money(s.approve_monthly)} a month</span> during their terms" in stored_dom
    assert 'id="approve-upfront"' not in stored_dom


def write_inventory(builder: Any, root: Path) -> Path:
    """Write a builder's inventory as `qm` reads it: YAML files, and prices.csv and demand.csv."""
    import csv

    tables = {k: builder.data.pop(k) for k in ("prices", "demand")}
    builder.write(root)
    for name, rows in tables.items():
        with (root / f"{name}.csv").open("w", newline="") as f:
            writer = csv.DictWriter(f, list(dict.fromkeys(k for r in rows for k in r)))
            writer.writeheader()
            writer.writerows(rows)
    return root


@needs_chromium
def test_upfront_partial_upfront_and_hourly_payments_reconcile_with_qm_plan(tmp_path: Path) -> None:
    """Issue 15 point 3: a partial-upfront commitment's fee was missing from the report's payments (only capacity
    blocks were paid upfront). One site: 10 L4 all through 2027 (8,760 hours), on demand $10 a node-hour, or a
    12-month commitment at $26,000 a node upfront plus $3 a node-hour ($52,280 a node-year against $87,600); and
    8 H100 (one a3-megagpu-8g) in 2027Q1, on demand $80 a node-hour or a capacity block at $40, which runs the
    quarter's 12 whole weeks (2,016 hours) and is paid up front. So the plan buys one block, $80,640 upfront, and
    10 committed nodes: $260,000 upfront, then $21,900 a month (10 x $3 x 730 hours), $262,800 over the term
    (10 x $3 x 8,760). Every figure of the report's payments reconciles with the liability `qm plan` prints."""
    from tests.planner.planning import MACHINE, one_site
    from tests.planner.planning import price as price_row

    nodes, fee, hourly, year = 10, Decimal(26_000), Decimal(3), 8760
    block = Decimal(40) * 2016
    inventory = (
        one_site(on_demand=10)
        .add("prices", **{**price_row(MACHINE, "commit", hourly, term=12), "upfront_usd_per_node": str(fee)})
        .add("prices", **price_row("a3-megagpu-8g", "on-demand", 80))
        .add("prices", **price_row("a3-megagpu-8g", "capacity-block", 40))
    )
    for q in ("2027Q1", "2027Q2", "2027Q3", "2027Q4"):
        inventory.add("demand", period=q, team="ml", accelerator="L4", p50=nodes, p90=nodes)
    inventory.add("demand", period="2027Q1", team="ml", accelerator="H100-80GB", p50=8, p90=8)
    root = write_inventory(inventory, tmp_path / "inventory")
    out = tmp_path / "plan"
    planned = runner.invoke(app, ["plan", str(root), "--horizon", "4q", "--out", str(out)])
    assert planned.exit_code == 0, planned.output
    said = re.search(r"New commitments: (\$[\d,.]+) liability", planned.output)
    assert said, planned.output
    want = {
        "block": ("all upfront", block, None, Decimal(0), block),
        "commit": (
            "partial upfront",
            nodes * fee,
            nodes * hourly * 730,
            nodes * hourly * year,
            nodes * (fee + hourly * year),
        ),
    }
    assert said.group(1) == money(block + want["commit"][-1])  # $603,440.00
    rows = {
        line.split("│")[4].strip(): [cell.strip() for cell in line.split("│")[8:11]]
        for line in planned.output.splitlines()
        if line.count("│") == 11
    }  # model -> upfront, monthly, liability
    assert rows == {
        "capacity-block": [money(block), "-", money(block)],
        "commit": [money(nodes * fee), money(nodes * hourly * 730), money(want["commit"][-1])],
    }
    reported = runner.invoke(
        app,
        ["report", str(root), "--plan", str(out), "--out", str(tmp_path / "report"), "--formats", "html,json,csv,xlsx"],
    )
    assert reported.exit_code == 0, reported.output
    data = build_report(load(root).inventory, planner.load_result(out))
    table = data.table("purchase_schedule")
    keys = ("payment", "upfront", "monthly", "over_term", "liability")
    shown = {
        "block" if r["pricing_model"] == "capacity-block" else "commit": tuple(r[k] for k in keys) for r in table.rows
    }
    assert shown == want
    total = table.total
    assert total is not None
    assert (total["upfront"], total["monthly"]) == (block + nodes * fee, nodes * hourly * 730)
    assert money(total["upfront"] + total["over_term"]) == money(total["liability"]) == said.group(1)
    s = data.summary  # both start in 2027Q1: both to approve
    assert (s.approve_upfront, s.approve_monthly, s.approve_liability) == (
        total["upfront"],
        total["monthly"],
        total["liability"],
    )
    csv_total = (tmp_path / "report" / "purchase_schedule.csv").read_text().splitlines()[-1].split(",")
    assert csv_total[-5:] == [str(total[k]) for k in ("upfront", "monthly", "over_term", "liability", "in_horizon")]
    import json

    written = json.loads((tmp_path / "report" / "report.json").read_text())
    assert {
        r["payment"]: r["upfront"]
        for r in written["tables"][[t["name"] for t in written["tables"]].index("purchase_schedule")]["rows"]
    } == {"all upfront": f"{block:.2f}", "partial upfront": f"{nodes * fee:.2f}"}
    sheet = load_workbook(tmp_path / "report" / "report.xlsx")["Summary"]
    figures = {sheet.cell(r, 1).value: sheet.cell(r, 2).value for r in range(2, sheet.max_row + 1)}
    assert figures["Of which paid upfront, when bought"] == pytest.approx(float(block + nodes * fee))
    assert figures["Then paid monthly, a month"] == pytest.approx(float(nodes * hourly * 730))
    dom = dump_dom(tmp_path / "report" / "report.html")
    text = " ".join(re.sub(r"<[^>]+>", "", dom).split())
    assert (
        f"{money(total['upfront'])} upfront when bought, then {money(total['monthly'])} a month during their "
        "terms" in text
    )
    # break-even of the commitment: its fee spread over 12 x 730 hours on top of $3, against $10 on demand
    even = next(r for r in data.table("break_even").rows if r["machine"] == MACHINE)
    assert even["committed_rate"] == (hourly + fee / (12 * 730)).quantize(Decimal("0.0001"))
    # the share is exact (rounded once, where it is shown): 59.68 %
    assert abs(even["break_even"] - (hourly + fee / (12 * 730)) / 10) < Decimal("1e-20")
    assert even["on_demand_basis"] == "same machine and site"
    block_even = next(r for r in data.table("break_even").rows if r["pricing_model"] == "capacity-block")
    assert block_even["break_even"] == Decimal(40) / Decimal(80)  # $40 a node-hour against $80 on demand


@pytest.mark.slow
@needs_chromium
def test_previous_plan_with_a_longer_horizon(inventory: Inventory, tmp_path: Path) -> None:
    """Issue 18: against a previous plan of 8 quarters, a 4-quarter plan listed the purchases after its horizon
    as "dropped" and showed "resized 8 -> 8" for a capacity block whose node-weeks changed."""
    previous = planner.load_result(DATA / "previous-plan")
    plan = planner.plan(inventory, planner.PlanOptions(start="2027Q1", horizon=4))
    assert len(previous.quarters) == 8 and len(plan.quarters) == 4 and plan.quarters[0] == previous.quarters[0]
    data = build_report(inventory, plan, plan.quarters[0], previous)
    rows = data.table("changes_purchases").rows
    later = [r for r in rows if r["start_quarter"] > plan.quarters[-1]]
    assert later and all(r["change"] == "beyond this plan's horizon" and r["liability_delta"] is None for r in later)
    before = {
        (r.start_quarter, r.site, r.machine, r.pricing_model)
        for r in previous.purchase_schedule
        if r.start_quarter > plan.quarters[-1]
    }
    assert {(r["start_quarter"], r["site"], r["machine"], r["pricing_model"]) for r in later} == before
    inside = [r for r in rows if r["start_quarter"] <= plan.quarters[-1]]
    assert all(r["change"] != "beyond this plan's horizon" for r in inside)
    assert all(
        (r["change"] == "resized") == (r["nodes_before"] != r["nodes_after"])
        for r in inside
        if r["change"] not in ("added", "dropped")
    )
    html = tmp_path / "report.html"
    html.write_text(render_html(data), encoding="utf-8")
    cells = dom_table(dump_dom(html), "changes_purchases")[1:]
    assert len(cells) == len(rows)
    for cell in cells:  # Start, Site, Machine, Pricing, Change, Nodes before, Nodes after, Liability change
        if cell[4] == "resized":
            assert cell[5] != cell[6], cell
        if cell[0] > plan.quarters[-1]:
            assert cell[4] == "beyond this plan's horizon" and cell[6] == cell[7] == "\u2013", cell


@needs_chromium
def test_a_sharp_fall_in_existing_commitments_is_flagged_with_the_commitments_that_end(
    inventory: Inventory, stored: ReportData, stored_dom: str
) -> None:
    """Issue 18: in 2028Q3 existing commitments fall from $1.89M to $0.48M a quarter and coverage drops, with no
    warning. The stored plan's cost_by_quarter.csv (existing-commitments) and kpis.csv (coverage) show it."""
    from quartermaster.reports.finance.tables.expiry import EXPIRY_COVERAGE_DROP, EXPIRY_SPEND_DROP

    plan = planner.load_result(DATA / "plan")
    existing = {r.quarter: r.usd for r in plan.cost_by_quarter if r.pricing_model == "existing-commitments"}
    coverage = {k.quarter: k.coverage for k in plan.kpis}
    want = [
        q
        for p, q in zip(plan.quarters, plan.quarters[1:], strict=False)
        if (existing[p] - existing[q]) / existing[p] >= EXPIRY_SPEND_DROP
        or coverage[p] - coverage[q] >= float(EXPIRY_COVERAGE_DROP)
    ]
    assert want == ["2028Q3"]  # gcp-east4-h100-3y (36 months from 2025-07-01) ends on 2028-07-01
    warnings = stored.summary.expiry_warnings
    assert [w["quarter"] for w in warnings] == want
    # the commitments whose last day is in 2028Q2, each with its cost there: nodes x rate x its hours in 2028Q2
    ends = [c for c in inventory.commitments if "2028-04-01" < c.end.isoformat() <= "2028-07-01"]
    assert warnings[0]["ending"] == "; ".join(
        f"{c.name} (ends {c.end}; {money(c.count * c.usd_per_node_hour * quarter_hours('2028Q2'))} in 2028Q2)"
        for c in ends
    )
    # the figures are those of the spend table (parts rounded to add up to each quarter's cost), within a cent
    spend = {r["quarter"]: r["existing-commitments"] for r in stored.table("spend_by_quarter").rows}
    assert all(abs(spend[q] - existing[q]) <= CENT for q in ("2028Q2", "2028Q3"))
    assert (warnings[0]["existing_before"], warnings[0]["existing"]) == (spend["2028Q2"], spend["2028Q3"])
    shown = re.findall(r'<p class="warn expiry-warning">(.*?)</p>', stored_dom, re.S)
    assert len(shown) == 1
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", shown[0]))
    assert (
        f"Commitments end in 2028Q3: existing commitments fall from {money(spend['2028Q2'])} "
        f"to {money(spend['2028Q3'])} a quarter"
    ) in text
    assert f"coverage from {pct(coverage['2028Q2'])} to {pct(coverage['2028Q3'])}" in text and ends[0].name in text
    rows = dom_table(stored_dom, "commitment_expiry")
    assert [r[-1] for r in rows[1:] if r[0] == "2028Q3"] == ["sharp drop"]
    assert "falls by 20% or more" in stored_dom and "by 10 percentage points or more" in stored_dom


@needs_chromium
def test_break_even_and_expected_utilisation_of_each_commitment_to_approve(
    inventory: Inventory, stored: ReportData, stored_dom: str
) -> None:
    """Issue 18: per commitment to approve, the utilisation at which it pays for itself and the one the plan
    expects. The stored plan approves one DGX B200 in 2027Q1 (purchase_schedule.csv): no B200 is sold on demand, so
    it is compared with 2.2 H100-80GB on demand (policy.equivalence), the cheapest being p5.48xlarge (prices.csv).
    The same machine and site on demand, and a contract's upfront fee: the test of partial upfront payments."""
    plan = planner.load_result(DATA / "plan")
    approve = [r for r in plan.purchase_schedule if r.start_quarter == "2027Q1"]
    assert [(r.machine, r.term_months) for r in approve] == [("dgx-b200", 48)]
    active = plan.quarters[:16]  # 48 months from 2027Q1: past the plan's eight quarters
    kpis = [Decimal(str(k.utilisation_accelerator_hours)) for k in plan.kpis if k.quarter in active]
    rows = {r["machine"]: r for r in stored.table("break_even").rows}
    price = {
        (p.machine, p.pricing_model): p.usd_per_node_hour
        for p in inventory.prices
        if p.site in ("aws-us-east-1", "onprem-sjc")
    }
    b200 = rows["dgx-b200"]  # 8 B200 per node; one B200 is worth 2.2 H100-80GB; H100 on demand: p5 at $55.04 / 8
    h100 = price["p5.48xlarge", "on-demand"] / 8
    assert b200["on_demand_rate"] == (h100 * Decimal("2.2")).quantize(Decimal("0.0001"))
    # shares are exact, rounded once where they are shown (issue 35, point 4)
    assert abs(b200["break_even"] - price["dgx-b200", "onprem"] / 8 / (h100 * Decimal("2.2"))) < Decimal("1e-20")
    assert b200["on_demand_basis"] == "2.2 H100-80GB on demand (equivalence policy)"
    assert b200["expected"] == sum(kpis, Decimal(0)) / len(kpis)
    assert b200["quarters"] == f"{plan.quarters[0]} to {plan.quarters[-1]}"
    assert b200["verdict"] == ("above break-even" if b200["expected"] >= b200["break_even"] else "below break-even")
    cells = dom_table(stored_dom, "break_even")
    assert cells[0][7:9] == ["Break-even utilisation", "Expected utilisation"]
    assert [c[1] for c in cells[1:]] == ["dgx-b200"]
    assert cells[1][7:9] == [pct(b200["break_even"]), pct(b200["expected"])]
    assert dom_table(stored_dom, "commitments_to_approve")[1][:2] == ["onprem-sjc", "dgx-b200"]


@needs_chromium
def test_cost_centre_names_beside_their_codes(
    inventory: Inventory, stored: ReportData, stored_dom: str, tmp_path: Path
) -> None:
    """Issue 18: the report showed cost-centre codes only; names come from policy.cost_center_names."""
    names = inventory.policy.cost_center_names
    assert names["CC-1001"] == "Foundation models"  # inventory/org.yaml
    for name in ("cost_centers", "teams", "budget_status"):
        table = stored.table(name)
        assert [c.key for c in table.columns].index("cost_center_name") == [c.key for c in table.columns].index(
            "cost_center"
        ) + 1
        assert all(r["cost_center_name"] == names.get(r["cost_center"], "") for r in table.rows)
        cells = dom_table(stored_dom, name)
        at = cells[0].index("Cost centre")
        assert cells[0][at + 1] == "Cost centre name"
        assert all(c[at + 1] == names[c[at]] for c in cells[1:-1] if c[at] in names)
    budget_codes = [r["cost_center"] for r in stored.table("budget_status").rows]
    write_report(stored, tmp_path, RenderOptions(formats=("csv", "xlsx")))
    csv_rows = (tmp_path / "budget_status.csv").read_text().splitlines()
    assert csv_rows[0].startswith("cost_center,cost_center_name,")
    assert csv_rows[1].startswith(f"{budget_codes[0]},{names[budget_codes[0]]},")
    sheet = load_workbook(tmp_path / "report.xlsx")["Cost centers"]
    assert (sheet.cell(1, 2).value, sheet.cell(2, 2).value) == ("Cost centre name", names[sheet.cell(2, 1).value])


def test_a_name_for_an_unknown_cost_centre_is_a_located_error(tmp_path: Path) -> None:
    inv = tmp_path / "inventory"
    shutil.copytree(INVENTORY, inv)
    org = (inv / "org.yaml").read_text()
    (inv / "org.yaml").write_text(org.replace("    CC-3001: ML platform", "    CC-3010: ML platform"))
    result = runner.invoke(app, ["validate", str(inv)])
    assert result.exit_code == 1
    line = 1 + (inv / "org.yaml").read_text().splitlines().index("    CC-3010: ML platform")
    output = " ".join(result.output.split())
    assert f"org.yaml:{line}" in output
    assert "cost centre `CC-3010` is not the cost centre of any team or budget" in output
    assert "Did you mean `CC-3001`?" in output


LAYOUT_SCRIPT = """<script>
const charts = [...document.querySelectorAll("svg.chart")].map(svg => {
  const box = e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  return {title: svg.getAttribute("aria-label"), plot: box(svg.querySelector("rect.plot")),
          texts: [...svg.querySelectorAll(".x-label, .legend, .y-title")]
          .map(e => ({kind: e.getAttribute("class"), text: e.textContent, box: box(e)}))};
});
document.body.insertAdjacentHTML("beforeend", "<pre id='layout'>" + JSON.stringify(charts) + "</pre>");
</script>"""


def overlap(a: list[float], b: list[float]) -> bool:
    return a[0] < b[2] - 0.5 and b[0] < a[2] - 0.5 and a[1] < b[3] - 0.5 and b[1] < a[3] - 0.5


@needs_chromium
def test_chart_labels_do_not_overlap_each_other_the_legend_or_the_plot(stored: ReportData, tmp_path: Path) -> None:
    """Issue 18: rotated x labels overlapped each other and the legend, and the y axes had no unit. Chromium lays
    the page out; a script reads back each label's, legend entry's and axis title's box."""
    import json

    html = tmp_path / "report.html"
    # and the old demand chart's eleven long "accelerator @ site" labels, which must wrap instead of colliding
    crowded = Chart(
        "crowded",
        "Crowded",
        tuple(
            f"{a} @ {s}"
            for a in ("H100-80GB", "TPU-v6e")
            for s in ("any site", "aws-us-east-1", "azure-eastus", "gcp-us-east4", "gcp-us-east5", "onprem-sjc")
        )[:11],
        tuple(ChartSeries(f"series {k}", tuple(float(i * k) for i in range(11))) for k in range(1, 6)),
        "accelerators",
        "grouped",
        "Accelerators (average concurrent)",
    )
    page = render_html(stored).replace(
        "</body>", f'<div style="width:900px">{render_svg(crowded)}</div>' + LAYOUT_SCRIPT + "</body>"
    )
    html.write_text(page, encoding="utf-8")
    found = re.search(r"<pre id=\"layout\">(.*?)</pre>", dump_dom(html), re.S)
    assert found
    charts = json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    assert len(charts) == len(stored.charts) + 1 == 8
    by_title = {c.title: c for c in (*stored.charts, crowded)}  # the page orders them by section
    assert len(by_title) == len(charts)
    for chart in charts:
        data = by_title[chart["title"]]
        texts = chart["texts"]
        assert [t["text"] for t in texts if t["kind"] == "y-title"] == [data.y_title]
        # a monthly series has a label a year (label_every 12): 2027-01, 2028-01, ...
        labels = ["".join(t["text"].split()) for t in texts if t["kind"] == "x-label"]  # its lines, joined
        assert labels == ["".join(c.split()) for c in data.categories[:: data.label_every]], data.name
        for i, a in enumerate(texts):
            assert a["box"][2] > a["box"][0], a  # laid out, not empty
            assert not overlap(a["box"], chart["plot"]), (data.name, a)
            for b in texts[i + 1 :]:
                assert not overlap(a["box"], b["box"]), (data.name, a, b)
    titles = {c.name: c.y_title for c in stored.charts}
    assert titles == {
        "bridge": "USD per quarter (metered to planned)",
        "spend": "USD per quarter (planned)",
        "band": "USD per quarter (exposure)",
        "coverage": "% of USD (planned)",
        "demand": "Accelerators (average concurrent)",
        "payments": "USD per month (planned, cash)",
        "depreciation": "USD per month (planned, books)",
    }


def test_demand_chart_compares_all_sites_per_accelerator(stored: ReportData) -> None:
    """Issue 18: demand "any site" was drawn beside per-site capacity. The chart adds up every site per
    accelerator, from the per-site table."""
    table, chart = stored.table("demand_vs_capacity"), stored.chart("demand")
    accelerators = sorted({r["accelerator"] for r in table.rows})
    assert chart.categories == tuple(accelerators)
    series = {s.name: s.values for s in chart.series}
    for key, name in (
        ("p50", "demand p50"),
        ("p90", "demand p90"),
        ("pools", "pools today"),
        ("new_committed", "new commitments"),
    ):
        assert series[name] == tuple(
            float(sum(r[key] for r in table.rows if r["accelerator"] == a)) for a in accelerators
        )


@needs_chromium
def test_p10_to_p90_cost_band_per_quarter(inventory: Inventory, stored: ReportData, stored_dom: str) -> None:
    """Issue 18: one p90 figure instead of a band over time. The band's p90 is the risk table's figure; p10 takes
    the accelerator-hours below p50 off the quarter's on-demand, spot and flex-start spend. demand.csv gives no p10,
    so each row's p10 is that of the planner's lognormal through p50 and p90: symmetric about ln p50, p50^2 / p90."""
    plan = planner.load_result(DATA / "plan")
    band = {r["quarter"]: r for r in stored.table("cost_band").rows}
    assert list(band) == list(plan.quarters)
    assert band[stored.summary.quarter]["p90"] == stored.summary.p90_cost  # the headline's p90 figure
    assert all(d.p10 is None for d in inventory.demand)
    for q, row in band.items():
        assert row["p10"] <= row["expected"] <= row["p90"]
        assert row["p10"] == band_p10(inventory, plan, q, lognormal_p10)
    svg = re.search(r'<svg[^>]*aria-label="Cost per quarter, p10 to p90 demand".*?</svg>', stored_dom, re.S)
    assert svg and svg.group(0).count('<polygon class="band"') == 1
    cells = dom_table(stored_dom, "cost_band")
    assert cells[0] == ["Quarter", "At p10 demand", "Expected (planned)", "At p90 demand"]
    assert cells[1] == [plan.quarters[0], *(money(band[plan.quarters[0]][k]) for k in ("p10", "expected", "p90"))]


def lognormal_p10(d: Any) -> float:
    """p10 of the lognormal through a row's p50 and p90 (symmetric in log space): p50 / (p90 / p50); one level when
    p50 = p90 (both 0 included)."""
    return float(d.p50) if d.p90 in (None, d.p50) else float(d.p50 * d.p50 / d.p90)


def band_p10(inventory: Inventory, plan: planner.PlanResult, quarter: str, p10: Callable[[Any], float]) -> Decimal:
    """The band's p10 cost of `quarter` by hand: planned cost less the accelerator-hours from p10(row) to p50 at the
    cheapest on-demand rate, at most the quarter's on-demand, spot and flex-start spend."""
    from quartermaster.pricing import cheapest_on_demand_per_accelerator

    rates = cheapest_on_demand_per_accelerator(inventory)
    below = sum(
        (
            (Decimal(str(d.p50)) - Decimal(repr(p10(d)))) * quarter_hours(quarter) * rates[d.accelerator]
            for d in inventory.demand
            if d.period == quarter and not d.scenario and d.accelerator in rates
        ),
        Decimal(0),
    )
    flexible = sum(
        r.usd
        for r in plan.cost_by_quarter
        if r.quarter == quarter and r.pricing_model in ("on-demand", "spot", "flex-start")
    )
    expected = next(k.cost_usd for k in plan.kpis if k.quarter == quarter).quantize(CENT)
    return expected - min(below, flexible).quantize(CENT)


def test_a_given_p10_is_the_bands_p10_exactly(tmp_path: Path) -> None:
    """In the example the on-demand, spot and flex-start spend caps the p10 saving in every quarter, so demand.csv is
    changed: 2027Q1 rows get a p10 of p50 - 1 (the band takes it as written); 2027Q2 rows a p90 of p50 + 0.5 and no
    p10 (the lognormal's p50^2 / p90, a saving small enough to show and not the normal's p50 - 0.5)."""
    inv = tmp_path / "inventory"
    shutil.copytree(INVENTORY, inv)
    lines = (inv / "demand.csv").read_text().splitlines()
    head = lines[0].split(",")
    at = head.index("p50")
    out = [",".join([*head[:at], "p10", *head[at:]])]
    for line in lines[1:]:
        cells = line.split(",")
        p50 = float(cells[at])
        p10 = f"{p50 - 1:g}" if cells[0] == "2027Q1" and p50 >= 1 else ""
        if cells[0] == "2027Q2":
            cells[at + 1] = f"{p50 + 0.5:g}"
        out.append(",".join([*cells[:at], p10, *cells[at:]]))
    (inv / "demand.csv").write_text("\n".join(out) + "\n")
    inventory = load(inv).inventory
    assert any(d.p10 is not None for d in inventory.demand)
    plan = planner.load_result(DATA / "plan")
    band = {r["quarter"]: r["p10"] for r in build_report(inventory, plan, "2027Q1").table("cost_band").rows}
    for q in ("2027Q1", "2027Q2"):
        assert band[q] == band_p10(inventory, plan, q, lambda d: d.p10 if d.p10 is not None else lognormal_p10(d))
        assert band[q] > band_p10(inventory, plan, q, lambda d: 0.0)  # not capped: the saving shows
    assert band["2027Q2"] != band_p10(inventory, plan, "2027Q2", lambda d: max(0.0, 2 * d.p50 - (d.p90 or d.p50)))


@pytest.mark.slow
@needs_chromium
def test_liability_and_in_horizon_side_by_side_as_qm_plan_prints_them(tmp_path: Path) -> None:
    """Issue 15 point 1 / issue 18: summaries and reports show total liability and in-horizon cost side by side.
    `qm plan` prints both for all new purchases; the report's headline, purchase schedule totals, CSV, JSON and
    workbook carry the same figures to the cent, and each commitment to approve shows both."""
    out = tmp_path / "plan"
    planned = runner.invoke(app, ["plan", str(INVENTORY), "--horizon", "2q", "--out", str(out)])
    assert planned.exit_code == 0, planned.output
    said = re.search(
        r"New commitments: (\$[\d,.]+) liability over their whole terms, (\$[\d,.]+) of it inside the "
        r"horizon \(planned\); the capacity they leave after it is credited (\$[\d,.]+)",
        " ".join(planned.output.split()),
    )
    assert said, planned.output
    liability, inside, credit = said.groups()
    reported = runner.invoke(
        app,
        [
            "report",
            str(INVENTORY),
            "--plan",
            str(out),
            "--out",
            str(tmp_path / "report"),
            "--quarter",
            "2027Q1",
            "--formats",
            "html,json,csv,xlsx",
        ],
    )
    assert reported.exit_code == 0, reported.output
    result = planner.load_result(out)
    # the example buys nothing in 2026Q4, the quarter in progress: its first purchases to approve start in 2027Q1
    data = build_report(load(INVENTORY).inventory, result, "2027Q1")
    buys = data.summary.purchases
    assert (money(buys.liability), money(buys.in_horizon), money(buys.post_horizon_credit)) == (
        liability,
        inside,
        credit,
    )
    table = data.table("purchase_schedule")
    assert (money(table.total["liability"]), money(table.total["in_horizon"])) == (liability, inside)
    assert all(r["in_horizon"] <= r["liability"] for r in table.rows)
    # a row's figures are the plan's own, each moved by less than a cent so that the columns add up
    for row, raw in zip(table.rows, result.purchase_schedule, strict=True):
        assert abs(row["liability"] - raw.total_liability_usd) < CENT
        assert abs(row["in_horizon"] - raw.in_horizon_usd) < CENT
    approve = data.summary.approve
    assert approve and data.summary.approve_in_horizon == sum(c.in_horizon for c in approve)
    csv_total = (tmp_path / "report" / "purchase_schedule.csv").read_text().splitlines()[-1].split(",")
    assert csv_total[-2:] == [str(table.total["liability"]), str(table.total["in_horizon"])]
    import json

    summary = json.loads((tmp_path / "report" / "report.json").read_text())["summary"]["purchases"]
    assert summary == {
        "liability": str(buys.liability),
        "in_horizon": str(buys.in_horizon),
        "post_horizon_credit": str(buys.post_horizon_credit),
    }
    sheet = load_workbook(tmp_path / "report" / "report.xlsx")["Summary"]
    figures = {sheet.cell(r, 1).value: sheet.cell(r, 2).value for r in range(2, sheet.max_row + 1)}
    assert figures["All new purchases: total liability"] == pytest.approx(float(buys.liability))
    assert figures["All new purchases: in the plan's horizon"] == pytest.approx(float(buys.in_horizon))
    dom = dump_dom(tmp_path / "report" / "report.html")
    shown = re.search(r'<p id="new-purchases">(.*?)</p>', dom, re.S)
    assert shown
    text = " ".join(re.sub(r"<[^>]+>", "", shown.group(1)).split())
    assert f"total liability {liability} over their whole terms, of which {inside} inside the horizon" in text
    assert f"credits the capacity they leave after the horizon {credit}" in text
    cells = dom_table(dom, "commitments_to_approve")
    assert cells[0][-2:] == ["Total liability", "Of which in the plan's horizon"]
    assert [c[-2:] for c in cells[1:]] == [[money(c.liability), money(c.in_horizon)] for c in approve]
    assert dom_table(dom, "purchase_schedule-2")[-1][-2:] == [liability, inside]  # the payments part
    assert f"of which {money(data.summary.approve_in_horizon)} in the plan's horizon" in " ".join(
        re.sub(r"<[^>]+>", "", dom).split()
    )


@needs_chromium
def test_where_demand_was_routed_on_a_hand_worked_fleet(tmp_path: Path) -> None:
    """Issue 18: "eight B200 nodes bought while B200 demand is 17 GPUs, because equivalence moved H100 demand there;
    say where demand was routed and why". One site sells H100s (a3-megagpu-8g, $80 a node-hour = $10 a GPU-hour)
    and B200s (a4-highgpu-8g, $96 = $12 a GPU-hour) on demand; one B200 is worth two H100s (policy.equivalence),
    so a B200-hour does two H100-hours of work for $12, $6 per H100-hour: all 16 H100s of demand run on 8 B200s."""
    from tests.planner.planning import curves, price
    from tests.planner.planning import run as plan_run

    site = "gcp-us-central1"
    inventory = (
        make_inventory()
        .policy(equivalence={"H100-80GB": 1.0, "B200": 2.0}, placement="anywhere")  # ml holds quota only in H100s
        .add("prices", **price("a3-megagpu-8g", "on-demand", 80, site=site))
        .add("prices", **price("a4-highgpu-8g", "on-demand", 96, site=site))
        .build()
    )
    result = plan_run(inventory, curves("ml", ["2027Q1"], level=16, accelerator="H100-80GB"))
    hours = quarter_hours("2027Q1")  # 2,160
    h100_rate, b200_rate = Decimal(80) / 8, Decimal(96) / 8
    worth = Decimal(2)  # H100-hours of work in a B200-hour
    assert [(r.accelerator, r.served_accelerator, r.machine, r.tier) for r in result.routing] == [
        ("H100-80GB", "B200", "a4-highgpu-8g", "on-demand")
    ]
    row = result.routing[0]
    assert row.demand_accelerator_hours == pytest.approx(16 * hours)
    assert row.accelerator_hours == pytest.approx(16 * hours / 2)
    assert result.kpis[0].cost_usd.quantize(CENT) == (16 * hours / worth * b200_rate).quantize(CENT)  # $207,360
    data = build_report(inventory, result)
    table = data.table("routing")
    assert len(table.rows) == 1
    shown = table.rows[0]
    assert (
        shown["quarter"],
        shown["accelerator"],
        shown["site"],
        shown["teams"],
        shown["served_on"],
        shown["tier"],
    ) == ("2027Q1", "H100-80GB", "any site", "ml", f"B200 at {site} (a4-highgpu-8g)", "on-demand")
    assert (shown["demand_hours"], shown["served_hours"]) == (Decimal(16 * hours), Decimal(8 * hours))
    assert shown["equivalence"] == "1 B200 = 2 H100-80GB (equivalence policy)"
    assert (shown["served_rate"], shown["served_rate_asked"], shown["asked_rate"]) == (
        b200_rate,
        b200_rate / worth,
        h100_rate,
    )
    assert shown["asked_basis"] == f"a3-megagpu-8g at {site}, on-demand"
    assert shown["reason"] == "cheaper per H100-80GB-hour"
    # the page, the CSV and the workbook carry the same row
    write_report(data, tmp_path, RenderOptions(formats=("html", "csv", "xlsx")))
    cells = dom_table(dump_dom(tmp_path / "report.html"), "routing")
    assert cells[0][:3] == ["Quarter", "Asked", "Asked site"] and cells[0][-1] == "Why"
    assert cells[1] == [
        "2027Q1",
        "H100-80GB",
        "any site",
        "ml",
        f"B200 at {site} (a4-highgpu-8g)",
        "on-demand",
        "34,560.0",
        "17,280.0",
        "1 B200 = 2 H100-80GB (equivalence policy)",
        "$12.0000",
        "$6.0000",
        "$10.0000",
        f"a3-megagpu-8g at {site}, on-demand",
        "cheaper per H100-80GB-hour",
    ]
    csv_rows = (tmp_path / "routing.csv").read_text().splitlines()
    assert csv_rows[1].split(",")[6:8] == ["34560.0", "17280.0"]
    sheet = load_workbook(tmp_path / "report.xlsx")["Routing"]
    assert [sheet.cell(2, c).value for c in (7, 10, 11, 12)] == [16 * hours, 12, 6, 10]


def old_style_plan() -> planner.PlanResult:
    """The stored plan without a routing table or a post-horizon credit, as a planner before issue 18 made it."""
    return dataclasses.replace(planner.load_result(DATA / "plan"), routing=(), post_horizon_credit_usd=None)


def test_a_plan_written_before_routing_says_so(inventory: Inventory, stored: ReportData) -> None:
    plan = planner.load_result(DATA / "plan")
    routed = stored.table("routing")
    moved = {
        (r.quarter, r.accelerator, r.served_accelerator)
        for r in plan.routing
        if r.served_accelerator != r.accelerator or (r.site and r.served_site != r.site)
    }
    assert moved and {(r["quarter"], r["accelerator"], r["served_accelerator"]) for r in routed.rows} == moved
    assert stored.summary.purchases.post_horizon_credit == plan.post_horizon_credit_usd.quantize(CENT)
    old = build_report(inventory, old_style_plan(), "2027Q1")
    table = old.table("routing")
    assert table.rows == () and "written before the planner recorded where it served each demand" in table.note
    assert old.summary.purchases.post_horizon_credit is None
    assert "the plan does not record the credit for the capacity they leave after the horizon" in " ".join(
        render_html(old).split()
    )


def hand_plan(quarters: tuple[str, ...], team_usd: dict[str, str]) -> planner.PlanResult:
    """A plan of `quarters` that charges each team `team_usd` in every quarter (the small fleet's cost centres)."""
    from quartermaster.plan_contract import KpiRow, TeamCostRow

    total = sum(Decimal(v) for v in team_usd.values())
    return planner.PlanResult(
        outcome=planner.Outcome.OPTIMAL,
        solver="highs",
        status="Optimal",
        objective_usd=total * len(quarters),
        expected_cost_usd=total * len(quarters),
        baseline_on_demand_usd=total * len(quarters),
        gap=0.0,
        solve_seconds=0.0,
        quarters=quarters,
        options=planner.PlanOptions(idle_policy="even"),
        kpis=tuple(KpiRow(q, total, total, Decimal(0), 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0) for q in quarters),
        cost_by_team=tuple(
            TeamCostRow(q, t, f"CC-{t.upper()}", Decimal(v), Decimal(0), Decimal(v))
            for q in quarters
            for t, v in team_usd.items()
        ),
    )


@needs_chromium
@pytest.mark.parametrize("which", ["this plan", "previous plan"])
def test_plan_vs_actual_in_every_quarter_a_plan_and_the_usage_share(which: str, tmp_path: Path) -> None:
    """Issue 18: plan vs actual covered one quarter, and the example's usage (2026-10) does not overlap its plan
    (2027Q1 on). The small fleet (tests/reports/fixtures.py) has usage in February 2026 (672 of 2026Q1's 2,160
    hours) and in April 2026 (2026Q2). A plan of 2026Q1 (this one, or the previous one when this plan starts later)
    charges a $9,000 and b $4,500 a quarter: planned for February 9,000 x 672 / 2,160 = $2,800.00 and $1,400.00.
    Metered, idle policy even: the reservation c1 costs 672 h x $16 = $10,752.00 in February, of which a's and b's
    covered hours are $17.60 + $12.40 (test_metering's hand count); the idle $10,722.00 is halved between a and b
    (even), so a = $49.60 + $5,361.00 = $5,410.60 and b = $32.40 + $5,361.00 = $5,393.40. April falls in 2026Q2,
    which neither plan covers: no row."""
    from quartermaster.model import UsageRow
    from tests.reports.fixtures import FEBRUARY, small_fleet, usage

    records = usage(FEBRUARY)
    april = records.iloc[[0]].assign(hour=[dt.datetime(2026, 4, 2)])
    inventory = small_fleet()
    inventory = inventory.model_copy(update={"usage": [UsageRow(**r) for r in pd_records(records, april)]})
    q1 = hand_plan(("2026Q1",), {"a": "9000", "b": "4500"})
    later = hand_plan(("2026Q3",), {"a": "1", "b": "1"})
    plan, previous = (q1, None) if which == "this plan" else (later, q1)
    data = build_report(inventory, plan, plan.quarters[0], previous)
    table = data.table("plan_vs_actual")
    got = {r["team"]: r for r in table.rows}
    assert [(r["quarter"], r["plan"], r["months"]) for r in table.rows] == [("2026Q1", which, "2026-02")] * 2
    assert (got["a"]["planned"], got["b"]["planned"]) == (Decimal("2800.00"), Decimal("1400.00"))
    assert (got["a"]["metered"], got["b"]["metered"]) == (Decimal("5410.60"), Decimal("5393.40"))
    assert got["a"]["variance"] == Decimal("2610.60") and got["b"]["variance"] == Decimal("3993.40")
    assert table.total is not None
    assert (table.total["quarter"], table.total["planned"], table.total["metered"], table.total["variance"]) == (
        "Total",
        Decimal("4200.00"),
        Decimal("10804.00"),
        Decimal("6604.00"),
    )
    assert "Usage records fall in 2026-02, 2026-04; " in table.note
    html = tmp_path / "report.html"
    html.write_text(render_html(data), encoding="utf-8")
    cells = dom_table(dump_dom(html), "plan_vs_actual")
    assert cells[0][:4] == ["Quarter", "Plan", "Plan's figure", "Month"]
    assert [c[:5] + c[7:11] for c in cells[1:3]] == [
        ["2026Q1", which, "planned (prorated)", "2026-02", "a", "$2,800.00", "$5,410.60", "+$2,610.60", "+93.2%"],
        ["2026Q1", which, "planned (prorated)", "2026-02", "b", "$1,400.00", "$5,393.40", "+$3,993.40", "+285.2%"],
    ]
    # issue 35: "Variance %" is a relative change, a percent in every format (it printed "+93.2 pp", and the
    # workbook's column was General, showing 0.9324)
    book = tmp_path / "report.xlsx"
    book.write_bytes(render_xlsx(data))
    sheet = load_workbook(book)["Plan vs actual"]
    column = [c.value for c in sheet[1]].index("Variance %") + 1
    assert sheet.cell(2, column).number_format == "+0.0%;-0.0%;0.0%"
    assert sheet.cell(2, column).value == pytest.approx(2610.60 / 2800, abs=1e-4)


def pd_records(*frames: Any) -> list[dict[str, Any]]:
    """Usage frames (tests/reports/fixtures.usage) as UsageRow fields."""
    return [r for f in frames for r in f.to_dict("records")]


def test_plan_vs_actual_says_plainly_when_usage_and_plans_do_not_overlap(stored: ReportData) -> None:
    """The example's usage is October 2026; the stored plans start in 2027Q1."""
    table = stored.table("plan_vs_actual")
    assert table.rows == () and table.total is None
    assert table.note.startswith(
        "No overlap between usage and plan: usage records fall in 2026-10; this plan covers "
        "2027Q1 to 2028Q4; previous plan covers 2027Q1 to 2028Q4."
    )


def test_report_usage_option_reads_pulled_usage_for_plan_vs_actual(inventory: Inventory, tmp_path: Path) -> None:
    """Issue 20: usage pulled from Prometheus (`qm usage pull --out FILE`, outside the inventory) reaches plan vs
    actual through `qm report --usage FILE`, in place of the inventory's own usage; its metered figure is what
    `qm meter` charges for the same file (here the example's speech rows of 2026-10 alone)."""
    from quartermaster.metering import meter, parse_period, read_usage

    pulled = tmp_path / "pulled.csv"
    rows = (INVENTORY / "usage.csv").read_text().splitlines()
    pulled.write_text("\n".join([rows[0], *(r for r in rows[1:] if ",speech," in r)]) + "\n")
    runner = CliRunner()
    plan = runner.invoke(
        app, ["plan", str(INVENTORY), "--start", "2026Q4", "--horizon", "2q", "--out", str(tmp_path / "plan")]
    )
    assert plan.exit_code == 0, plan.output
    report = runner.invoke(
        app,
        [
            "report",
            str(INVENTORY),
            "--plan",
            str(tmp_path / "plan"),
            "--usage",
            str(pulled),
            "--formats",
            "csv",
            "--out",
            str(tmp_path / "report"),
        ],
    )
    assert report.exit_code == 0, report.output
    got = {
        r.split(",")[4]: r.split(",")[8]
        for r in (tmp_path / "report" / "plan_vs_actual.csv").read_text().splitlines()[1:]
        if r.startswith("2026Q4")
    }
    records, issues = read_usage(pulled, inventory)
    assert not issues
    policy = planner.load_result(tmp_path / "plan").options.idle_policy
    charged, problems = meter(inventory, records, parse_period("2026-10"), policy)
    assert not problems and charged is not None
    [speech] = [t for t in charged.teams if t.team == "speech"]
    assert got["speech"] == str(speech.total)
    # the plan's 2026Q4 plans every team (issue 26: October as metered in the inventory); the pulled file meters speech
    assert {t for t, v in got.items() if Decimal(v)} - {"speech"} <= {"_unused_commitments"}


def test_report_usage_option_names_a_bad_record(tmp_path: Path) -> None:
    bad = tmp_path / "pulled.csv"
    bad.write_text(
        "hour,cluster,team,flavor,accelerators_used,accelerators_requested\n"
        "2026-10-01T00:00:00,gke-gpu-us-east4,nobody,h100-mega-resv,1,1\n"
    )
    result = CliRunner().invoke(
        app,
        [
            "report",
            str(INVENTORY),
            "--plan",
            str(DATA / "plan"),
            "--usage",
            str(bad),
            "--out",
            str(tmp_path / "report"),
        ],
    )
    assert result.exit_code == 1 and "pulled.csv" in result.output and "nobody" in result.output
    assert "nothing was reported" in result.output and not (tmp_path / "report").exists()


def test_a_plan_buying_a_machine_the_inventory_no_longer_has_is_a_clear_error(inventory: Inventory) -> None:
    import dataclasses

    from quartermaster.errors import ProblemsFound

    plan = planner.load_result(DATA / "plan")
    gone = dataclasses.replace(plan.purchase_schedule[0], machine="dgx-b100")
    with pytest.raises(
        ProblemsFound,
        match=r"the plan buys dgx-b100 at onprem-sjc, a machine the inventory no longer "
        r"has; run `qm plan` again",
    ):
        build_report(inventory, dataclasses.replace(plan, purchase_schedule=(gone, *plan.purchase_schedule[1:])))


PAGE_SCRIPT = """<script>
const probe = document.createElement("span");
probe.style.cssText = "position:absolute;visibility:hidden;white-space:nowrap;left:0;top:0";
document.body.appendChild(probe);
const out = {viewport: window.innerWidth, page: document.documentElement.scrollWidth, tables: []};
for (const table of document.querySelectorAll("table.data")) {
  const box = table.parentElement, narrow = [];
  for (const cell of table.querySelectorAll("th, td")) {
    const style = getComputedStyle(cell);
    for (const p of ["fontFamily", "fontSize", "fontWeight", "fontStyle", "fontVariantNumeric", "letterSpacing"])
      probe.style[p] = style[p];
    let widest = 0;
    for (const word of cell.textContent.split(/\\s+/).filter(Boolean)) {
      probe.textContent = word;
      widest = Math.max(widest, probe.getBoundingClientRect().width);
    }
    const room = cell.getBoundingClientRect().width - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    if (widest > room + 0.5) narrow.push([cell.textContent, widest, room]);
  }
  const first = table.querySelector("tbody tr td");
  box.scrollLeft = box.scrollWidth;  // scrolled to the far right: the first column must still show
  const stuck = first ? first.getBoundingClientRect().left - box.getBoundingClientRect().left : 0;
  out.tables.push({id: table.id, section: table.closest("section").id, box: box.className,
                   right: box.getBoundingClientRect().right, width: box.clientWidth, scroll: box.scrollWidth,
                   stuck: stuck, narrow: narrow});
  box.scrollLeft = 0;
}
document.body.insertAdjacentHTML("beforeend", "<pre id='page'>" + JSON.stringify(out) + "</pre>");
</script>"""


@needs_chromium
@pytest.mark.parametrize("width", [1280, 1920])
def test_the_page_reads_at_1280_and_1920_px(stored: ReportData, tmp_path: Path, width: int) -> None:
    """Issue 26, point 9: at 1280 px the whole report scrolled sideways, at 1400 px the purchase schedule lost its
    liability columns and the routing table's "Why" column wrapped to four characters a line. Issue 35, point 5: at
    1280 px the columns a signer needs were still cut off inside their boxes ("Of which in the plan's horizon",
    "Verdict", "Total liability"), and three tables overflowed at 1920 px. Chromium lays the page out at each width
    in a 900-pixel-high window; a script reads back the page's width, each table's box (its clientWidth against the
    table's scrollWidth) and every cell's longest word."""
    import json

    html = tmp_path / "report.html"
    html.write_text(render_html(stored).replace("</body>", PAGE_SCRIPT + "</body>"), encoding="utf-8")
    assert CHROMIUM is not None
    with tempfile.TemporaryDirectory() as profile:
        dom = subprocess.run(
            chromium_command(CHROMIUM, Path(profile), f"--window-size={width},900", "--dump-dom", html.as_uri()),
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        ).stdout
    found = re.search(r"<pre id=\"page\">(.*?)</pre>", dom, re.S)
    assert found
    page = json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<"))
    assert page["viewport"] == width
    assert page["page"] <= page["viewport"], "the page scrolls sideways"
    assert len(page["tables"]) == sum(1 for _ in re.finditer(r'<table class="data"', render_html(stored)))
    for table in page["tables"]:
        assert table["box"] == "table-box" and table["right"] <= width, table["id"]
        assert table["narrow"] == [], (table["id"], table["narrow"][:3])  # no column narrower than its longest word
        assert abs(table["stuck"]) < 1, (table["id"], table["stuck"])  # the first column stays in view
    wide = {t["id"]: t["section"] for t in page["tables"] if t["scroll"] > t["width"] + 1}
    # what a signer reads (the summary, the purchases) shows every column; only a long table may scroll in its box
    assert {t: s for t, s in wide.items() if s in ("summary", "purchases")} == {}
    summary = {t["id"] for t in page["tables"] if t["section"] in ("summary", "purchases")}
    assert {"table-commitments_to_approve", "table-break_even", "table-purchase_schedule"} <= summary
    if width == 1280:  # the routing table's fourteen columns scroll inside their box (the page does not)
        assert wide == {"table-routing": "routing"}


@pytest.mark.slow  # plans the example
def test_the_quarter_in_progress_has_a_headline_of_its_own(inventory: Inventory) -> None:
    """Issue 35, point 5, and issue 34: the quarter in progress (2026Q4: the example's usage runs to 2026-11-01) has
    its own headline: its spend (October as metered, the rest planned) and October metered against a plan's figure,
    the plan vs actual rows of the quarter added up: this plan's (its October is the metered figure) or, given, the
    previous plan's forecast. Purchases can start in it, so it is also the report's quarter."""
    plan = planner.plan(inventory, planner.PlanOptions(horizon=2))
    assert plan.actuals_until is not None and plan.quarters[0] == plan.first_open_quarter
    data = build_report(inventory, plan)
    now = data.summary.in_progress
    assert now is not None and data.summary.quarter == now.quarter == plan.quarters[0]
    kpi = plan.kpi(now.quarter)
    assert kpi is not None and now.spend == kpi.cost_usd.quantize(CENT)
    rows = [r for r in data.table("plan_vs_actual").rows if r["quarter"] == now.quarter]
    assert rows and now.months == "2026-10" and now.metered_until == plan.actuals_until[:10]
    assert now.compared_with == "this plan" and now.planned_to_date == now.metered_to_date
    assert now.metered_to_date == sum(r["metered"] for r in rows) == Decimal("1153660.60")
    text = " ".join(re.sub(r"<[^>]+>", "", render_html(data)).split())
    assert (
        f"Quarter in progress, {now.quarter}: spend {money(now.spend)} (metered to {now.metered_until} as qm meter "
        f"charges it, planned after). Metered so far (2026-10): {money(now.metered_to_date)} against "
        f"{money(now.planned_to_date)} (this plan's figure) for those hours"
    ) in text
    assert "The rest of this summary is about" not in text
    later = build_report(inventory, plan, "2027Q1")
    assert later.summary.in_progress == now
    assert "The rest of this summary is about 2027Q1." in " ".join(re.sub(r"<[^>]+>", "", render_html(later)).split())


def test_the_plans_caveats_are_in_the_report(stored: ReportData) -> None:
    """Issue 35, point 5: the plan's caveats (offers with no supply cap, a proposed quota of 48 on a pool of 32) were
    printed by `qm plan` only. The stored plan has 8 notes and three flavors whose proposed nominals exceed their
    pool (tests/data/reports/plan/proposed_quotas.csv, fits_pool false: dgx-b200-a, p5-od, v5p-2x2x4)."""
    plan = planner.load_result(DATA / "plan")
    quotas = plan.frame("proposed_quotas")
    above = quotas[~quotas["fits_pool"]]
    want = [
        (flavor, int(group["nominal"].sum()), int(group["pool_accelerators"].iloc[0]))
        for flavor, group in above.groupby("flavor")
    ]
    assert list(plan.quotas_above_pool()) == want and len(want) == 3
    caveats = [r["caveat"] for r in stored.table("plan_caveats").rows]
    assert caveats[: len(plan.notes)] == list(plan.notes)
    assert sum("no supply cap in the inventory" in c for c in caveats) == 8
    assert caveats[len(plan.notes) :] == [
        f"proposed quotas above their pool: {f} {need} accelerators against a pool of {size} today; the proposal is "
        "not applied until the pool grows"
        for f, need, size in want
    ]
    html = render_html(stored)
    assert html.index('id="table-plan_caveats"') < html.index('<section id="bridge">')  # in the executive summary


def test_notes_cite_no_configuration_keys_or_repository_paths(stored: ReportData) -> None:
    """Issue 35, point 5: notes a finance reader reads cited `policy.equivalence`, `policy.budgets` and
    docs/explanation/budget-bridge-capex.md. Table notes, chart captions and text cells say what they mean instead
    (the source trail names the input files on purpose; the caveats are the plan's own notes as it wrote them)."""
    cited = re.compile(r"\bpolicy\.\w+|\b[\w/-]+\.(?:md|ya?ml|py)\b|\bdocs/")
    texts = [t.note for t in stored.tables] + [c.caption for c in stored.charts]
    texts += [
        str(row[c.key])
        for t in stored.tables
        if t.name not in ("source_trail", "plan_caveats")
        for row in t.rows
        for c in t.columns
        if c.kind == "text"
    ]
    assert [m.group(0) for text in texts for m in cited.finditer(text)] == []


def test_spend_and_budgets_state_one_basis_and_the_books_stay_apart(stored: ReportData) -> None:
    """Issue 35, point 3 (c): the same on-prem purchases were in spend, cost-centre charges and budgets as hourly
    cost and in the depreciation table, with nothing saying which one is the P&L. One rule, stated by every table
    that adds money up by quarter or cost centre: what is paid (cash), never depreciation; the spend of a quarter
    is its planned cost, so no depreciation is in it."""
    for name in ("spend_by_quarter", "cost_centers", "teams", "budget_status", "depreciation"):
        assert SPEND_RULE in (stored.table(name).note or ""), name
    assert SPEND_RULE.startswith("Spend, cost-centre charges and budgets count what is paid for each hour (cash)")
    spend = {r["quarter"]: r["total"] for r in stored.table("spend_by_quarter").rows}
    books = {r["month"]: r["depreciation"] for r in stored.table("depreciation").rows}
    assert spend and books  # the example holds and buys on-prem capacity: both views have figures
    assert "2027-01" in books and "2027Q1" in spend
