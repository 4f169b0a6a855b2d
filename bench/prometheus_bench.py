"""Time `qm usage pull` against a real Prometheus: a month of hourly Kueue series for 1,000 ClusterQueues x 20
flavors (issue 20).

    .venv/bin/python -m bench.prometheus_bench [--queues 1000] [--flavors 20] [--days 30] [--deadline 900] [--keep DIR]

Stages, each with its wall time and peak memory (resident set, the stage's own process):
1. write the series as OpenMetrics (Kueue's reservation and usage gauges, one sample an hour, labelled like Kueue
   v0.19 plus a `cluster` label) for the enterprise inventory of `bench/generate.py` (one ClusterQueue per team
   with quota in every flavor; each flavor is a pool of one of four clusters): queues x flavors x 2 series, one
   file per 2-hour block;
2. `promtool tsdb create-blocks-from openmetrics`, once per file (backfill);
3. `prometheus` serving the blocks on 127.0.0.1 (start until ready; its peak memory is read at the end);
4. `qm usage pull` (a separate process, its defaults: 2 requests at a time) writing Parquet; the pulled
   accelerator-hours must equal the generated;
5. the floor: the server alone answering the range queries `qm usage pull` sent (the same requests, in the same
   order, as many at a time, each answer read to its end and dropped), wall time, and the pull's ratio to it. It
   runs after the pull, on the caches the pull warmed, so the ratio is not flattered.
The load average (1, 5, 15 minutes) is printed at the start, after the pull and at the end. Needs Debian's
`prometheus` package. Bounded: every child has a timeout, the whole run stops at `--deadline` seconds, and the
server is always stopped; the scratch folder is removed, unless `--keep DIR` names a folder to keep the inventory
and the TSDB in (a later run with the same `--keep` and sizes skips stages 1 and 2, or finishes a backfill that a
deadline stopped).
"""

from __future__ import annotations

import argparse
import datetime as dt
import http.client
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
from contextlib import nullcontext
from pathlib import Path

import numpy as np
import pandas as pd

from bench.generate import enterprise_inventory
from quartermaster.loader import load
from quartermaster.modules.observability.prometheus import RANGE_PATH, range_params
from quartermaster.modules.observability.pull import RangeQuery, in_order, range_queries
from tests.observability.promserver import serve

REPO = Path(__file__).resolve().parents[1]
START = dt.datetime(2026, 10, 1, tzinfo=dt.UTC)
QM = Path(sys.executable).with_name("qm")
PARALLEL = 2
"""Requests at a time: `qm usage pull --parallel`'s default."""


class Deadline:
    def __init__(self, seconds: float) -> None:
        self.end = time.monotonic() + seconds

    def left(self) -> float:
        left = self.end - time.monotonic()
        if left <= 0:
            raise SystemExit("prometheus_bench: deadline reached; stopped")
        return left


def run(args: list[str], deadline: Deadline) -> tuple[float, int]:
    """Run a child to completion: its wall seconds and peak resident memory in bytes (wait4's ru_maxrss)."""
    began = time.monotonic()
    child = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        _, err = child.communicate(timeout=deadline.left())
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
        raise SystemExit(f"prometheus_bench: {Path(args[0]).name} passed the deadline; stopped") from None
    if child.returncode:
        raise SystemExit(f"{' '.join(args[:3])}... failed ({child.returncode}):\n{err.decode()[-2000:]}")
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)  # the largest child so far; stages grow, so it is ours
    return time.monotonic() - began, usage.ru_maxrss * 1024


def write_series(inventory_dir: Path, folder: Path, days: int, seed: int = 11) -> float:
    """OpenMetrics for every (ClusterQueue, flavor) of the inventory, one file per 2-hour TSDB block (promtool 2.42
    re-reads its whole input for each 2-hour block it writes: one big file costs blocks x file); returns the
    accelerator-hours requested. Usage equals the reservation here, so both gauges pull the same."""
    inventory = load(inventory_dir).inventory
    rng = np.random.default_rng(seed)
    first = int(START.timestamp()) + 60  # one sample a minute past each hour
    series = [
        (team.name, quota.flavor, inventory.cluster_of_pool[quota.flavor].name, quota.nominal)
        for team in inventory.teams
        for quota in team.quotas
    ]
    values = np.stack([rng.integers(0, nominal + 1, days * 24) for *_, nominal in series])
    folder.mkdir()
    for block in range(days * 12):
        hours = range(2 * block, 2 * block + 2)
        with (folder / f"{block:04d}.om").open("w", encoding="utf-8") as out:
            for metric in ("kueue_cluster_queue_resource_reservation", "kueue_cluster_queue_resource_usage"):
                out.write(f"# TYPE {metric} gauge\n")
                for i, (team, flavor, cluster, _) in enumerate(series):
                    labels = (
                        f'{metric}{{cluster="{cluster}",cluster_queue="{team}",flavor="{flavor}",'
                        f'replica_role="leader",resource="nvidia.com/gpu"}}'
                    )
                    out.write("".join(f"{labels} {values[i, h]} {first + 3600 * h}\n" for h in hours))
            out.write("# EOF\n")
    return float(values.sum())


def peak_of(pid: int) -> int:
    """VmHWM (peak resident memory) of a live process, in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def server_alone(url: str, inventory: Path, since: dt.datetime, until: dt.datetime) -> tuple[float, int]:
    """Wall seconds for the server to answer the range queries of `qm usage pull` (its defaults), sent as the pull
    sends them (in order, PARALLEL at a time), each answer read to its end and dropped; and the bytes answered."""
    plan = range_queries(
        load(inventory).inventory, since, until, cluster=None, cluster_label="cluster", chunk_hours=168
    )
    parts = urllib.parse.urlsplit(url)
    headers = {"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"}

    def answer_size(request: RangeQuery) -> int:
        connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=600)
        form = urllib.parse.urlencode(range_params(request.promql, request.first, request.last, 3600))
        connection.request("POST", RANGE_PATH, form, headers)
        answer = connection.getresponse()
        if answer.status != 200:
            raise SystemExit(f"prometheus_bench: the server answered HTTP {answer.status}: {answer.read()[:300]!r}")
        size = 0
        while chunk := answer.read1(1 << 20):
            size += len(chunk)
        connection.close()
        return size

    began = time.monotonic()
    size = sum(in_order(answer_size, plan, PARALLEL))
    return time.monotonic() - began, size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queues", type=int, default=1000)
    parser.add_argument("--flavors", type=int, default=20)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--deadline", type=float, default=900.0, help="Stop everything after this many seconds.")
    parser.add_argument("--keep", type=Path, help="Keep the inventory and TSDB here; reuse them when present.")
    args = parser.parse_args()
    promtool, prometheus = shutil.which("promtool"), shutil.which("prometheus")
    if not (promtool and prometheus):
        raise SystemExit("prometheus_bench: needs promtool and prometheus (apt-get install prometheus)")
    deadline = Deadline(args.deadline)
    series = args.queues * args.flavors
    print(
        f"{args.queues:,} ClusterQueues x {args.flavors} flavors = {series:,} series per gauge, 2 gauges, "
        f"{args.days * 24} hours: {2 * series * args.days * 24:,} samples; {_load()}"
    )
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
    with nullcontext(str(args.keep)) if args.keep else tempfile.TemporaryDirectory(prefix="qm-prom-bench-") as scratch:
        work = Path(scratch)
        sizes = f"{args.queues} {args.flavors} {args.days}"
        made = work / "made.txt"  # the sizes and the accelerator-hours of the series written
        inventory = work / "inventory"
        if made.exists() and made.read_text().split("\n")[0] == sizes:
            requested = float(made.read_text().split("\n")[1])
            print(f"1 reusing the series of {work}")
        else:
            for old in ("inventory", "series", "tsdb"):
                shutil.rmtree(work / old, ignore_errors=True)
            enterprise_inventory(inventory, teams=args.queues, flavors=args.flavors)
            began = time.monotonic()
            requested = write_series(inventory, work / "series", args.days)
            files = sorted((work / "series").iterdir())
            size = sum(f.stat().st_size for f in files)
            print(
                f"1 write OpenMetrics   {time.monotonic() - began:7.1f} s  peak {_mb(_self_peak())}  "
                f"({size / 2**30:.2f} GiB in {len(files)} files)"
            )
            made.write_text(f"{sizes}\n{requested!r}\n")
        backfill(work, promtool, deadline)
        began = time.monotonic()
        # no compaction during the pull; room for a month of 20,000 series in one query
        with serve(
            work / "tsdb",
            work,
            deadline.left(),
            ("--query.max-samples=200000000", "--storage.tsdb.max-block-duration=2h"),
        ) as (url, server):
            print(f"3 prometheus ready    {time.monotonic() - began:7.1f} s")
            until = START + dt.timedelta(days=args.days)
            out = work / "pulled.parquet"
            seconds, peak = run(
                [
                    str(QM),
                    "usage",
                    "pull",
                    "--prometheus",
                    url,
                    "--inventory",
                    str(inventory),
                    "--since",
                    START.date().isoformat(),
                    "--until",
                    until.date().isoformat(),
                    "--out",
                    str(out),
                ],
                deadline,
            )
            pulled = pd.read_parquet(out)
            print(f"4 qm usage pull       {seconds:7.1f} s  peak {_mb(peak)}  ({len(pulled):,} records)  {_load()}")
            floor, answered = server_alone(url, inventory, START, until)
            print(
                f"5 server alone        {floor:7.1f} s  ({answered / 2**20:,.0f} MiB of JSON answered)  "
                f"pull / server alone: {seconds / floor:.2f}x"
            )
            print(f"  prometheus          peak {_mb(peak_of(server.pid))}")
        got = float(pulled["accelerators_requested"].sum())
        print(f"accelerator-hours requested: generated {requested:,.0f}, pulled {got:,.1f}")
        print(_load())
        if abs(got - requested) > 1e-6 * max(requested, 1):
            raise SystemExit("prometheus_bench: the pulled accelerator-hours differ from the generated ones")


def backfill(work: Path, promtool: str, deadline: Deadline) -> None:
    """Stage 2: each OpenMetrics file of `work/series` backfilled into `work/tsdb`, and removed once it is."""
    files = sorted((work / "series").iterdir())
    if not files:
        print(f"2 reusing the TSDB of {work}")
        return
    seconds, peak = 0.0, 0
    for file in files:
        took, peak = run(
            [promtool, "tsdb", "create-blocks-from", "openmetrics", "--quiet", str(file), str(work / "tsdb")],
            deadline,
        )
        seconds += took
        file.unlink()
    print(f"2 promtool backfill   {seconds:7.1f} s  peak {_mb(peak)}  ({len(files)} files)")


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} / {five:.2f} / {fifteen:.2f} on {os.cpu_count()} CPUs"


def _self_peak() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _mb(n: int) -> str:
    return f"{n / 2**20:8,.0f} MiB"


if __name__ == "__main__":
    main()
