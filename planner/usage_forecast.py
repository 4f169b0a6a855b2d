"""`--from-usage`: quarterly demand curves derived from the hourly usage history, with a simple trend.

For each team and accelerator class (the accelerator of the pool that served the work), the hourly
accelerators requested form a series. Its load-duration curve is cut into the same bands as quantile
demand, with the buckets taken on the hours sorted by *total* demand so that teams that peak at
different hours are not all assumed to peak together. A linear trend fitted to the daily means (least
squares, as a share of the mean per quarter, clamped to +-MAX_TREND) scales the curve to each quarter.
"""

from __future__ import annotations

import pandas as pd

from quartermaster.model import Inventory
from quartermaster.planner.curves import curves_frame
from quartermaster.planner.options import PlanInputError, PlanOptions
from quartermaster.units import next_quarters, quarter_bounds, quarter_of

MAX_TREND = 0.25  # a month of history must not extrapolate to more than +-25 % a quarter
DAYS_PER_QUARTER = 365.25 / 4


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
                      ) -> pd.DataFrame:
    """Demand curves per team, accelerator and quarter from the usage history."""
    matrix = hourly_demand(inventory)
    order = matrix.sum(axis=1).sort_values(kind="stable").index  # hours, quietest first
    n = len(order)
    history_mid = matrix.index[0] + (matrix.index[-1] - matrix.index[0]) / 2
    first = options.start or next_quarters(quarter_of(matrix.index[-1].date()), 2)[1]
    quarters = next_quarters(first, options.horizon)
    share = preemptible if preemptible is not None else _preemptible_share(inventory)
    rows = []
    for (team, accelerator), series in matrix.items():
        growth = trend_per_quarter(series)
        sorted_series = series.loc[order].to_numpy()
        for q in quarters:
            start, end = quarter_bounds(q)
            mid = pd.Timestamp(start) + (pd.Timestamp(end) - pd.Timestamp(start)) / 2
            factor = max(0.0, 1 + growth * (mid - history_mid).days / DAYS_PER_QUARTER)
            for bucket, (lo, hi) in enumerate(options.bands):
                chunk = sorted_series[round(lo * n):max(round(hi * n), round(lo * n) + 1)]
                rows.append({"team": team, "accelerator": accelerator, "site": "", "quarter": q, "scenario": "",
                             "weight": hi - lo, "level": float(chunk.mean()) * factor,
                             "preemptible_share": share.get((team, accelerator), 0.0), "bucket": bucket})
    return curves_frame(rows)


def _preemptible_share(inventory: Inventory) -> dict[tuple[str, str], float]:
    """The forecast's preemptible share per team and accelerator (the latest row), else 0."""
    return {(d.team, d.accelerator): d.preemptible_share for d in inventory.demand}
