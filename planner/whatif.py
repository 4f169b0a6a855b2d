"""What-if overrides for a plan, parsed from `--what-if` strings and applied to the planning tables.

demand=+20%                              every demand level x 1.2
demand:<team>=-10%                       one team's demand x 0.9
price:<site>/<machine>=-10%              every price of a machine at a site x 0.9
price:<site>/<machine>/<model>=+5%       one pricing model only (on-demand, spot, commit, ...)
lose-site=<site>                         the site can no longer be used (its commitments are still paid)
placement=anywhere                       serve teams beyond their quota's pools (`quota`, `cohort`, `anywhere`;
                                         policy.placement); the plan lists each move
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal
from functools import partial
from operator import mul
from typing import Any

import pandas as pd

from quartermaster.bounds import MAX_WHAT_IF_FACTOR
from quartermaster.issues import did_you_mean
from quartermaster.model import Inventory
from quartermaster.planner.options import PlanInputError
from quartermaster.planner.placement import PLACEMENTS

PERCENT = re.compile(r"^([+-]?[0-9]+(?:\.[0-9]+)?)%$")
FORMS = (
    "demand=+20%, demand:<team>=+20%, price:<site>/<machine>[/<pricing-model>]=-10%, lose-site=<site>, "
    "placement=quota|cohort|anywhere"
)


@dataclass(frozen=True)
class Overrides:
    """Parsed what-ifs."""

    demand_factor: float = 1.0
    team_demand_factor: dict[str, float] = field(default_factory=dict)
    price_factor: dict[tuple[str, str, str | None], Decimal] = field(default_factory=dict)
    lost_sites: tuple[str, ...] = ()
    placement: str | None = None
    """placement: overrides policy.placement (placement.PLACEMENTS); None = the policy's."""


def parse(specs: tuple[str, ...], inventory: Inventory) -> Overrides:
    """Parse `--what-if` strings; a bad one raises PlanInputError naming the accepted forms."""
    demand, lost, placement = 1.0, list[str](), None
    team_demand: dict[str, float] = {}
    prices: dict[tuple[str, str, str | None], Decimal] = {}
    for spec in specs:
        target, sep, value = spec.partition("=")
        target, value = target.strip(), value.strip()
        if not sep:
            raise PlanInputError(f"what-if `{spec}` has no `=`; write one of: {FORMS}")
        if target == "lose-site":
            _known(value, inventory.site_by_name, "site", spec)
            lost.append(value)
            continue
        if target == "placement":
            if value not in PLACEMENTS:
                raise PlanInputError(f"what-if `{spec}`: placement is one of {', '.join(PLACEMENTS)}, not `{value}`")
            placement = value
            continue
        match = PERCENT.match(value)
        if not match:
            raise PlanInputError(f"what-if `{spec}`: `{value}` is not a percentage like +20% or -10%")
        factor = 1 + float(match.group(1)) / 100
        if factor < 0:
            raise PlanInputError(f"what-if `{spec}` would make a quantity negative; use at least -100%")
        if target == "demand":
            demand *= factor
        elif target.startswith("demand:"):
            team = target.removeprefix("demand:")
            _known(team, inventory.team_by_name, "team", spec)
            team_demand[team] = team_demand.get(team, 1.0) * factor
        elif target.startswith("price:"):
            parts = target.removeprefix("price:").split("/")
            if len(parts) not in (2, 3):
                raise PlanInputError(f"what-if `{spec}`: write price:<site>/<machine>[/<pricing-model>]=<pct>")
            _known(parts[0], inventory.site_by_name, "site", spec)
            _known(parts[1], inventory.machine_by_name, "machine", spec)
            key = (parts[0], parts[1], parts[2] if len(parts) == 3 else None)
            prices[key] = prices.get(key, Decimal(1)) * Decimal(str(factor))
        else:
            raise PlanInputError(f"what-if `{spec}`: unknown target `{target}`; write one of: {FORMS}")
    factors: list[tuple[str, float]] = [("demand", demand), *team_demand.items()]
    factors += [(f"price:{'/'.join(k for k in key if k)}", float(v)) for key, v in prices.items()]
    for target, combined in factors:
        if combined > MAX_WHAT_IF_FACTOR:
            raise PlanInputError(
                f"what-if {' '.join(specs)}: multiplies {target} by {combined:,.4g}; at most by "
                f"{MAX_WHAT_IF_FACTOR:g} (+{(MAX_WHAT_IF_FACTOR - 1) * 100:.0f}%). Check the percentage."
            )
    return Overrides(demand, team_demand, prices, tuple(sorted(set(lost))), placement)


def _known(name: str, table: dict[str, Any], kind: str, spec: str) -> None:
    if name not in table:
        hint = did_you_mean(name, table)
        raise PlanInputError(f"what-if `{spec}`: no {kind} `{name}`." + (f" {hint}" if hint else ""))


def apply_price_overrides(prices: pd.DataFrame, overrides: Overrides) -> pd.DataFrame:
    if not overrides.price_factor:
        return prices
    prices = prices.copy()
    for (site, machine, model), factor in sorted(overrides.price_factor.items(), key=str):
        hit = prices["offer"] == f"{site}/{machine}"
        if model is not None:
            hit &= prices["pricing_model"] == model
        for column in ("usd_per_node_hour", "upfront_usd_per_node", "usd_per_node_hour_used"):
            prices.loc[hit, column] = prices.loc[hit, column].map(partial(mul, factor))
    return prices


def apply_demand_overrides(demand: pd.DataFrame, overrides: Overrides) -> pd.DataFrame:
    if overrides.demand_factor == 1.0 and not overrides.team_demand_factor:
        return demand
    factor = demand["team"].map(lambda t: overrides.team_demand_factor.get(t, 1.0)) * overrides.demand_factor
    return demand.assign(level=demand["level"] * factor)
