"""One rule for a missing price (issue 26, point 7): a pool whose pricing model has no row in the price book is
unpriced, and every view says so in the same words: `qm validate` warns, metering refuses, the quota diff shows no
figure for it (not the on-demand one), the alert rules leave it out of the budget spend with a note."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from quartermaster.checks import run_checks
from quartermaster.cli import app
from quartermaster.loader import LoadResult, load
from quartermaster.metering.rates import blocks
from quartermaster.modules.observability.rules import Options, build_rules
from quartermaster.pricing import MissingPrice, PricingModel, missing_prices, pool_node_price, pool_rate
from quartermaster.reports.quota_diff.quota_cost import flavor_economics
from tests.paths import INVENTORY

SPOT_ROW = "a3-megagpu-8g,gcp-us-east4,spot,"  # the price of the example's one spot pool, h100-mega-spot (GKE)
WANT = MissingPrice("h100-mega-spot", "spot", "a3-megagpu-8g", "gcp-us-east4", PricingModel.SPOT)


@pytest.fixture(scope="module")
def without_spot_price(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example inventory with the spot price of h100-mega-spot's machine and site removed from prices.csv."""
    root = tmp_path_factory.mktemp("inventory")
    shutil.copytree(INVENTORY, root, dirs_exist_ok=True)
    prices = root / "prices.csv"
    lines = prices.read_text().splitlines(keepends=True)
    kept = [line for line in lines if not line.startswith(SPOT_ROW)]
    assert len(kept) == len(lines) - 1
    prices.write_text("".join(kept))
    return root


@pytest.fixture(scope="module")
def loaded(without_spot_price: Path) -> LoadResult:
    return load(without_spot_price)


def test_the_missing_price_is_the_pools_own_model_not_a_stand_in(loaded: LoadResult) -> None:
    inventory = loaded.inventory
    assert missing_prices(inventory) == [WANT]
    # the book still has the on-demand price that the quota diff and the alert rules used to stand in with
    assert inventory.usd_per_node_hour("a3-megagpu-8g", "gcp-us-east4", "on-demand") is not None
    assert pool_node_price(inventory, "a3-megagpu-8g", "gcp-us-east4", "spot") == (None, PricingModel.SPOT)
    assert pool_rate(inventory, "h100-mega-spot") is None


def test_qm_validate_warns_with_the_pool(without_spot_price: Path) -> None:
    result = CliRunner().invoke(app, ["validate", str(without_spot_price)])
    assert result.exit_code == 0, result.output  # a warning: the inventory still renders
    assert f"warning: {WANT.message}" in result.output
    assert "clusters.yaml" in result.output  # located at the pool
    assert "OK: no errors, 1 warning(s)." in result.output


def test_metering_refuses_in_the_same_words(loaded: LoadResult) -> None:
    _, issues = blocks(loaded.inventory, dt.datetime(2026, 10, 1), dt.datetime(2026, 11, 1))
    assert [(i.message, i.fix) for i in issues] == [(WANT.message, WANT.fix)]


def test_the_quota_diff_shows_the_flavor_unpriced(loaded: LoadResult) -> None:
    spot = flavor_economics(loaded.inventory)["h100-mega-spot"]
    assert spot.rate_usd_per_accelerator_month is None  # not the on-demand rate
    assert spot.monthly_usd(spot.paid_anyway + 8) is None  # unknown, not $0


def test_the_alert_rules_leave_it_out_of_the_budget_spend_and_say_so(loaded: LoadResult) -> None:
    rules, notes = build_rules(loaded, Options(at=dt.date(2026, 11, 1)))
    spend = [r["expr"] for g in rules["groups"] for r in g["rules"] if "record" in r and "cost_center" in r["labels"]]
    assert spend and not any('flavor="h100-mega-spot"' in expr for expr in spend)
    assert any(note.endswith(f"leaves out {WANT.message}") for note in notes)


def test_an_inventory_without_a_price_book_is_not_warned_about() -> None:
    """Kueue objects and node pools only: nothing is priced, so nothing is missing."""
    inventory = load(INVENTORY).inventory
    bare = inventory.model_copy(update={"prices": ()})
    assert missing_prices(bare)  # every pool is unpriced ...
    assert not [i for i in run_checks(bare) if i.rule == "pool-prices"]  # ... and validate does not nag
