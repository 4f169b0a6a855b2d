"""FOCUS 1.3 export: every mandatory column present and filled as the spec requires; commitment columns;
EffectiveCost and BilledCost reconcile to the metered total to the cent."""

from __future__ import annotations

import csv
import dataclasses
import json
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

import pytest
from typer.testing import CliRunner

from quartermaster import planner
from quartermaster.cli import app
from quartermaster.loader import load
from quartermaster.metering import check_usage, inventory_records, meter, parse_period
from quartermaster.reports.focus import (
    COLUMNS,
    FORECAST_PROVIDER,
    MANDATORY,
    PLANNED_SERVICE,
    SUMMABLE,
    focus_rows,
    plan_focus_rows,
    write_focus,
)
from tests.paths import DATA, INVENTORY, REPO
from tests.reports.fixtures import FEBRUARY, small_fleet, usage


def fixture_rows() -> tuple[list[dict], Decimal]:
    inventory = small_fleet()
    frame, _ = check_usage(usage(FEBRUARY), inventory)
    result, _ = meter(inventory, frame, parse_period("2026-02"))
    assert result is not None
    return focus_rows(inventory, [result]), result.total_cost


@pytest.fixture(scope="module")
def example_rows() -> tuple[list[dict], Decimal]:
    inventory = load(REPO / "inventory").inventory
    frame, issues = check_usage(inventory_records(inventory), inventory)
    assert issues == []
    result, _ = meter(inventory, frame, parse_period("2026-10"))
    assert result is not None
    return focus_rows(inventory, [result]), result.total_cost


def test_focus_13_has_23_mandatory_columns() -> None:
    assert len(MANDATORY) == 23  # FOCUS 1.3 has 23 mandatory columns (FOCUS_Spec, the 1.3 tree)
    assert set(MANDATORY) <= set(COLUMNS)
    assert {
        "ServiceProviderName",
        "HostProviderName",
        "CommitmentDiscountId",
        "CommitmentDiscountStatus",
        "PricingCategory",
        "x_Team",
        "x_CostCenter",
    } <= set(COLUMNS)


def test_mandatory_columns_are_filled_as_the_spec_requires(example_rows: tuple[list[dict], Decimal]) -> None:
    rows, _ = example_rows
    for row in rows:
        for column, nullable in MANDATORY.items():
            assert column in row
            if not nullable:
                assert row[column] not in (None, ""), (column, row["ChargeDescription"])
        # PricingQuantity / PricingUnit must not be null on Usage and Purchase rows that are not corrections.
        assert row["ChargeCategory"] in ("Usage", "Purchase") and row["ChargeClass"] is None
        assert row["PricingQuantity"] is not None and row["PricingUnit"] and row["SkuPriceId"]
        # A cost metric equals its unit price times PricingQuantity.
        assert row["ListCost"] == row["ListUnitPrice"] * row["PricingQuantity"]
        assert row["ContractedCost"] == row["ContractedUnitPrice"] * row["PricingQuantity"]
        assert row["BillingPeriodStart"] < row["BillingPeriodEnd"] and row["ChargePeriodStart"] < row["ChargePeriodEnd"]
        # Commitment status: null without a commitment id; Used/Unused on usage rows with one.
        if row["CommitmentDiscountId"] is None:
            assert row["CommitmentDiscountStatus"] is None
        elif row["ChargeCategory"] == "Usage":
            assert row["CommitmentDiscountStatus"] in ("Used", "Unused")
        assert row["PricingCategory"] in ("Committed", "Standard", "Dynamic")
        if row["CapacityReservationId"] is None:
            assert row["CapacityReservationStatus"] is None


def test_effective_and_billed_cost_reconcile_to_the_metered_total(example_rows: tuple[list[dict], Decimal]) -> None:
    rows, total = example_rows
    assert sum(r["EffectiveCost"] for r in rows) == total
    assert sum(r["BilledCost"] for r in rows) == total
    teams = {r["x_Team"] for r in rows if r["ChargeCategory"] == "Usage"}
    assert None not in teams  # every usage row, idle included, is allocated to a team


def test_commitment_rows_by_hand() -> None:
    rows, total = fixture_rows()
    c1 = [r for r in rows if r["CommitmentDiscountId"] == "c1"]
    used = {
        (r["x_Team"], r["CommitmentDiscountStatus"]): r["EffectiveCost"] for r in c1 if r["ChargeCategory"] == "Usage"
    }
    # a 8.8 GPU-h and b 6.2 GPU-h at $2 (Used); idle $10,722 shared 6,347.42 / 4,374.58 (Unused).
    assert used == {
        ("a", "Used"): Decimal("17.60"),
        ("b", "Used"): Decimal("12.40"),
        ("a", "Unused"): Decimal("6347.42"),
        ("b", "Unused"): Decimal("4374.58"),
    }
    purchase = [r for r in c1 if r["ChargeCategory"] == "Purchase"]
    # The commitment's invoice: 8 GPUs x 672 h x $2 = $10,752, billed once; its usage rows bill nothing.
    assert [(r["BilledCost"], r["EffectiveCost"], r["PricingQuantity"]) for r in purchase] == [
        (Decimal("10752.00"), Decimal(0), Decimal("5376.000000"))
    ]
    assert all(r["BilledCost"] == 0 for r in c1 if r["ChargeCategory"] == "Usage")
    categories = {(r["x_Team"], r["PricingCategory"]) for r in rows if r["ChargeCategory"] == "Usage"}
    assert ("b", "Dynamic") in categories and ("a", "Standard") in categories  # spot; on-demand and overflow
    assert sum(r["EffectiveCost"] for r in rows) == sum(r["BilledCost"] for r in rows) == total == Decimal("10804.00")


def test_csv_has_the_header_and_null_as_empty(tmp_path: Path) -> None:
    rows, _ = fixture_rows()
    path = write_focus(rows, tmp_path / "focus.csv")
    with path.open() as f:
        read = list(csv.DictReader(f))
    assert list(read[0]) == COLUMNS and len(read) == len(rows)
    assert all(r["ChargeClass"] == "" for r in read)


def test_every_row_names_its_basis(example_rows: tuple[list[dict], Decimal]) -> None:
    """Issue 14: metered export rows say `metered`; the plan's export says `planned` (test_report)."""
    rows, _ = example_rows
    assert {r["x_Basis"] for r in rows} == {"metered"}


def test_invoice_and_service_subcategory_columns(example_rows: tuple[list[dict], Decimal]) -> None:
    """Issue 18: focus-validator 2.2.1 (FOCUS 1.2 rules) failed 14 rules on the metered export for want of
    InvoiceId and ServiceSubcategory. Every metered row names its period's chargeback statement for its billing
    account, and each ServiceName has one ServiceSubcategory from FOCUS 1.2's list (ServiceName-C-008-C)."""
    rows, _ = example_rows
    allowed = {
        "Virtual Machines",
        "Containers",
        "Other (Compute)",
        "Machine Learning",
        "AI Platforms",
        "Generative AI",
        "Other (AI and Machine Learning)",
    }  # FOCUS 1.2 values of the two categories used
    for row in rows:
        period = row["BillingPeriodStart"][:7]
        assert row["InvoiceId"] == f"qm-chargeback-{period}-{row['BillingAccountId']}"
        assert row["ServiceSubcategory"] in allowed
    by_service: dict[str, set[str]] = {}
    for row in rows:
        by_service.setdefault(row["ServiceName"], set()).add(row["ServiceSubcategory"])
    assert by_service and all(len(subs) == 1 for subs in by_service.values())


def test_sku_columns_and_nothing_consumed_of_unused_or_purchased_commitments(
    example_rows: tuple[list[dict], Decimal],
) -> None:
    """Issue 18, with the export's own applicability criteria: SkuMeter and SkuPriceDetails are present wherever a
    SKU and a SKU price are (list prices are published), and ConsumedQuantity is null on Purchase rows and on
    Usage rows of an unused commitment (ConsumedQuantity-C-004-C)."""
    rows, _ = example_rows
    for row in rows:
        assert (row["SkuMeter"] is None) == (row["SkuId"] is None)
        assert (row["SkuPriceDetails"] is None) == (row["SkuPriceId"] is None)
        if row["SkuPriceDetails"] is not None:
            details = json.loads(row["SkuPriceDetails"])
            assert details and all(key[:1].isupper() and "_" not in key for key in details)  # PascalCase keys
        unconsumed = row["ChargeCategory"] != "Usage" or row["CommitmentDiscountStatus"] == "Unused"
        assert (row["ConsumedQuantity"] is None) == unconsumed, row["ChargeDescription"]
    assert any(r["ChargeCategory"] == "Purchase" for r in rows)
    assert any(r["CommitmentDiscountStatus"] == "Unused" for r in rows)


def splits_by_origin(rows: list[dict], origin: Callable[[dict], object]) -> dict[object, list[dict]]:
    """The allocated charges of `rows` grouped by `origin` (what names their origin charge), after checking FOCUS
    1.3's split cost allocation rules on each group (FOCUS_Spec `specification/attributes/
    data_generator_calculated_split_cost_allocation_handling.md`; the validator has no 1.3 model offline):
    every dimension and unit price is the origin's (A-004-M), and an allocated portion names its team in the
    Allocated* columns (A-001-C); the unallocated portion has no AllocatedResourceId."""
    groups: dict[object, list[dict]] = {}
    for row in rows:
        if row["AllocatedMethodId"]:
            groups.setdefault(origin(row), []).append(row)
    metrics = {"BilledCost", "EffectiveCost", "ListCost", "ContractedCost", *SUMMABLE}
    allocated = {"AllocatedResourceId", "AllocatedResourceName", "AllocatedTags"}
    same = [c for c in COLUMNS if c not in metrics | allocated and not c.startswith("x_")]
    assert groups and "ChargeDescription" in same and "Tags" in same and "ListUnitPrice" in same
    for splits in groups.values():
        for column in same:
            assert len({r[column] for r in splits}) == 1, (column, {r[column] for r in splits})
        for row in splits:
            team = row["x_Team"]
            if team is None:
                assert row["AllocatedResourceId"] is None and row["AllocatedTags"] is None
                continue
            assert row["AllocatedResourceId"] == f"team/{team}" and row["AllocatedResourceName"] == team
            origin_tags = json.loads(row["Tags"]) if row["Tags"] else {}
            assert json.loads(row["AllocatedTags"]) == origin_tags | {"team": team, "cost_center": row["x_CostCenter"]}
            assert row["ListCost"] == row["ListUnitPrice"] * row["PricingQuantity"]
            assert row["ContractedCost"] == row["ContractedUnitPrice"] * row["PricingQuantity"]
    return groups


def test_idle_shares_are_focus_13_splits_of_their_idle_row() -> None:
    """Issue 18: a team's share of idle capacity is a split of the block's idle row: the same ChargeDescription,
    ResourceId and Tags on every split, and the splits' cost and quantity add up to the idle line's exactly."""
    inventory = load(INVENTORY).inventory
    frame, _ = check_usage(inventory_records(inventory), inventory)
    result, _ = meter(inventory, frame, parse_period("2026-10"))
    assert result is not None
    rows = focus_rows(inventory, [result])
    groups = splits_by_origin(rows, lambda r: (r["ResourceId"], r["ChargePeriodStart"]))
    assert all(r["Tags"] is None and r["ChargeDescription"].startswith("Idle ") for g in groups.values() for r in g)
    shared = {s.block for s in result.idle_shares}
    want = sorted((i.cost, i.accelerator_hours.quantize(Decimal("0.000001"))) for i in result.idle if i.block in shared)
    got = sorted((sum(r["EffectiveCost"] for r in g), sum(r["PricingQuantity"] for r in g)) for g in groups.values())
    assert got == want


def test_plan_lines_are_focus_13_splits_to_teams(forecast_rows: list[dict]) -> None:
    """Issue 18: each pricing-model line of the plan is one origin charge (one quarter of it) split to teams
    (AllocatedMethodId plan-team-share): before, every team's row had its own ChargeDescription and Tags and a
    quantity of one quarter each, so the splits added up to several quarters."""
    groups = splits_by_origin(forecast_rows, lambda r: r["SkuPriceId"])
    lines = {
        f"plan/{m.pricing_model}/{m.term_months}": m.usd
        for m in planner.load_result(PLAN).cost_by_quarter
        if m.quarter == "2027Q1"
    }
    assert set(groups) == set(lines)
    for key, splits in groups.items():
        unit_list, unit_contracted = splits[0]["ListUnitPrice"], splits[0]["ContractedUnitPrice"]
        # the origin is one quarter: its costs are its unit prices, and the splits add up to them exactly
        assert sum(r["PricingQuantity"] for r in splits) == sum(r["ConsumedQuantity"] for r in splits) == 1
        assert sum(r["ListCost"] for r in splits) == unit_list
        assert sum(r["EffectiveCost"] for r in splits) == sum(r["ContractedCost"] for r in splits) == unit_contracted
        assert abs(unit_contracted - lines[key]) < Decimal("0.01")  # the plan's line, rounded to the cent
        assert len({r["x_Team"] for r in splits}) == len(splits) > 1


def test_a_plan_line_no_team_is_charged_for_is_one_quarter_at_its_unit_prices() -> None:
    """Issue 26, point 7: a line with no team to split it to is priced like its splits, one quarter (PricingQuantity)
    at its unit prices, to the cent: ListCost the line's share of the quarter's on-demand equivalent, ContractedCost
    its EffectiveCost."""
    plan = planner.load_result(PLAN)
    kpi = plan.kpi("2027Q1")
    assert kpi is not None
    nobody = dataclasses.replace(plan, cost_by_team=tuple(t for t in plan.cost_by_team if t.quarter != "2027Q1"))
    rows = plan_focus_rows(load(INVENTORY).inventory, nobody, "2027Q1")
    assert rows and all(r["x_Team"] is None and r["AllocatedMethodId"] is None for r in rows)  # none split
    for row in rows:
        assert row["PricingQuantity"] == 1
        assert row["ListCost"] == row["ListUnitPrice"] and row["ContractedCost"] == row["ContractedUnitPrice"]
        assert row["ContractedCost"] == row["EffectiveCost"]
        assert row["ListCost"].as_tuple().exponent == row["ContractedCost"].as_tuple().exponent == -2  # cents
    assert sum(r["ListCost"] for r in rows) == kpi.on_demand_equivalent_usd.quantize(Decimal("0.01"))
    assert sum(r["EffectiveCost"] for r in rows) == kpi.cost_usd.quantize(Decimal("0.01"))


PLAN = DATA / "reports" / "plan"  # a plan the planner wrote for the example inventory
# FOCUS Unit Format, "Allowed Time-based Unit Names" (FOCUS_Spec specification/attributes/unit_format.md, read
# 2026-11-24); a quarter is none of them, so a quarter is written "3 Months" (a unit quantity, like "1000 Tokens").
FOCUS_TIME_UNITS = {"Years", "Months", "Days", "Hours", "Minutes", "Seconds", "Milliseconds", "Microseconds"}
PROVIDER_COLUMNS = ("ProviderName", "PublisherName", "ServiceProviderName", "HostProviderName", "InvoiceIssuerName")


@pytest.fixture(scope="module")
def forecast_rows() -> list[dict]:
    return plan_focus_rows(load(INVENTORY).inventory, planner.load_result(PLAN), "2027Q1")


def test_every_forecast_row_says_it_is_no_spend(forecast_rows: list[dict]) -> None:
    """Issue 18: the plan's forecast looked like spend (ChargeCategory Usage, real provider names, the metered
    file's name, told apart only by x_Basis). Every forecast row now says so in the FOCUS columns tools sum and
    group by: nothing billed or invoiced, a provider and a billing account no real charge has."""
    assert forecast_rows
    for row in forecast_rows:
        assert row["x_Basis"] == "planned" and row["ChargeDescription"].startswith("Forecast 2027Q1: ")
        assert row["BilledCost"] == 0 and row["InvoiceId"] is None
        assert {row[c] for c in PROVIDER_COLUMNS} == {FORECAST_PROVIDER}
        assert row["BillingAccountId"] == "forecast" and row["ServiceName"] == PLANNED_SERVICE
        assert row["x_PlannedProvider"]  # the provider that would supply the line is kept, in its own column
        quantity, unit = row["PricingUnit"].split(" ")
        assert int(quantity) == 3 and unit in FOCUS_TIME_UNITS  # one quarter = 3 months
    kpi = planner.load_result(PLAN).kpi("2027Q1")
    assert kpi is not None  # the forecast still carries the plan's cost, as EffectiveCost
    assert sum(r["EffectiveCost"] for r in forecast_rows) == kpi.cost_usd.quantize(Decimal("0.01"))


def test_a_tool_loading_both_exports_cannot_mix_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 18: the two exports get different default file names, different headers, and, read by their FOCUS
    columns alone (a tool that ignores x_ columns), share no billing account, provider or invoice, and the
    forecast adds nothing to billed spend."""
    (tmp_path / "inventory").symlink_to(INVENTORY, target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    for args in (["--period", "2026-10"], ["--quarter", "2027Q1", "--plan", str(PLAN)]):
        result = runner.invoke(app, ["export", "focus", "inventory", *args])
        assert result.exit_code == 0, result.output
    assert "FOCUS-shaped forecast rows (planned, not spend) for 2027Q1" in result.output
    with (tmp_path / "focus-2026-10.csv").open() as f:
        metered = list(csv.DictReader(f))
    with (tmp_path / "focus-forecast-2027Q1.csv").open() as f:
        forecast = list(csv.DictReader(f))
    assert "x_PlannedProvider" in forecast[0] and "x_PlannedProvider" not in metered[0]
    focus_only = [{k: v for k, v in row.items() if not k.startswith("x_")} for row in metered + forecast]
    billed = sum(Decimal(r["BilledCost"]) for r in focus_only)
    assert billed == sum(Decimal(r["BilledCost"]) for r in metered) > 0
    forecast_ids = {r["BillingAccountId"] for r in forecast}
    assert forecast_ids.isdisjoint(r["BillingAccountId"] for r in metered)
    assert {r["ProviderName"] for r in forecast}.isdisjoint(r["ProviderName"] for r in metered)
    assert all(r["InvoiceId"] for r in metered) and not any(r["InvoiceId"] for r in forecast)
    # a decimal, not `0`: a column of `0` reads as an integer in focus-validator (BilledCost-C-001-M)
    assert {r["BilledCost"] for r in forecast} == {"0.00"}
