"""Meter a billion per-pod-minute usage rows from Parquet (goal on 2 cores / 24 GB: <= 60 s, <= 4 GB peak RSS).

    .venv/bin/python bench/meter_scale_bench.py [--rows 1000000000] [--chunk 10000000] [--dir /tmp/qm-pods-1e9]

Rows are per pod and minute of October 2026 on the example inventory (its commitments, spot, on-demand, flex-start
and on-prem pools and their prices), written as month partitions `month=2026-10/part-NNNN.parquet`, one file per
chunk, by a child process (not timed, and not in the peak RSS; with `--distinct N` only N chunks are drawn and the
other files copy their rows under pod names of their own, for a machine too busy to draw a billion rows). Each pod
is one job of 1 hour to 3 days on a team, a pool drawn by its size and a request in steps of 0.001 accelerator (the
month requests about 70 % of the fleet), used up to the request, one record per minute: no pod has more than 60
minutes in an hour, as `qm meter` requires, and many pods of a team share an hour. Minutes are in time order (as a
collector writes them). The folder is reused when it already holds the rows. Then `qm meter`'s own path
(`source.meter_source`) reads the folder: per stage (read, meter) it prints wall time, rows/s, CPU time and the
process's peak RSS so far, with the load average beside them.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from quartermaster.capacity import flavor_capacity
from quartermaster.loader import load
from quartermaster.metering import parse_period
from quartermaster.model import Inventory
from quartermaster.reports.metering.source import meter_source

REPO = Path(__file__).resolve().parents[1]
MINUTES = 31 * 24 * 60


FILL = 0.7
"""Share of the fleet the pods request on average (each pool's hours stay below its size)."""
LONGEST = 3 * 24 * 60
"""The longest pod, in minutes (the shortest runs an hour)."""


def chunk(inventory: Inventory, rows: int, total: int, seed: int) -> pa.Table:
    """`rows` per-pod-minute records sized for `total` rows in the month, minutes in order: slots that each run pods
    back to back from a random minute (wrapping round the month), every pod one job for 1 hour to 3 days on a
    team, a pool (drawn by its size) and a request in steps of 0.001 accelerator, used up to the request; one
    record per pod and minute, so no pod has more than 60 minutes in an hour."""
    rng = np.random.default_rng(seed)
    pools = [p.name for p in inventory.pools]
    clusters = [inventory.cluster_of_pool[p].name for p in pools]
    teams = sorted(inventory.team_by_name)
    sizes = flavor_capacity(inventory)
    share = np.array([sizes[p] for p in pools], dtype=float) / sum(sizes.values())
    slots = max(1, rows // MINUTES)
    length = np.full(slots, rows // slots) + (np.arange(slots) < rows % slots)
    slot = np.repeat(np.arange(slots), length)
    step = np.arange(rows) - np.repeat(np.cumsum(length) - length, length)
    pod_minutes = rng.integers(60, LONGEST + 1, slots)
    per_slot = -(-length // pod_minutes)
    pod = np.repeat(np.cumsum(per_slot) - per_slot, length) + step // pod_minutes[slot]
    minute = (rng.integers(0, MINUTES, slots)[slot] + step) % MINUTES
    order = np.argsort(minute, kind="stable")
    pod, minute = pod[order], minute[order]
    pods = int(per_slot.sum())
    pod_pool = rng.choice(len(pools), pods, p=share).astype(np.int32)
    top = max(1, round(2 * FILL * sum(sizes.values()) * MINUTES / total * 1000))
    requested = rng.integers(0, top + 1, pods)[pod] / 1000
    pool = pod_pool[pod]

    def names(codes: np.ndarray, values: list[str]) -> pa.DictionaryArray:
        return pa.DictionaryArray.from_arrays(pa.array(codes, pa.int32()), pa.array(values))

    cluster_codes = np.array([sorted(set(clusters)).index(c) for c in clusters], dtype=np.int32)[pool]
    return pa.table(
        {
            "minute": pa.array(
                minute * 60_000_000 + int(np.datetime64("2026-10-01", "us").astype(int)), pa.timestamp("us")
            ),
            "cluster": names(cluster_codes, sorted(set(clusters))),
            "team": names(rng.integers(0, len(teams), pods).astype(np.int32)[pod], teams),
            "flavor": names(pool, pools),
            "pod": names(pod.astype(np.int32), [f"job-{seed:04d}-{i}" for i in range(pods)]),
            "accelerators_used": np.round(requested * rng.random(rows), 3),
            "accelerators_requested": requested,
        }
    )


def renamed(table: pa.Table, copy: int) -> pa.Table:
    """The chunk's rows as other pods (`job-<copy>-...`): the same load again, from pods of their own."""
    pods = table.column("pod").combine_chunks()
    dictionary = pc.replace_substring_regex(pods.dictionary, r"^job-[0-9]+-", f"job-{copy:04d}-")
    return table.set_column(
        table.schema.get_field_index("pod"), "pod", pa.DictionaryArray.from_arrays(pods.indices, dictionary)
    )


def generate(folder: Path, rows: int, size: int, distinct: int) -> None:
    """Write the rows as `month=2026-10/part-NNNN.parquet`, one chunk at a time (resumable); past `distinct`
    chunks, each file is an earlier chunk's rows under pod names of its own (the same load again, no pod twice)."""
    part = folder / "month=2026-10"
    part.mkdir(parents=True, exist_ok=True)
    inventory = load(REPO / "inventory").inventory
    for i in range((rows + size - 1) // size):
        path = part / f"part-{i:04d}.parquet"
        if path.exists():
            continue
        if i >= distinct:
            table = renamed(pq.read_table(part / f"part-{i % distinct:04d}.parquet", read_dictionary=["pod"]), i)
        else:
            table = chunk(inventory, min(size, rows - i * size), rows, seed=i)
        pq.write_table(table, path.with_suffix(".tmp"), row_group_size=1 << 20)
        path.with_suffix(".tmp").rename(path)
        print(f"generated {path} ({table.num_rows:,} rows)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=float, default=1e9)
    parser.add_argument("--chunk", type=float, default=1e7)
    parser.add_argument("--dir", type=Path, default=None, help="default: /tmp/qm-pods-<rows>")
    parser.add_argument("--distinct", type=int, default=1000, help="chunks generated; the others copy their rows")
    args = parser.parse_args()
    rows, size = int(args.rows), int(args.chunk)
    folder = args.dir or Path(f"/tmp/qm-pods-{rows:.0e}".replace("+", ""))
    start = time.perf_counter()
    child = multiprocessing.get_context("spawn").Process(target=generate, args=(folder, rows, size, args.distinct))
    child.start()
    child.join()
    if child.exitcode:
        raise SystemExit(f"generation failed (exit {child.exitcode})")
    print(
        f"data: {folder} ({sum(f.stat().st_size for f in folder.rglob('*.parquet')) / 1e9:.1f} GB, "
        f"{time.perf_counter() - start:.0f} s to generate or find; not timed)"
    )
    inventory = load(REPO / "inventory").inventory
    last = {"wall": time.perf_counter(), "cpu": time.process_time()}

    def stage(name: str) -> None:
        wall, cpu = time.perf_counter(), time.process_time()
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6  # kB -> GB
        load1, load5, _ = os.getloadavg()
        took = wall - last["wall"]
        print(
            f"{name:>6}: {took:6.1f} s wall, {rows / took / 1e6:7.1f} M rows/s, {cpu - last['cpu']:6.1f} s CPU, "
            f"peak RSS {peak:.2f} GB (load average {load1:.1f} / {load5:.1f} on {os.cpu_count()} cores)",
            flush=True,
        )
        last.update(wall=wall, cpu=cpu)

    begin = time.perf_counter()
    result, issues = meter_source(str(folder), inventory, parse_period("2026-10"), on_stage=stage)
    if issues or result is None:
        raise SystemExit("\n".join(i.format() for i in issues))
    total = time.perf_counter() - begin
    print(
        f"metered {rows:,} rows in {total:.1f} s ({rows / total / 1e6:.1f} M rows/s; goal <= 60 s, <= 4 GB): "
        f"total {result.total_cost:,} USD = usage {result.usage_cost:,} + idle {result.idle_cost:,}"
    )


if __name__ == "__main__":
    main()
