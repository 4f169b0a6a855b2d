"""`--from-usage`: quarterly demand curves derived from the hourly usage history, read by the method that forecast
the history's own days best.

For each team and accelerator class (the accelerator of the pool that served the work), the hourly
accelerators requested form a series. A trend is a line through the daily means (Theil-Sen: the slope
is the median of the slopes between every two days, the intercept the median of what is left), so an odd
day moves it little. Hours are carried to the time forecast by the ratio of the trend there to the trend at
that hour: inside the history the line as fitted (it describes what happened), after its end the level at the
end grown by the slope as a share of that level per quarter, clamped to +-MAX_TREND (a month must not
extrapolate without bound). The carried hours' load-duration curve is cut into the same bands as quantile
demand, with the buckets taken on the hours sorted by *total* demand so that teams that peak at different
hours are not all assumed to peak together.

Which hours, and whether they follow a trend, is chosen among METHODS by a rolling-origin holdout on the
history itself (choose_method): each method forecasts every day of the history from the days before it, and
the one whose forecasts of those days cost least (CRPS, the commitment regret averaged over every price ratio)
reads the history; with too short a history for any such day, the lookback (the history as it was: the cloud
recommenders' method). So a trend is followed where following it would have paid on the history, up or down,
and a history whose ups and downs are noise is read at its level. The choice looks only at the history: the
rolling-origin backtest on the Helios trace (bench/helios_backtest.py) makes it afresh at every split point
from the hours before it.

Hours in which every team's usage is zero are cluster outages, not a lack of demand (the Helios trace has
all of 2020-05-10 and two hours of 2020-05-12 at zero): they are left out as missing data, and a note says
which. The history must hold at least MIN_HISTORY_HOURS hours with use, a whole daily cycle.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from statistics import median
from typing import cast

import numpy as np
import pandas as pd

from quartermaster.model import Inventory
from quartermaster.planner.curves import band_means, curves_frame
from quartermaster.planner.options import PlanInputError, PlanOptions
from quartermaster.units import next_quarters, quarter_bounds, quarter_of

MAX_TREND = 0.25  # a month of history must not extrapolate to more than +-25 % a quarter
DAYS_PER_QUARTER = 365.25 / 4
MIN_HISTORY_HOURS = 24  # one daily cycle: fewer hours would miss the day's peak or its quiet night
HOLDOUT_FIRST_DAY = 3
"""A method is tried on each calendar day of the history from its fourth on: three days before it (the first one
partial when the history starts within a day), so a trend is a line through at least three daily means."""


def hourly_demand(inventory: Inventory) -> pd.DataFrame:
    """Hour x (team, accelerator) matrix of accelerators requested, zero where a team had no row."""
    rows = [
        {
            "hour": u.hour,
            "team": u.team,
            "accelerator": inventory.machine_by_name[inventory.pool_by_name[u.flavor].machine].accelerator,
            "requested": u.accelerators_requested,
        }
        for u in inventory.usage
        if u.flavor in inventory.pool_by_name
    ]
    if not rows:
        raise PlanInputError("--from-usage: the inventory has no usage rows (usage.csv)")
    frame = pd.DataFrame(rows)
    return frame.pivot_table(
        index="hour", columns=["team", "accelerator"], values="requested", aggfunc="sum", fill_value=0.0
    ).sort_index()


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
    return matrix[~idle], (
        f"usage history: {int(idle.sum())} hours in which every team's usage is zero ({where}) "
        "are treated as missing data (a cluster outage), not as zero demand"
    )


@dataclass(frozen=True)
class Trend:
    """A robust line through a series' daily means: `level` at its `end`, `slope` per day."""

    end: pd.Timestamp
    """The end of the history (its last hour's end)."""
    level: float
    slope: float

    @property
    def growth(self) -> float:
        """The slope as a share of the end level per quarter, clamped to +-MAX_TREND (0 at a level of 0)."""
        if self.level <= 0:
            return 0.0
        return max(-MAX_TREND, min(MAX_TREND, self.slope * DAYS_PER_QUARTER / self.level))

    def at(self, when: pd.Timestamp) -> float:
        """The trend at `when` (never below 0): the line inside the history, the clamped growth after it."""
        days = (when - self.end) / pd.Timedelta(days=1)
        if days <= 0:
            return max(0.0, self.level + self.slope * days)
        return max(0.0, self.level * (1 + self.growth * days / DAYS_PER_QUARTER))

    def along(self, index: pd.DatetimeIndex) -> np.ndarray:
        """The fitted line (never below 0) at the middle of each hour of a history."""
        days = (index + pd.Timedelta(minutes=30) - self.end) / pd.Timedelta(days=1)
        return np.maximum(0.0, self.level + self.slope * np.asarray(days, dtype=float))


def fit_trend(series: pd.Series) -> Trend:
    """Theil-Sen line through the daily means of an hourly series, each day placed at its hours' mean time."""
    index = pd.DatetimeIndex(series.index)
    hours = index + pd.Timedelta(minutes=30)
    days = series.groupby(index.normalize())
    x = [
        ((pd.DatetimeIndex(group.index) + pd.Timedelta(minutes=30)).mean() - hours[0]) / pd.Timedelta(days=1)
        for _, group in days
    ]
    y = days.mean().tolist()
    slopes = [(y[j] - y[i]) / (x[j] - x[i]) for i in range(len(x)) for j in range(i + 1, len(x))]
    slope = median(slopes) if slopes else 0.0
    intercept = median(yi - slope * xi for xi, yi in zip(x, y, strict=True))
    end = index[-1] + pd.Timedelta(hours=1)
    return Trend(end=end, level=intercept + slope * (end - hours[0]) / pd.Timedelta(days=1), slope=slope)


def carried(series: pd.Series, trend: Trend, when: pd.Timestamp) -> pd.Series:
    """The history's hours carried to `when`: each times the trend there over the trend at its hour (an hour
    where the trend is at 0 is kept as it is)."""
    level = trend.along(pd.DatetimeIndex(series.index))
    scaled: pd.Series = series * np.divide(trend.at(when), level, out=np.ones_like(level), where=level > 0)
    return scaled


@dataclass(frozen=True)
class Method:
    """How a forecast reads the history: the hours of its last `window_days` days (None: all of it), carried by
    their own trend (`trend`) or kept as they are."""

    name: str
    window_days: int | None
    trend: bool


METHODS = (
    Method("lookback", None, False),
    Method("level of the last 3 days", 3, False),
    Method("trend", None, True),
    Method("trend of the last 7 days", 7, True),
)
"""The lookback first: it is kept unless another method forecast the history's days strictly better."""


def flat_trend(series: pd.Series) -> Trend:
    """No trend: a level line (the series' mean) that carries every hour as it is."""
    index = pd.DatetimeIndex(series.index)
    return Trend(end=index[-1] + pd.Timedelta(hours=1), level=float(series.mean()), slope=0.0)


def method_hours(matrix: pd.DataFrame, method: Method) -> pd.DataFrame:
    """The history's hours `method` reads: those of its last `window_days` days before the history's end."""
    if method.window_days is None:
        return matrix
    end = matrix.index[-1] + pd.Timedelta(hours=1)
    window: pd.DataFrame = matrix[matrix.index >= end - pd.Timedelta(days=method.window_days)]
    return window


@dataclass(frozen=True)
class Forecast:
    """The history read by `method`: the hours it carries and, per column, the trend that carries them."""

    method: Method
    hours: pd.DataFrame
    trends: dict[Hashable, Trend]


def forecast_by(matrix: pd.DataFrame, method: Method) -> Forecast:
    """The history (hour x column) read by `method`, a trend fitted per column on its hours (or none)."""
    hours = method_hours(matrix, method)
    fit = fit_trend if method.trend else flat_trend
    return Forecast(method, hours, {column: fit(series) for column, series in hours.items()})


def crps(sample: np.ndarray, actual: np.ndarray) -> float:
    """Mean over `actual` of the continuous ranked probability score of the empirical distribution `sample`:
    E|X - y| - E|X - X'| / 2, the pinball loss integrated over every quantile, that is the regret of a commitment
    sized on `sample` averaged over every ratio of commitment to on-demand price."""
    x = np.sort(sample)
    n = len(x)
    spread = float(np.sum((2 * np.arange(1, n + 1) - n - 1) * x)) / n**2  # E|X - X'| / 2
    return float(np.mean(np.abs(x[None, :] - actual[:, None]).mean(axis=1))) - spread


def holdout_loss(total: pd.Series, method: Method) -> float | None:
    """Mean CRPS of `method`'s forecasts of each calendar day of `total` from HOLDOUT_FIRST_DAY days after its first
    day's midnight, made from the hours before that day and carried to its middle; None without such a day."""
    days = pd.DatetimeIndex(total.index).normalize()
    first = days[0] + pd.Timedelta(days=HOLDOUT_FIRST_DAY)
    losses = []
    for day in days.unique():
        before = total[total.index < day]
        if day < first or len(before) < MIN_HISTORY_HOURS:
            continue
        forecast = forecast_by(before.to_frame("total"), method)
        sample = carried(forecast.hours["total"], forecast.trends["total"], day + pd.Timedelta(hours=12))
        losses.append(crps(sample.to_numpy(), total[days == day].to_numpy()))
    return float(np.mean(losses)) if losses else None


def choose_method(matrix: pd.DataFrame) -> tuple[Method, dict[str, float]]:
    """The method (of METHODS) whose forecasts of the history's own days, on its total over the columns, had the
    least mean CRPS (the first among equals; the lookback with no day to try), and each method's loss."""
    total = matrix.sum(axis=1)
    losses = {m.name: loss for m in METHODS if (loss := holdout_loss(total, m)) is not None}
    if not losses:
        return METHODS[0], losses
    return min(METHODS, key=lambda m: losses[m.name]), losses


def method_note(method: Method, losses: Mapping[str, float]) -> str:
    """What the forecast read the history by, and why (choose_method's losses)."""
    if not losses:
        return (
            f"forecast method: {method.name} (the usage history is too short to try the methods on its own days: "
            f"each needs {HOLDOUT_FIRST_DAY} calendar days before it)"
        )
    tried = ", ".join(f"{name} {loss:.2f}" for name, loss in losses.items())
    return (
        f"forecast method: {method.name}, the best at forecasting each day of the usage history from the days "
        f"before it (mean CRPS in accelerators: {tried})"
    )


def actuals_until(inventory: Inventory) -> pd.Timestamp | None:
    """The end of the usage history (its last hour's end), or None without usage: before it, demand is metered."""
    if not inventory.usage:
        return None
    return pd.Timestamp(max(u.hour for u in inventory.usage)) + pd.Timedelta(hours=1)


def _history(inventory: Inventory) -> tuple[pd.DataFrame, str | None]:
    """The usage history's hours with some use (hour x (team, accelerator)), and the note on outages left out."""
    matrix, note = without_outages(hourly_demand(inventory))
    if len(matrix) < MIN_HISTORY_HOURS:
        raise PlanInputError(
            f"--from-usage needs at least {MIN_HISTORY_HOURS} hours of usage history with some use (a whole "
            f"day), got {len(matrix)}"
            + (" after leaving out hours in which every team is at zero" if note else "")
            + "; add rows to usage.csv or plan from demand.csv without --from-usage"
        )
    return matrix, note


def window_levels(
    matrix: pd.DataFrame,
    forecast: Forecast,
    start: pd.Timestamp,
    end: pd.Timestamp,
    as_of: pd.Timestamp,
    bands: tuple[tuple[float, float], ...],
) -> dict[Hashable, list[float]]:
    """Band levels per column of the history over [start, end): its hours there before `as_of` are the history's own
    (actuals), the rest are the forecast's hours carried by their trends to the middle of the rest of the window;
    each part weighs its share of the window's hours, the buckets cut on the hours sorted by total. `qm plan
    --from-usage` reads each quarter so (quarter_levels), the Helios backtest each window after a split point."""
    actual = matrix[(matrix.index >= start) & (matrix.index < min(as_of, end))]
    rest_from = min(max(start, as_of), end)
    rest_hours = (end - rest_from) / pd.Timedelta(hours=1)
    parts, weights = [], []
    if len(actual):
        parts.append(actual)
        weights.append(np.ones(len(actual)))
    if rest_hours > 0:
        middle = rest_from + (end - rest_from) / 2
        source = forecast.hours
        parts.append(pd.DataFrame({c: carried(source[c], forecast.trends[c], middle) for c in matrix.columns}))
        weights.append(np.full(len(source), rest_hours / len(source)))
    hours = pd.concat(parts, ignore_index=True)
    weight = np.concatenate(weights)
    order = np.argsort(hours.sum(axis=1).to_numpy(), kind="stable")  # hours, quietest first
    return {c: band_means(hours[c].to_numpy()[order].tolist(), bands, weight[order].tolist()) for c in matrix.columns}


def quarter_levels(
    matrix: pd.DataFrame,
    forecast: Forecast,
    quarter: str,
    as_of: pd.Timestamp,
    bands: tuple[tuple[float, float], ...],
) -> dict[Hashable, list[float]]:
    """Band levels per column of the history in `quarter` (window_levels over its hours; `as_of` the history's end)."""
    start, end = (pd.Timestamp(d) for d in quarter_bounds(quarter))
    return window_levels(matrix, forecast, start, end, as_of, bands)


def usage_curves(
    inventory: Inventory,
    quarters: list[str],
    bands: tuple[tuple[float, float], ...],
    as_of: pd.Timestamp,
    preemptible: dict[tuple[str, str], float] | None = None,
) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """Demand curves per team, accelerator and quarter from the usage history (quarter_levels; `as_of` its end), and
    notes on what was left out and on the quarters whose hours are partly metered."""
    matrix, note = _history(inventory)
    share = preemptible if preemptible is not None else _preemptible_share(inventory)
    method, losses = choose_method(matrix)
    forecast = forecast_by(matrix, method)
    rows = []
    notes = [note] if note else []
    notes.append(method_note(method, losses))
    for q in quarters:
        start, end = (pd.Timestamp(d) for d in quarter_bounds(q))
        if start < as_of:
            metered = int(((matrix.index >= start) & (matrix.index < end)).sum())
            notes.append(
                f"{q}: its demand to {min(as_of, end):%Y-%m-%d %H:%M} is the usage as metered "
                f"({metered} hours with use)"
                + (f", the rest is forecast from the usage history ({method.name})" if as_of < end else "")
            )
        for column, levels in quarter_levels(matrix, forecast, q, as_of, bands).items():
            team, accelerator = cast(tuple[str, str], column)  # (team, accelerator): hourly_demand's columns
            for bucket, ((lo, hi), level) in enumerate(zip(bands, levels, strict=True)):
                rows.append(
                    {
                        "team": team,
                        "accelerator": accelerator,
                        "site": "",
                        "quarter": q,
                        "scenario": "",
                        "weight": hi - lo,
                        "level": level,
                        "preemptible_share": share.get((team, accelerator), 0.0),
                        "bucket": bucket,
                    }
                )
    return curves_frame(rows), tuple(notes)


def demand_from_usage(
    inventory: Inventory, options: PlanOptions, preemptible: dict[tuple[str, str], float] | None = None
) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """Demand curves per team, accelerator and quarter from the usage history, and notes on what was left out; from
    the quarter in progress at the history's end (its metered hours kept) unless options.start says otherwise."""
    as_of = actuals_until(inventory)
    if as_of is None:
        raise PlanInputError("--from-usage: the inventory has no usage rows (usage.csv)")
    first = options.start or quarter_of(as_of.date())
    return usage_curves(inventory, next_quarters(first, options.horizon), options.bands, as_of, preemptible)


def with_actuals(
    inventory: Inventory, curves: pd.DataFrame, quarters: list[str], bands: tuple[tuple[float, float], ...]
) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """`curves` with every quarter of `quarters` that began before the usage history's end replaced by the usage's
    curves (its metered hours, the rest forecast from their trend), and notes; unchanged without such a quarter."""
    as_of = actuals_until(inventory)
    begun = [q for q in quarters if as_of is not None and pd.Timestamp(quarter_bounds(q)[0]) < as_of]
    if as_of is None or not begun:
        return curves, ()
    metered, notes = usage_curves(inventory, begun, bands, as_of)
    return pd.concat([curves[~curves["quarter"].isin(begun)], metered], ignore_index=True), notes


def _preemptible_share(inventory: Inventory) -> dict[tuple[str, str], float]:
    """The forecast's preemptible share per team and accelerator (the latest row), else 0."""
    return {(d.team, d.accelerator): d.preemptible_share for d in inventory.demand}
