"""The plan's ledger (issue 35, point 0): its priced lines are what its money tables group.

Each table of the example's plan is rebuilt here as a group-by of the ledger (`quartermaster.ledger.group_by`) and
compared to the cent: cost_by_quarter is the cost side by quarter, pricing model and term; cost_by_team the charge side
by quarter and team (use, idle share); each quarter's cost is either side's total. A person checks a line by
multiplying its quantity by its rate (ledger.csv), and a table by adding up its lines in a spreadsheet.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import jsonschema
import pytest

from quartermaster.ledger import group_by, total
from quartermaster.loader import load
from quartermaster.plan_contract import PlanResult, load_result
from quartermaster.plan_figures import horizon_cost, planned_charges, team_costs
from quartermaster.planner import PlanOptions, plan
from quartermaster.pricing import CENT, cents
from tests.paths import INVENTORY, REPO


@pytest.fixture(scope="module")
def example() -> PlanResult:
    """The example planned as `qm plan inventory/` plans it."""
    result = plan(load(INVENTORY).inventory, PlanOptions())
    assert result.has_plan and result.ledger
    return result


def test_each_side_adds_up_to_every_quarters_cost(example: PlanResult) -> None:
    for q in example.quarters:
        kpi = example.kpi(q)
        assert kpi is not None
        assert cents(total(example.ledger, "cost", quarter=q)) == cents(kpi.cost_usd), q
        assert cents(total(example.ledger, "charge", quarter=q)) == cents(kpi.cost_usd), q
    shown = sum((cents(total(example.ledger, "cost", quarter=q)) for q in example.quarters), Decimal(0))
    assert shown == horizon_cost(example)  # the horizon as shown: its quarters' cents added up


def test_cost_by_quarter_is_the_cost_side_by_pricing_model(example: PlanResult) -> None:
    lines = group_by(example.ledger, "cost", "quarter", "pricing_model", "term_months")
    assert {(r.quarter, r.pricing_model, r.term_months): cents(r.usd) for r in example.cost_by_quarter} == {
        key: cents(usd)
        for key, usd in lines.items()
        if cents(usd) != 0  # a model of $0 has no row
    }


def test_cost_by_team_is_the_charge_side_by_team(example: PlanResult) -> None:
    charged = group_by(example.ledger, "charge", "quarter", "team")
    labels = group_by(example.ledger, "charge", "quarter", "team", "label")

    def idle(q: str, team: str) -> Decimal:
        shares = (usd for (qq, t, label), usd in labels.items() if (qq, t) == (q, team) and "idle" in label)
        return sum(shares, Decimal(0))

    assert {(r.quarter, r.team): cents(r.usd) for r in example.cost_by_team} == {
        key: cents(usd) for key, usd in charged.items()
    }
    for r in example.cost_by_team:
        assert cents(r.idle_share_usd) == cents(idle(r.quarter, r.team)), (r.quarter, r.team)
        assert cents(r.usage_usd) == cents(charged[(r.quarter, r.team)] - idle(r.quarter, r.team))


def test_the_budget_status_is_the_charge_side_by_cost_centre(example: PlanResult) -> None:
    """Each team's charge is its ledger lines to within a cent (`plan_figures.team_costs` splits the quarter's cent
    figure by largest remainder so that the teams add up to it, moving each by less than a cent), and a cost centre's
    planned charge (its budget status) is its teams' lines to within a cent per team."""
    by_team = group_by(example.ledger, "charge", "quarter", "team")
    for q in example.quarters:
        for team, (_, usd) in team_costs(example, q).items():
            assert abs(usd - by_team[(q, team)]) < CENT, (q, team)
    centres = group_by(example.ledger, "charge", "cost_center", "quarter")
    for (centre, q), usd in planned_charges(example).items():
        teams = [r.team for r in example.cost_by_team if (r.cost_center, r.quarter) == (centre, q)]
        assert abs(usd - centres[(centre, q)]) < CENT * len(teams), (centre, q)


def test_the_closed_part_is_qm_meters_charge(example: PlanResult) -> None:
    """October 2026 is closed: its lines are `qm meter`'s charge per team (basis metered), $1,153,660.60 in all."""
    october = group_by(example.ledger, "charge", "team", month="2026-10")
    assert october == {(r.team,): r.usd for r in example.closed_costs if r.period == "2026-10"}
    assert {x.basis for x in example.ledger if x.month} == {"metered"}
    assert sum(october.values(), Decimal(0)) == sum((r.usd for r in example.closed_costs), Decimal(0))


def test_every_line_says_what_it_is_and_whom_it_belongs_to(example: PlanResult) -> None:
    for line in example.ledger:
        assert line.label and line.source and line.quarter in example.quarters and line.rate is not None, line
        if line.side == "charge":
            assert line.team and line.cost_center, line
        if line.label == "use":
            assert line.flavor, line  # the pool the hours run on, as routing names it


def test_the_ledger_is_written_beside_the_plans_tables(example: PlanResult, tmp_path) -> None:
    paths = example.write(tmp_path)
    assert tmp_path / "ledger.csv" in paths
    assert load_result(tmp_path).ledger == example.ledger


def test_the_examples_plan_json_with_its_ledger_validates_against_the_committed_schema(
    example: PlanResult, tmp_path: Path
) -> None:
    example.write(tmp_path)
    doc = json.loads((tmp_path / "plan.json").read_text())
    assert doc["ledger"]  # the ledger is in the file the schema describes
    jsonschema.validate(doc, json.loads((REPO / "docs" / "reference" / "plan.schema.json").read_text()))
