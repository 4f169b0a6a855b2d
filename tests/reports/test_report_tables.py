"""The finance report's typed tables and the one rounding rule of a plan's money (issue 26, points 4 and 9)."""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import pytest
from typer.testing import CliRunner

from quartermaster.cli import app
from quartermaster.loader import load
from quartermaster.model import Inventory
from quartermaster.plan_contract import PlanResult, load_result
from quartermaster.plan_figures import allocate_grid, team_costs
from quartermaster.plan_figures import quarter_cost as plan_quarter_cost
from quartermaster.pricing import allocate_cents
from quartermaster.reports.finance import build_report
from quartermaster.reports.finance.table import Column, Row, Table
from quartermaster.reports.finance.tables.spend import spend_by_quarter
from quartermaster.reports.focus import plan_focus_rows
from tests.paths import DATA as TEST_DATA
from tests.paths import INVENTORY

DATA = TEST_DATA / "reports"


@dataclass(frozen=True)
class _Line(Row):
    team: str
    usd: Decimal


def test_a_column_naming_a_field_the_row_lacks_fails_when_the_table_is_built() -> None:
    # issue 26 point 9: a renamed field must fail loudly, not print $0.00
    with pytest.raises(KeyError, match="_Line has no field cost_usd"):
        Table("t", "T", (Column("team", "Team"), Column("cost_usd", "Cost", "money")), (_Line("a", Decimal(1)),))
    row = _Line("a", Decimal("1.50"))
    assert row["usd"] == Decimal("1.50")
    with pytest.raises(KeyError, match="no field `cost_usd`"):
        row["cost_usd"]


def test_a_grid_of_cents_adds_up_to_its_rows_and_its_columns() -> None:
    # two pricing-model lines of 10 cents each split evenly over three teams: every cell is 3.33 cents; the teams'
    # charges are 20 cents split three ways (7, 7, 6 by largest remainder, ties in key order): the grid must give
    # each line 10 cents and each team its charge
    lines = {"commit": Decimal("0.10"), "spot": Decimal("0.10")}
    teams = allocate_cents({t: Decimal("0.20") / 3 for t in "xyz"}, Decimal("0.20"))
    assert teams == {"x": Decimal("0.07"), "y": Decimal("0.07"), "z": Decimal("0.06")}
    cells = {(line, t): usd / 3 for line, usd in lines.items() for t in teams}
    grid = allocate_grid(cells, lines, teams)
    for line, usd in lines.items():
        assert sum(v for (l_, _), v in grid.items() if l_ == line) == usd
    for team, usd in teams.items():
        assert sum(v for (_, t), v in grid.items() if t == team) == usd
    assert all(abs(grid[k] - cells[k]) < Decimal("0.02") for k in cells)


def test_a_grid_of_cents_meets_both_totals_on_generated_tables() -> None:
    # generated tables (a fixed seed): line totals by allocate_cents of the lines, team totals by allocate_cents of
    # the teams, as the FOCUS forecast and the report round them; the grid must meet both
    rng = random.Random(26)
    for _ in range(200):
        line_usd = {f"m{i}": Decimal(rng.randint(0, 10**8)) / 10**6 for i in range(rng.randint(1, 5))}
        team_usd = {f"t{j}": Decimal(rng.randint(1, 10**8)) / 10**6 for j in range(rng.randint(1, 6))}
        total = sum(line_usd.values(), Decimal(0))
        whole = sum(team_usd.values(), Decimal(0))
        lines = allocate_cents(line_usd, total)
        teams = allocate_cents({t: total * u / whole for t, u in team_usd.items()}, total)
        shown = sum(lines.values(), Decimal(0))
        cells = {(m, t): c * u / whole for m, c in lines.items() for t, u in team_usd.items()}
        grid = allocate_grid(cells, lines, teams)
        assert sum(grid.values(), Decimal(0)) == shown
        assert all(sum(v for (m, _), v in grid.items() if m == line) == usd for line, usd in lines.items())
        assert all(sum(v for (_, t), v in grid.items() if t == team) == usd for team, usd in teams.items())


@pytest.fixture(scope="module")
def inventory() -> Inventory:
    return load(INVENTORY).inventory


@pytest.fixture(scope="module")
def plan() -> PlanResult:
    return load_result(DATA / "plan")


def test_the_forecast_focus_export_charges_each_team_what_the_report_does(
    inventory: Inventory, plan: PlanResult
) -> None:
    # issue 26: four teams differed by a cent between the forecast FOCUS export and the report
    spend_table = spend_by_quarter(plan, list(plan.quarters))
    for quarter in plan.quarters:
        rows = plan_focus_rows(inventory, plan, quarter)
        by_team: dict[str, Decimal] = {}
        for r in rows:
            team = r["x_Team"] or "_unused_commitments"
            by_team[team] = by_team.get(team, Decimal(0)) + r["EffectiveCost"]
        report = {team: usd for team, (_, usd) in team_costs(plan, quarter).items() if usd or team in by_team}
        assert by_team == report, quarter
        assert sum(by_team.values()) == plan_quarter_cost(plan, quarter)
        # and a pricing model's lines add up to its column of the spend table
        by_model: dict[str, Decimal] = {}
        for r in rows:
            model = json.loads(r["SkuPriceDetails"])["PricingModel"]
            by_model[model] = by_model.get(model, Decimal(0)) + r["EffectiveCost"]
        spend = next(r for r in spend_table.rows if r["quarter"] == quarter)
        assert by_model == {m: usd for m, usd in spend.by_model.items() if m in by_model}, quarter


def test_qm_plan_prints_a_horizon_total_equal_to_its_quarters(tmp_path: Path) -> None:
    # issue 26: `qm plan` printed $22,878,197.28 and the report $22,878,197.29 (the sum of the quarters shown)
    done = CliRunner().invoke(app, ["plan", str(INVENTORY), "--horizon", "2q", "--out", str(tmp_path)])
    assert done.exit_code == 0, done.output
    headline = re.search(r"Expected cost \(planned\) (\$[\d,.]+) vs (\$[\d,.]+) all on-demand", done.output)
    assert headline is not None
    quarters = re.findall(r"^│ (\d{4}Q\d) +│ +(\$[\d,.]+) │ +(\$[\d,.]+) │", done.output, flags=re.M)
    assert len(quarters) == 2

    def usd(text: str) -> Decimal:
        return Decimal(text.replace("$", "").replace(",", ""))

    assert usd(headline.group(1)) == sum(usd(cost) for _, cost, _ in quarters)
    assert usd(headline.group(2)) == sum(usd(od) for _, _, od in quarters)
    data = build_report(load(INVENTORY).inventory, load_result(tmp_path))
    spend = data.table("spend_by_quarter")
    assert spend.total is not None and spend.total["total"] == usd(headline.group(1))
    assert [r["total"] for r in spend.rows] == [usd(cost) for _, cost, _ in quarters]


def test_every_total_row_is_the_sum_of_the_rows_shown(inventory: Inventory, plan: PlanResult) -> None:
    # issue 26: every displayed total equals the sum of its displayed parts, to the cent
    previous = load_result(DATA / "previous-plan")
    data = build_report(inventory, plan, "2027Q1", previous)
    checked = 0
    for table in data.tables:
        if table.total is None:
            continue
        both = set(plan.quarters) & set(previous.quarters)
        rows = [r for r in table.rows if table.name != "changes_cost" or r["quarter"] in both]
        for column in table.columns:
            if column.kind in ("money", "delta") and table.total[column.key] is not None:
                shown = sum((r[column.key] for r in rows if r[column.key] is not None), Decimal(0))
                assert table.total[column.key] == shown, (table.name, column.key)
                checked += 1
    assert checked > 30
    # and the cost-centre rows are the sums of their teams' rows
    teams = data.table("teams")
    for centre in data.table("cost_centers").rows:
        mine = [t for t in teams.rows if t["cost_center"] == centre["cost_center"]]
        assert centre["current"] == sum(t["current"] for t in mine), centre["cost_center"]
