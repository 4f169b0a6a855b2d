"""The one cost model: pricing models, provisioning modes, price lookups, terms, hours and money.

The planner, metering, the finance report, the quota diff and the FOCUS export price through this module;
none of them looks up a price, divides a node price into accelerators or rounds money on its own.

Every dollar figure a person sees names its basis:

- **planned**: the plan's expected cost (`qm plan`, the finance report's plan columns);
- **metered**: actual usage priced by the same rates and rules as the plan (`qm meter`, FOCUS of a month);
- **exposure**: a quota used in full at its marginal rate (the quota diff's monthly figures).

Rules, each written once:

- a pool's node-hours beyond its commitment are priced at the price-book row of
  `PRICING_MODEL_OF_PROVISIONING[provisioning]` (a reservation beyond its commitment pays on-demand), an on-prem
  site at its `onprem` row;
- an accelerator-hour costs the node-hour price divided by the machine's accelerators per node;
- a month is `HOURS_PER_MONTH` = 730 hours (8,760 / 12, the FinOps and Infracost convention), a capacity block
  is sold in weeks of `HOURS_PER_WEEK` = 168 hours;
- money is `Decimal`: 6 decimal places as solved or metered (`usd`), cents for display and reconciled totals
  (`cents`), split into cent lines that add up exactly (`allocate_cents`, `split_cents`);
- commitment hours nobody uses (idle) are the `IDLE_TEAM` line of the `IDLE_COST_CENTER` until an idle policy
  shares them out.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_FLOOR, ROUND_HALF_UP, Decimal
from typing import TYPE_CHECKING, Literal, TypeVar

from quartermaster.capacity import pool_max_nodes

# The closed sets live with the other inventory names (the model reads them); priced here.
from quartermaster.names import PricingModel as PricingModel
from quartermaster.names import Provisioning as Provisioning
from quartermaster.providers import providers
from quartermaster.units import Quarter, overlap_hours, quarter_of

if TYPE_CHECKING:
    from quartermaster.model import Commitment, Inventory, PriceRow

K = TypeVar("K", bound=Hashable)
Money = TypeVar("Money", Decimal, float)


PRICING_MODEL_OF_PROVISIONING: dict[Provisioning, PricingModel] = {
    Provisioning.ON_DEMAND: PricingModel.ON_DEMAND,
    Provisioning.SPOT: PricingModel.SPOT,
    Provisioning.FLEX_START: PricingModel.FLEX_START,
    Provisioning.CAPACITY_BLOCK: PricingModel.CAPACITY_BLOCK,
    Provisioning.RESERVATION: PricingModel.ON_DEMAND,
}
"""The pricing model of a pool's node-hours beyond what its commitment covers."""

FocusPricingCategory = Literal["Committed", "Standard", "Dynamic"]
FOCUS_PRICING_CATEGORY: dict[PricingModel, FocusPricingCategory] = {
    PricingModel.ON_DEMAND: "Standard",
    PricingModel.FLEX_START: "Standard",
    PricingModel.CAPACITY_BLOCK: "Standard",
    PricingModel.SPOT: "Dynamic",
    PricingModel.COMMIT: "Committed",
    PricingModel.ONPREM: "Committed",
}
"""FOCUS `PricingCategory` of each pricing model (FOCUS 1.3, PricingCategory; docs/reference/focus-export.md):
a capacity block is a dated purchase at a list price, not a discount on committed spend, so it is `Standard`."""

PAY_PER_USE_MODELS = (PricingModel.CAPACITY_BLOCK, PricingModel.FLEX_START, PricingModel.ON_DEMAND, PricingModel.SPOT)
COMMITTED_MODELS = (PricingModel.COMMIT, PricingModel.ONPREM)

Basis = Literal["planned", "metered", "exposure"]
BASES: dict[Basis, str] = {
    "planned": "the plan's expected cost of the forecast demand",
    "metered": "actual usage priced by the same rates and rules as the plan, idle shared by the idle policy",
    "exposure": "each quota used in full at its marginal rate",
}
"""The basis every dollar figure names, and the sentence that says what it means."""

SPEND_RULE = (
    "Spend, cost-centre charges and budgets count what is paid for each hour (cash), never depreciation: an on-prem "
    "purchase counts its rate, capital instalments and operating cost, for every hour of its life; its capital "
    "value, depreciation and interest are the books, shown apart in the capital tables."
)
"""The one basis rule of spend and budgets: every view that adds money up by quarter or cost centre states it."""

HOURS_PER_MONTH = 730
ONPREM_LIFE_MONTHS = 48
"""The life an on-prem purchase is amortised over when its price row gives no term: the example's purchase orders
PO-2025-031 and PO-2026-077 (inventory/prices.csv) amortise capex over 48 months."""
DEFAULT_COMMIT_TERM_MONTHS = 12
"""The term of a `commit` price row that gives none (term_months 0): the shortest committed-use term sold."""


def commitment_term_months(pricing_model: str, term_months: int) -> int:
    """The term a committed price row is bought and amortised over: its own, else ONPREM_LIFE_MONTHS for an on-prem
    purchase and DEFAULT_COMMIT_TERM_MONTHS for a commitment; 0 for pay-per-use models (nothing to amortise)."""
    if term_months or pricing_model not in COMMITTED_MODELS:
        return term_months
    return ONPREM_LIFE_MONTHS if pricing_model == PricingModel.ONPREM else DEFAULT_COMMIT_TERM_MONTHS


def amortised_usd_per_node_hour(hourly: Money, upfront: Money, term_months: int) -> Money:
    """A commitment's price per node-hour with its upfront fee spread over its term at HOURS_PER_MONTH hours a month
    (FinOps amortised cost): the committed rate a cost centre is charged, and that renewals are compared at (float
    for the planner's coefficients, Decimal for money a person reads)."""
    return hourly + upfront / (term_months * HOURS_PER_MONTH) if term_months else hourly


HOURS_PER_WEEK = 168
CAPACITY_BLOCK_MAX_INSTANCES = 64
"""AWS EC2 Capacity Blocks for ML: each block holds up to 64 instances, for 1-14 days in 1-day steps or up to 182 days
in 7-day steps, starting up to 8 weeks ahead, its price paid up front (the offering's `upfrontFee`). Sources, read
2026-11-25: https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/capacity-blocks-purchase.html,
https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/ec2-capacity-blocks.html, and the CapacityBlockOffering
shape of DescribeCapacityBlockOfferings (https://docs.aws.amazon.com/sdk-for-sap-abap/v1/api/latest/ec2/model/
_AWS1_CL_EC2CAPBLOCKOFFERING.html: upfront fee, 'the total price to be paid up front')."""
CENT = Decimal("0.01")

IDLE_TEAM = "_unused_commitments"
"""The line that holds paid commitment hours nobody used (before an idle policy shares them)."""
IDLE_COST_CENTER = "_shared"
"""The cost centre of the idle line."""
IDLE_POLICIES = ("proportional", "even", "owner:TEAM")
DEFAULT_IDLE_POLICY = "proportional"
"""How idle cost is shared: in proportion to use (of the same block where any team used it, else of all
capacity), evenly between the teams with use, or all to one owning team."""


def pricing_model_of_commitment(kind: str) -> PricingModel:
    """The pricing model of a commitment's node-hours by its kind: on-prem purchases `onprem`, capacity blocks
    `capacity-block`, CUDs, reserved instances and savings plans `commit`."""
    return {"on-prem-purchase": PricingModel.ONPREM, "capacity-block": PricingModel.CAPACITY_BLOCK}.get(
        kind, PricingModel.COMMIT
    )


# --- prices --------------------------------------------------------------------------------------------


def pricing_model_of(provisioning: str, provider: str) -> PricingModel:
    """The price-book model of a pool's node-hours beyond its commitment (sites of owned hardware, on-prem: `onprem`;
    `provider` is the site's)."""
    if any(p.owned for p in providers() if p.cloud == provider):
        return PricingModel.ONPREM
    return PRICING_MODEL_OF_PROVISIONING[Provisioning(provisioning)]


def node_hour_price(inventory: Inventory, machine: str, site: str, model: str, term_months: int = 0) -> Decimal | None:
    """USD per node-hour from the price book, or None when it has no such row (None = unknown, not free)."""
    return inventory.usd_per_node_hour(machine, site, model, term_months)


def per_accelerator(usd_per_node: Money, accelerators_per_node: int) -> Money:
    """A price per node as a price per accelerator (GPU or TPU chip): Decimal for money a person reads, float
    for the planner's model coefficients."""
    return usd_per_node / accelerators_per_node


def amortised_rate(row: PriceRow) -> Decimal:
    """USD per node-hour used of a price-book row, everything included: its hourly rate, its upfront fee spread over
    its term (`amortised_usd_per_node_hour`, `commitment_term_months`) and its rate per hour used (upfront fees and
    rates per hour used are on `commit` and `onprem` rows only). The one figure price rows are ranked by: a $0/h
    row with a $600,000 upfront fee is not free."""
    term = commitment_term_months(row.pricing_model, row.term_months)
    fixed = amortised_usd_per_node_hour(row.usd_per_node_hour, row.upfront_usd_per_node, term)
    return fixed + row.usd_per_node_hour_used


def cheapest_on_demand_per_accelerator(inventory: Inventory) -> dict[str, Decimal]:
    """The cheapest on-demand USD per accelerator-hour of each accelerator in the price book (`amortised_rate`)."""
    out: dict[str, Decimal] = {}
    for row in inventory.prices:
        machine = inventory.machine_by_name.get(row.machine)
        if row.pricing_model == PricingModel.ON_DEMAND and machine is not None:
            rate = per_accelerator(amortised_rate(row), machine.accelerators_per_node)
            out[machine.accelerator] = min(out.get(machine.accelerator, rate), rate)
    return out


def cheapest_accelerator_hour(
    inventory: Inventory,
    models: Sequence[str],
    accelerator: str | None = None,
    machine: str | None = None,
    sites: Sequence[str] | None = None,
) -> tuple[Decimal, str] | None:
    """The cheapest USD per accelerator-hour in the price book among rows of `models` for machines of `accelerator`
    (or the one `machine`), at `sites` when given, with what it is ("<machine> at <site>, <model>"); None when the
    book has no such row. Rows are ranked and priced amortised (`amortised_rate`: upfront fees and rates per hour
    used included)."""
    best: tuple[Decimal, str] | None = None
    for row in inventory.prices:
        m = inventory.machine_by_name.get(row.machine)
        if (
            m is None
            or row.pricing_model not in models
            or (machine is not None and row.machine != machine)
            or (accelerator is not None and m.accelerator != accelerator)
            or (sites and row.site not in sites)
        ):
            continue
        rate = per_accelerator(amortised_rate(row), m.accelerators_per_node)
        if best is None or rate < best[0]:
            best = (rate, f"{row.machine} at {row.site}, {row.pricing_model}")
    return best


def accelerator_hour_price(
    inventory: Inventory, machine: str, site: str, model: str, term_months: int = 0
) -> Decimal | None:
    """USD per accelerator-hour from the price book, or None when it has no such row."""
    price = node_hour_price(inventory, machine, site, model, term_months)
    return None if price is None else per_accelerator(price, inventory.machine_by_name[machine].accelerators_per_node)


def commitment_rate(inventory: Inventory, commitment: str) -> Decimal:
    """USD per accelerator-hour of a commitment's capacity: its `usd_per_node_hour` (on-prem: capex amortised
    plus opex) over the machine's accelerators per node."""
    c = inventory.commitment_by_name[commitment]
    return per_accelerator(c.usd_per_node_hour, inventory.machine_by_name[c.machine].accelerators_per_node)


def on_demand_alternative(inventory: Inventory, machine: str, site: str) -> tuple[Decimal | None, str]:
    """What an accelerator-hour of `machine` at `site` would cost on demand instead, and what that price is of: the
    same machine and site on demand; else the cheapest on-demand price of its accelerator (on-prem sites have none of
    their own); else the cheapest on-demand accelerator it stands in for under `policy.equivalence` (one B200 worth
    2.2 H100s replaces 2.2 H100-hours); (None, why) when the book has none of these."""
    same = accelerator_hour_price(inventory, machine, site, PricingModel.ON_DEMAND)
    if same is not None:
        return same, "same machine and site"
    accelerator = inventory.machine_by_name[machine].accelerator
    cheapest = cheapest_on_demand_per_accelerator(inventory)
    if accelerator in cheapest:
        return cheapest[accelerator], f"cheapest on-demand {accelerator}"
    worth = inventory.policy.equivalence
    offers = [
        (rate * Decimal(str(worth[accelerator])) / Decimal(str(worth[other])), other)
        for other, rate in cheapest.items()
        if accelerator in worth and other in worth
    ]
    if not offers:
        return None, "no on-demand price in the price book"
    price, other = min(offers)
    return price, f"{worth[accelerator] / worth[other]:g} {other} on demand (equivalence policy)"


@dataclass(frozen=True)
class BreakEven:
    """The utilisation at which committed capacity costs what its used hours would cost on demand.

    A commitment costs c per accelerator-hour of its term whether used or not (its hourly rate plus its upfront fee
    spread over the term, `amortised_usd_per_node_hour`) and v more per accelerator-hour used; used a share u of
    its hours, it costs c + v u against p u on demand (`on_demand_alternative`): break-even u* = c / (p - v). Below
    u*, on demand would have cost less. None when p is unknown, or when p <= v (it never breaks even)."""

    committed_rate: Decimal
    """committed_rate: c, USD per accelerator-hour paid every hour of the term."""
    used_rate: Decimal
    """used_rate: v, USD per accelerator-hour used, on top."""
    on_demand_rate: Decimal | None
    """on_demand_rate: p, USD per accelerator-hour on demand of what the commitment replaces; None: unknown."""
    on_demand_basis: str
    """on_demand_basis: what p is the price of (`on_demand_alternative`)."""

    @property
    def utilisation(self) -> Decimal | None:
        p = self.on_demand_rate
        return None if p is None or p <= self.used_rate else self.committed_rate / (p - self.used_rate)


def break_even(
    inventory: Inventory,
    machine: str,
    site: str,
    usd_per_node_hour: Decimal,
    upfront_usd_per_node: Decimal = Decimal(0),
    term_months: int = 0,
    usd_per_node_hour_used: Decimal = Decimal(0),
) -> BreakEven:
    """The break-even of committed capacity of `machine` at `site` (`BreakEven`): every commitment shape (a flat
    rate, all, partial or no upfront, a fixed fee plus a rate per hour used), for the finance report and the alert
    rules alike."""
    per_node = inventory.machine_by_name[machine].accelerators_per_node
    fixed = amortised_usd_per_node_hour(usd_per_node_hour, upfront_usd_per_node, term_months)
    on_demand, basis = on_demand_alternative(inventory, machine, site)
    return BreakEven(
        per_accelerator(fixed, per_node), per_accelerator(usd_per_node_hour_used, per_node), on_demand, basis
    )


def pool_node_price(
    inventory: Inventory, machine: str, site: str, provisioning: str
) -> tuple[Decimal | None, PricingModel]:
    """The price of one more node of a pool beyond its commitment, and the model it comes from: the price-book row
    of `pricing_model_of` the pool's provisioning, and nothing else. None when the book has no such row: the one
    rule for a missing price (`MissingPrice`), the same in every view; no other row stands in for it (a spot pool
    priced at on-demand would overstate its cost, one priced at $0 would hide it)."""
    provider = inventory.site_by_name[site].provider if site in inventory.site_by_name else ""
    model = pricing_model_of(provisioning, provider)
    return node_hour_price(inventory, machine, site, model), model


@dataclass(frozen=True)
class MissingPrice:
    """A pool whose node-hours beyond its commitment have no price in the price book (`pool_node_price` is None).

    `qm validate` warns with it; metering refuses to meter it; the quota diff shows the flavor unpriced and
    checks no budget with it; the alert rules leave the pool out of the budget spend and say so. Every view says
    it in the same words (`message`, `fix`)."""

    pool: str
    provisioning: str
    machine: str
    site: str
    pricing_model: PricingModel

    @property
    def message(self) -> str:
        return (
            f"pool `{self.pool}` ({self.provisioning} at {self.site}) has no price: the price book has no "
            f"`{self.pricing_model}` row for {self.machine} at {self.site}"
        )

    @property
    def fix(self) -> str:
        return (
            f"Add the row `{self.machine},{self.site},{self.pricing_model},0,<usd_per_node_hour>,<source>,<as_of>` "
            "to prices.csv; until then the pool is not metered, and its cost is unknown (not 0, not on-demand) in "
            "the quota diff and the alert rules."
        )


def missing_prices(inventory: Inventory) -> list[MissingPrice]:
    """Every pool without the price its node-hours beyond its commitment are billed at, in inventory order."""
    out = []
    for pool in inventory.pools:
        site = inventory.cluster_of_pool[pool.name].site
        price, model = pool_node_price(inventory, pool.machine, site, pool.provisioning)
        if price is None:
            out.append(MissingPrice(pool.name, pool.provisioning, pool.machine, site, model))
    return out


Side = Literal["cost", "charge"]
SIDES: dict[Side, str] = {
    "cost": "what is paid for: commitments, purchases, pay-per-use hours, metered capacity",
    "charge": "who bears it: each team's use at the rate its cost centre is charged, and its share of idle",
}
"""The two sides of a ledger (`PricedLine.side`); each adds up to the same total, period by period."""


@dataclass(frozen=True)
class PricedLine:
    """A quantity at a rate: the unit every money figure is built from, with its basis, where its rate comes from,
    and whom and when it belongs to, so a figure can say what it is and a view cannot price the same thing twice.

    A ledger is a tuple of them (the plan's `ledger` table, `qm meter`'s `ledger`): every money table is a group-by
    over one (`quartermaster.ledger`), rounded to the cent once, where it is shown."""

    quantity: Decimal
    unit: str
    """unit: what `quantity` counts and `rate` is per (`accelerator-hour`, `accelerator-month`, the plan's
    `node-hour` and `node`, FOCUS's PricingUnit, `share of idle`)."""
    rate: Decimal | None
    """rate: USD per unit; None when unknown (a missing price: `MissingPrice`), never 0 for unknown."""
    basis: Basis
    source: str
    """source: the price-book row or commitment the rate comes from, or why there is none."""
    side: Side = "cost"
    """side: `cost` (what is paid for) or `charge` (who bears it): `SIDES`."""
    label: str = ""
    """label: what the line is (`use`, `idle share`, `new commitment`, `pay-per-use`, ...)."""
    quarter: Quarter | Literal[""] = ""
    """quarter: the quarter the line belongs to (`2026Q4`); empty when no one quarter holds it (a metered period over
    several)."""
    month: str = ""
    """month: the metered period the line belongs to (`2026-10`, or a month cut by the actuals' end); empty for a
    line of a whole quarter (or of its open, planned part)."""
    team: str = ""
    """team: the team it is charged to (`IDLE_TEAM` for idle nobody could take); empty on the cost side when
    capacity is paid for whoever uses it."""
    cost_center: str = ""
    flavor: str = ""
    """flavor: the pool (Kueue ResourceFlavor) the hours run on, where the line has one (`new:<site>/<machine>/<tier>`
    for a pool the plan would add)."""
    pricing_model: str = ""
    """pricing_model: how the hours are bought (`PricingModel`, `existing-commitments`, `metered`), as the plan's
    cost by quarter and the FOCUS export group them."""
    term_months: int = 0
    amount_usd: Decimal | None = None
    """amount_usd: the line's amount as booked when it is given (a metered line's cents, allocated by largest
    remainder; an idle share); None: quantity x rate."""

    @property
    def usd(self) -> Decimal | None:
        """The line's amount, exact: amount_usd when booked, else quantity x rate (round with `cents` only to show or
        reconcile it); None when the rate is unknown."""
        if self.amount_usd is not None:
            return self.amount_usd
        return None if self.rate is None else self.quantity * self.rate


def known_usd(*lines: PricedLine) -> Decimal:
    """The lines' amounts added up, for lines priced from rows the caller holds (a plan's purchase, a FOCUS row): a
    line without a rate is a ValueError naming its source, never $0."""
    total = Decimal(0)
    for line in lines:
        if line.usd is None:
            raise ValueError(f"no rate for {line.quantity} {line.unit}: {line.source}")
        total += line.usd
    return total


def commitment_line(commitment: Commitment, quarter: Quarter, basis: Basis, hours: int | None = None) -> PricedLine:
    """A commitment's node-hours inside a quarter at its rate: what it costs that quarter, used or not (the plan's
    existing commitments, the expiry table's amount in the quarter before one ends). 0 node-hours outside its term.
    `hours`: its hours in the part of the quarter charged, when not all of it (the plan's quarter in progress: its
    open part; the closed part is metered)."""
    hours = overlap_hours(commitment.start, commitment.end, quarter) if hours is None else hours
    source = f"commitment {commitment.name}"
    return PricedLine(Decimal(commitment.count * hours), "node-hour", commitment.usd_per_node_hour, basis, source)


def last_quarter_of(commitment: Commitment) -> Quarter:
    """The last quarter a commitment is paid in: that of the last day of its term (its `end` is the day after)."""
    return quarter_of(commitment.end - dt.timedelta(days=1))


def pool_line(inventory: Inventory, pool: str, accelerator_hours: Decimal, basis: Basis) -> PricedLine:
    """Accelerator-hours of a pool's use, priced: at its commitment's rate (`commitment_rate`, as metering prices
    use within the commitment) when it consumes one, else as `beyond_commitment_line`."""
    p = inventory.pool_by_name[pool]
    if p.commitment and p.commitment in inventory.commitment_by_name:
        rate = commitment_rate(inventory, p.commitment)
        return PricedLine(accelerator_hours, "accelerator-hour", rate, basis, f"commitment {p.commitment}")
    return beyond_commitment_line(inventory, pool, accelerator_hours, basis)


def beyond_commitment_line(inventory: Inventory, pool: str, accelerator_hours: Decimal, basis: Basis) -> PricedLine:
    """Accelerator-hours of a pool beyond its commitment, priced at its `pool_node_price` per accelerator (metering's
    pool blocks, the quota diff's marginal rate); the rate None under the one missing-price rule."""
    p = inventory.pool_by_name[pool]
    site = inventory.cluster_of_pool[pool].site
    price, model = pool_node_price(inventory, p.machine, site, p.provisioning)
    if price is None:
        why = MissingPrice(pool, p.provisioning, p.machine, site, model).message
        return PricedLine(accelerator_hours, "accelerator-hour", None, basis, why)
    row = inventory.price_by_key[(p.machine, site, model, 0)]
    per_node = inventory.machine_by_name[p.machine].accelerators_per_node
    source = f"prices.csv {p.machine},{site},{model}: {row.source}"
    return PricedLine(accelerator_hours, "accelerator-hour", per_accelerator(price, per_node), basis, source)


def pool_rate(inventory: Inventory, pool: str) -> Decimal | None:
    """USD per accelerator-hour of a pool's use (`pool_line`'s rate); None when unknown."""
    return pool_line(inventory, pool, Decimal(1), "metered").rate


def committed_nodes_by_pool(inventory: Inventory) -> dict[str, int]:
    """Nodes of each pool that its commitment covers: the one definition every view uses.

    A commitment covers `count` nodes, shared by the pools that consume it: metering meters them as one block (any
    of its pools' use counts against it), and where a figure is per pool (the quota diff's paid-anyway capacity) the
    count is shared in proportion to the pools' largest sizes, in whole nodes by largest remainder (ties by pool
    name), so no pool gets more than its largest size and the pools get min(count, their sizes' sum) in all. The
    validation rule `commitment-consumers` warns when the pools could hold more than the count."""
    sizes: dict[str, dict[str, Decimal]] = {}
    for pool in inventory.pools:
        machine = inventory.machine_by_name.get(pool.machine)
        if pool.commitment in inventory.commitment_by_name and machine is not None:
            sizes.setdefault(pool.commitment, {})[pool.name] = Decimal(pool_max_nodes(pool, machine))
    out: dict[str, int] = {}
    for commitment, pools in sizes.items():
        whole = sum(pools.values(), Decimal(0))
        covered = min(Decimal(inventory.commitment_by_name[commitment].count), whole)
        if whole:
            shares = allocate_cents({p: covered * n / whole for p, n in pools.items()}, covered, Decimal(1))
            out.update({p: int(n) for p, n in shares.items()})
    return out


# --- on-prem capital -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class OnpremSplit:
    """What an on-prem machine's rate at a site is made of (`onprem_costs.csv`): a capital part (hardware,
    installation) paid once per node, upfront or financed over the purchase's life, and an operating part (power,
    space, support) paid every hour of it. A purchase's hourly rate less `operating_usd_per_node_hour` is its capital
    instalment per node-hour."""

    capital_usd_per_node: Decimal
    operating_usd_per_node_hour: Decimal
    sources: tuple[str, ...]
    """sources: each item with its figure and source (`power: $1.224 a node-hour, <source>`)."""


def onprem_split(inventory: Inventory, machine: str, site: str) -> OnpremSplit | None:
    """The capital and operating parts of `machine` at `site`; None when the inventory gives none (the whole rate
    is then capital)."""
    parts = [c for c in inventory.onprem_costs if c.machine == machine and c.site == site]
    if not parts:
        return None
    capital = sum((c.usd_per_node or Decimal(0) for c in parts), Decimal(0))
    operating = sum((c.usd_per_node_hour or Decimal(0) for c in parts), Decimal(0))
    sources = tuple(
        f"{c.item}: "
        + (f"{format_usd(c.usd_per_node)} a node" if c.part == "capital" else f"${c.usd_per_node_hour} a node-hour")
        + f", {c.source}"
        + (f" ({c.as_of})" if c.as_of else "")
        for c in parts
    )
    return OnpremSplit(capital, operating, sources)


def onprem_capital_per_node(row: PriceRow, operating_usd_per_node_hour: Decimal) -> Decimal:
    """The capital an `onprem` price row charges per node: its upfront fee plus its hourly rate less the operating
    part, over its term at HOURS_PER_MONTH hours a month (the rate's own amortisation)."""
    term = commitment_term_months(row.pricing_model, row.term_months)
    return row.upfront_usd_per_node + (row.usd_per_node_hour - operating_usd_per_node_hour) * term * HOURS_PER_MONTH


def present_value(payments: Sequence[Decimal], annual_rate: Decimal) -> Decimal:
    """The present value of monthly payments, the k-th (from 1) at the end of the k-th month, discounted at
    `annual_rate` compounded monthly: sum of p_k / (1 + annual_rate / 12) ** k (exact Decimal, not rounded)."""
    factor = 1 + annual_rate / 12
    return sum((p / factor**k for k, p in enumerate(payments, start=1)), Decimal(0))


# --- idle ---------------------------------------------------------------------------------------------


def check_idle_policy(policy: str, teams: Sequence[str]) -> str | None:
    """Why `policy` is not one of IDLE_POLICIES (or names no team of `teams`); None when it is fine."""
    if policy in ("proportional", "even"):
        return None
    if policy.startswith("owner:"):
        team = policy.removeprefix("owner:")
        if team in teams:
            return None
        return (
            f"--idle {policy}: no team `{team}`; name a team of the inventory, e.g. owner:{teams[0]}"
            if teams
            else f"--idle {policy}: the inventory has no teams"
        )
    return f"--idle {policy}: not a policy; use one of {', '.join(IDLE_POLICIES)}"


def idle_weights(
    policy: str, use: Mapping[str, Decimal], teams: Sequence[str], use_of_block: Mapping[str, Decimal] | None = None
) -> dict[str, Decimal]:
    """Who shares an idle cost, and in what proportion (`split_cents` or a float share turns weights into money).

    `use` is each team's use in the period (any unit: cost or accelerator-hours), `use_of_block` its use of the
    capacity that sat idle; `proportional` prefers the latter when any team used that capacity.
    """
    if policy.startswith("owner:"):
        return {policy.removeprefix("owner:"): Decimal(1)}
    if policy == "even":
        return {t: Decimal(1) for t in ([t for t, u in use.items() if u > 0] or teams)}
    on_block = {t: u for t, u in (use_of_block or {}).items() if u > 0}
    return on_block or {t: u for t, u in use.items() if u > 0}


# --- money ----------------------------------------------------------------------------------------------


MICRO_USD = Decimal("0.000001")


def decimal_of(value: float | Decimal) -> Decimal:
    """A number as solved or metered, as Decimal: a float from its shortest repr, never through binary rounding; a
    Decimal as it is."""
    return value if isinstance(value, Decimal) else Decimal(repr(value))


def usd(amount: float | Decimal) -> Decimal:
    """An amount as Decimal USD with 6 decimals (half up), as solved or metered (no negative zero). A Decimal is
    quantised as it is; a float (a solver's value) from its shortest repr, never through binary rounding."""
    exact = amount if isinstance(amount, Decimal) else decimal_of(float(amount))
    value = exact.quantize(MICRO_USD, rounding=ROUND_HALF_UP)
    return value if value != 0 else abs(value)


def cents(amount: Decimal) -> Decimal:
    """Round money to the cent (half up), for display and for reconciled totals."""
    return amount.quantize(CENT, rounding=ROUND_HALF_UP)


def allocate_cents(amounts: Mapping[K, Decimal], total: Decimal, quantum: Decimal = CENT) -> dict[K, Decimal]:
    """Round every amount to the cent (or to `quantum`) so that the rounded amounts sum to `total` so rounded.

    Largest-remainder rounding: floor each amount to the cent, then hand the cents still missing to the
    amounts with the largest remainders (ties broken by key order; removed from the smallest if the floors
    already overshoot). `amounts` should add up to `total` before rounding; the method then moves each line
    by less than a cent.
    """
    target = total.quantize(quantum, rounding=ROUND_HALF_UP)
    floors = {k: v.quantize(quantum, rounding=ROUND_FLOOR) for k, v in amounts.items()}
    missing = int((target - sum(floors.values(), Decimal(0))) / quantum)
    order = sorted(amounts, key=lambda k: (-(amounts[k] - floors[k]), str(k)))
    if not order:
        return {}
    step = quantum if missing >= 0 else -quantum
    ranked = order if missing >= 0 else list(reversed(order))
    for i in range(abs(missing)):
        key = ranked[i % len(ranked)]
        floors[key] += step
    return floors


def split_cents(amount: Decimal, weights: Mapping[K, Decimal], quantum: Decimal = CENT) -> dict[K, Decimal]:
    """Share a cent amount (or one in steps of `quantum`) between keys in proportion to `weights`; the shares sum
    exactly to `amount`."""
    positive = {k: w for k, w in weights.items() if w > 0}
    if not positive:
        return {}
    whole = sum(positive.values(), Decimal(0))
    return allocate_cents({k: amount * w / whole for k, w in positive.items()}, amount, quantum)


UNKNOWN = "\u2013"
"""How an unknown amount is shown (None means unknown, 0 means free): an en dash."""


def format_pct(value: Decimal | float | int | None, places: int = 1) -> str:
    """A ratio as a percentage, rounded once (half up) from the figure as computed: `0.96523` -> `96.5%`; None ->
    `UNKNOWN`. Every view of a share (the report, `qm plan`, `qm diff`, the alert rules) prints it with this, so the
    same Decimal reads the same everywhere."""
    if value is None:
        return UNKNOWN
    number = value if isinstance(value, Decimal) else Decimal(str(value))
    share = (number * 100).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    return f"{share:,.{places}f}%"


RATE = Decimal("0.0001")
"""USD per unit (an accelerator-hour) as a table holds it: 4 decimals, as `format_usd(value, 4)` prints it."""


def shown_rate(value: Decimal) -> Decimal:
    """A rate as a table holds it (`RATE`; Decimal's context rounding, half even)."""
    return value.quantize(RATE)


def shown_quantity(value: float | Decimal, places: int = 1) -> Decimal:
    """A quantity (accelerator-hours, accelerators) as a table holds it: `places` decimals (Decimal's context
    rounding, half even), from the figure as solved (`decimal_of`)."""
    return decimal_of(value).quantize(Decimal(1).scaleb(-places))


def format_usd(value: Decimal | float | int | None, places: int = 2) -> str:
    """`Decimal("1234.5")` -> `$1,234.50`; negative -> `-$1,234.50`; None -> `UNKNOWN` (an en dash)."""
    if value is None:
        return UNKNOWN
    amount = (value if isinstance(value, Decimal) else Decimal(str(value))).quantize(
        Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP
    )
    sign = "-" if amount < 0 else ""
    return f"{sign}${abs(amount):,.{places}f}"
