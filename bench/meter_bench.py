"""Time `qm meter` on 10 M usage records (goal: under 10 s on 2 cores).

    .venv/bin/python -m bench.meter_bench [--rows 10000000] [--formats memory,parquet,csv]

Records are per-minute, one per team, pool and minute (what `qm meter` accepts), for 2026Q4 on the example
inventory (its commitments, spot, on-demand, flex-start and on-prem pools and their prices): 10 M of the
10,598,400 team, pool and minute slots, random requests of up to the teams' share of the pool, used up to the
request. Three timings: the frame already in memory (check + meter), and `qm meter`'s own path
(`source.meter_source`: read, check and meter in DuckDB) from a Parquet file and from a CSV file.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from quartermaster.loader import load
from quartermaster.metering import check_usage, meter, parse_period
from quartermaster.reports.metering.source import meter_source
from tests.reports.records import records

REPO = Path(__file__).resolve().parents[1]


def write_csv(frame: pd.DataFrame, path: Path) -> None:
    """The records as CSV with ISO 8601 hours, written by pyarrow (pandas takes a minute for 10 M rows)."""
    table = pa.Table.from_pandas(frame, preserve_index=False)
    when = pc.strftime(table.column(0).cast(pa.timestamp("s")), format="%Y-%m-%dT%H:%M:%S")
    pacsv.write_csv(table.set_column(0, table.column_names[0], when), path, pacsv.WriteOptions(quoting_style="needed"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--formats", default="memory,parquet,csv")
    args = parser.parse_args()
    inventory = load(REPO / "inventory").inventory
    period = parse_period("2026Q4")
    frame = records(args.rows, start="2026-10-01", end="2027-01-01", per="minute")
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
