"""Time `qm meter` on 10 M usage records (goal: under 10 s on 2 cores).

    .venv/bin/python bench/meter_bench.py [--rows 10000000] [--formats memory,parquet,csv]

Records are per workload and hour for October 2026 on the example inventory (its commitments, spot, on-demand,
flex-start and on-prem pools and their prices): random team and flavor, requests that fill about 85 % of the
fleet, used up to the request. Three timings: the frame already in memory
(check + meter), and `qm meter`'s own path (`source.meter_source`: read, check and meter in DuckDB) from a
Parquet file and from a CSV file.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from quartermaster.capacity import flavor_capacity
from quartermaster.loader import load
from quartermaster.reports.metering import check_usage, meter, parse_period
from quartermaster.reports.metering.source import meter_source

REPO = Path(__file__).resolve().parents[1]


def records(rows: int, seed: int = 7) -> pd.DataFrame:
    """`rows` synthetic usage records on the example inventory's pools in October 2026."""
    inventory = load(REPO / "inventory").inventory
    rng = np.random.default_rng(seed)
    pools = [p.name for p in inventory.pools]
    cluster_of = np.array([inventory.cluster_of_pool[p].name for p in pools], dtype=object)
    teams = sorted(inventory.team_by_name)
    pool = rng.integers(0, len(pools), rows)
    # Mean request sized so that the records fill about 85 % of the fleet's accelerator-hours.
    capacity = sum(flavor_capacity(inventory).values())
    top = max(1, round(2 * 0.85 * capacity * 744 / rows * 100))
    requested = rng.integers(0, top + 1, rows) / 100
    hours = pd.Timestamp("2026-10-01") + pd.to_timedelta(rng.integers(0, 744, rows), unit="h")
    return pd.DataFrame(
        {
            "hour": hours,
            "cluster": pd.array(cluster_of[pool], dtype="str"),
            "team": pd.array(np.array(teams, dtype=object)[rng.integers(0, len(teams), rows)], dtype="str"),
            "flavor": pd.array(np.array(pools, dtype=object)[pool], dtype="str"),
            "accelerators_used": np.round(requested * rng.random(rows), 2),
            "accelerators_requested": requested,
        }
    )


def write_csv(frame: pd.DataFrame, path: Path) -> None:
    """The records as CSV with ISO 8601 hours, written by pyarrow (pandas takes a minute for 10 M rows)."""
    table = pa.Table.from_pandas(frame, preserve_index=False)
    hour = pc.strftime(table["hour"].cast(pa.timestamp("s")), format="%Y-%m-%dT%H:%M:%S")
    pacsv.write_csv(table.set_column(0, "hour", hour), path, pacsv.WriteOptions(quoting_style="needed"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--formats", default="memory,parquet,csv")
    args = parser.parse_args()
    inventory = load(REPO / "inventory").inventory
    period = parse_period("2026-10")
    frame = records(args.rows)
    with tempfile.TemporaryDirectory() as tmp:
        for fmt in args.formats.split(","):
            path = Path(tmp) / f"usage.{fmt}"
            if fmt == "parquet":
                frame.to_parquet(path, index=False)
            elif fmt == "csv":
                write_csv(frame, path)
            start = time.perf_counter()
            if fmt == "memory":
                usage, issues = check_usage(frame, inventory)
                result, issues = meter(inventory, usage, period)
            else:
                result, issues = meter_source(str(path), inventory, period)
            total = time.perf_counter() - start
            if issues or result is None:
                raise SystemExit("\n".join(i.format() for i in issues))
            print(
                f"meter {args.rows:,} records from {fmt}: {total:.2f} s; total {result.total_cost:,} USD = usage "
                f"{result.usage_cost:,} + idle {result.idle_cost:,} (goal < 10 s; load average "
                f"{os.getloadavg()[0]:.1f})"
            )


if __name__ == "__main__":
    main()
