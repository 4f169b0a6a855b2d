"""`qm meter`'s ledger (issue 35, point 0): the metered tables are group-bys of its priced lines.

October 2026 of the example: the cost side is what the fleet paid (usage and idle), the charge side who bears it
(usage, idle shares, idle nobody took); both add up to the month's total, and grouped by team and cost centre they are
`qm meter`'s team and cost-centre tables, to the cent. A person checks a usage line by multiplying its
accelerator-hours by its rate (within a cent: cents are allocated by largest remainder).
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from quartermaster.ledger import group_by, total
from quartermaster.loader import load
from quartermaster.metering import check_usage, inventory_records, meter, parse_period
from quartermaster.metering.meter import MeterResult
from quartermaster.pricing import CENT, IDLE_COST_CENTER, IDLE_TEAM
from quartermaster.reports.metering.export import write_meter
from tests.paths import INVENTORY


@pytest.fixture(scope="module")
def october() -> MeterResult:
    inventory = load(INVENTORY).inventory
    records, issues = check_usage(inventory_records(inventory), inventory)
    assert not issues
    result, problems = meter(inventory, records, parse_period("2026-10"), "proportional")
    assert result is not None and not problems
    return result


def test_both_sides_add_up_to_the_months_total(october: MeterResult) -> None:
    assert total(october.ledger, "cost") == october.total_cost == total(october.ledger, "charge")
    assert october.total_cost == sum((t.total for t in october.teams), october.unallocated_idle)


def test_the_team_and_cost_centre_tables_are_the_charge_side_grouped(october: MeterResult) -> None:
    by_team = group_by(october.ledger, "charge", "team")
    assert {(t.team,): t.total for t in october.teams} == {
        key: usd for key, usd in by_team.items() if key != (IDLE_TEAM,)
    }
    by_centre = group_by(october.ledger, "charge", "cost_center")
    want = {(cc,): usd for cc, usd in october.cost_centers.items()}
    if october.unallocated_idle:
        want[(IDLE_COST_CENTER,)] = october.unallocated_idle
    assert by_centre == want
    for t in october.teams:
        assert total(october.ledger, "charge", team=t.team, label="use") == t.usage_cost
        assert total(october.ledger, "charge", team=t.team, label="idle share") == t.idle_share


def test_every_line_is_a_quantity_at_a_rate(october: MeterResult) -> None:
    for line in october.ledger:
        assert (line.basis, line.month, line.quarter) == ("metered", "2026-10", "2026Q4"), line
        assert line.rate is not None and line.usd is not None
        assert abs(line.quantity * line.rate - line.usd) < CENT, line  # cents allocated by largest remainder
    idle = total(october.ledger, "cost", label="idle")
    assert idle == october.idle_cost > 0


def test_qm_meter_writes_its_ledger(october: MeterResult, tmp_path) -> None:
    paths = write_meter(october, tmp_path)
    text = (tmp_path / "ledger.csv").read_text()
    assert tmp_path / "ledger.csv" in paths
    assert len(text.splitlines()) == len(october.ledger) + 1  # a header and one row per line
    assert sum((Decimal(row.rsplit(",", 1)[1]) for row in text.splitlines()[1:]), Decimal(0)) == 2 * october.total_cost
