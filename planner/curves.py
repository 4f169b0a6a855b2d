"""Demand as load-duration curves: buckets of a quarter's hours (`weight`) and the demand `level` in each."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd


def band_means(
    values: Sequence[float], bands: tuple[tuple[float, float], ...], weights: Sequence[float] | None = None
) -> list[float]:
    """Mean of `values` (hours in load order, quietest first) over each band of shares (lo, hi): each value holds
    its weight's share of the hours (1/n each without `weights`), and one a band's edge cuts counts for its part
    inside, so any n >= 1 gives every band a level."""
    v = np.asarray(values, dtype=float)
    w = np.full(len(v), 1.0 / len(v)) if weights is None else np.asarray(weights, dtype=float) / sum(weights)
    ends = np.cumsum(w)
    starts = ends - w
    return [
        float(np.sum(v * np.clip(np.minimum(hi, ends) - np.maximum(lo, starts), 0.0, None)) / (hi - lo))
        for lo, hi in bands
    ]


def load_duration_curve(
    hourly: list[float] | pd.Series, bands: tuple[tuple[float, float], ...] | None = None
) -> list[tuple[float, float]]:
    """(weight, level) of hourly demand: exact (one bucket per distinct value) or mean per band."""
    values = sorted(float(v) for v in hourly)
    n = len(values)
    if bands is None:
        counts: dict[float, int] = {}
        for v in values:
            counts[v] = counts.get(v, 0) + 1
        return [(c / n, v) for v, c in sorted(counts.items())]
    return [(hi - lo, level) for (lo, hi), level in zip(bands, band_means(values, bands), strict=True)]


def curves_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """A demand-curves table with the expected columns (also for hand-built curves in tests)."""
    frame = pd.DataFrame(
        rows,
        columns=[
            "team",
            "accelerator",
            "site",
            "quarter",
            "scenario",
            "weight",
            "level",
            "preemptible_share",
            "bucket",
        ],
    )
    frame["site"] = frame["site"].fillna("")
    frame["scenario"] = frame["scenario"].fillna("")
    return frame
