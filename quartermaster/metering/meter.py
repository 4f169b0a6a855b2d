"""Metering: charge each team for the accelerator-hours it held, at the rate of the capacity that served
them, and account for every paid hour nobody held (idle).

Rules (the OpenCost/Kubecost allocation model: github.com/opencost/opencost `spec/opencost-specv01.md`,
`pkg/costmodel/allocation_helpers.go`, PR #883):

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

All of it is one SQL query (`query.meter_sql`: sql/meter.sql after the inventory's tables), run by DuckDB over
the records: quantities are integer milli-accelerator-minutes summed per team, pool and hour, money is exact
DECIMAL, cents are allocated by largest remainder (as `allocate_cents`, ties in line order) and idle is shared
(as `idle_weights` and `split_cents`) in the query, so the same query gives the same money on Spark, BigQuery
or Trino. Python only turns its rows (one per line and team) into a MeterResult.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict, dataclass, field
from decimal import Decimal
from typing import Any, Literal

import pandas as pd
import pyarrow as pa

from quartermaster.issues import Issue
from quartermaster.metering.query import UNITS_PER_HOUR, checks_sql, held_sql, meter_sql
from quartermaster.metering.rates import Block, blocks
from quartermaster.metering.usage import Period
from quartermaster.model import Inventory
from quartermaster.pricing import (
    CENT,
    DEFAULT_IDLE_POLICY,
    IDLE_COST_CENTER,
    IDLE_TEAM,
    FocusPricingCategory,
    PricedLine,
    Side,
    check_idle_policy,
)
from quartermaster.units import Quarter, quarter_of

Q = Decimal("0.001")


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

    @property
    def ledger(self) -> tuple[PricedLine, ...]:
        """The period's priced lines (basis metered; `quartermaster.ledger`), each at the cents it was charged:

        - cost side: every usage line (a team's accelerator-hours on a block and pool at its rate) and every idle
          line (paid accelerator-hours nobody held), adding up to total_cost;
        - charge side: the same usage lines, every idle share (`quantity` the team's share of its block's idle,
          `rate` that idle) and the idle no policy could share (IDLE_TEAM), adding up to total_cost: by team each
          TeamCharge.total, by cost centre cost_centers (IDLE_COST_CENTER: the idle no team took)."""
        quarter: Quarter | Literal[""] = quarter_of(self.period.start.date())
        if quarter_of((self.period.end - dt.timedelta(hours=1)).date()) != quarter:
            quarter = ""  # a period over several quarters belongs to none of them alone
        idle_usd: dict[str, Decimal] = {}
        for x in self.idle:
            idle_usd[x.block] = idle_usd.get(x.block, Decimal(0)) + x.cost
        shared = {s.block for s in self.idle_shares}
        out: list[PricedLine] = []

        def book(x: ChargeLine, side: Side, label: str, share: Decimal | None = None) -> None:
            block = self.blocks[x.block]
            model = block.model if x.rate == block.rate else block.overflow_model
            quantity, unit, rate = (
                (x.accelerator_hours, "accelerator-hour", x.rate)
                if share is None
                else (share, "share of idle", idle_usd[x.block])
            )
            source = f"{x.block}, {model} rate; qm meter {self.period.label}, idle policy {self.policy}"
            out.append(
                PricedLine(
                    quantity,
                    unit,
                    rate,
                    "metered",
                    source,
                    side=side,
                    label=label,
                    quarter=quarter,
                    month=self.period.label,
                    team=x.team or IDLE_TEAM,
                    cost_center=x.cost_center or IDLE_COST_CENTER,
                    flavor=x.pool or "",
                    pricing_model=model,
                    amount_usd=x.cost,
                )
            )

        for x in self.lines:
            book(x, "cost", "use")
        for x in self.idle:
            book(x, "cost", "idle")
        for x in self.lines:
            book(x, "charge", "use")
        for x in self.idle_shares:
            book(x, "charge", "idle share", x.cost / idle_usd[x.block] if idle_usd[x.block] else Decimal(0))
        for x in self.idle:
            if x.block not in shared:
                book(x, "charge", "idle")
        return tuple(out)

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

        summary: dict[str, Any] = plain(
            {
                "basis": "metered",
                "period": {
                    "label": self.period.label,
                    "start": self.period.start.isoformat(),
                    "end": self.period.end.isoformat(),
                },
                "idle_policy": self.policy,
                "total_cost": self.total_cost,
                "usage_cost": self.usage_cost,
                "idle_cost": self.idle_cost,
                "unallocated_idle": self.unallocated_idle,
                "teams": [asdict(t) for t in self.teams],
                "cost_centers": dict(sorted(self.cost_centers.items())),
                "lines": [asdict(x) for x in self.lines],
                "idle": [asdict(x) for x in self.idle],
                "idle_shares": [asdict(x) for x in self.idle_shares],
            }
        )
        return summary


def check_policy(policy: str, inventory: Inventory) -> str | None:
    """An error message if the idle policy is not one of IDLE_POLICIES (with a known team), else None."""
    return check_idle_policy(policy, [t.name for t in inventory.teams])


def meter(
    inventory: Inventory, usage: pd.DataFrame | Any, period: Period, policy: str = DEFAULT_IDLE_POLICY
) -> tuple[MeterResult | None, list[Issue]]:
    """Meter usage records over `period` with an idle-sharing policy: the metering query (`query.meter_sql`) run
    by DuckDB over `usage`, a frame normalised by `usage.check_usage` or an Arrow table or dataset with the
    query's USAGE_COLUMNS (files: `source.meter_source`)."""
    import duckdb

    con = duckdb.connect()
    try:
        # a frame as Arrow: its categoricals become dictionaries, which DuckDB scans in parallel
        con.register(
            "usage_input",
            pa.Table.from_pandas(usage, preserve_index=False) if isinstance(usage, pd.DataFrame) else usage,
        )
        names = set(con.sql("SELECT * FROM usage_input LIMIT 0").to_arrow_table().schema.names)
        pod = "CAST(pod AS VARCHAR)" if "pod" in names else "CAST(NULL AS VARCHAR)"  # no pods: a team is one pod
        if "used" in names:  # a frame from check_usage
            con.execute(
                "CREATE VIEW usage AS SELECT '' AS cluster, date_trunc('hour', hour) AS hour, "
                "CAST(team AS VARCHAR) AS team, CAST(flavor AS VARCHAR) AS flavor, used AS accelerators_used, "
                f"requested AS accelerators_requested, {'minutes' if 'minutes' in names else 60} AS minutes, "
                f"{pod} AS pod FROM usage_input"
            )
        else:
            con.execute(
                f"CREATE VIEW usage AS SELECT *{'' if 'pod' in names else ', ' + pod + ' AS pod'} FROM usage_input"
            )
        con.execute(f"CREATE TABLE held_rows AS WITH {held_sql()} SELECT * FROM held")
        problems = record_problems(con, inventory, period)
        if problems:
            return None, problems
        con.execute("CREATE TABLE held AS SELECT * FROM held_rows")
        return run_meter(con, inventory, period, policy, held=True)
    finally:
        con.close()


SHOWN = 5
"""Groups of records named per problem (the rest are counted)."""


def record_problems(con: Any, inventory: Inventory, period: Period, shown: str = "usage records") -> list[Issue]:
    """What the records cannot mean (sql/checks.sql, the checks the warehouse query returns as rows too), checked
    on the table `held_rows` (sql/held.sql per cluster, team or namespace, pool and hour, before namespaces are
    summed to teams), each named with its team, pool and hour:

    * more than 60 minutes of records for one pod of a team and pool in one hour (without a `pod` column, for the
      team): the same hour twice (a repeated row, two files or a re-pull over the same days, one hour written with
      two UTC offsets, a 00:30 row beside 00:00); refused, never added up (merge by keeping one copy of each hour).
      Many pods of a team share an hour;
    * a pool holding more accelerators in an hour than it has at its largest (`capacity.pool_accelerators`),
      checked once hours are single;
    * a day of `period` without any record: metering would bill all of that day's paid capacity as idle (a month
      before the fleet existed, a quarter with one month of records). A day the fleet really was idle is written
      as rows of 0 accelerators."""
    rows = con.execute(checks_sql(inventory, period)).fetchall()
    found: dict[str, list[tuple[Any, ...]]] = {}
    for problem, team, pool, hour, minutes, held, limit in sorted(rows, key=lambda r: (r[3], r[1] or "", r[2] or "")):
        found.setdefault(problem, []).append((team, pool, hour, minutes, held, limit))
    issues: list[Issue] = []
    if twice := found.get("usage-overlap"):
        named = _first_shown([f"{t} in {p} at {h:%Y-%m-%d %H:%M} UTC ({m} minutes)" for t, p, h, m, _, _ in twice])
        issues.append(
            Issue(
                "usage-overlap",
                f"{shown}: the same hour is recorded more than once for a team (or one of its pods) and pool: {named}",
                "Keep one record per team (with a `pod` column: per pod), pool and hour, or 60 per-minute records: "
                "drop the repeated rows, the overlapping file or re-pull, and write each hour once in UTC at its "
                "start.",
            )
        )
    if over := found.get("usage-capacity"):
        named = _first_shown(
            [
                f"{p} at {h:%Y-%m-%d %H:%M} UTC holds {held / UNITS_PER_HOUR:,.1f} of {limit // UNITS_PER_HOUR:,}"
                for _, p, h, _, held, limit in over
            ]
        )
        issues.append(
            Issue(
                "usage-capacity",
                f"{shown}: usage above what the pool can hold (accelerators in the hour, of the pool's largest size): "
                f"{named}",
                "Fix the rows of that pool and hour (a wrong value, a pool or cluster mixed up); metering bills "
                "only what the fleet could hold.",
            )
        )
    if missing := found.get("usage-coverage"):
        days = len(period.days())
        spans = _first_shown(_spans([h.date() for _, _, h, _, _, _ in missing]), "spans")
        issues.append(
            Issue(
                "usage-coverage",
                f"{shown}: no usage records for {len(missing)} of the {period.label} period's {days} days ({spans}); "
                "metering them would bill all their paid capacity as idle",
                "Meter a period the records cover, or add the missing records (a day the fleet was idle as rows of "
                "0 accelerators).",
            )
        )
    return issues


def _first_shown(named: list[str], what: str = "more") -> str:
    """The first SHOWN of `named` joined by "; ", and how many more (`and 1,995 more`; `what` = "spans": `and 3 more
    spans`)."""
    rest = len(named) - SHOWN
    more = "" if rest <= 0 else f" and {rest:,} more" + ("" if what == "more" else f" {what}")
    return ("; " if what == "more" else ", ").join(named[:SHOWN]) + more


def _spans(days: list[dt.date]) -> list[str]:
    """Consecutive days as `2026-11-01..2026-12-31` (one day: `2026-11-05`)."""
    out: list[list[dt.date]] = []
    for day in days:
        if out and day - out[-1][-1] == dt.timedelta(days=1):
            out[-1].append(day)
        else:
            out.append([day])
    return [f"{s[0]}" if len(s) == 1 else f"{s[0]}..{s[-1]}" for s in out]


def run_meter(
    con: Any, inventory: Inventory, period: Period, policy: str, held: bool = False
) -> tuple[MeterResult | None, list[Issue]]:
    """Run the metering query on a DuckDB connection that has a view `usage` (query.USAGE_COLUMNS), or with
    `held`, a table `held` of the rows already summed (query.held_sql)."""
    blks, issues = blocks(inventory, period.start, period.end)
    if issues:
        return None, issues
    rows = con.sql(meter_sql(inventory, blks, policy, held=not held)).to_arrow_table().to_pylist()
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
        return ChargeLine(
            row["kind"],
            team,
            team_cc[team] if team else None,
            blk.key,
            row["pool"],
            row["category"],
            quantity,
            blk.overflow_rate if row["part"] else blk.rate,
            (Decimal(row["cents"]) / 100).quantize(CENT),
        )

    usage_rows = sorted(
        (r for r in rows if r["kind"] == "usage"),
        key=lambda r: (r["team"], pool_order[r["pool"]], blks[r["block_id"]].kind == "pool", r["part"]),
    )
    lines = tuple(line(r) for r in usage_rows)
    idle = tuple(line(r) for r in sorted((r for r in rows if r["kind"] == "idle"), key=lambda r: r["block_id"]))
    shares = tuple(
        line(r)
        for r in sorted((r for r in rows if r["kind"] == "idle-share"), key=lambda r: (r["block_id"], r["team"]))
    )
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
        teams.append(
            TeamCharge(
                name,
                team_cc[name],
                req,
                use,
                Decimal(held) / UNITS_PER_HOUR,
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
    usage_cost = sum(usage_by_team.values(), Decimal(0))
    shared = {s.block for s in shares}
    unallocated = sum((x.cost for x in idle if x.block not in shared), Decimal(0))
    return MeterResult(
        period,
        policy,
        usage_cost + idle_cost,
        usage_cost,
        idle_cost,
        unallocated,
        lines,
        idle,
        shares,
        tuple(teams),
        by_cc,
        {b.key: b for b in blks},
    )
