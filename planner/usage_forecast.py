"""`--from-usage`: quarterly demand curves derived from the hourly usage history, with a simple trend.

For each team and accelerator class (the accelerator of the pool that served the work), the hourly
accelerators requested form a series. Its load-duration curve is cut into the same bands as quantile
demand, with the buckets taken on the hours sorted by *total* demand so that teams that peak at
different hours are not all assumed to peak together. A linear trend fitted to the daily means (least
squares, as a share of the mean per quarter, clamped to +-MAX_TREND) scales the curve to each quarter.

Hours in which every team's usage is zero are cluster outages, not a lack of demand (the Helios trace has
all of 2020-05-10 and two hours of 2020-05-12 at zero): they are left out as missing data, and a note says
which. The history must hold at least MIN_HISTORY_HOURS hours with use, a whole daily cycle.
"""

from __future__ import annotations

import pandas as pd

from quartermaster.model import Inventory
from quartermaster.planner.curves import band_means, curves_frame
from quartermaster.planner.options import PlanInputError, PlanOptions
from quartermaster.units import next_quarters, quarter_bounds, quarter_of

MAX_TREND = 0.25  # a month of history must not extrapolate to more than +-25 % a quarter
DAYS_PER_QUARTER = 365.25 / 4
MIN_HISTORY_HOURS = 24  # one daily cycle: fewer hours would miss the day's peak or its quiet night


def hourly_demand(inventory: Inventory) -> pd.DataFrame:
    """Hour x (team, accelerator) matrix of accelerators requested, zero where a team had no row."""
    rows = [{"hour": u.hour, "team": u.team,
             "accelerator": inventory.machine_by_name[inventory.pool_by_name[u.flavor].machine].accelerator,
             "requested": u.accelerators_requested}
            for u in inventory.usage if u.flavor in inventory.pool_by_name]
    if not rows:
        raise PlanInputError("--from-usage: the inventory has no usage rows (usage.csv)")
    frame = pd.DataFrame(rows)
    return frame.pivot_table(index="hour", columns=["team", "accelerator"], values="requested", aggfunc="sum",
                             fill_value=0.0).sort_index()


def without_outages(matrix: pd.DataFrame) -> tuple[pd.DataFrame, str | None]:
    """The hours with some use, and a note naming the hours in which every team was at zero (or None)."""
    idle = matrix.sum(axis=1) <= 0
    if not idle.any():
        return matrix, None
    spans: list[list[pd.Timestamp]] = []
    for hour in matrix.index[idle]:
        if spans and hour - spans[-1][1] == pd.Timedelta(hours=1):
            spans[-1][1] = hour
        else:
            spans.append([hour, hour])
    where = ", ".join(f"{a:%Y-%m-%d %H:%M} to {b + pd.Timedelta(hours=1):%Y-%m-%d %H:%M}" for a, b in spans)
    return matrix[~idle], (f"--from-usage: {int(idle.sum())} hours in which every team's usage is zero ({where}) "
                           "are treated as missing data (a cluster outage), not as zero demand")


def trend_per_quarter(series: pd.Series) -> float:
    """Linear growth of the daily mean, as a share of the mean per quarter, clamped to +-MAX_TREND."""
    daily = series.groupby(series.index.normalize()).mean()
    mean = float(daily.mean())
    if len(daily) < 2 or mean <= 0:
        return 0.0
    x = pd.Series(range(len(daily)), index=daily.index, dtype=float)
    slope = float(((x - x.mean()) * (daily - mean)).sum() / ((x - x.mean()) ** 2).sum())
    return max(-MAX_TREND, min(MAX_TREND, slope * DAYS_PER_QUARTER / mean))


def demand_from_usage(inventory: Inventory, options: PlanOptions, preemptible: dict[str, float] | None = None
                      ) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """Demand curves per team, accelerator and quarter from the usage history, and notes on what was left out."""
    matrix, note = without_outages(hourly_demand(inventory))
    if len(matrix) < MIN_HISTORY_HOURS:
        raise PlanInputError(
            f"--from-usage needs at least {MIN_HISTORY_HOURS} hours of usage history with some use (a whole "
            f"day), got {len(matrix)}" + (" after leaving out hours in which every team is at zero" if note else "")
            + "; add rows to usage.csv or plan from demand.csv without --from-usage")
    order = matrix.sum(axis=1).sort_values(kind="stable").index  # hours, quietest first
    history_mid = matrix.index[0] + (matrix.index[-1] - matrix.index[0]) / 2
    first = options.start or next_quarters(quarter_of(matrix.index[-1].date()), 2)[1]
    quarters = next_quarters(first, options.horizon)
    share = preemptible if preemptible is not None else _preemptible_share(inventory)
    rows = []
    for (team, accelerator), series in matrix.items():
        growth = trend_per_quarter(series)
        levels = band_means(series.loc[order].tolist(), options.bands)
        for q in quarters:
            start, end = quarter_bounds(q)
            mid = pd.Timestamp(start) + (pd.Timestamp(end) - pd.Timestamp(start)) / 2
            factor = max(0.0, 1 + growth * (mid - history_mid).days / DAYS_PER_QUARTER)
            for bucket, ((lo, hi), level) in enumerate(zip(options.bands, levels, strict=True)):
                rows.append({"team": team, "accelerator": accelerator, "site": "", "quarter": q, "scenario": "",
                             "weight": hi - lo, "level": level * factor,
                             "preemptible_share": share.get((team, accelerator), 0.0), "bucket": bucket})
    return curves_frame(rows), (note,) if note else ()


def _preemptible_share(inventory: Inventory) -> dict[tuple[str, str], float]:
    """The forecast's preemptible share per team and accelerator (the latest row), else 0."""
    return {(d.team, d.accelerator): d.preemptible_share for d in inventory.demand}
