"""Metering: charge each team for the accelerator-hours it held, at the rate of the capacity that served
them, and account for every paid hour nobody held (idle).

Rules (PLANNING.md §4, the OpenCost/Kubecost allocation model):

* a team holds `max(requested, used)` accelerators in an hour (OpenCost charges the larger of request and use);
* capacity is paid in blocks (`rates.Block`): a commitment is paid every hour of its term at
  its price per accelerator-hour (`pricing.per_accelerator`; amortised, on-prem = capex + opex), a pool outside any
  commitment keeps its minimum nodes (fixed pools: all of them) at its pricing model's rate;
* in block b and hour h, with paid accelerators A and held accelerators S = sum over teams of s_t:
  covered = min(S, A), every team is covered in proportion, s_t * covered / S, and the rest
  s_t * (1 - covered / S) is overflow paid at the block's overflow rate (on-demand, or spot/flex-start for such
  pools); idle = A - covered;
* total cost = sum over blocks of (paid accelerator-hours x rate + overflow accelerator-hours x overflow rate)
  = team charges + idle, to the cent (`money.allocate_cents`);
* idle is its own line, then shared by a policy: `proportional` (per block, to the teams' charges on that block,
  else to their charges overall; Kubecost `shareIdle`), `even` (equally between the teams that used anything),
  or `owner:TEAM` (all to one team);
* efficiency = used / requested accelerator-hours.

Arithmetic is vectorised with numpy on integer milli-accelerators: records are first summed per team, pool
and hour (a few passes over the rows), then everything else runs on those groups, so 10 M records take about
a second; Decimal only touches the aggregated lines.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict, dataclass, field
from decimal import Decimal
from typing import Any, Literal

import numpy as np
import pandas as pd

from quartermaster.issues import Issue
from quartermaster.model import Inventory
from quartermaster.pricing import (
    CENT,
    DEFAULT_IDLE_POLICY,
    FocusPricingCategory,
    allocate_cents,
    cents,
    check_idle_policy,
    idle_weights,
    split_cents,
)
from quartermaster.reports.metering.query import UNITS_PER_HOUR, meter_sql
from quartermaster.reports.metering.rates import Block, blocks
from quartermaster.reports.metering.usage import Period

MILLI = 1000
HOUR = np.timedelta64(1, "h")
Q = Decimal("0.001")
DENSE_GROUPS = 1 << 20
"""Up to this many team x pool x hour groups (or one per record) are counted densely, else only those seen."""


@dataclass(frozen=True)
class ChargeLine:
    """Money for one team (or, for idle, nobody) on one block and pool at one pricing category."""

    kind: Literal["usage", "idle", "idle-share"]
    team: str | None
    cost_center: str | None
    block: str
    """The block's key, `commitment:<name>` or `pool:<name>`."""
    pool: str | None
    category: FocusPricingCategory
    accelerator_hours: Decimal
    rate: Decimal
    """USD per accelerator-hour (the effective rate; for an idle share, the block's rate)."""
    cost: Decimal


@dataclass(frozen=True)
class TeamCharge:
    """A team's metering summary for the period."""

    team: str
    cost_center: str
    requested_hours: Decimal
    used_hours: Decimal
    charged_hours: Decimal
    efficiency: Decimal | None
    """used / requested; None when nothing was requested."""
    usage_cost: Decimal
    idle_share: Decimal
    total: Decimal


@dataclass(frozen=True)
class MeterResult:
    """The metered period: charge lines, idle lines and their shares, team and cost-centre totals."""

    period: Period
    policy: str
    total_cost: Decimal
    usage_cost: Decimal
    idle_cost: Decimal
    unallocated_idle: Decimal
    lines: tuple[ChargeLine, ...]
    idle: tuple[ChargeLine, ...]
    idle_shares: tuple[ChargeLine, ...]
    teams: tuple[TeamCharge, ...]
    cost_centers: dict[str, Decimal]
    blocks: dict[str, Block] = field(repr=False)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data (money and quantities as decimal strings, keys sorted by the caller)."""
        def plain(obj: Any) -> Any:
            if isinstance(obj, Decimal):
                return str(obj)
            if isinstance(obj, dict):
                return {k: plain(v) for k, v in obj.items()}
            if isinstance(obj, (list, tuple)):
                return [plain(v) for v in obj]
            return obj
        return plain({
            "basis": "metered",
            "period": {"label": self.period.label, "start": self.period.start.isoformat(),
                       "end": self.period.end.isoformat()},
            "idle_policy": self.policy, "total_cost": self.total_cost, "usage_cost": self.usage_cost,
            "idle_cost": self.idle_cost, "unallocated_idle": self.unallocated_idle,
            "teams": [asdict(t) for t in self.teams], "cost_centers": dict(sorted(self.cost_centers.items())),
            "lines": [asdict(x) for x in self.lines], "idle": [asdict(x) for x in self.idle],
            "idle_shares": [asdict(x) for x in self.idle_shares],
        })


def check_policy(policy: str, inventory: Inventory) -> str | None:
    """An error message if the idle policy is not one of IDLE_POLICIES (with a known team), else None."""
    return check_idle_policy(policy, [t.name for t in inventory.teams])


def _hour_index(moment: dt.datetime, start: dt.datetime) -> int:
    return int((moment - start).total_seconds()) // 3600


def _decimal(x: float) -> Decimal:
    """A float of milli-accelerator-hours as a Decimal of accelerator-hours (repr keeps the shortest exact form)."""
    return Decimal(repr(float(x))) / MILLI


def meter(
    inventory: Inventory, usage: pd.DataFrame | Any, period: Period, policy: str = DEFAULT_IDLE_POLICY
) -> tuple[MeterResult | None, list[Issue]]:
    """Meter usage records over `period` with an idle-sharing policy: the metering query (`query.meter_sql`) run
    by DuckDB over `usage`, a frame normalised by `usage.check_usage` or an Arrow table or dataset with the
    query's USAGE_COLUMNS."""
    import duckdb

    blks, issues = blocks(inventory, period.start, period.end)
    if issues:
        return None, issues
    con = duckdb.connect()
    try:
        con.register("usage_input", usage)
        names = set(con.sql("SELECT * FROM usage_input LIMIT 0").to_arrow_table().schema.names)
        if "used" in names:  # a frame from check_usage
            con.execute("CREATE VIEW usage AS SELECT hour, CAST(team AS VARCHAR) AS team, CAST(flavor AS VARCHAR) "
                        "AS flavor, used AS accelerators_used, requested AS accelerators_requested, "
                        f"{'minutes' if 'minutes' in names else 60} AS minutes FROM usage_input")
        else:
            con.execute("CREATE VIEW usage AS SELECT * FROM usage_input")
        rows = con.sql(meter_sql(inventory, blks, policy)).to_arrow_table().to_pylist()
    finally:
        con.close()
    return _result(inventory, blks, period, policy, rows), []


def _result(
    inventory: Inventory, blks: list[Block], period: Period, policy: str, rows: list[dict[str, Any]]
) -> MeterResult:
    """The query's rows as a MeterResult, lines in the order team, pool, block, part (idle: block order)."""
    team_cc = {t.name: t.cost_center for t in inventory.teams}
    team_names = sorted(inventory.team_by_name)
    pool_order = {p.name: i for i, p in enumerate(inventory.pools)}

    def line(row: dict[str, Any]) -> ChargeLine:
        blk, team = blks[row["block_id"]], row["team"]
        quantity = Decimal(0) if row["kind"] == "idle-share" else (row["units"] / UNITS_PER_HOUR).quantize(Q)
        return ChargeLine(row["kind"], team, team_cc[team] if team else None, blk.key, row["pool"], row["category"],
                          quantity, blk.overflow_rate if row["part"] else blk.rate,
                          (Decimal(row["cents"]) / 100).quantize(CENT))

    usage_rows = sorted((r for r in rows if r["kind"] == "usage"),
                        key=lambda r: (r["team"], pool_order[r["pool"]], blks[r["block_id"]].kind == "pool", r["part"]))
    lines = tuple(line(r) for r in usage_rows)
    idle = tuple(line(r) for r in sorted((r for r in rows if r["kind"] == "idle"), key=lambda r: r["block_id"]))
    shares = tuple(line(r) for r in sorted((r for r in rows if r["kind"] == "idle-share"),
                                           key=lambda r: (r["block_id"], r["team"])))
    units = {r["team"]: r for r in rows if r["kind"] == "team"}
    usage_by_team: dict[str, Decimal] = {}
    for x in lines:
        usage_by_team[x.team or ""] = usage_by_team.get(x.team or "", Decimal(0)) + x.cost
    idle_by_team: dict[str, Decimal] = {}
    for s in shares:
        idle_by_team[s.team or ""] = idle_by_team.get(s.team or "", Decimal(0)) + s.cost
    teams = []
    for name in team_names:
        u = units.get(name)
        held = int(u["units"]) if u else 0
        if held == 0 and name not in idle_by_team:
            continue
        req = Decimal(u["requested_units"] if u else 0) / UNITS_PER_HOUR
        use = Decimal(u["used_units"] if u else 0) / UNITS_PER_HOUR
        usage_cost, idle_share = usage_by_team.get(name, Decimal(0)), idle_by_team.get(name, Decimal(0))
        teams.append(TeamCharge(name, team_cc[name], req, use, Decimal(held) / UNITS_PER_HOUR,
                                (use / req).quantize(Decimal("0.0001")) if req else None,
                                usage_cost, idle_share, usage_cost + idle_share))
    by_cc: dict[str, Decimal] = {}
    for t in teams:
        by_cc[t.cost_center] = by_cc.get(t.cost_center, Decimal(0)) + t.total
    idle_cost = sum((x.cost for x in idle), Decimal(0))
    usage_cost = sum(usage_by_team.values(), Decimal(0))
    shared = {s.block for s in shares}
    unallocated = sum((x.cost for x in idle if x.block not in shared), Decimal(0))
    return MeterResult(period, policy, usage_cost + idle_cost, usage_cost, idle_cost, unallocated, lines, idle,
                       shares, tuple(teams), by_cc, {b.key: b for b in blks})


def meter_pandas(
    inventory: Inventory, usage: pd.DataFrame, period: Period, policy: str = DEFAULT_IDLE_POLICY
) -> tuple[MeterResult | None, list[Issue]]:
    """Meter normalised usage records (`usage.check_usage`) over `period` with an idle-sharing policy."""
    blks, issues = blocks(inventory, period.start, period.end)
    if issues:
        return None, issues
    hours = period.hours
    pool_names = [p.name for p in inventory.pools]
    team_names = sorted(inventory.team_by_name)
    n_pools, n_teams, n_blocks = len(pool_names), len(team_names), len(blks)
    index = {(b.kind, b.name): i for i, b in enumerate(blks)}

    # Paid milli-accelerators per block and hour.
    paid = np.zeros((n_blocks, hours), dtype=np.int64)
    for i, blk in enumerate(blks):
        for start, end in blk.paid:
            paid[i, _hour_index(start, period.start) : _hour_index(end, period.start)] = blk.accelerators * MILLI
    # Per pool: its own block, its commitment's block and the commitment's hours.
    own_block = np.array([index[("pool", p)] for p in pool_names], dtype=np.int64)
    commit_block = np.full(n_pools, -1, dtype=np.int64)
    commit_from = np.zeros(n_pools, dtype=np.int64)
    commit_to = np.zeros(n_pools, dtype=np.int64)
    for i, consumer in enumerate(inventory.pools):
        if consumer.commitment and ("commitment", consumer.commitment) in index:
            b = index[("commitment", consumer.commitment)]
            commit_block[i] = b
            start, end = blks[b].paid[0]
            commit_from[i], commit_to[i] = _hour_index(start, period.start), _hour_index(end, period.start)

    # Rows -> groups of one team, pool and hour (few: teams x pools x hours), so that per-row work is a
    # handful of passes and everything else runs on the groups.
    h = (usage["hour"].to_numpy() - np.datetime64(period.start)) // HOUR
    pc, tc = _codes(usage["flavor"], pool_names), _codes(usage["team"], team_names)
    used = np.rint(usage["used"].to_numpy(dtype="float64") * MILLI).astype(np.int64)
    requested = np.rint(usage["requested"].to_numpy(dtype="float64") * MILLI).astype(np.int64)
    inside = (h >= 0) & (h < hours)
    if not inside.all():
        h, pc, tc, used, requested = h[inside], pc[inside], tc[inside], used[inside], requested[inside]
    key = (tc * n_pools + pc) * hours + h
    n_cells = n_teams * n_pools * hours
    if n_cells <= max(key.size, DENSE_GROUPS):  # dense: every team, pool and hour is a group
        groups, row_group = np.arange(n_cells, dtype=np.int64), key
    else:  # sparse: only the groups that occur
        groups, row_group = np.unique(key, return_inverse=True)
    used_g = np.bincount(row_group, weights=used, minlength=groups.size)
    requested_g = np.bincount(row_group, weights=requested, minlength=groups.size)
    held_g = np.bincount(row_group, weights=np.maximum(used, requested), minlength=groups.size)
    tc, pc, h = groups // (n_pools * hours), groups // hours % n_pools, groups % hours

    in_commit = (commit_block[pc] >= 0) & (h >= commit_from[pc]) & (h < commit_to[pc])
    cell = np.where(in_commit, commit_block[pc], own_block[pc]) * hours + h
    held_bh = np.bincount(cell, weights=held_g, minlength=n_blocks * hours).reshape(n_blocks, hours)
    covered_bh = np.minimum(held_bh, paid)
    share_bh = np.divide(covered_bh, held_bh, out=np.zeros_like(held_bh), where=held_bh > 0)
    line = (tc * n_pools + pc) * 2 + in_commit
    n_lines = n_teams * n_pools * 2
    held_l = np.bincount(line, weights=held_g, minlength=n_lines)
    covered_l = np.bincount(line, weights=held_g * share_bh.ravel()[cell], minlength=n_lines)
    used_t = np.bincount(tc, weights=used_g, minlength=n_teams)
    requested_t = np.bincount(tc, weights=requested_g, minlength=n_teams)
    held_t = np.bincount(tc, weights=held_g, minlength=n_teams)
    paid_b = paid.sum(axis=1)
    covered_b = covered_bh.sum(axis=1)
    overflow_b = (held_bh - covered_bh).sum(axis=1)

    # Exact total: integers of milli-accelerator-hours times Decimal rates.
    total = (
        sum(
            (
                Decimal(int(paid_b[i])) * b.rate + Decimal(int(overflow_b[i])) * b.overflow_rate
                for i, b in enumerate(blks)
            ),
            Decimal(0),
        )
        / MILLI
    )

    team_cc = {t.name: t.cost_center for t in inventory.teams}
    raw: dict[int, tuple[ChargeLine, Decimal]] = {}
    for k in np.flatnonzero(held_l):
        team, pool, committed = team_names[k // (2 * n_pools)], pool_names[(k // 2) % n_pools], k % 2
        blk = blks[commit_block[(k // 2) % n_pools] if committed else own_block[(k // 2) % n_pools]]
        covered, overflow = _decimal(covered_l[k]), _decimal(held_l[k] - covered_l[k])
        parts = [(blk.category, blk.rate, covered), (blk.overflow_category, blk.overflow_rate, overflow)]
        if blk.rate == blk.overflow_rate and blk.category == blk.overflow_category:
            parts = [(blk.category, blk.rate, covered + overflow)]
        for category, rate, qty in parts:
            if qty > 0:
                raw[len(raw)] = (
                    ChargeLine("usage", team, team_cc[team], blk.key, pool, category, qty, rate, Decimal(0)),
                    qty * rate,
                )
    for i, blk in enumerate(blks):
        idle_qty = Decimal(int(paid_b[i] - covered_b[i])) / MILLI
        if idle_qty > 0:
            raw[len(raw)] = (
                ChargeLine(
                    "idle",
                    None,
                    None,
                    blk.key,
                    blk.pools[0] if len(blk.pools) == 1 else None,
                    blk.category,
                    idle_qty,
                    blk.rate,
                    Decimal(0),
                ),
                idle_qty * blk.rate,
            )
    rounded = allocate_cents({f"{k:09d}": amount for k, (_, amount) in raw.items()}, total)
    priced = [
        _with(line_, cost=rounded[f"{k:09d}"], accelerator_hours=line_.accelerator_hours.quantize(Q))
        for k, (line_, _) in raw.items()
    ]
    lines = tuple(x for x in priced if x.kind == "usage")
    idle = tuple(x for x in priced if x.kind == "idle")

    usage_by_team: dict[str, Decimal] = {}
    usage_by_team_block: dict[tuple[str, str], Decimal] = {}
    for x in lines:
        team = x.team or ""
        usage_by_team[team] = usage_by_team.get(team, Decimal(0)) + x.cost
        usage_by_team_block[(team, x.block)] = usage_by_team_block.get((team, x.block), Decimal(0)) + x.cost
    shares: list[ChargeLine] = []
    unallocated = Decimal(0)
    for x in idle:
        use_of_block = {t: c for (t, b), c in usage_by_team_block.items() if b == x.block}
        weights = idle_weights(policy, usage_by_team, team_names, use_of_block)
        split = split_cents(x.cost, weights)
        if not split:
            unallocated += x.cost
        for team, amount in sorted(split.items()):
            shares.append(
                ChargeLine(
                    "idle-share", str(team), team_cc[str(team)], x.block, x.pool, x.category, Decimal(0), x.rate, amount
                )
            )

    idle_by_team: dict[str, Decimal] = {}
    for s in shares:
        idle_by_team[s.team or ""] = idle_by_team.get(s.team or "", Decimal(0)) + s.cost
    teams = []
    for i, name in enumerate(team_names):
        if held_t[i] == 0 and name not in idle_by_team:
            continue
        usage_cost, idle_share = usage_by_team.get(name, Decimal(0)), idle_by_team.get(name, Decimal(0))
        req = Decimal(int(requested_t[i])) / MILLI
        use = Decimal(int(used_t[i])) / MILLI
        teams.append(
            TeamCharge(
                name,
                team_cc[name],
                req,
                use,
                Decimal(int(held_t[i])) / MILLI,
                (use / req).quantize(Decimal("0.0001")) if req else None,
                usage_cost,
                idle_share,
                usage_cost + idle_share,
            )
        )
    by_cc: dict[str, Decimal] = {}
    for t in teams:
        by_cc[t.cost_center] = by_cc.get(t.cost_center, Decimal(0)) + t.total
    idle_cost = sum((x.cost for x in idle), Decimal(0))
    return MeterResult(
        period,
        policy,
        cents(total),
        sum(usage_by_team.values(), Decimal(0)),
        idle_cost,
        unallocated,
        lines,
        idle,
        tuple(shares),
        tuple(teams),
        by_cc,
        {b.key: b for b in blks},
    ), []


def _codes(values: pd.Series, names: list[str]) -> np.ndarray:
    """Index of each row's value in `names` (values were checked by `check_usage`, whose categoricals have
    exactly these categories)."""
    if isinstance(values.dtype, pd.CategoricalDtype) and list(values.cat.categories) == names:
        return values.cat.codes.to_numpy().astype(np.int64)
    codes, uniques = pd.factorize(values)
    position = {n: i for i, n in enumerate(names)}
    return np.array([position[str(u)] for u in uniques], dtype=np.int64)[codes]


def _with(line: ChargeLine, **changes: Any) -> ChargeLine:
    return ChargeLine(**{**asdict(line), **changes})
