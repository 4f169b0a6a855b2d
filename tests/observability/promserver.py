"""A real Prometheus on loopback for tests and the bench: usage records -> OpenMetrics with Kueue's metric names ->
`promtool tsdb create-blocks-from openmetrics` -> `prometheus` serving those blocks on 127.0.0.1:<free port>."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
import pytest

from quartermaster.modules.observability.metrics import KUEUE_RESERVATION, KUEUE_USAGE

PROMTOOL, PROMETHEUS = shutil.which("promtool"), shutil.which("prometheus")
SAMPLE_MINUTES = (1, 16, 31, 46)
"""Four scrapes an hour, none on the hour itself (a sample on the boundary belongs to the next hour)."""

needs_promtool = pytest.mark.promtool  # skipped without it (tests/conftest.py)
needs_prometheus = pytest.mark.prometheus


def openmetrics(records: pd.DataFrame, resource_of_flavor: dict[str, str], *, extra: Iterable[str] = ()) -> str:
    """Kueue's reservation (= requested) and usage (= used) gauges, four samples an hour of each record's value,
    labelled like Kueue v0.19 plus a `cluster` external label; `extra` lines are appended to the usage family."""
    lines: list[str] = []
    for metric, column in ((KUEUE_RESERVATION, "accelerators_requested"), (KUEUE_USAGE, "accelerators_used")):
        lines.append(f"# TYPE {metric} gauge")
        for (cluster, team, flavor), rows in records.groupby(["cluster", "team", "flavor"], sort=True):
            labels = (
                f'cluster="{cluster}",cluster_queue="{team}",cohort="northwind",flavor="{flavor}",'
                f'replica_role="leader",resource="{resource_of_flavor[str(flavor)]}"'
            )
            for hour, value in zip(rows["hour"], rows[column], strict=True):
                start = int(pd.Timestamp(hour).tz_localize("UTC").timestamp())
                lines += [f"{metric}{{{labels}}} {value} {start + 60 * m}" for m in SAMPLE_MINUTES]
        if metric == KUEUE_USAGE:
            lines += list(extra)
    return "\n".join([*lines, "# EOF", ""])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def prometheus_server(text: str, workdir: Path, ready_seconds: float = 60) -> Iterator[str]:
    """Backfill `text` into a new TSDB, serve it on loopback, yield the base URL; always stop the server."""
    assert PROMTOOL and PROMETHEUS, "CI=true but promtool/prometheus are not installed (apt-get install prometheus)"
    source, data = workdir / "series.om", workdir / "tsdb"
    source.write_text(text, encoding="utf-8")
    subprocess.run(
        [PROMTOOL, "tsdb", "create-blocks-from", "openmetrics", str(source), str(data)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    with serve(data, workdir, ready_seconds, ("--query.lookback-delta=1h",)) as (url, _):
        yield url


@contextmanager
def serve(
    data: Path, workdir: Path, ready_seconds: float, flags: tuple[str, ...] = ()
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """Serve the TSDB at `data` on 127.0.0.1:<free port> (with `flags`) until it is ready; yield its base URL and
    process; always stop it. Its log is `workdir/prometheus.log`."""
    assert PROMETHEUS, "CI=true but prometheus is not installed (apt-get install prometheus)"
    config = workdir / "prometheus.yml"
    config.write_text("global:\n  scrape_interval: 1m\nscrape_configs: []\n", encoding="utf-8")
    url = f"http://127.0.0.1:{free_port()}"
    log = (workdir / "prometheus.log").open("wb")
    server = subprocess.Popen(
        [
            PROMETHEUS,
            f"--config.file={config}",
            f"--storage.tsdb.path={data}",
            "--storage.tsdb.retention.time=100y",
            f"--web.listen-address={url.removeprefix('http://')}",
            *flags,
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + ready_seconds
        while True:
            try:
                with urllib.request.urlopen(f"{url}/-/ready", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    f"prometheus did not become ready; its log: {workdir / 'prometheus.log'}\n"
                    + (workdir / "prometheus.log").read_text(errors="replace")[-2000:]
                )
            time.sleep(0.2)
        yield url, server
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()
