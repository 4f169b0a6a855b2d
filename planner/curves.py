"""Demand as load-duration curves: buckets of a quarter's hours (`weight`) and the demand `level` in each."""

from __future__ import annotations

import pandas as pd


def load_duration_curve(hourly: list[float] | pd.Series, bands: tuple[tuple[float, float], ...] | None = None
                        ) -> list[tuple[float, float]]:
    """(weight, level) of hourly demand: exact (one bucket per distinct value) or mean per band."""
    values = sorted(float(v) for v in hourly)
    n = len(values)
    if bands is None:
        counts: dict[float, int] = {}
        for v in values:
            counts[v] = counts.get(v, 0) + 1
        return [(c / n, v) for v, c in sorted(counts.items())]
    out = []
    for lo, hi in bands:
        chunk = values[round(lo * n):round(hi * n)] or [values[min(n - 1, round(lo * n))]]
        out.append((hi - lo, sum(chunk) / len(chunk)))
    return out


def curves_frame(rows: list[dict]) -> pd.DataFrame:
    """A demand-curves table with the expected columns (also for hand-built curves in tests)."""
    frame = pd.DataFrame(rows, columns=["team", "accelerator", "site", "quarter", "scenario", "weight", "level",
                                        "preemptible_share", "bucket"])
    frame["site"] = frame["site"].fillna("")
    frame["scenario"] = frame["scenario"].fillna("")
    return frame
