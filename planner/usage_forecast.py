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
reads the history, among those that hold at the forecast's horizon (the time from the history's end to the middle
of the hours forecast): the lookback (the history as it was: the cloud recommenders' method), and any method whose
forecasts of the history's days made that far ahead scored no worse than the lookback's. With too short a history
for any such day, the lookback. So a trend or a recent level is followed where it would have paid on the history,
up or down, and only as far as it held; a history whose ups and downs are noise is read at its level. The
forecast's hours are spread at least as the history's own (forecast_hours), so a commitment sized at a fractile of
them is no higher than the lookback's on a flat history. The choice looks only at the history: the rolling-origin
backtest on the Helios trace (bench/helios_backtest.py) makes it afresh at every split point from the hours
before it.

Hours in which every team's usage is zero are cluster outages, not a lack of demand (the Helios trace has
all of 2020-05-10 and two hours of 2020-05-12 at zero): they are left out as missing data, and a note says
which. The history must hold at least MIN_HISTORY_HOURS hours with use, a whole daily cycle.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from statistics import median
from typing import cast

import numpy as np
import pandas as pd

from quartermaster.model import Inventory
from quartermaster.plan_contract import ForecastRow
from quartermaster.planner.curves import band_means, curves_frame
from quartermaster.planner.options import PlanInputError, PlanOptions
from quartermaster.units import Quarter, next_quarters, quarter_bounds, quarter_of

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
    """The history read by `method`: the hours it carries and, per column, the trend that carries them; `history`
    is the whole history (its hours with use), whose spread the forecast keeps at least (forecast_hours)."""

    method: Method
    hours: pd.DataFrame
    trends: dict[Hashable, Trend]
    history: pd.DataFrame


def forecast_by(matrix: pd.DataFrame, method: Method) -> Forecast:
    """The history (hour x column) read by `method`, a trend fitted per column on its hours (or none)."""
    hours = method_hours(matrix, method)
    fit = fit_trend if method.trend else flat_trend
    return Forecast(method, hours, {column: fit(series) for column, series in hours.items()}, matrix)


def mean_difference(values: np.ndarray) -> float:
    """E|X - X'| of the empirical distribution `values`: its spread (twice crps's)."""
    x = np.sort(values)
    n = len(x)
    return 2 * float(np.sum((2 * np.arange(1, n + 1) - n - 1) * x)) / n**2


def forecast_hours(forecast: Forecast, when: pd.Timestamp) -> pd.DataFrame:
    """The hours `forecast` carries to `when` (hour x column), each column at the level its method gives it there.
    Their spread is at least the history's own: when the method's hours, summed over the columns, are spread less
    (mean difference) than the whole history's hours scaled column by column to the same levels, those scaled hours
    are the forecast (a short window, or hours taken off their trend, must not narrow the load-duration curve below
    what the history's own hours show: a commitment sized on a narrower curve sits above the lookback's)."""
    own = pd.DataFrame({c: carried(forecast.hours[c], forecast.trends[c], when) for c in forecast.hours.columns})
    history = forecast.history[own.columns]
    means = history.mean()
    ratio = np.divide(own.mean().to_numpy(), means.to_numpy(), out=np.zeros(len(means)), where=means.to_numpy() > 0)
    scaled = history * ratio
    wider = mean_difference(scaled.sum(axis=1).to_numpy()) > mean_difference(own.sum(axis=1).to_numpy())
    return scaled if wider else own


BAND = (0.1, 0.9)
"""The forecast's band: these quantiles of its days' mean demand."""


def forecast_band(forecast: Forecast, when: pd.Timestamp) -> dict[Hashable, tuple[float, float, float]]:
    """Per column, the forecast's p10, expected and p90 accelerators at `when`: the expected level is the mean of its
    hours (forecast_hours), p10 and p90 the BAND quantiles of their days' means (each hour in the day it was metered),
    so a history whose days differ gives a band as wide as its days do."""
    hours = forecast_hours(forecast, when)
    daily = hours.groupby(pd.DatetimeIndex(hours.index).normalize()).mean()
    out: dict[Hashable, tuple[float, float, float]] = {}
    for c in hours.columns:
        expected = float(hours[c].mean())
        low, high = (float(v) for v in np.quantile(daily[c].to_numpy(), BAND))
        out[c] = (min(low, expected), expected, max(high, expected))
    return out


def crps(sample: np.ndarray, actual: np.ndarray) -> float:
    """Mean over `actual` of the continuous ranked probability score of the empirical distribution `sample`:
    E|X - y| - E|X - X'| / 2, the pinball loss integrated over every quantile, that is the regret of a commitment
    sized on `sample` averaged over every ratio of commitment to on-demand price."""
    x = np.sort(sample)
    n = len(x)
    spread = float(np.sum((2 * np.arange(1, n + 1) - n - 1) * x)) / n**2  # E|X - X'| / 2
    return float(np.mean(np.abs(x[None, :] - actual[:, None]).mean(axis=1))) - spread


DAY_AHEAD = pd.Timedelta(hours=12)
"""The horizon of a forecast of the next day from the hours before it: its middle, 12 hours after its midnight."""


def holdout_loss(total: pd.Series, method: Method, horizon: pd.Timedelta = DAY_AHEAD) -> float | None:
    """Mean CRPS of `method`'s forecasts of each calendar day of `total`, each made from the hours before `horizon`
    ahead of the day's middle and carried to that middle (the scale the forecast will be carried to), from hours that
    start HOLDOUT_FIRST_DAY days after the history's first midnight at least; None without such a day."""
    days = pd.DatetimeIndex(total.index).normalize()
    first = days[0] + pd.Timedelta(days=HOLDOUT_FIRST_DAY)
    losses = []
    for day in days.unique():
        middle = day + pd.Timedelta(hours=12)
        cutoff = (middle - horizon).floor("h")
        before = total[total.index < cutoff]
        if cutoff < first or len(before) < MIN_HISTORY_HOURS:
            continue
        forecast = forecast_by(before.to_frame("total"), method)
        sample = carried(forecast.hours["total"], forecast.trends["total"], middle)
        losses.append(crps(sample.to_numpy(), total[days == day].to_numpy()))
    return float(np.mean(losses)) if losses else None


@dataclass(frozen=True)
class Choice:
    """How the history is read for a forecast `horizon` ahead of its end (choose_method)."""

    method: Method
    losses: dict[str, float]
    """Each method's mean CRPS forecasting the history's days a day ahead (DAY_AHEAD); empty without such a day."""
    horizon: pd.Timedelta
    held: dict[str, float]
    """Each method's mean CRPS forecasting the history's days `horizon` ahead; empty when no day can be tried so far
    ahead (then only the lookback holds)."""


def choose_method(matrix: pd.DataFrame, horizon: pd.Timedelta = DAY_AHEAD) -> Choice:
    """The method (of METHODS) that forecast the history's own days best a day ahead (least mean CRPS on its total over
    the columns; the first among equals) among those that hold at `horizon`: the lookback, and any other method whose
    forecasts of the history's days `horizon` ahead scored no worse than the lookback's. So a recent level or trend is
    carried only as far as it was seen to hold; with no day to try, the lookback."""
    total = matrix.sum(axis=1)
    losses = {m.name: loss for m in METHODS if (loss := holdout_loss(total, m)) is not None}
    if not losses:
        return Choice(METHODS[0], losses, horizon, {})
    held = (
        losses
        if horizon <= DAY_AHEAD
        else {m.name: loss for m in METHODS if (loss := holdout_loss(total, m, horizon)) is not None}
    )
    lookback = METHODS[0].name
    eligible = [m for m in METHODS if m.name == lookback or (m.name in held and held[m.name] <= held[lookback])]
    return Choice(min(eligible, key=lambda m: losses[m.name]), losses, horizon, held)


def horizon_text(horizon: pd.Timedelta) -> str:
    return f"{horizon / pd.Timedelta(days=1):.1f} days"


def method_note(choice: Choice) -> str:
    """What the forecast read the history by, and why (choose_method's losses)."""
    method, far = choice.method.name, horizon_text(choice.horizon)
    if not choice.losses:
        return (
            f"forecast method: {method} (the usage history is too short to try the methods on its own days: each "
            f"needs {HOLDOUT_FIRST_DAY} calendar days before it)"
        )
    tried = ", ".join(f"{name} {loss:.2f}" for name, loss in choice.losses.items())
    held = (
        ""
        if choice.horizon <= DAY_AHEAD
        else f"; no other method can be tried on the history's days {far} ahead, so none is carried that far"
        if not choice.held
        else f"; {far} ahead: " + ", ".join(f"{name} {loss:.2f}" for name, loss in choice.held.items())
    )
    return (
        f"forecast method: {method}, the best at forecasting each day of the usage history from the days before it "
        f"(mean CRPS in accelerators a day ahead: {tried}) among the methods that hold {far} ahead, the scale the "
        f"forecast is carried to (the lookback, and any method at least as good as the lookback that far ahead{held})"
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


def forecast_part(
    start: pd.Timestamp, end: pd.Timestamp, as_of: pd.Timestamp
) -> tuple[pd.Timestamp, pd.Timestamp, pd.Timedelta] | None:
    """The part of the window [start, end) after `as_of` (the history's end): its first hour, its middle (where the
    forecast is carried) and the horizon from `as_of` to that middle; None when the window ends by `as_of`."""
    rest_from = max(start, as_of)
    if rest_from >= end:
        return None
    middle = rest_from + (end - rest_from) / 2
    return rest_from, middle, middle - as_of


def window_levels(
    matrix: pd.DataFrame,
    forecast: Forecast,
    start: pd.Timestamp,
    end: pd.Timestamp,
    as_of: pd.Timestamp,
    bands: tuple[tuple[float, float], ...],
) -> dict[Hashable, list[float]]:
    """Band levels per column of the history over [start, end): its hours there before `as_of` are the history's own
    (actuals), the rest are the forecast's hours carried to the middle of the rest of the window (forecast_hours);
    each part weighs its share of the window's hours, the buckets cut on the hours sorted by total. `qm plan
    --from-usage` reads each quarter so (usage_curves), the Helios backtest each window after a split point."""
    actual = matrix[(matrix.index >= start) & (matrix.index < min(as_of, end))]
    parts, weights = [], []
    if len(actual):
        parts.append(actual)
        weights.append(np.ones(len(actual)))
    if (part := forecast_part(start, end, as_of)) is not None:
        rest_from, middle, _ = part
        hours = forecast_hours(forecast, middle)[matrix.columns]
        parts.append(hours.reset_index(drop=True))
        weights.append(np.full(len(hours), (end - rest_from) / pd.Timedelta(hours=1) / len(hours)))
    hours = pd.concat(parts, ignore_index=True)
    weight = np.concatenate(weights)
    order = np.argsort(hours.sum(axis=1).to_numpy(), kind="stable")  # hours, quietest first
    return {c: band_means(hours[c].to_numpy()[order].tolist(), bands, weight[order].tolist()) for c in matrix.columns}


def window_forecast(matrix: pd.DataFrame, horizon: pd.Timedelta) -> tuple[Forecast, Choice]:
    """The history read by the method choose_method picks for a forecast `horizon` ahead, and the choice."""
    choice = choose_method(matrix, horizon)
    return forecast_by(matrix, choice.method), choice


def usage_curves(
    inventory: Inventory,
    quarters: Sequence[Quarter],
    bands: tuple[tuple[float, float], ...],
    as_of: pd.Timestamp,
    preemptible: dict[tuple[str, str], float] | None = None,
) -> tuple[pd.DataFrame, tuple[str, ...], tuple[ForecastRow, ...]]:
    """Demand curves per team, accelerator and quarter from the usage history (window_levels over each quarter; `as_of`
    its end), each quarter's forecast part read by the method chosen at its horizon; notes on what was left out, the
    method and the quarters whose hours are partly metered; and the forecast's rows (ForecastRow)."""
    matrix, note = _history(inventory)
    share = preemptible if preemptible is not None else _preemptible_share(inventory)
    rows, forecast_rows = [], []
    notes = [note] if note else []
    untried: list[tuple[str, str]] = []  # (quarter, note) of quarters too far ahead to try any method at
    for q in quarters:
        start, end = (pd.Timestamp(d) for d in quarter_bounds(q))
        part = forecast_part(start, end, as_of)
        forecast, choice = window_forecast(matrix, part[2]) if part else (forecast_by(matrix, METHODS[0]), None)
        if start < as_of:
            metered = int(((matrix.index >= start) & (matrix.index < end)).sum())
            notes.append(
                f"{q}: closed to {min(as_of, end):%Y-%m-%d %H:%M}, its cost as `qm meter` charges it "
                f"({metered} hours with use), not re-planned"
                + (
                    f"; the rest is forecast from the usage history ({forecast.method.name}) and planned"
                    if part
                    else ""
                )
            )
        if part is not None and choice is not None:
            rest_from, middle, horizon = part
            if not choice.held:
                untried.append((q, method_note(choice)))
            else:
                notes.append(f"{q}: {method_note(choice)}")
            for column, (p10, expected, p90) in forecast_band(forecast, middle).items():
                team, accelerator = cast(tuple[str, str], column)  # (team, accelerator): hourly_demand's columns
                forecast_rows.append(
                    ForecastRow(
                        q,
                        team,
                        accelerator,
                        forecast.method.name,
                        round(horizon / pd.Timedelta(days=1), 3),
                        bool(choice.held),
                        int((end - rest_from) / pd.Timedelta(hours=1)),
                        round(float(matrix[column].mean()), 6),
                        round(p10, 6),
                        round(expected, 6),
                        round(p90, 6),
                        _rounded(choice.losses.get(forecast.method.name)),
                        _rounded(choice.losses.get(METHODS[0].name)),
                    )
                )
        # the open part only: a closed part is metered, not planned (planner/actuals.py); a quarter closed whole is
        # refused by build_data
        open_from = start if as_of >= end else max(start, as_of)
        for column, levels in window_levels(matrix, forecast, open_from, end, as_of, bands).items():
            team, accelerator = cast(tuple[str, str], column)
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
    if untried:  # one note for them all, at the nearest one's horizon
        span = untried[0][0] if len(untried) == 1 else f"{untried[0][0]}..{untried[-1][0]}"
        notes.append(f"{span}: {untried[0][1]}")
    return curves_frame(rows), tuple(notes), tuple(forecast_rows)


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def demand_from_usage(
    inventory: Inventory, options: PlanOptions, preemptible: dict[tuple[str, str], float] | None = None
) -> tuple[pd.DataFrame, tuple[str, ...], tuple[ForecastRow, ...]]:
    """Demand curves per team, accelerator and quarter from the usage history, notes on what was left out, and the
    forecast's rows; from the quarter in progress at the history's end (its metered hours kept) unless options.start
    says otherwise."""
    as_of = actuals_until(inventory)
    if as_of is None:
        raise PlanInputError("--from-usage: the inventory has no usage rows (usage.csv)")
    first = options.start or quarter_of(as_of.date())
    return usage_curves(inventory, next_quarters(first, options.horizon), options.bands, as_of, preemptible)


def with_actuals(
    inventory: Inventory, curves: pd.DataFrame, quarters: Sequence[Quarter], bands: tuple[tuple[float, float], ...]
) -> tuple[pd.DataFrame, tuple[str, ...], tuple[ForecastRow, ...]]:
    """`curves` with every quarter of `quarters` that began before the usage history's end replaced by the usage's
    curves (its metered hours, the rest forecast from them), notes and the forecast's rows; unchanged without such a
    quarter."""
    as_of = actuals_until(inventory)
    begun = [q for q in quarters if as_of is not None and pd.Timestamp(quarter_bounds(q)[0]) < as_of]
    if as_of is None or not begun:
        return curves, (), ()
    metered, notes, forecast = usage_curves(inventory, begun, bands, as_of)
    return pd.concat([curves[~curves["quarter"].isin(begun)], metered], ignore_index=True), notes, forecast


def _preemptible_share(inventory: Inventory) -> dict[tuple[str, str], float]:
    """The forecast's preemptible share per team and accelerator (the latest row), else 0."""
    return {(d.team, d.accelerator): d.preemptible_share for d in inventory.demand}
