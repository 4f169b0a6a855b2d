"""Demand as load-duration curves: buckets of a quarter's hours (`weight`) and the demand `level` in each."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd


def band_means(values: Sequence[float], bands: tuple[tuple[float, float], ...]) -> list[float]:
    """Mean of `values` (hours in load order, quietest first) over each band of shares (lo, hi): each value holds
    1/n of the hours, and one a band's edge cuts counts for its part inside, so any n >= 1 gives every band a level."""
    n = len(values)
    out = []
    for lo, hi in bands:
        total = sum(
            v * (min(hi * n, i + 1) - max(lo * n, i)) for i, v in enumerate(values) if i + 1 > lo * n and i < hi * n
        )
        out.append(total / ((hi - lo) * n))
    return out


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


def curves_frame(rows: list[dict]) -> pd.DataFrame:
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
