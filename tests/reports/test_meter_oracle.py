"""The DuckDB metering query equals the pandas metering it replaces, to the cent, line by line."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.meter_bench import records
from quartermaster.loader import load
from quartermaster.reports.metering import check_usage, inventory_records, parse_period
from quartermaster.reports.metering.meter import meter, meter_pandas
from tests.reports.fixtures import FEBRUARY, small_fleet, usage

EXAMPLE = load(Path(__file__).resolve().parents[2] / "inventory").inventory


@pytest.mark.parametrize("policy", ["proportional", "even", "owner:c"])
def test_fixture(policy: str) -> None:
    frame, _ = check_usage(usage(FEBRUARY), small_fleet())
    got, want = (f(small_fleet(), frame, parse_period("2026-02"), policy)[0] for f in (meter, meter_pandas))
    assert got is not None and want is not None and got.to_dict() == want.to_dict()


@pytest.mark.parametrize("period", ["2026-10", "2026Q4"])
@pytest.mark.parametrize("policy", ["proportional", "even", "owner:inference"])
def test_example_inventory(period: str, policy: str) -> None:
    frame, _ = check_usage(inventory_records(EXAMPLE), EXAMPLE)
    got, want = (f(EXAMPLE, frame, parse_period(period), policy)[0] for f in (meter, meter_pandas))
    assert got is not None and want is not None and got.to_dict() == want.to_dict()


@pytest.mark.parametrize("rows", [1_000, 200_000])
@pytest.mark.parametrize("policy", ["proportional", "even"])
def test_generated_records(rows: int, policy: str) -> None:
    # 1,000 rows at 2-decimal quantities and rates like 3.0625 produce lines with equal remainders: both break
    # the tie in line order
    frame, _ = check_usage(records(rows, seed=rows), EXAMPLE)
    got, want = (f(EXAMPLE, frame, parse_period("2026-10"), policy)[0] for f in (meter, meter_pandas))
    assert got is not None and want is not None and got.to_dict() == want.to_dict()
