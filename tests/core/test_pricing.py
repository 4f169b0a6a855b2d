"""The one cost model (issue 14): every view prices through quartermaster.pricing, with one rule per price."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal

import pytest

from quartermaster.loader import load
from quartermaster.model import Inventory
from quartermaster.pricing import (
    PRICING_MODEL_OF_PROVISIONING,
    PricingModel,
    Provisioning,
    accelerator_hour_price,
    allocate_cents,
    format_usd,
    pool_node_price,
    pricing_model_of,
    pricing_model_of_commitment,
)
from quartermaster.reports.metering.rates import blocks
from quartermaster.reports.quota_diff.pricing import flavor_economics
from tests.paths import INVENTORY, REPO

PRODUCT = ("quartermaster", "planner", "modules", "reports")
# Each pattern is a piece of pricing logic that lives in quartermaster/pricing.py alone.
PRICING_ONLY = {
    "a price-book lookup": re.compile(r"\.usd_per_node_hour\("),
    "a node price divided into accelerators": re.compile(r"usd_per_node_hour\s*/|(?<!/)/\s*\w+\.accelerators_per_node"),
    "a money rounding helper": re.compile(r"^def (usd|cents|_money|allocate_cents|split_cents)\(", re.M),
    "the idle line's name": re.compile(r"[\"']_unused_commitments[\"']|[\"']_shared[\"']"),
    "hours per month": re.compile(r"^HOURS_PER_(MONTH|WEEK)\s*=", re.M),
    "a FOCUS category of a pricing model": re.compile(
        r"[\"'](capacity-block|flex-start|on-demand|onprem)[\"']\s*:\s*[\"'](Standard|Committed|Dynamic)"
    ),
}


@pytest.fixture(scope="module")
def inventory() -> Inventory:
    return load(INVENTORY).inventory


def test_pricing_logic_lives_only_in_the_pricing_home() -> None:
    found = []
    for package in PRODUCT:
        for path in sorted((REPO / package).rglob("*.py")):
            if path == REPO / "quartermaster" / "pricing.py":
                continue
            text = path.read_text(encoding="utf-8")
            for what, pattern in PRICING_ONLY.items():
                if pattern.search(text):
                    found.append(f"{path.relative_to(REPO)}: {what}")
    assert found == []


@pytest.mark.parametrize(
    "provisioning, provider, want",
    [
        # a reservation beyond its commitment pays on-demand
        (Provisioning.RESERVATION, "gcp", PricingModel.ON_DEMAND),
        # capacity blocks beyond their commitment pay the capacity-block price
        (Provisioning.CAPACITY_BLOCK, "aws", PricingModel.CAPACITY_BLOCK),
        (Provisioning.SPOT, "azure", PricingModel.SPOT),
        (Provisioning.FLEX_START, "gcp", PricingModel.FLEX_START),
        # owned hardware is priced at its amortised `onprem` row whatever the pool says
        (Provisioning.ON_DEMAND, "onprem", PricingModel.ONPREM),
    ],
)
def test_the_pricing_model_of_a_pool(provisioning: Provisioning, provider: str, want: PricingModel) -> None:
    assert pricing_model_of(provisioning, provider) == want


def test_every_provisioning_mode_has_a_pricing_model() -> None:
    assert set(PRICING_MODEL_OF_PROVISIONING) == set(Provisioning)


@pytest.mark.parametrize(
    "kind, want",
    [
        ("on-prem-purchase", PricingModel.ONPREM),
        ("capacity-block", PricingModel.CAPACITY_BLOCK),
        ("cud", PricingModel.COMMIT),
        ("reserved-instance", PricingModel.COMMIT),
        ("savings-plan", PricingModel.COMMIT),
    ],
)
def test_the_pricing_model_of_a_commitment(kind: str, want: PricingModel) -> None:
    assert pricing_model_of_commitment(kind) == want


def test_metering_and_the_quota_diff_price_a_pool_at_the_same_rate(inventory: Inventory) -> None:
    """For every pool outside a commitment, the metered rate per accelerator-hour times 730 hours is the quota
    diff's marginal rate per accelerator-month: both come from pricing.pool_node_price."""
    start = dt.datetime(2026, 10, 1)
    metered = {b.name: b for b in blocks(inventory, start, start + dt.timedelta(days=31))[0] if b.kind == "pool"}
    economics = flavor_economics(inventory)
    compared = 0
    for pool in inventory.pools:
        econ, block = economics[pool.name], metered[pool.name]
        price, model = pool_node_price(
            inventory, pool.machine, inventory.cluster_of_pool[pool.name].site, pool.provisioning
        )
        assert price is not None and model is not None
        assert econ.rate_pricing_model == model == block.model, pool.name
        assert econ.rate_usd_per_accelerator_month == block.rate * 730, pool.name
        compared += 1
    assert compared == len(inventory.pools) == 10


def test_an_accelerator_hour_is_the_node_price_over_accelerators_per_node(inventory: Inventory) -> None:
    row = next(p for p in inventory.prices if p.pricing_model == "on-demand" and p.machine == "a3-megagpu-8g")
    got = accelerator_hour_price(inventory, row.machine, row.site, PricingModel.ON_DEMAND)
    assert got == row.usd_per_node_hour / 8  # a3-megagpu-8g: 8 H100 per node (catalog)


def test_a_missing_price_is_unknown_not_free(inventory: Inventory) -> None:
    assert accelerator_hour_price(inventory, "a3-megagpu-8g", "nowhere", PricingModel.ON_DEMAND) is None
    assert format_usd(None) == "\u2013"


def test_cent_allocation_adds_up_exactly() -> None:
    # $10 in three equal parts: 3.33 + 3.33 + 3.34 (the largest remainder, ties by key, gets the cent).
    shares = allocate_cents({"a": Decimal(10) / 3, "b": Decimal(10) / 3, "c": Decimal(10) / 3}, Decimal(10))
    assert sum(shares.values()) == Decimal("10.00")
    assert sorted(shares.values()) == [Decimal("3.33"), Decimal("3.33"), Decimal("3.34")]


def test_money_is_shown_with_its_sign_before_the_dollar() -> None:
    assert format_usd(Decimal("-1234.5")) == "-$1,234.50"
    assert format_usd(Decimal("0.125"), places=2) == "$0.13"  # half up
