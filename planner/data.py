"""Step 1 of the planner: inventory, price book and demand -> the plain tables the model is built from.

Nothing here knows about PuLP. `build_data(inventory, options)` returns a `PlanData` whose tables are
pandas DataFrames (one row per fact, sorted) so that a test, the bench generator or a what-if can build
or change them directly:

- `offers`: where capacity can be had: one row per (site, machine) with a price or an existing commitment;
- `recourse_prices`: pay-per-use pricing models per offer (on-demand, spot, flex-start, capacity-block);
- `commit_options`: commitments that can be started per offer (1y/3y `commit`, `onprem` purchases);
- `existing`: the inventory's commitments, as average active nodes and cost per quarter (fixed);
- `caps`: the sites' supply caps per offer and pricing model;
- `demand`: a load-duration curve per demand key, quarter and scenario: buckets of hours (`weight` =
  share of the quarter's hours, the same for every key) and the demand `level` in accelerators;
- `routes`: which offers may serve which demand key, and how many of the offer's accelerators one unit
  of demand needs (equivalence); residency and pinned sites are applied here;
- `budgets`, `scenarios`.
"""

from __future__ import annotations

import datetime as dt
import functools
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import pandas as pd

from quartermaster.capacity import nodes_per_slice, pool_accelerators
from quartermaster.demand_quantiles import equivalence_ratio, quantile_curve, shifted_quantiles
from quartermaster.issues import did_you_mean
from quartermaster.model import DemandRow, Inventory
from quartermaster.plan_contract import ForecastRow
from quartermaster.planner import actuals, whatif
from quartermaster.planner.curves import curves_frame
from quartermaster.planner.options import PlanInputError, PlanOptions
from quartermaster.planner.placement import (
    QuotaHolder,
    Tier,
    allowed_offers,
    flavors,
    held_pools,
    offer_key,
    placed_tiers,
    quota_holders,
)
from quartermaster.planner.tables import CommitOption, Curve, Offer, RecoursePrice, check_tables
from quartermaster.planner.tables import rows as rows_of
from quartermaster.planner.usage_forecast import actuals_until, demand_from_usage, with_actuals
from quartermaster.pricing import (
    COMMITTED_MODELS,
    PAY_PER_USE_MODELS,
    PricingModel,
    check_idle_policy,
    commitment_line,
    commitment_term_months,
    format_usd,
    known_usd,
    per_accelerator,
)
from quartermaster.units import LAST_QUARTER, Quarter, next_quarters, quarter_bounds, quarter_of

RECOURSE_MODELS = PAY_PER_USE_MODELS
COMMIT_MODELS = COMMITTED_MODELS
# Unmet demand costs this many times the dearest price per accelerator-hour in the price book.
UNMET_PENALTY_FACTOR = 10.0


@dataclass
class PlanData:
    """Everything the model needs, as plain tables (see the module docstring)."""

    quarters: Sequence[Quarter]
    hours: dict[Quarter, int]
    offers: pd.DataFrame
    recourse_prices: pd.DataFrame
    commit_options: pd.DataFrame
    existing: pd.DataFrame
    caps: pd.DataFrame
    demand: pd.DataFrame
    routes: pd.DataFrame
    budgets: pd.DataFrame
    scenarios: dict[str, float]
    teams: pd.DataFrame
    pools: pd.DataFrame
    """The inventory's pools (POOL_COLUMNS; accelerators = the pool's most), for proposed quotas."""
    unmet_penalty: float
    """USD per accelerator-hour of unmet demand."""
    max_spot_share: float = 1.0
    """policy.max_spot_share: most of any demand that may run on spot."""
    options: PlanOptions = field(default_factory=PlanOptions)
    lost_sites: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    """What the reader of the plan should know about its inputs (e.g. usage hours left out as outages)."""
    begun: tuple[Quarter, ...] = ()
    """Quarters of the horizon that began before actuals_until: the model plans only their open part."""
    actuals_until: str | None = None
    """The end of the actuals (ISO): the usage history's end, or PlanOptions.as_of; before it, cost is metered."""
    forecast: tuple[ForecastRow, ...] = ()
    """The demand forecast from the usage history where the plan's demand is read from it (PlanResult.forecast)."""
    closed: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=actuals.CLOSED_COLUMNS))
    """The closed part of the quarter in progress as `qm meter` charges it, per month and team (actuals.closed_ledger):
    fixed, not planned."""
    closed_baseline: dict[Quarter, float] = field(default_factory=dict)
    """quarter -> its closed part's demand (accelerator-hours requested, actuals.closed_demand) at baseline_rates: its
    part of the all-on-demand baseline."""
    placement: str = "quota"
    """The placement the routes follow (policy.placement, or a what-if's)."""
    placed: dict[str, frozenset[Tier] | None] = field(default_factory=dict)
    """team -> the (offer, tier) pairs its demand may be served at under `placement` (placement.placed_tiers);
    None or a team left out = any."""
    held: dict[str, frozenset[str]] = field(default_factory=dict)
    """team -> the pools (flavors) where it holds quota today (placement.held_pools): hours served elsewhere are a
    move."""
    flavors: dict[Tier, tuple[str, ...]] = field(default_factory=dict)
    """(offer, tier) -> the pools that serve it (placement.flavors); a pair left out has no pool yet."""
    quota_holders: tuple[QuotaHolder, ...] = ()
    """The quota rows Kueue admits against (placement.quota_holders); empty under placement `anywhere`. They bound
    the quarter in progress (model.add_quota_within_kueue_limits)."""
    metered_utilisation: dict[str, tuple[float | None, int]] = field(default_factory=dict)
    """commitment -> (its utilisation in the usage history or None, the hours it covers): metered_utilisation()."""
    metered_team_use: dict[tuple[str, str], float] = field(default_factory=dict)
    """(offer, team) -> the accelerators the team held there in the usage history, on average over its hours
    (metered_team_use())."""
    baseline_rate: dict[str, float] = field(default_factory=dict)
    """demand key -> USD per accelerator-hour of its class on demand (baseline_rates): the all-on-demand baseline."""
    baseline_stand_ins: tuple[str, ...] = ()
    """For each demand key with no on-demand price where it may run: which price stands in for it."""
    credit_share: float = 1.0
    """The share of the post-horizon credit the objective counts (1: all; the sensitivity re-solves use less)."""
    tail_ratio: pd.DataFrame | None = None
    """offer, quarter, ratio: expected demand (over scenarios and hours) of the keys an offer may serve in a
    quarter after the horizon over that in the horizon's last quarter (the forecast's own quarters, then its
    last held flat); None or a missing row = 1 (the last quarter held flat)."""

    @property
    def first_quarter(self) -> Quarter:
        return self.quarters[0]

    @functools.cached_property
    def until(self) -> dt.datetime | None:
        """actuals_until as a moment (None without actuals)."""
        return None if self.actuals_until is None else dt.datetime.fromisoformat(self.actuals_until)

    def purchase_day(self, quarter: Quarter) -> dt.date:
        """The day a purchase made in the quarter starts (actuals.purchase_day: the first open day in the quarter in
        progress)."""
        return actuals.purchase_day(quarter, self.until)

    def active_share(self, start: Quarter, months: int, quarter: Quarter) -> float:
        """The share of `quarter`'s open hours covered by a term of `months` bought in quarter `start`."""
        return actuals.bought_share(start, months, quarter, self.until)

    def block_weeks(self, quarter: Quarter) -> int:
        """W_q: the weeks of the capacity block booked in the quarter (from its purchase day)."""
        return actuals.block_weeks(quarter, self.until)

    def with_options(self, options: PlanOptions) -> PlanData:
        return replace(self, options=options)

    @functools.cached_property
    def offer_by_name(self) -> dict[str, Offer]:
        """offer -> its row of `offers`, typed."""
        return {o.offer: o for o in rows_of(self.offers, Offer)}

    @functools.cached_property
    def commit_options_by_offer(self) -> dict[str, list[CommitOption]]:
        """offer -> its rows of `commit_options`, typed, in the table's order (offers without any left out)."""
        out: dict[str, list[CommitOption]] = {}
        for o in rows_of(self.commit_options, CommitOption):
            out.setdefault(o.offer, []).append(o)
        return out


OFFER_COLUMNS = ["offer", "site", "machine", "accelerator", "accelerators_per_node", "nodes_per_unit"]
POOL_COLUMNS = ["pool", "site", "machine", "provisioning", "accelerators"]
DEMAND_COLUMNS = [
    "demand_key",
    "team",
    "accelerator",
    "site",
    "quarter",
    "scenario",
    "bucket",
    "weight",
    "level",
    "preemptible_share",
]


def build_data(
    inventory: Inventory, options: PlanOptions | None = None, demand_curves: pd.DataFrame | None = None
) -> PlanData:
    """Turn an inventory into planning tables.

    `demand_curves` (columns team, accelerator, site, quarter, scenario, weight, level, preemptible_share)
    replaces the inventory's demand, e.g. an exact load-duration curve from `load_duration_curve`.
    """
    options = options or PlanOptions()
    problem = check_idle_policy(options.idle_policy, [t.name for t in inventory.teams])
    if problem:
        raise PlanInputError(problem)
    overrides = whatif.parse(options.what_if, inventory)
    scenarios = _scenarios(inventory, options)
    notes: tuple[str, ...] = ()
    forecast: tuple[ForecastRow, ...] = ()
    inventory = actuals.known_on(inventory, options.as_of)
    as_of = actuals_until(inventory)
    start = options.start
    if start is None and demand_curves is None and as_of is not None:
        start = quarter_of(as_of.date())  # the quarter in progress where the metered usage ends
    if demand_curves is not None:
        curves = demand_curves
    elif options.from_usage:
        curves, notes, forecast = demand_from_usage(inventory, replace(options, start=start))
    else:
        curves = curves_from_quantiles(inventory, options.bands)
    quarters = _horizon(curves, options.horizon, start)
    first_hour = min((u.hour for u in inventory.usage), default=None)
    if first_hour is not None and quarter_bounds(quarters[0])[1] <= first_hour.date():
        raise PlanInputError(
            f"--start {quarters[0]} is before the usage history begins ({first_hour:%Y-%m-%d}), so that quarter "
            f"has neither actuals nor a forecast; start at {quarter_of(first_hour.date())} or later."
        )
    if demand_curves is None and not options.from_usage:
        curves, notes, forecast = with_actuals(inventory, curves, quarters, options.bands)
    begun = tuple(q for q in quarters if as_of is not None and pd.Timestamp(quarter_bounds(q)[0]) < as_of)
    until = None if as_of is None else as_of.to_pydatetime()
    closed_quarters = [q for q in begun if actuals.open_hours(q, until) == 0]
    if closed_quarters and until is not None:
        raise PlanInputError(
            f"{', '.join(closed_quarters)} ended before the actuals did ({until:%Y-%m-%d %H:%M}): a closed quarter is "
            f"metered (`qm meter --period {closed_quarters[0]}`), not planned; start at "
            f"{quarter_of(until.date())} or later"
        )
    offers = _offers(inventory, overrides.lost_sites)
    prices = _prices(inventory, offers)
    prices = whatif.apply_price_overrides(prices, overrides)
    recourse = prices[prices["pricing_model"].isin(RECOURSE_MODELS)].reset_index(drop=True)
    commit_options = _commit_options(prices)
    tail = tail_quarters(quarters, commit_options)
    curves, held = _held_flat(curves, quarters + tail)
    if held and held[1] in quarters:
        notes += (f"the demand forecast ends in {held[0]}; {held[1]}..{quarters[-1]} hold its demand flat",)
    tail_curves = _expand_scenarios(curves[curves["quarter"].isin([quarters[-1], *tail])], scenarios)
    curves = _expand_scenarios(curves[curves["quarter"].isin(quarters)], scenarios)
    if curves.empty:
        raise PlanInputError(
            f"no demand in the horizon {quarters[0]}..{quarters[-1]}; add rows to demand.csv "
            "for these quarters or change --start / --horizon"
        )
    teams = (
        pd.DataFrame(
            [{"team": t.name, "cost_center": t.cost_center, "sites": ",".join(t.sites)} for t in inventory.teams],
            columns=["team", "cost_center", "sites"],
        )
        .sort_values("team")
        .reset_index(drop=True)
    )
    demand = _merge_buckets(curves, scenarios)
    demand = whatif.apply_demand_overrides(demand, overrides)
    placement = overrides.placement or inventory.policy.placement
    placed = placed_tiers(inventory, placement)
    routes = _routes(
        inventory, demand, offers, {t: None if p is None else frozenset(j for j, _ in p) for t, p in placed.items()}
    )
    baseline_rate, baseline_stand_ins = baseline_rates(inventory, demand)
    tail_ratio = _tail_ratio(whatif.apply_demand_overrides(tail_curves, overrides), routes, quarters[-1], scenarios)
    hours = {q: actuals.open_hours(q, until) for q in quarters}
    closed = actuals.closed_ledger(inventory, quarters, until, options.idle_policy)
    notes += actuals.uncovered_notes(begun, actuals.history_start(inventory))
    closed_baseline = _closed_baseline(inventory, actuals.closed_demand(inventory, quarters, until))
    budgets = (
        pd.DataFrame(
            [
                {"cost_center": b.cost_center, "quarter": b.quarter, "usd": b.usd}
                for b in inventory.policy.budgets
                if b.quarter in hours
            ],
            columns=["cost_center", "quarter", "usd"],
        )
        .sort_values(["cost_center", "quarter"])
        .reset_index(drop=True)
    )
    data = PlanData(
        quarters=quarters,
        hours=hours,
        offers=offers,
        recourse_prices=recourse,
        commit_options=commit_options,
        existing=_existing(inventory, quarters, hours, until),
        caps=_caps(inventory, offers),
        demand=demand,
        routes=routes,
        budgets=budgets,
        scenarios=scenarios,
        teams=teams,
        pools=_pools(inventory),
        unmet_penalty=_unmet_penalty(prices, offers),
        max_spot_share=inventory.policy.max_spot_share,
        options=options,
        lost_sites=overrides.lost_sites,
        notes=notes,
        placement=placement,
        begun=begun,
        actuals_until=None if as_of is None else as_of.isoformat(),
        forecast=tuple(r for r in forecast if r.quarter in quarters),
        closed=closed,
        closed_baseline=closed_baseline,
        metered_utilisation=metered_utilisation(inventory),
        metered_team_use=metered_team_use(inventory),
        baseline_rate=baseline_rate,
        baseline_stand_ins=baseline_stand_ins,
        placed=placed,
        held={t.name: frozenset(held_pools(t)) for t in inventory.teams},
        flavors=flavors(inventory),
        quota_holders=() if placement == "anywhere" else tuple(quota_holders(inventory)),
        tail_ratio=tail_ratio,
    )
    check_tables(data)
    return data


# --- horizon and scenarios -------------------------------------------------------------------------


def _horizon(curves: pd.DataFrame, horizon: int, start: Quarter | None) -> list[Quarter]:
    """The plan's quarters: `horizon` from `start`, else from the earliest quarter with demand (quarters sort as
    text in calendar order)."""
    if horizon < 1 or horizon > 40:
        raise PlanInputError(f"horizon of {horizon} quarters is outside 1..40; use e.g. --horizon 8q")
    if start is None:
        if curves.empty:
            raise PlanInputError("the inventory has no demand; add demand.csv rows or use --from-usage")
        start = min(curves["quarter"])
    first = Quarter(start)
    if LAST_QUARTER - first < horizon - 1:
        raise PlanInputError(
            f"a horizon of {horizon} quarters from {first} ends after {LAST_QUARTER}, the calendar's last quarter; "
            f"use --horizon {LAST_QUARTER - first + 1}q or an earlier --start"
        )
    return next_quarters(first, horizon)


def _scenarios(inventory: Inventory, options: PlanOptions) -> dict[str, float]:
    declared = {s.name: s.probability for s in inventory.policy.scenarios}
    if options.scenario is not None:
        if options.scenario not in declared:
            hint = did_you_mean(options.scenario, declared)
            raise PlanInputError(
                f"no scenario `{options.scenario}` in policy.scenarios (got {sorted(declared) or 'none'})."
                + (f" {hint}" if hint else "")
            )
        return {options.scenario: 1.0}
    return dict(sorted(declared.items())) or {"expected": 1.0}


def _expand_scenarios(curves: pd.DataFrame, scenarios: dict[str, float]) -> pd.DataFrame:
    """Rows without a scenario apply to every scenario; rows of other scenarios are dropped."""
    curves = curves.copy()
    curves["scenario"] = curves["scenario"].fillna("")
    shared = curves[curves["scenario"] == ""]
    parts = [curves[curves["scenario"].isin(scenarios)]]
    for name in scenarios:
        parts.append(shared.assign(scenario=name))
    return pd.concat(parts, ignore_index=True)


def tail_quarters(quarters: Sequence[Quarter], commit_options: pd.DataFrame) -> list[Quarter]:
    """The quarters after the horizon that a commitment started in its last quarter still covers, up to the
    calendar's last quarter."""
    longest = int(commit_options["term_quarters"].max()) if not commit_options.empty else 1
    return next_quarters(quarters[-1], min(longest, LAST_QUARTER - quarters[-1] + 1))[1:]


def _held_flat(curves: pd.DataFrame, quarters: Sequence[Quarter]) -> tuple[pd.DataFrame, list[str]]:
    """Curves with the forecast's last quarter repeated in each of `quarters` after it (a forecast that ends is
    not a forecast of zero), and [last forecast quarter, first quarter held] when any was; only when the
    forecast reaches the first of `quarters`."""
    if curves.empty:
        return curves, []
    end = max(curves["quarter"])  # quarters sort as text in calendar order
    after = [q for q in quarters if q > end]
    if not after or end < quarters[0]:
        return curves, []
    last = curves[curves["quarter"] == end]
    return pd.concat([curves, *(last.assign(quarter=q) for q in after)], ignore_index=True), [end, after[0]]


def _tail_ratio(curves: pd.DataFrame, routes: pd.DataFrame, last: Quarter, scenarios: dict[str, float]) -> pd.DataFrame:
    """offer, quarter, ratio (see PlanData.tail_ratio) from the curves of `last` and of the tail."""
    columns = ["offer", "quarter", "ratio"]
    if curves.empty or routes.empty:
        return pd.DataFrame(columns=columns)
    keyed = curves.assign(
        demand_key=_demand_key(curves), x=curves["weight"] * curves["level"] * curves["scenario"].map(scenarios)
    )
    by_offer = (
        keyed.merge(routes[["demand_key", "offer"]], on="demand_key")
        .groupby(["offer", "quarter"], as_index=False)["x"]
        .sum()
    )
    base = by_offer[by_offer["quarter"] == last].set_index("offer")["x"]
    tail = by_offer[by_offer["quarter"] != last].copy()
    below = tail["offer"].map(base).fillna(0.0)
    tail["ratio"] = [x / b if b > 0 else 0.0 for x, b in zip(tail["x"], below, strict=True)]
    table: pd.DataFrame = tail[columns].sort_values(columns[:2]).reset_index(drop=True)
    return table


def _demand_key(curves: pd.DataFrame) -> pd.Series:
    """team/accelerator, with @site when the demand is pinned to a site."""
    return curves["team"] + "/" + curves["accelerator"] + curves["site"].map(lambda s: f"@{s}" if s else "")


# --- demand as load-duration curves ----------------------------------------------------------------


def demand_series(row: DemandRow) -> tuple[str, str, str, str]:
    """A demand row's series: team, accelerator, site and scenario ("" when null), the same for each quarter's row."""
    return row.team, row.accelerator, row.site or "", row.scenario or ""


def curves_from_quantiles(
    inventory: Inventory,
    bands: tuple[tuple[float, float], ...],
    shifts: dict[tuple[str, str, str, str], float] | None = None,
) -> pd.DataFrame:
    """The demand rows' load-duration curves (quantile_curve); a series in `shifts` (demand_series -> z) is
    moved by its z first (shifted_quantiles)."""
    rows = []
    for d in inventory.demand:
        z = (shifts or {}).get(demand_series(d), 0.0)
        for weight, level in quantile_curve(shifted_quantiles(d.quantiles, z) if z else d.quantiles, bands):
            rows.append(
                {
                    "team": d.team,
                    "accelerator": d.accelerator,
                    "site": d.site or "",
                    "quarter": d.period,
                    "scenario": d.scenario or "",
                    "weight": weight,
                    "level": level,
                    "preemptible_share": d.preemptible_share,
                }
            )
    return curves_frame(rows)


def _merge_buckets(curves: pd.DataFrame, scenarios: dict[str, float]) -> pd.DataFrame:
    """Put every demand key of a (quarter, scenario) on common buckets of hours.

    Curves that carry a `bucket` column already share their buckets (demand from usage: the same hours
    for every key) and are kept. Others are coupled comonotonically (all teams' busy hours coincide), the
    cautious reading of separate per-team forecasts: the union of the keys' cumulative-weight breakpoints
    makes the buckets.
    """
    rows = []
    curves = curves.assign(demand_key=_demand_key(curves))
    for (quarter, scenario), group in curves.groupby(["quarter", "scenario"], sort=True):
        if group["bucket"].notna().all():
            for key, r in zip(group["demand_key"], rows_of(group, Curve), strict=True):
                rows.append(
                    {
                        "demand_key": key,
                        "team": r.team,
                        "accelerator": r.accelerator,
                        "site": r.site,
                        "quarter": quarter,
                        "scenario": scenario,
                        "bucket": int(r.bucket),
                        "weight": r.weight,
                        "level": float(r.level),
                        "preemptible_share": float(r.preemptible_share),
                    }
                )
            continue
        per_key = {}
        for key, g in group.groupby("demand_key", sort=True):
            g = g.sort_values("level", kind="stable")
            total = g["weight"].sum()
            per_key[key] = (g.iloc[0], list(zip((g["weight"] / total).cumsum().round(12), g["level"], strict=True)))
        cuts = sorted({0.0, 1.0} | {c for _, steps in per_key.values() for c, _ in steps})
        for key, (first, steps) in per_key.items():
            for b, (lo, hi) in enumerate(itertools.pairwise(cuts)):
                if hi - lo <= 1e-12:
                    continue
                level = next(lv for c, lv in steps if c >= hi - 1e-12)
                rows.append(
                    {
                        "demand_key": key,
                        "team": first["team"],
                        "accelerator": first["accelerator"],
                        "site": first["site"],
                        "quarter": quarter,
                        "scenario": scenario,
                        "bucket": b,
                        "weight": hi - lo,
                        "level": float(level),
                        "preemptible_share": float(first["preemptible_share"]),
                    }
                )
    demand = pd.DataFrame(rows, columns=DEMAND_COLUMNS)
    # renumber buckets 0..n-1 per (quarter, scenario)
    demand["bucket"] = demand.groupby(["quarter", "scenario"])["bucket"].rank(method="dense").astype(int) - 1
    return demand.sort_values(["quarter", "scenario", "demand_key", "bucket"]).reset_index(drop=True)


# --- supply: offers, prices, commitments, caps -----------------------------------------------------


def _offers(inventory: Inventory, lost_sites: tuple[str, ...]) -> pd.DataFrame:
    pairs = {(p.site, p.machine) for p in inventory.prices} | {(c.site, c.machine) for c in inventory.commitments}
    rows = []
    for site, machine_name in sorted(pairs):
        machine = inventory.machine_by_name.get(machine_name)
        if machine is None or site in lost_sites or site not in inventory.site_by_name:
            continue
        unit = 1
        for cluster in inventory.clusters:  # TPU: whole slices of the site's pools of this machine
            if cluster.site == site:
                for pool in cluster.pools:
                    if pool.machine == machine_name and pool.tpu is not None:
                        unit = max(unit, nodes_per_slice(pool, machine))
        rows.append(
            {
                "offer": offer_key(site, machine_name),
                "site": site,
                "machine": machine_name,
                "accelerator": machine.accelerator,
                "accelerators_per_node": machine.accelerators_per_node,
                "nodes_per_unit": unit,
            }
        )
    return pd.DataFrame(rows, columns=OFFER_COLUMNS)


def _prices(inventory: Inventory, offers: pd.DataFrame) -> pd.DataFrame:
    known = set(offers["offer"])
    rows = [
        {
            "offer": offer_key(p.site, p.machine),
            "pricing_model": p.pricing_model,
            "term_months": p.term_months,
            "usd_per_node_hour": p.usd_per_node_hour,
            "upfront_usd_per_node": p.upfront_usd_per_node,
            "usd_per_node_hour_used": p.usd_per_node_hour_used,
        }
        for p in inventory.prices
        if offer_key(p.site, p.machine) in known
    ]
    return (
        pd.DataFrame(
            rows,
            columns=[
                "offer",
                "pricing_model",
                "term_months",
                "usd_per_node_hour",
                "upfront_usd_per_node",
                "usd_per_node_hour_used",
            ],
        )
        .sort_values(["offer", "pricing_model", "term_months", "upfront_usd_per_node"])
        .reset_index(drop=True)
    )


def _commit_options(prices: pd.DataFrame) -> pd.DataFrame:
    """One option per commitment row; its name says its contract shape when it has an upfront fee
    (`commit_12m_upfront_...`); every option at one offer must give the same rate per hour used."""
    rows = []
    committed = prices[prices["pricing_model"].isin(COMMIT_MODELS)]
    for offer, group in committed.groupby("offer"):
        used = sorted(set(group["usd_per_node_hour_used"]))
        if len(used) > 1:
            raise PlanInputError(
                f"prices.csv: the commitment rows of {offer} give different usd_per_node_hour_used "
                f"({', '.join(map(str, used))}); the planner needs one rate per hour used per site and machine "
                "(power, or the agreement's discounted rate): give them all the same"
            )
    for p in rows_of(committed, RecoursePrice):
        months = commitment_term_months(p.pricing_model, p.term_months)
        shape = f"_upfront_{p.upfront_usd_per_node}" if p.upfront_usd_per_node else ""
        rows.append(
            {
                "offer": p.offer,
                "option": f"{p.pricing_model}_{months}m{shape}",
                "pricing_model": p.pricing_model,
                "term_months": months,
                "term_quarters": math.ceil(months / 3),
                "usd_per_node_hour": p.usd_per_node_hour,
                "upfront_usd_per_node": p.upfront_usd_per_node,
                "usd_per_node_hour_used": p.usd_per_node_hour_used,
            }
        )
    return pd.DataFrame(
        rows,
        columns=[
            "offer",
            "option",
            "pricing_model",
            "term_months",
            "term_quarters",
            "usd_per_node_hour",
            "upfront_usd_per_node",
            "usd_per_node_hour_used",
        ],
    )


def _existing(
    inventory: Inventory, quarters: Sequence[Quarter], hours: dict[Quarter, int], until: dt.datetime | None
) -> pd.DataFrame:
    """Average active nodes and cost per quarter of each existing commitment in the quarter's open part (its closed
    part is metered), paid even at a lost site."""
    rows = []
    for c in inventory.commitments:
        for q in quarters:
            h = actuals.covered_hours(c.start, c.end, q, until)
            if h > 0:
                rows.append(
                    {
                        "commitment": c.name,
                        "offer": offer_key(c.site, c.machine),
                        "kind": c.kind,
                        "quarter": q,
                        "nodes": c.count * h / hours[q],
                        "usd": known_usd(commitment_line(c, q, "planned", hours=h)),
                        "usd_per_node_hour": c.usd_per_node_hour,
                    }
                )
    return (
        pd.DataFrame(rows, columns=["commitment", "offer", "kind", "quarter", "nodes", "usd", "usd_per_node_hour"])
        .sort_values(["offer", "quarter", "commitment"])
        .reset_index(drop=True)
    )


def _caps(inventory: Inventory, offers: pd.DataFrame) -> pd.DataFrame:
    known = set(offers["offer"])
    rows = [
        {"offer": offer_key(s.name, cap.machine), "pricing_model": cap.pricing_model, "max_nodes": cap.max_nodes}
        for s in inventory.sites
        for cap in s.supply_caps
        if offer_key(s.name, cap.machine) in known
    ]
    return (
        pd.DataFrame(rows, columns=["offer", "pricing_model", "max_nodes"])
        .sort_values(["offer", "pricing_model"])
        .reset_index(drop=True)
    )


def _routes(
    inventory: Inventory, demand: pd.DataFrame, offers: pd.DataFrame, placed: dict[str, frozenset[str] | None]
) -> pd.DataFrame:
    """Which offers may serve each demand key: its pinned site, the team's residency, its placement (`placed`,
    the offers of placement.placed_tiers: None = any offer) and equivalence."""
    rows = []
    keys = demand[["demand_key", "team", "accelerator", "site"]].drop_duplicates()
    for k in keys.itertuples():
        team = inventory.team_by_name.get(str(k.team))
        allowed_sites = set(team.sites) if team is not None and team.sites else None
        allowed = placed.get(str(k.team))
        for o in rows_of(offers, Offer):
            if k.site and o.site != k.site:
                continue
            if allowed_sites is not None and o.site not in allowed_sites:
                continue
            if allowed is not None and o.offer not in allowed:
                continue
            ratio = equivalence_ratio(inventory.policy.equivalence, str(k.accelerator), o.accelerator)
            if ratio is not None:
                rows.append({"demand_key": k.demand_key, "offer": o.offer, "ratio": ratio})
    return (
        pd.DataFrame(rows, columns=["demand_key", "offer", "ratio"])
        .sort_values(["demand_key", "offer"])
        .reset_index(drop=True)
    )


def baseline_rates(inventory: Inventory, demand: pd.DataFrame) -> tuple[dict[str, float], tuple[str, ...]]:
    """demand key -> USD per accelerator-hour of its class bought on demand, and the stand-in notes.

    The cheapest on-demand price, per accelerator of the key's class (equivalence), where the team runs today: the
    offers of its quota's pools (placement `quota`); where none has an on-demand price, the cheapest anywhere it may
    run by residency and pinned site; else the cheapest on-demand price of its class (or an equivalent) anywhere in
    the price book (a note says which); where there is none at all (on-prem B200), its offers' own dearest price,
    which claims no savings. Never the plan's placement, lost sites or price what-ifs: a quarter's
    baseline is its demand at the price book's on-demand prices whatever the horizon, placement or what-ifs, and
    a plan that moves teams shows the moves' saving in its savings."""
    offers = _offers(inventory, ())
    per_node = dict(zip(offers["offer"], offers["accelerators_per_node"], strict=True))
    prices = _prices(inventory, offers)
    on_demand = {
        str(j): float(x) / per_node[j]
        for j, x in zip(
            prices.loc[prices["pricing_model"] == PricingModel.ON_DEMAND, "offer"],
            prices.loc[prices["pricing_model"] == PricingModel.ON_DEMAND, "usd_per_node_hour"],
            strict=True,
        )
    }
    dearest = {j: float(x) / per_node[j] for j, x in prices.groupby("offer")["usd_per_node_hour"].max().items()}

    def routes_under(placed: dict[str, frozenset[str] | None]) -> dict[str, list[tuple[str, float]]]:
        out: dict[str, list[tuple[str, float]]] = {}
        routes = _routes(inventory, demand, offers, placed)
        for k, j, rho in zip(routes["demand_key"], routes["offer"], routes["ratio"], strict=True):
            out.setdefault(str(k), []).append((str(j), float(rho)))
        return out

    today, anywhere = routes_under(allowed_offers(inventory, "quota")), routes_under({})
    accelerator = dict(zip(offers["offer"], offers["accelerator"], strict=True))
    keys = demand.drop_duplicates("demand_key").set_index("demand_key")["accelerator"]
    rates, stand_ins = {}, []
    for key in sorted(anywhere):
        held = [on_demand[j] * rho for j, rho in today.get(key, []) if j in on_demand]
        near = [on_demand[j] * rho for j, rho in anywhere[key] if j in on_demand]
        ratios = {j: equivalence_ratio(inventory.policy.equivalence, keys[key], accelerator[j]) for j in on_demand}
        far = [on_demand[j] * rho for j, rho in ratios.items() if rho is not None]
        own = [dearest[j] * rho for j, rho in anywhere[key] if j in dearest]
        rates[key] = min(held or near or far or own or [0.0])
        if not held:
            where = (
                "the cheapest on-demand price where it may run"
                if near
                else f"the cheapest on-demand {keys[key]} (or equivalent) anywhere"
                if far
                else "its offers' own dearest price"
            )
            stand_ins.append(
                f"{key}: no on-demand price in the pools it holds quota in; {where}, "
                f"{format_usd(rates[key], 4)} per accelerator-hour, stands in"
                + ("" if near or far else ", so it claims no savings")
            )
    return rates, tuple(stand_ins)


def _closed_baseline(inventory: Inventory, closed: pd.DataFrame) -> dict[Quarter, float]:
    """quarter -> the closed part's requested accelerator-hours at the baseline rate of each team's class
    (baseline_rates, as the open part's demand)."""
    if closed.empty:
        return {}
    keys = closed.assign(site="", demand_key=closed["team"] + "/" + closed["accelerator"])
    rates, _ = baseline_rates(inventory, keys)
    out: dict[Quarter, float] = {}
    for text, key, hours in zip(keys["quarter"], keys["demand_key"], keys["accelerator_hours"], strict=True):
        q = Quarter(text)
        out[q] = out.get(q, 0.0) + float(hours) * rates.get(key, 0.0)
    return out


def metered_utilisation(inventory: Inventory) -> dict[str, tuple[float | None, int]]:
    """commitment -> (utilisation in the usage history, hours): at its site and machine, each hour of the history
    in which it is active, the accelerators held (the larger of used and requested, summed over the pools there),
    at most the accelerators all commitments there hold that hour, over those committed accelerators (commitments at
    one site and machine are one block, as `qm meter` meters them); (None, 0) when the history has none of its
    hours. The history's hours run from its first to its last row; an hour with no row held nothing."""
    if not inventory.usage:
        return {c.name: (None, 0) for c in inventory.commitments}
    held: dict[tuple[str, pd.Timestamp], float] = {}
    for u in inventory.usage:
        pool = inventory.pool_by_name.get(u.flavor)
        if pool is None:
            continue
        key = (offer_key(inventory.cluster_of_pool[u.flavor].site, pool.machine), pd.Timestamp(u.hour))
        held[key] = held.get(key, 0.0) + max(u.accelerators_used, u.accelerators_requested)
    first = min(pd.Timestamp(u.hour) for u in inventory.usage)
    last = max(pd.Timestamp(u.hour) for u in inventory.usage)
    hours = pd.date_range(first, last, freq="h")
    per_node = {c.name: inventory.machine_by_name[c.machine].accelerators_per_node for c in inventory.commitments}
    out: dict[str, tuple[float | None, int]] = {}
    for c in inventory.commitments:
        j = offer_key(c.site, c.machine)
        block = [o for o in inventory.commitments if offer_key(o.site, o.machine) == j]
        used = committed = 0.0
        n = 0
        for hour in hours:
            if not (pd.Timestamp(c.start) <= hour < pd.Timestamp(c.end)):
                continue
            whole = sum(
                o.count * per_node[o.name] for o in block if pd.Timestamp(o.start) <= hour < pd.Timestamp(o.end)
            )
            used += min(held.get((j, hour), 0.0), whole)
            committed += whole
            n += 1
        out[c.name] = (used / committed if committed else None, n)
    return out


def metered_team_use(inventory: Inventory) -> dict[tuple[str, str], float]:
    """(offer, team) -> accelerators held (the larger of used and requested, summed over the pools at the site and
    machine) per hour of the usage history, from its first hour to its last (an hour with no row held nothing)."""
    if not inventory.usage:
        return {}
    first = min(pd.Timestamp(u.hour) for u in inventory.usage)
    last = max(pd.Timestamp(u.hour) for u in inventory.usage)
    hours = len(pd.date_range(first, last, freq="h"))
    held: dict[tuple[str, str], float] = {}
    for u in inventory.usage:
        pool = inventory.pool_by_name.get(u.flavor)
        if pool is not None:
            key = (offer_key(inventory.cluster_of_pool[u.flavor].site, pool.machine), u.team)
            held[key] = held.get(key, 0.0) + max(u.accelerators_used, u.accelerators_requested)
    return {key: x / hours for key, x in sorted(held.items())}


def _pools(inventory: Inventory) -> pd.DataFrame:
    rows = [
        {
            "pool": p.name,
            "site": c.site,
            "machine": p.machine,
            "provisioning": p.provisioning,
            "accelerators": pool_accelerators(inventory, p),
        }
        for c in inventory.clusters
        for p in c.pools
    ]
    return pd.DataFrame(rows, columns=POOL_COLUMNS).sort_values("pool").reset_index(drop=True)


def _unmet_penalty(prices: pd.DataFrame, offers: pd.DataFrame) -> float:
    per_node = dict(zip(offers["offer"], offers["accelerators_per_node"], strict=True))
    rates = [per_accelerator(float(p.usd_per_node_hour), per_node[p.offer]) for p in rows_of(prices, RecoursePrice)]
    return UNMET_PENALTY_FACTOR * max(rates, default=100.0)
