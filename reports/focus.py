"""FOCUS 1.3 export: metered (or planned) cost as rows of the FinOps Open Cost and Usage Specification.

Columns and rules: the FOCUS 1.3 column pages (github.com/FinOps-Open-Cost-and-Usage-Spec/FOCUS_Spec,
`specification/datasets/cost_and_usage/columns/*.md`; focus.finops.org). The mapping (docs/reference/focus-export.md):

* a team's accelerator-hours covered by a commitment: `Usage`, PricingCategory `Committed`,
  CommitmentDiscountStatus `Used`, BilledCost 0 (the commitment is invoiced on its own row), EffectiveCost the
  amortised cost;
* the idle part of a commitment: `Usage` rows with CommitmentDiscountStatus `Unused`, one per team it is shared
  to, or one unallocated row. A shared row is a split of the idle row (FOCUS 1.3 split cost allocation): it
  keeps the origin's dimension values (ChargeDescription, ResourceId, Tags) and says where the cost went in
  `AllocatedMethodId` (the idle policy), `AllocatedMethodDetails`, `AllocatedResourceId` / `AllocatedResourceName`
  (the team) and `AllocatedTags` (its team and cost centre);
* each commitment's invoice for the billing period: a `Purchase` row (`Recurring`), BilledCost = its Used +
  Unused EffectiveCost, EffectiveCost 0 (no double counting);
* on-demand, flex-start and overflow beyond a commitment: PricingCategory `Standard`; spot: `Dynamic`;
  BilledCost = EffectiveCost;
* ListCost = ListUnitPrice x PricingQuantity, a `pricing.PricedLine` (the on-demand list price; the own rate where
  there is none, e.g. on-prem); no negotiated discounts are recorded, so ContractedUnitPrice = ListUnitPrice;
* custom columns `x_Team`, `x_CostCenter`, `x_Accelerator`, and `x_Basis` (`metered` or `planned`,
  `pricing.BASES`).

Sum of EffectiveCost = sum of BilledCost = the metered total, to the cent.

The plan's forecast (`plan_focus_rows`) is a dataset of its own shape that no FOCUS tool can add to spend: see
`plan_focus_rows`.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
from collections.abc import Iterable
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from quartermaster.errors import ProblemsFound
from quartermaster.metering.meter import ChargeLine, MeterResult
from quartermaster.metering.rates import Block
from quartermaster.model import Inventory
from quartermaster.plan_figures import allocate_grid, model_costs, team_costs
from quartermaster.pricing import (
    FOCUS_PRICING_CATEGORY,
    Basis,
    FocusPricingCategory,
    PricedLine,
    allocate_cents,
    cents,
    known_usd,
    split_cents,
)
from quartermaster.providers import provider_of_cloud
from quartermaster.textsafety import spreadsheet_cell
from quartermaster.units import Quarter, quarter_bounds

if TYPE_CHECKING:
    from quartermaster.plan_contract import PlanResult

FOCUS_VERSION = "1.3"
# The 23 mandatory columns of FOCUS 1.3 (ratified 2025-12-05; FOCUS_Spec, the 1.3 tree) and whether the spec
# allows nulls in them
# ("Allows nulls" of each column page; PricingQuantity/PricingUnit must not be null on Usage and Purchase rows).
MANDATORY: dict[str, bool] = {
    "BilledCost": False,
    "BillingAccountId": False,
    "BillingAccountName": True,
    "BillingCurrency": False,
    "BillingPeriodEnd": False,
    "BillingPeriodStart": False,
    "ChargeCategory": False,
    "ChargeClass": True,
    "ChargeDescription": True,
    "ChargePeriodEnd": False,
    "ChargePeriodStart": False,
    "ContractedCost": False,
    "EffectiveCost": False,
    "HostProviderName": True,
    "InvoiceIssuerName": False,
    "ListCost": False,
    "PricingQuantity": True,
    "PricingUnit": True,
    "ProviderName": False,
    "PublisherName": False,
    "ServiceCategory": False,
    "ServiceName": False,
    "ServiceProviderName": False,
}
CONDITIONAL = [
    "AllocatedMethodDetails",
    "AllocatedMethodId",
    "AllocatedResourceId",
    "AllocatedResourceName",
    "AllocatedTags",
    "AvailabilityZone",
    "CapacityReservationId",
    "CapacityReservationStatus",
    "ChargeFrequency",
    "CommitmentDiscountCategory",
    "CommitmentDiscountId",
    "CommitmentDiscountName",
    "CommitmentDiscountQuantity",
    "CommitmentDiscountStatus",
    "CommitmentDiscountType",
    "CommitmentDiscountUnit",
    "ConsumedQuantity",
    "ConsumedUnit",
    "ContractedUnitPrice",
    "InvoiceId",
    "ListUnitPrice",
    "PricingCategory",
    "RegionId",
    "RegionName",
    "ResourceId",
    "ResourceName",
    "ResourceType",
    "ServiceSubcategory",
    "SkuId",
    "SkuMeter",
    "SkuPriceDetails",
    "SkuPriceId",
    "SubAccountId",
    "SubAccountName",
    "Tags",
]
"""InvoiceId names the chargeback statement of the billing period and account (`qm-chargeback-2026-10-<account>`):
the metered export is that statement, a provisional invoice Quartermaster generates, so FOCUS requires the id
(InvoiceId-C-005-C); the planned export is no invoice and leaves it null."""
CUSTOM = ["x_Team", "x_CostCenter", "x_Accelerator", "x_Basis"]
COLUMNS = sorted([*MANDATORY, *CONDITIONAL]) + CUSTOM

FORECAST_PROVIDER = "Quartermaster forecast"
"""ProviderName, PublisherName, ServiceProviderName, HostProviderName and InvoiceIssuerName of every forecast row:
no cloud provider has sold or invoiced it, so a tool grouping spend by provider never adds it to a provider's."""
FORECAST_ACCOUNT = "forecast"
NOT_BILLED = Decimal("0.00")
"""A forecast row's BilledCost, written `0.00` (a column of `0` reads as an integer: BilledCost-C-001-M)."""
PLANNED_SERVICE = "Accelerator capacity (forecast)"
FORECAST_COLUMNS = [*COLUMNS, "x_PlannedProvider"]
"""The forecast's shape: the FOCUS columns plus `x_PlannedProvider`, the provider that would supply the line."""
ONE_QUARTER = Decimal("1.000000")
QUARTER_UNIT = "3 Months"
"""A plan line's quantity: one quarter, in FOCUS's unit format (a unit quantity and an allowed time unit, like its
"1000 Tokens"; "Quarters" is no FOCUS time unit), written as a decimal (a CSV `1` reads as an integer:
PricingQuantity-C-001-M)."""
PLANNED_SUBCATEGORY = "Other (Compute)"
"""The ServiceSubcategory of `PLANNED_SERVICE` (each ServiceName has exactly one: FOCUS ServiceName-C-008-C); a
provider's services and theirs come from the provider (`quartermaster.providers`)."""
COMMITMENT_TYPE = {
    "cud": "Committed Use Discount",
    "reserved-instance": "Reserved Instance",
    "savings-plan": "Savings Plan",
    "capacity-block": "Capacity Block",
    "on-prem-purchase": "On-premises purchase",
}
Q6 = Decimal("0.000001")


def _iso(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _unit(block: Block) -> str:
    return "Chip-Hours" if block.machine.kind == "tpu" else "GPU-Hours"


Share = tuple[str | None, str | None, Decimal]
"""One allocated charge of a split: (team, cost centre, EffectiveCost); without a team, the unallocated portion."""
SUMMABLE = ("PricingQuantity", "ConsumedQuantity", "CommitmentDiscountQuantity")


def _priced(row: dict[str, Any], price: str, basis: Basis) -> Decimal:
    """A row's PricingQuantity at its unit price `price` (ListUnitPrice or ContractedUnitPrice): a priced line."""
    return known_usd(PricedLine(row["PricingQuantity"], row["PricingUnit"], row[price], basis, row["SkuPriceId"]))


def split_charge(
    origin: dict[str, Any], shares: list[Share], method: str, details: str, basis: Basis
) -> list[dict[str, Any]]:
    """FOCUS 1.3 data generator-calculated split cost allocation (FOCUS_Spec `specification/attributes/
    data_generator_calculated_split_cost_allocation_handling.md`): the origin charge as one allocated charge per
    share, or unsplit without shares.

    Every dimension (ChargeDescription, ResourceId, Tags...) and unit price is the origin's. The quantities are
    split in proportion to the shares' EffectiveCost (evenly if all are 0) to the millionth, and ListCost and
    ContractedCost are that quantity priced at the unit price (`_priced`), so each summable metric adds up to the
    origin's exactly; BilledCost is shared like EffectiveCost. A share's team is in AllocatedResourceId (`team/<team>`),
    AllocatedResourceName and AllocatedTags (the origin's tags with team and cost centre); a share without a
    team is the unallocated portion (AllocatedResourceId null)."""
    if not shares:
        return [origin]
    weights = {i: cost for i, (_, _, cost) in enumerate(shares)}
    if not any(weights.values()):
        weights = dict.fromkeys(weights, Decimal(1))
    billed = split_cents(origin["BilledCost"], weights)
    parts = {c: split_cents(origin[c], weights, Q6) for c in SUMMABLE if origin.get(c) is not None}
    tags = json.loads(origin["Tags"]) if origin.get("Tags") else {}
    rows = []
    for i, (team, cost_center, cost) in enumerate(shares):
        row = origin | {c: part.get(i, Decimal(0)) for c, part in parts.items()}
        allocated = tags | {"team": team, "cost_center": cost_center}
        row.update(
            {
                "EffectiveCost": cost,
                "BilledCost": billed.get(i, Decimal(0)),
                "ListCost": _priced(row, "ListUnitPrice", basis),
                "ContractedCost": _priced(row, "ContractedUnitPrice", basis),
                "AllocatedMethodId": method,
                "AllocatedMethodDetails": details,
                "AllocatedResourceId": f"team/{team}" if team else None,
                "AllocatedResourceName": team,
                "AllocatedTags": json.dumps(allocated, sort_keys=True) if team else None,
                "x_Team": team,
                "x_CostCenter": cost_center,
            }
        )
        rows.append(row)
    return rows


class _Rows:
    """Builds rows for one metered billing period."""

    def __init__(self, inventory: Inventory, result: MeterResult) -> None:
        self.inventory = inventory
        self.result = result
        self.project_of_site: dict[str, str] = {}
        for cluster in inventory.clusters:
            if cluster.project:
                self.project_of_site.setdefault(cluster.site, cluster.project)

    def base(self, block: Block, pool: str | None) -> dict[str, Any]:
        site, machine = block.site, block.machine
        provider = provider_of_cloud(site.provider).focus_provider_name
        account = self.project_of_site.get(site.name, site.name)
        cluster = self.inventory.cluster_of_pool[pool].name if pool else None
        service, subcategory = provider_of_cloud(site.provider).focus_service_of(machine)
        zone = block.commitment.zone if block.commitment and block.commitment.zone else None
        if pool and zone is None and len(self.inventory.pool_by_name[pool].zones) == 1:
            zone = self.inventory.pool_by_name[pool].zones[0]
        return {
            "BillingAccountId": account,
            "BillingAccountName": f"{provider} {account}",
            "InvoiceId": f"qm-chargeback-{self.result.period.start:%Y-%m}-{account}",
            "BillingCurrency": "USD",
            "BillingPeriodStart": _iso(self.result.period.start),
            "BillingPeriodEnd": _iso(self.result.period.end),
            "ChargePeriodStart": _iso(self.result.period.start),
            "ChargePeriodEnd": _iso(self.result.period.end),
            "ChargeClass": None,
            "InvoiceIssuerName": provider,
            "ProviderName": provider,
            "PublisherName": provider,
            "ServiceProviderName": provider,
            "HostProviderName": provider,
            "ServiceCategory": "AI and Machine Learning" if machine.kind == "tpu" else "Compute",
            "ServiceName": service,
            "ServiceSubcategory": subcategory,
            "RegionId": site.region,
            "RegionName": site.region,
            "AvailabilityZone": zone,
            "ResourceId": f"{cluster}/{pool}" if pool else f"commitment/{block.name}",
            "ResourceName": pool or block.name,
            "ResourceType": "Node pool" if pool else "Commitment",
            "SkuId": machine.name,
            "SubAccountId": cluster,
            "SubAccountName": cluster,
            "PricingUnit": _unit(block),
            "ConsumedUnit": _unit(block),
            "x_Accelerator": machine.accelerator,
        }

    def priced(self, row: dict[str, Any], block: Block, quantity: Decimal, list_price: Decimal, model: str) -> None:
        quantity = quantity.quantize(Q6)
        sku = f"{block.machine.name}/{block.site.name}/{model}"
        cost = known_usd(PricedLine(quantity, _unit(block), list_price, "metered", sku))
        row.update(
            {
                "PricingQuantity": quantity,
                "ConsumedQuantity": quantity,
                "ListUnitPrice": list_price,
                "ContractedUnitPrice": list_price,
                "ListCost": cost,
                "ContractedCost": cost,
                "SkuPriceId": sku,
                "SkuMeter": f"{block.machine.accelerator} {_unit(block)}",
                "SkuPriceDetails": json.dumps(
                    {
                        "AcceleratorsPerNode": block.machine.accelerators_per_node,
                        "PricingModel": model,
                        "Site": block.site.name,
                    },
                    sort_keys=True,
                ),
            }
        )

    def commitment_columns(self, row: dict[str, Any], block: Block, status: str | None) -> None:
        c = block.commitment
        if c is None:
            return
        reservation = c.reservation_name or c.capacity_reservation_id
        row.update(
            {
                "CommitmentDiscountId": c.name,
                "CommitmentDiscountName": c.name,
                "CommitmentDiscountCategory": "Spend" if c.kind == "savings-plan" else "Usage",
                "CommitmentDiscountType": COMMITMENT_TYPE[c.kind],
                "CommitmentDiscountStatus": status,
                "CommitmentDiscountQuantity": row["PricingQuantity"],
                "CommitmentDiscountUnit": row["PricingUnit"],
                "CapacityReservationId": reservation,
                "CapacityReservationStatus": status if reservation else None,
            }
        )

    def tags(self, row: dict[str, Any], team: str | None, cost_center: str | None) -> None:
        row.update(
            {
                "x_Team": team,
                "x_CostCenter": cost_center,
                "Tags": json.dumps({"team": team, "cost_center": cost_center}, sort_keys=True) if team else None,
            }
        )

    def usage(self, line: ChargeLine) -> dict[str, Any]:
        block = self.result.blocks[line.block]
        row = self.base(block, line.pool)
        committed = line.category == "Committed" and block.commitment is not None
        model = block.model if line.category == block.category else block.overflow_model
        self.priced(row, block, line.accelerator_hours, block.list_rate, model)
        row.update(
            {
                "ChargeCategory": "Usage",
                "ChargeFrequency": "Usage-Based",
                "PricingCategory": line.category,
                "BilledCost": Decimal(0) if committed else line.cost,
                "EffectiveCost": line.cost,
                "ChargeDescription": f"{line.accelerator_hours} {_unit(block)} of {block.machine.accelerator} "
                f"on {line.pool} at {line.rate:.4f} USD" + (f" (commitment {block.name})" if committed else ""),
            }
        )
        if committed:
            self.commitment_columns(row, block, "Used")
        self.tags(row, line.team, line.cost_center)
        return row

    def idle(self, idle: ChargeLine, shares: list[ChargeLine]) -> list[dict[str, Any]]:
        """A block's idle row, split into one allocated charge per team the idle policy shares it to."""
        block = self.result.blocks[idle.block]
        row = self.base(block, idle.pool)
        committed = block.commitment is not None
        self.priced(row, block, idle.accelerator_hours, block.list_rate, block.model)
        row.update(
            {
                "ChargeCategory": "Usage",
                "ChargeFrequency": "Usage-Based",
                "PricingCategory": idle.category,
                "BilledCost": Decimal(0) if committed else idle.cost,
                "EffectiveCost": idle.cost,
                "ChargeDescription": f"Idle {block.machine.accelerator} capacity of {block.key}",
            }
        )
        self.commitment_columns(row, block, "Unused" if committed else None)
        if committed:  # nothing was consumed of an unused commitment (ConsumedQuantity-C-004-C)
            row.update({"ConsumedQuantity": None, "ConsumedUnit": None})
        self.tags(row, None, None)
        details = json.dumps({"policy": self.result.policy, "idle_cost": str(idle.cost)})
        return split_charge(
            row, [(s.team, s.cost_center, s.cost) for s in shares], f"idle-{self.result.policy}", details, "metered"
        )

    def purchase(self, block: Block, billed: Decimal) -> dict[str, Any]:
        row = self.base(block, None)
        hours = sum(
            (
                (min(t, self.result.period.end) - max(f, self.result.period.start)).total_seconds() / 3600
                for f, t in block.paid
            ),
            0.0,
        )
        self.priced(row, block, Decimal(block.accelerators) * Decimal(int(hours)), block.rate, block.model)
        row.update(
            {
                "ChargeCategory": "Purchase",
                "ChargeFrequency": "Recurring",
                "PricingCategory": "Committed",
                "BilledCost": billed,
                "EffectiveCost": Decimal(0),
                "ConsumedQuantity": None,
                "ConsumedUnit": None,
                "ChargeDescription": f"Commitment {block.name}: {block.accelerators} x {block.machine.accelerator} "
                f"for {self.result.period.label}",
            }
        )
        self.commitment_columns(row, block, None)
        self.tags(row, None, None)
        return row

    def all(self) -> list[dict[str, Any]]:
        rows = [self.usage(x) for x in self.result.lines]
        shares: dict[str, list[ChargeLine]] = {}
        for s in self.result.idle_shares:
            shares.setdefault(s.block, []).append(s)
        for idle in self.result.idle:
            rows.extend(self.idle(idle, shares.get(idle.block, [])))
        amortised: dict[str, Decimal] = {}
        for row in rows:
            if row.get("CommitmentDiscountId") and row["ChargeCategory"] == "Usage":
                key = f"commitment:{row['CommitmentDiscountId']}"
                amortised[key] = amortised.get(key, Decimal(0)) + row["EffectiveCost"]
        rows.extend(self.purchase(self.result.blocks[k], v) for k, v in sorted(amortised.items()))
        return [{c: row.get(c) for c in COLUMNS} for row in rows]


def focus_rows(inventory: Inventory, results: Iterable[MeterResult]) -> list[dict[str, Any]]:
    """FOCUS rows for metered billing periods (one MeterResult per calendar month)."""
    return [row | {"x_Basis": "metered"} for result in results for row in _Rows(inventory, result).all()]


def write_focus(rows: list[dict[str, Any]], path: Path) -> Path:
    """Write rows as CSV with their header (`COLUMNS`, or `FORECAST_COLUMNS` for the plan's forecast); null = empty
    field; decimals in full."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else COLUMNS, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: "" if v is None else spreadsheet_cell(str(v)) for k, v in row.items()})
    return path


# --- the plan's forecast ---------------------------------------------------------------------------

CATEGORY_OF_PLAN_MODEL: dict[str, FocusPricingCategory] = {
    "existing-commitments": "Committed",
    **{str(model): category for model, category in FOCUS_PRICING_CATEGORY.items()},
}


def _plan_provider(inventory: Inventory, model: str) -> str:
    """The one provider that can supply a plan's pricing-model line, else `Multiple providers`."""
    if model == "existing-commitments":
        providers = {inventory.site_by_name[c.site].provider for c in inventory.commitments}
    else:
        book = "commit" if model == "commit" else model
        providers = {inventory.site_by_name[p.site].provider for p in inventory.prices if p.pricing_model == book}
    return provider_of_cloud(providers.pop()).focus_provider_name if len(providers) == 1 else "Multiple providers"


def plan_focus_rows(inventory: Inventory, plan: PlanResult, quarter: Quarter) -> list[dict[str, Any]]:
    """The plan's forecast for one quarter as FOCUS-shaped rows (`FORECAST_COLUMNS`): each pricing-model line of
    `cost_by_quarter` (one quarter of it, `3 Months`) split to teams in proportion to the plan's `cost_by_team`
    (`split_charge`, AllocatedMethodId `plan-team-share`; the plan's shared line of unused commitments is the
    unallocated portion). EffectiveCost sums to the plan's quarter cost, to the cent.

    A forecast is no spend, and every row says so in the columns FinOps tools sum and group by, not only in
    `x_Basis`: BilledCost 0 and InvoiceId null (nobody invoices a forecast; FOCUS BilledCost: "Entities that are
    not responsible or authorized for invoicing this charge MUST NOT generate charges with non-zero BilledCost to
    avoid double-counting when merging multiple datasets"), the provider columns `FORECAST_PROVIDER` (the provider
    that would supply the line is `x_PlannedProvider`), BillingAccountId `forecast`, ServiceName
    `PLANNED_SERVICE`, a ChargeDescription starting "Forecast"."""
    by_model = [r for r in plan.cost_by_quarter if r.quarter == quarter]
    by_team = [r for r in plan.cost_by_team if r.quarter == quarter]
    kpi = plan.kpi(quarter)
    if kpi is None:
        raise ProblemsFound(f"the plan has no quarter {quarter}; it covers {', '.join(plan.quarters)}")
    # a pricing model's lines add up to its column of the report's spend table: the quarter's cost split by model,
    # then each model's cents split by term (`planned`: one rounding rule)
    lines: dict[tuple[str, int], Decimal] = {}
    for model, usd in model_costs(plan, quarter).items():
        terms: dict[tuple[str, int], Decimal] = {}
        for m in (m for m in by_model if m.pricing_model == model):
            terms[(model, m.term_months)] = terms.get((model, m.term_months), Decimal(0)) + m.usd
        lines.update(allocate_cents(terms, usd))
    # ListCost: what the same capacity would cost on demand (the plan's on-demand equivalent, shared like the cost),
    # so the export's savings (1 - EffectiveCost / ListCost) are the report's, not 0 %
    total = sum(lines.values(), Decimal(0))
    listed = allocate_cents(
        {k: kpi.on_demand_equivalent_usd * v / total if total else Decimal(0) for k, v in lines.items()},
        kpi.on_demand_equivalent_usd,
    )
    start, end = (dt.datetime.combine(d, dt.time()) for d in quarter_bounds(quarter))
    # each line split to teams in proportion to their cost, rounded so that a team's lines add up to its charge in
    # the report (`plan_figures.team_costs`) and the teams of a line to the line: one rounding rule for both views
    charged = {t.team: t for t in by_team if t.usd > 0}
    whole = sum((t.usd for t in charged.values()), Decimal(0))
    cells = {(line, team): cost * t.usd / whole for line, cost in lines.items() for team, t in charged.items()}
    teams = {team: usd for team, (_, usd) in team_costs(plan, quarter).items() if team in charged}
    grid = allocate_grid(cells, lines, teams) if whole else {}
    rows = []
    for (model, term), cost in sorted(lines.items()):
        line = {c: None for c in FORECAST_COLUMNS} | {
            "BilledCost": NOT_BILLED,
            "EffectiveCost": cost,
            "ListUnitPrice": listed[(model, term)],
            "ContractedUnitPrice": cost,
            "PricingQuantity": ONE_QUARTER,
            "PricingUnit": QUARTER_UNIT,
            "ConsumedQuantity": ONE_QUARTER,
            "ConsumedUnit": QUARTER_UNIT,
            "BillingAccountId": FORECAST_ACCOUNT,
            "BillingAccountName": f"Quartermaster forecast {quarter} (planned, not invoiced)",
            "BillingCurrency": "USD",
            "BillingPeriodStart": _iso(start),
            "BillingPeriodEnd": _iso(end),
            "ChargePeriodStart": _iso(start),
            "ChargePeriodEnd": _iso(end),
            "ChargeCategory": "Usage",
            "ChargeFrequency": "Usage-Based",
            "ChargeDescription": f"Forecast {quarter}: {model}{f' {term}-month' if term else ''} capacity",
            "InvoiceIssuerName": FORECAST_PROVIDER,
            "ProviderName": FORECAST_PROVIDER,
            "PublisherName": FORECAST_PROVIDER,
            "ServiceProviderName": FORECAST_PROVIDER,
            "HostProviderName": FORECAST_PROVIDER,
            "x_PlannedProvider": _plan_provider(inventory, model),
            "ServiceCategory": "Compute",
            "ServiceName": PLANNED_SERVICE,
            "ServiceSubcategory": PLANNED_SUBCATEGORY,
            "PricingCategory": CATEGORY_OF_PLAN_MODEL.get(model, "Other"),
            "SkuId": model,
            "SkuPriceId": f"plan/{model}/{term}",
            "SkuMeter": "Forecast capacity",
            "SkuPriceDetails": json.dumps({"PricingModel": model, "TermMonths": term}, sort_keys=True),
            "x_Basis": "planned",
        }
        # one quarter at the line's unit prices (cent figures): ListCost and ContractedCost are those priced lines,
        # as each team's split of the line is its share of the quarter at the same prices (`split_charge`)
        line["ListCost"] = cents(_priced(line, "ListUnitPrice", "planned"))
        line["ContractedCost"] = cents(_priced(line, "ContractedUnitPrice", "planned"))
        # the plan's shared line of unused commitments (a team named `_...`) is the unallocated portion
        shares: list[Share] = [
            (None, None, grid[((model, term), team)])
            if team.startswith("_")
            else (team, t.cost_center, grid[((model, term), team)])
            for team, t in charged.items()
        ]
        rows.extend(split_charge(line, shares, "plan-team-share", json.dumps({"line_usd": str(cost)}), "planned"))
    return rows
