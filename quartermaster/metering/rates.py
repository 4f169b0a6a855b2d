"""What an accelerator-hour costs on each piece of capacity: the blocks that are paid for every hour
(commitments, fixed-size pools) and the rate of anything used beyond them.

Rates come from the inventory only: a commitment's `usd_per_node_hour` (amortised: capex + opex for on-prem),
the price book (`prices.csv`) for the pricing model a pool is provisioned with, divided by the machine's
accelerators per node.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

from quartermaster.capacity import pool_min_nodes
from quartermaster.issues import Issue
from quartermaster.model import Commitment, Inventory, Machine, Pool, Site
from quartermaster.pricing import (
    FOCUS_PRICING_CATEGORY,
    FocusPricingCategory,
    PricingModel,
    Provisioning,
    accelerator_hour_price,
    beyond_commitment_line,
    commitment_rate,
    missing_prices,
    node_hour_price,
    per_accelerator,
    pool_node_price,
    pricing_model_of,
)


@dataclass(frozen=True)
class Block:
    """Capacity paid as one: a commitment (shared by the pools that consume it) or a pool outside any
    active commitment. `accelerators` are paid every hour of the `paid` windows; use beyond them is paid
    at `overflow_rate`."""

    name: str
    kind: Literal["commitment", "pool"]
    pools: tuple[str, ...]
    machine: Machine
    site: Site
    accelerators: int
    paid: tuple[tuple[dt.datetime, dt.datetime], ...]
    """The [from, to) windows in which the block is paid (a commitment's term; a pool's time outside it)."""
    rate: Decimal
    """USD per accelerator-hour of the paid block."""
    category: FocusPricingCategory
    overflow_rate: Decimal
    overflow_category: FocusPricingCategory
    list_rate: Decimal
    """USD per accelerator-hour at the public on-demand price (the FOCUS list price); the block's own rate
    where no on-demand price exists (on-prem)."""
    model: str = "on-demand"
    """The price book's pricing model of the block's rate (`commit` for a commitment)."""
    overflow_model: str = "on-demand"
    commitment: Commitment | None = None

    @property
    def key(self) -> str:
        """Unique among blocks: `commitment:<name>` or `pool:<name>`."""
        return f"{self.kind}:{self.name}"


def _midnight(day: dt.date) -> dt.datetime:
    return dt.datetime(day.year, day.month, day.day)


def term_within(commitment: Commitment, start: dt.datetime, end: dt.datetime) -> tuple[dt.datetime, dt.datetime]:
    """The part of [start, end) a commitment's term covers (empty: from == to)."""
    term_from = min(end, max(start, _midnight(commitment.start)))
    return term_from, max(term_from, min(end, _midnight(commitment.end)))


def blocks(inventory: Inventory, start: dt.datetime, end: dt.datetime) -> tuple[list[Block], list[Issue]]:
    """Every commitment and every pool as paid blocks for [start, end); a commitment no pool consumes is
    still paid (and all idle)."""
    out: list[Block] = []
    issues: list[Issue] = []

    def rate_of(machine: Machine, site: Site, model: PricingModel, what: str) -> Decimal:
        """A commitment's overflow rate; metering refuses (an issue) when the book has no such row."""
        node_price = node_hour_price(inventory, machine.name, site.name, model)
        if node_price is None:
            issues.append(
                Issue(
                    "meter-prices",
                    f"{what}: the price book has no `{model}` price for {machine.name} at {site.name}",
                    f"Add a row `{machine.name},{site.name},{model},0,<usd_per_node_hour>,<source>,<date>` "
                    "to prices.csv.",
                    ref=("prices",),
                )
            )
            return Decimal(0)
        return per_accelerator(node_price, machine.accelerators_per_node)

    unpriced = {m.pool: m for m in missing_prices(inventory)}
    for missing in unpriced.values():
        issues.append(Issue("meter-prices", missing.message, missing.fix, ref=("pools", missing.pool, "provisioning")))

    def list_rate_of(machine: Machine, site: Site, fallback: Decimal) -> Decimal:
        on_demand = accelerator_hour_price(inventory, machine.name, site.name, PricingModel.ON_DEMAND)
        return fallback if on_demand is None else on_demand

    consumers: dict[str, list[Pool]] = {}
    for pool in inventory.pools:
        if pool.commitment:
            consumers.setdefault(pool.commitment, []).append(pool)
    for commitment in inventory.commitments:
        machine = inventory.machine_by_name[commitment.machine]
        site = inventory.site_by_name[commitment.site]
        rate = commitment_rate(inventory, commitment.name)
        overflow_model = pricing_model_of(Provisioning.RESERVATION, site.provider)
        overflow = rate_of(machine, site, overflow_model, f"commitment {commitment.name} overflow")
        out.append(
            Block(
                commitment.name,
                "commitment",
                tuple(p.name for p in consumers.get(commitment.name, [])),
                machine,
                site,
                commitment.count * machine.accelerators_per_node,
                (term_within(commitment, start, end),),
                rate,
                "Committed",
                overflow,
                FOCUS_PRICING_CATEGORY[overflow_model],
                list_rate_of(machine, site, rate),
                PricingModel.COMMIT,
                overflow_model,
                commitment,
            )
        )
    for pool in inventory.pools:
        cluster = inventory.cluster_of_pool[pool.name]
        machine = inventory.machine_by_name[pool.machine]
        site = inventory.site_by_name[cluster.site]
        model = pool_node_price(inventory, pool.machine, site.name, pool.provisioning)[1]
        # an unpriced pool is refused above (issues): its 0 is never metered
        rate = beyond_commitment_line(inventory, pool.name, Decimal(1), "metered").rate or Decimal(0)
        paid: tuple[tuple[dt.datetime, dt.datetime], ...] = ((start, end),)
        consumed = inventory.commitment_by_name.get(pool.commitment or "")
        if consumed is not None:
            term_from, term_to = term_within(consumed, start, end)
            paid = tuple(w for w in ((start, term_from), (term_to, end)) if w[0] < w[1])
        out.append(
            Block(
                pool.name,
                "pool",
                (pool.name,),
                machine,
                site,
                pool_min_nodes(pool, machine) * machine.accelerators_per_node,
                paid,
                rate,
                FOCUS_PRICING_CATEGORY[model],
                rate,
                FOCUS_PRICING_CATEGORY[model],
                list_rate_of(machine, site, rate),
                model,
                model,
            )
        )
    return out, issues
