"""What a flavor's quota costs per month: capacity paid anyway, then a marginal rate per accelerator.

For one flavor (pool) p with a accelerators per node and N accelerators of nominal quota:

    committed_nodes(p)  = nodes of the pool's commitment attributed to p (`pricing.committed_nodes_by_pool`: a
                          commitment's `count` shared by the pools that consume it in proportion to their largest
                          sizes, each up to its largest size)
    paid_nodes(p)       = max(committed_nodes, min_nodes)     # fixed-size pools keep every node
    paid_anyway(p)      = paid_nodes * a                      # accelerators paid whether used or not
    fixed(p)            = (committed_nodes * c_commit + (paid_nodes - committed_nodes) * c_node) * 730
    rate(p)             = c_node * 730 / a                    # $ per accelerator-month beyond paid_anyway
    monthly(p, N)       = fixed(p) + max(0, N - paid_anyway(p)) * rate(p)

c_commit is the commitment's `usd_per_node_hour`; c_node is `pricing.pool_node_price`: the price-book row
(`prices.csv`, term 0) of the pool's pricing model (`pricing.PRICING_MODEL_OF_PROVISIONING`, the rule metering
and the planner use too; on-prem machines their `onprem` row), nothing else. 730 hours per month
is `pricing.HOURS_PER_MONTH`. A price that is missing is None (unknown), never 0. These figures are the
*exposure* basis: a quota used in full at its marginal rate.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from quartermaster.capacity import pool_accelerators, pool_min_nodes
from quartermaster.model import Inventory
from quartermaster.pricing import HOURS_PER_MONTH, beyond_commitment_line, committed_nodes_by_pool, pool_node_price

MONTH = Decimal(HOURS_PER_MONTH)


@dataclass(frozen=True)
class FlavorEconomics:
    """The monthly cost curve of one flavor (pool) and where its figures come from."""

    flavor: str
    cluster: str
    site: str
    machine: str
    accelerator: str
    provisioning: str
    capacity: int
    """capacity: accelerators in the pool at its largest size."""
    paid_anyway: int
    """paid_anyway: accelerators paid whether used or not (commitment nodes, fixed or minimum nodes)."""
    fixed_usd_per_month: Decimal | None
    """fixed_usd_per_month: what the paid-anyway capacity costs per month; None if a price is missing."""
    rate_usd_per_accelerator_month: Decimal | None
    """rate_usd_per_accelerator_month: price of one accelerator beyond paid_anyway; None if unknown."""
    rate_pricing_model: str | None
    """rate_pricing_model: the price-book pricing model the rate comes from."""

    def variable_usd(self, nominal: int) -> Decimal | None:
        """Monthly cost of the quota above the paid-anyway capacity."""
        above = max(0, nominal - self.paid_anyway)
        if above == 0:
            return Decimal(0)
        return None if self.rate_usd_per_accelerator_month is None else above * self.rate_usd_per_accelerator_month

    def monthly_usd(self, nominal: int) -> Decimal | None:
        """Monthly cost of the flavor when its teams' nominal quotas sum to `nominal`."""
        variable = self.variable_usd(nominal)
        if variable is None or self.fixed_usd_per_month is None:
            return None
        return self.fixed_usd_per_month + variable

    def last_unit_rate(self, nominal: int) -> Decimal | None:
        """The rate of the last accelerator in use at `nominal`: 0 inside paid-anyway capacity."""
        return Decimal(0) if nominal <= self.paid_anyway else self.rate_usd_per_accelerator_month


def flavor_economics(inventory: Inventory) -> dict[str, FlavorEconomics]:
    """The cost curve of every flavor of the inventory, by flavor name."""
    committed = committed_nodes_by_pool(inventory)
    out = {}
    for cluster in inventory.clusters:
        site = inventory.site_by_name.get(cluster.site)
        for pool in cluster.pools:
            machine = inventory.machine_by_name.get(pool.machine)
            if machine is None or site is None:
                continue
            commitment = inventory.commitment_by_name.get(pool.commitment or "")
            committed_nodes = committed.get(pool.name, 0)
            paid_nodes = max(committed_nodes, pool_min_nodes(pool, machine))
            price, model = pool_node_price(inventory, pool.machine, cluster.site, pool.provisioning)
            on_demand_nodes = paid_nodes - committed_nodes
            if on_demand_nodes and price is None:
                fixed = None
            else:
                commit_usd = committed_nodes * commitment.usd_per_node_hour if commitment else Decimal(0)
                fixed = (commit_usd + on_demand_nodes * (price or Decimal(0))) * MONTH
            rate = beyond_commitment_line(inventory, pool.name, MONTH, "exposure").usd  # an accelerator-month
            out[pool.name] = FlavorEconomics(
                flavor=pool.name,
                cluster=cluster.name,
                site=cluster.site,
                machine=pool.machine,
                accelerator=machine.accelerator,
                provisioning=pool.provisioning,
                capacity=pool_accelerators(inventory, pool),
                paid_anyway=paid_nodes * machine.accelerators_per_node,
                fixed_usd_per_month=fixed,
                rate_usd_per_accelerator_month=rate,
                rate_pricing_model=model,
            )
    return out
