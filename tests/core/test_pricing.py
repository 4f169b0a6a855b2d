"""The one cost model (issue 14): every view prices through quartermaster.pricing, with one rule per price."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal

import pytest

from quartermaster.loader import load
from quartermaster.metering.rates import blocks
from quartermaster.model import Inventory
from quartermaster.pricing import (
    HOURS_PER_MONTH,
    PRICING_MODEL_OF_PROVISIONING,
    PricedLine,
    PricingModel,
    Provisioning,
    accelerator_hour_price,
    allocate_cents,
    cheapest_accelerator_hour,
    commitment_term_months,
    committed_nodes_by_pool,
    format_usd,
    known_usd,
    missing_prices,
    pool_line,
    pool_node_price,
    pricing_model_of,
    pricing_model_of_commitment,
    usd,
)
from quartermaster.reports.quota_diff.quota_cost import flavor_economics
from tests.builders import make_inventory
from tests.paths import INVENTORY, REPO
from tests.planner.planning import MACHINE, SITE, one_site, price

PRODUCT = ("quartermaster", "planner", "modules", "reports")
# Each pattern is a piece of pricing logic that lives in quartermaster/pricing.py alone.
PRICING_ONLY = {
    "a price-book lookup": re.compile(r"\.usd_per_node_hour\("),
    "a node price divided into accelerators": re.compile(r"usd_per_node_hour\s*/|(?<!/)/\s*\w+\.accelerators_per_node"),
    "a money rounding helper": re.compile(r"^def (usd|cents|_money|allocate_cents|split_cents)\(", re.M),
    "the idle line's name": re.compile(r"[\"']_unused_commitments[\"']|[\"']_shared[\"']"),
    "hours per month": re.compile(r"^HOURS_PER_(MONTH|WEEK)\s*=", re.M),
    "an amortisation life or default term": re.compile(r"^(ONPREM_LIFE_MONTHS|DEFAULT_COMMIT_TERM_MONTHS)\s*=", re.M),
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


def _commit_row(term: int, hourly: str, upfront: str = "0", used: str = "0") -> dict[str, str | int]:
    return {**price(MACHINE, "commit", hourly, term), "upfront_usd_per_node": upfront, "usd_per_node_hour_used": used}


@pytest.mark.parametrize(
    ("dear", "want_dear_rate"),
    [
        # $0/h + $600,000 up front per node over 36 months: 600,000 / (36 x 730) = $22.83/h, dearer than $20/h
        (_commit_row(36, "0", upfront="600000"), Decimal(600000) / (36 * HOURS_PER_MONTH)),
        # $15/h every hour of the term + $10/h for each hour used: $25 per hour used, dearer than $20/h
        (_commit_row(36, "15", used="10"), Decimal(25)),
    ],
)
def test_price_rows_are_ranked_amortised(dear: dict[str, str | int], want_dear_rate: Decimal) -> None:
    """Issue 26, point 7: a $0/h row with an upfront fee (or a low fee with a rate per hour used) is not the
    cheapest hour; g2-standard-4 has one L4 a node, so a node-hour is an accelerator-hour."""
    inventory = one_site(commit_12=20).add("prices", **dear).build()
    assert cheapest_accelerator_hour(inventory, ("commit",), machine=MACHINE) == (
        Decimal(20),
        f"{MACHINE} at {SITE}, commit",
    )
    only_dear = one_site().add("prices", **dear).build()
    got = cheapest_accelerator_hour(only_dear, ("commit",), machine=MACHINE)
    assert got is not None and got[0] == want_dear_rate


@pytest.mark.parametrize(
    ("model", "term", "want"),
    [
        ("onprem", 0, 48),  # an on-prem row without a term: amortised over ONPREM_LIFE_MONTHS
        ("commit", 0, 12),  # a commitment without a term: the shortest one sold
        ("commit", 36, 36),  # a row's own term wins
        ("on-demand", 0, 0),  # pay-per-use: nothing to amortise
    ],
)
def test_the_term_a_committed_row_is_amortised_over(model: str, term: int, want: int) -> None:
    assert commitment_term_months(model, term) == want


@pytest.mark.parametrize(
    ("amount", "want"),
    [
        # ten digits of dollars and a half micro-dollar: a float has 16-17 digits and loses the last one
        (Decimal("1234567890.1234565"), "1234567890.123457"),
        (0.1 + 0.2, "0.300000"),  # a solver's float from its shortest repr, 0.30000000000000004
        (Decimal("-0.0000004"), "0.000000"),  # no negative zero
        (-2.5e-06, "-0.000003"),  # half up: away from zero
    ],
)
def test_usd_keeps_six_decimals_without_going_through_float(amount: Decimal | float, want: str) -> None:
    assert str(usd(amount)) == want


def _shared_commitment(count: int, sizes: dict[str, int]) -> Inventory:
    """Autoscaling pools of a3-megagpu-8g (8 H100s a node, up to `sizes` nodes) that all consume one reservation of
    `count` nodes."""
    b = make_inventory().add(
        "commitments",
        name="cud-shared",
        kind="cud",
        machine="a3-megagpu-8g",
        site="gcp-us-central1",
        count=count,
        term_months=12,
        start="2026-01-01",
        usd_per_node_hour=40,
    )
    for name, nodes in sizes.items():
        autoscaling = {"min_nodes": 0, "max_nodes": nodes}  # nothing paid beyond what the commitment covers
        b.pool(name, machine="a3-megagpu-8g", zones=["us-central1-a"], autoscaling=autoscaling)
        b.edit_pool(name, provisioning="reservation", commitment="cud-shared")
    return b.build()


@pytest.mark.parametrize(
    ("count", "sizes", "want"),
    [
        # 10 nodes over pools of 8 and 4: 6.67 and 3.33, floors 6 + 3, the largest remainder (0.67) gets the 10th
        # node (file order would give 8 and 2)
        (10, {"resv-a": 8, "resv-b": 4}, {"resv-a": 7, "resv-b": 3}),
        # the same pools listed the other way round: the same split, not the first pool filled first
        (10, {"resv-b": 4, "resv-a": 8}, {"resv-a": 7, "resv-b": 3}),
        # more committed nodes than the pools hold: each pool is covered whole, the other 4 nodes sit idle
        (16, {"resv-a": 8, "resv-b": 4}, {"resv-a": 8, "resv-b": 4}),
    ],
)
def test_the_nodes_a_commitment_covers_are_one_definition(count: int, sizes: dict[str, int], want: dict[str, int]):
    inventory = _shared_commitment(count, sizes)
    covered = committed_nodes_by_pool(inventory)
    assert {p: covered[p] for p in sizes} == want
    economics = flavor_economics(inventory)  # the quota diff's paid-anyway capacity is the covered nodes
    assert {p: economics[p].paid_anyway for p in sizes} == {p: n * 8 for p, n in want.items()}
    # ... at the commitment's $40 a node-hour, 730 hours a month
    assert {p: economics[p].fixed_usd_per_month for p in sizes} == {p: Decimal(n * 40 * 730) for p, n in want.items()}
    start = dt.datetime(2026, 10, 1)
    (block,) = [b for b in blocks(inventory, start, start + dt.timedelta(days=31))[0] if b.kind == "commitment"]
    assert set(block.pools) == set(sizes)  # metering: one block of the count, shared by the same pools
    assert block.accelerators == count * 8


def test_a_priced_line_says_its_rate_basis_and_source(inventory: Inventory) -> None:
    """pricing.pool_line: the alert rules' pool rate (pool_rate) is this line's rate."""
    od = pool_line(inventory, "p5-od", Decimal(10), "metered")
    # prices.csv: p5.48xlarge,aws-us-east-1,on-demand,0,55.04 - 8 H100s a node
    assert (od.rate, od.unit, od.basis) == (Decimal("55.04") / 8, "accelerator-hour", "metered")
    assert od.usd == Decimal("68.80")  # 10 accelerator-hours x $6.88
    assert od.source.startswith("prices.csv p5.48xlarge,aws-us-east-1,on-demand: https://")
    resv = pool_line(inventory, "h100-mega-resv", Decimal(1), "exposure")
    assert resv.source == "commitment gcp-east4-h100-3y"
    assert resv.rate == inventory.commitment_by_name["gcp-east4-h100-3y"].usd_per_node_hour / 8


def test_a_line_without_a_price_is_unknown_and_says_why(inventory: Inventory) -> None:
    unpriced = inventory.model_copy(update={"prices": tuple(p for p in inventory.prices if p.pricing_model != "spot")})
    line = pool_line(unpriced, "h100-mega-spot", Decimal(8), "metered")
    assert line.rate is None and line.usd is None  # unknown, not $0
    assert line.source == missing_prices(unpriced)[0].message


def test_lines_add_up_and_a_line_without_a_rate_is_refused_not_counted_as_zero(inventory: Inventory) -> None:
    """pricing.known_usd: how the plan and the FOCUS export add priced lines (issue 26, point 7)."""
    month = PricedLine(Decimal(730), "node-hour", Decimal("24.50"), "planned", "a DGX B200 node for a month")
    fee = PricedLine(Decimal(2), "node", Decimal("1000"), "planned", "an upfront fee per node")
    assert known_usd(month, fee) == Decimal("17885.00") + Decimal("2000")  # 730 h x $24.50 = $17,885, + 2 x $1,000
    unpriced = inventory.model_copy(update={"prices": tuple(p for p in inventory.prices if p.pricing_model != "spot")})
    line = pool_line(unpriced, "h100-mega-spot", Decimal(8), "metered")
    with pytest.raises(ValueError, match="has no price"):
        known_usd(month, line)
