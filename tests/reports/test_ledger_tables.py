"""The finance report's money tables are group-bys of the plan's ledger, rounded once (issue 35, point 0).

The example is planned as `qm plan inventory/` plans it and its report built; its money tables are then rebuilt from
the plan's ledger (`quartermaster.ledger.group_by`) and compared to the cent. A table splits a cent figure so its
parts add up to it (`plan_figures.shares_of`, `plan_figures.team_costs`), which moves each part by less than a cent
from its exact lines: that is the tolerance where a table shows parts. And no module of the report (its tables, build
and sections, the bridge) rounds money itself: the cents come from `quartermaster/plan_figures.py` (one rounding
rule), the rates and quantities from `quartermaster/pricing.py`, and a share is rounded where it is printed.
"""

from __future__ import annotations

import re
from decimal import Decimal

import pytest

from quartermaster.ledger import group_by, total
from quartermaster.loader import load
from quartermaster.metering import check_usage, covered_month, inventory_records, meter, parse_period
from quartermaster.model import Inventory
from quartermaster.plan_contract import PlanResult
from quartermaster.planner import PlanOptions, plan
from quartermaster.pricing import CENT, IDLE_TEAM, cents
from quartermaster.reports.finance import ReportData, build_report
from quartermaster.units import quarter_hours
from tests.paths import INVENTORY, REPO

FINANCE = REPO / "reports" / "finance"
REPORT_MODULES = (*FINANCE.glob("*.py"), *(FINANCE / "tables").glob("*.py"), REPO / "reports" / "cost_bridge.py")
"""The finance report's modules: its tables, its build and sections, the bridge."""
ROUNDING = re.compile(r"(?<![\w.])(cents|allocate_cents|split_cents|round)\(|\.quantize\(|\bROUND_[A-Z_]+")
"""A call that rounds money (or a rate, or a quantity) in place: `cents(`, `allocate_cents(`, `split_cents(`,
`round(`, `.quantize(`, a rounding mode."""


@pytest.fixture(scope="module")
def example() -> tuple[Inventory, PlanResult, ReportData]:
    inventory = load(INVENTORY).inventory
    result = plan(inventory, PlanOptions())
    assert result.has_plan and result.ledger
    return inventory, result, build_report(inventory, result)


def test_no_report_module_rounds_money_itself() -> None:
    assert ROUNDING.search("x = cents(r.usd)") and ROUNDING.search("y.quantize(PCT)")  # the guard can fail
    assert not ROUNDING.search("line_cents(x) + purchase_cents(r).liability")  # the one rule's functions pass
    modules = sorted(REPORT_MODULES)
    assert len(modules) >= 30 and all(path.exists() for path in modules)  # 20 table modules, the rest
    found = [
        f"{path.name}:{n}: {line.strip()}"
        for path in modules
        for n, line in enumerate(path.read_text().splitlines(), start=1)
        if ROUNDING.search(line.split("#")[0])
    ]
    assert found == [], "round in quartermaster/plan_figures.py (money) or pricing.shown_* (rates, quantities)"


def test_spend_by_quarter_is_the_ledgers_cost_side(example: tuple[Inventory, PlanResult, ReportData]) -> None:
    _, result, report = example
    by_model = group_by(result.ledger, "cost", "quarter", "pricing_model")
    for row in report.table("spend_by_quarter").rows:
        q = row["quarter"]
        assert row["total"] == cents(total(result.ledger, "cost", quarter=q)), q
        for (qq, model), usd in by_model.items():
            if qq == q and usd:
                assert abs(row[model] - usd) < CENT, (q, model)


def test_the_team_and_cost_centre_tables_are_its_charge_side(example: tuple[Inventory, PlanResult, ReportData]) -> None:
    _, result, report = example
    quarter = result.quarters[0]
    by_team = group_by(result.ledger, "charge", "team", quarter=quarter)
    labels = group_by(result.ledger, "charge", "team", "label", quarter=quarter)
    idle: dict[str, Decimal] = {}
    for (team, label), usd in labels.items():
        if label in ("idle share", "metered idle share"):
            idle[team] = idle.get(team, Decimal(0)) + usd
    teams = {r["team"]: r for r in report.table("teams").rows}
    assert len(teams) == len(by_team) - (1 if (IDLE_TEAM,) in by_team and IDLE_TEAM not in teams else 0)
    for (team,), usd in by_team.items():
        if team in teams:
            assert abs(teams[team]["current"] - usd) < CENT, team
            assert abs(teams[team]["idle_share"] - idle.get(team, Decimal(0))) < CENT, team
    centres = group_by(result.ledger, "charge", "cost_center", quarter=quarter)
    shown = {r["cost_center"]: r["current"] for r in report.table("cost_centers").rows}
    for (centre,), usd in centres.items():
        members = sum(1 for r in result.cost_by_team if (r.quarter, r.cost_center) == (quarter, centre))
        if centre in shown:
            assert abs(shown[centre] - usd) < CENT * members, centre
    assert sum(shown.values(), Decimal(0)) == cents(total(result.ledger, "charge", quarter=quarter))


def test_the_budget_status_is_the_charge_side_by_cost_centre(example: tuple[Inventory, PlanResult, ReportData]) -> None:
    _, result, report = example
    centres = group_by(result.ledger, "charge", "cost_center", "quarter")
    for row in report.table("budget_status").rows:
        members = sum(
            1 for r in result.cost_by_team if (r.quarter, r.cost_center) == (row["quarter"], row["cost_center"])
        )
        exact = centres.get((row["cost_center"], row["quarter"]), Decimal(0))
        assert abs(row["usd"] - exact) < CENT * max(members, 1), (row["cost_center"], row["quarter"])
        assert row["variance"] == row["usd"] - row["budget_usd"]


def test_the_coverage_tables_cost_is_the_ledgers(example: tuple[Inventory, PlanResult, ReportData]) -> None:
    _, result, report = example
    for row in report.table("coverage").rows:
        assert row["cost"] == cents(total(result.ledger, "cost", quarter=row["quarter"])), row["quarter"]


def test_the_bridge_walks_from_qm_meters_ledger_to_the_plans(example: tuple[Inventory, PlanResult, ReportData]) -> None:
    """The bridge starts at the last metered month's total (both sides of `qm meter`'s ledger), scaled to the quarter,
    and ends at the quarter's cost (both sides of the plan's ledger); its lines add up from one to the other."""
    inventory, result, report = example
    rows = [(r["item"], r["usd"]) for r in report.table("bridge").rows]
    (_, start), *lines, (end_item, end) = rows
    quarter = end_item.split()[0]
    assert (
        end
        == cents(total(result.ledger, "cost", quarter=quarter))
        == cents(total(result.ledger, "charge", quarter=quarter))
    )
    records, issues = check_usage(inventory_records(inventory), inventory)
    assert not issues
    month = covered_month(records, parse_period("2026-10"))  # the example's usage history is October 2026
    metered, problems = meter(inventory, records, month, "proportional")
    assert metered is not None and not problems
    scale = Decimal(quarter_hours(quarter)) / Decimal(month.hours)
    assert start == cents(total(metered.ledger, "cost") * scale) == cents(total(metered.ledger, "charge") * scale)
    assert start + sum((usd for _, usd in lines), Decimal(0)) == end
