"""`qm usage pull` against a scripted HTTP server: retries, auth from the environment, located errors for every
user mistake, series that name nothing of the inventory (issue 20)."""

from __future__ import annotations

import datetime as dt
import json
import threading
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from quartermaster.cli import app
from quartermaster.errors import UsageError
from quartermaster.modules.observability.prometheus import AuthError, Prometheus, PrometheusError, auth_header
from quartermaster.modules.observability.pull import Hourly, in_order
from tests.paths import INVENTORY

HOUR0 = 1790812800  # 2026-10-01T00:00:00Z (date -u -d @1790812800)
DAY = (dt.datetime(2026, 10, 1), dt.datetime(2026, 10, 2))


def matrix(*series: tuple[dict[str, str], float]) -> dict[str, Any]:
    """An API answer: each series with one point, the hour 2026-10-01T00 evaluated 1 ms before its end."""
    return {
        "status": "success",
        "data": {
            "resultType": "matrix",
            "result": [{"metric": labels, "values": [[HOUR0 + 3600 - 0.001, str(value)]]} for labels, value in series],
        },
    }


class Script:
    """What the fake server answers, in order (the last answer repeats), and what it was sent."""

    def __init__(self, answers: list[tuple[int, Any]]) -> None:
        self.answers, self.requests = answers, []  # type: ignore[var-annotated]

    def next(self) -> tuple[int, Any]:
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]


@pytest.fixture
def server() -> Iterator[tuple[str, list[Script]]]:
    holder: list[Script] = [Script([(200, matrix())])]

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers["Content-Length"])
            form = urllib.parse.parse_qs(self.rfile.read(length).decode())
            holder[0].requests.append((dict(self.headers), {k: v[0] for k, v in form.items()}))
            status, body = holder[0].next()
            if status == -1:  # drop the connection without an answer
                self.close_connection = True
                self.wfile.flush()
                self.connection.shutdown(2)
                return
            payload = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", holder
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_transient_errors_are_retried_with_doubling_backoff(server: tuple[str, list[Script]]) -> None:
    url, holder = server
    holder[0] = Script([(503, {"status": "error"}), (-1, None), (200, matrix(({"a": "b"}, 1.5)))])
    waits: list[float] = []
    client = Prometheus(url, environ={}, sleep=waits.append, backoff=0.5)
    series = client.query_range("up", *DAY, 3600)
    assert [s.values[0] for s in series] == [1.5]
    assert waits == [0.5, 1.0] and client.retries == 2


def test_a_server_that_stays_down_is_a_clear_error_after_every_attempt(server: tuple[str, list[Script]]) -> None:
    url, holder = server
    holder[0] = Script([(502, {})])
    client = Prometheus(url, environ={}, sleep=lambda s: None, attempts=3)
    with pytest.raises(PrometheusError, match="still failing after 3 attempts \\(last: HTTP 502\\)"):
        client.query_range("up", *DAY, 3600)
    assert len(holder[0].requests) == 3


@pytest.mark.parametrize(
    ("environ", "want_header", "want_sent"),
    [
        # a bearer token wins over basic auth
        ({"QM_PROMETHEUS_TOKEN": "t0k", "QM_PROMETHEUS_USER": "u"}, "Bearer t0k", "a bearer token from QM_PROMETHEUS_"),
        # basic auth: user and password, base64 of "ann:pw"
        ({"QM_PROMETHEUS_USER": "ann", "QM_PROMETHEUS_PASSWORD": "pw"}, "Basic YW5uOnB3", "basic auth"),
        # nothing in the environment: no header
        ({}, None, "no credentials"),
    ],
)
def test_credentials_come_from_the_environment_and_a_refusal_is_exit_2(
    server: tuple[str, list[Script]], environ: dict[str, str], want_header: str | None, want_sent: str
) -> None:
    url, holder = server
    holder[0] = Script([(401, {"status": "error", "error": "unauthorized"})])
    assert auth_header(environ) == want_header
    with pytest.raises(AuthError, match=f"authentication failed \\(HTTP 401; sent {want_sent}") as caught:
        Prometheus(url, environ=environ).query_range("up", *DAY, 3600)
    assert caught.value.exit_code == 2
    assert holder[0].requests[0][0].get("Authorization") == want_header
    assert len(holder[0].requests) == 1  # never retried


def test_basic_auth_without_a_password_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="QM_PROMETHEUS_PASSWORD is not set"):
        auth_header({"QM_PROMETHEUS_USER": "ann"})


def invoke(*args: str, env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(app, ["usage", "pull", "--inventory", str(INVENTORY), *args], env=env)


def test_pull_maps_queues_and_flavors_and_names_what_it_cannot(
    server: tuple[str, list[Script]], tmp_path: Path
) -> None:
    url, holder = server
    gpu = "nvidia.com/gpu"
    holder[0] = Script(
        [
            (
                200,
                matrix(
                    ({"cluster_queue": "inference", "flavor": "p5-od", "resource": gpu}, 3.25),
                    ({"cluster_queue": "inference", "flavor": "no-such-pool", "resource": gpu}, 4.0),
                    ({"cluster_queue": "scratch", "flavor": "p5-od", "resource": gpu}, 1.0),
                ),
            )
        ]
    )
    out = tmp_path / "u.csv"
    result = invoke(
        "--prometheus",
        url,
        "--since",
        "2026-10-01T00:00Z",
        "--until",
        "2026-10-01T01:00Z",
        "--cluster",
        "eks-us-east-1",
        "--out",
        str(out),
    )
    assert result.exit_code == 0, result.output
    assert out.read_text().splitlines() == [
        "hour,cluster,team,flavor,accelerators_used,accelerators_requested",
        "2026-10-01T00:00:00,eks-us-east-1,inference,p5-od,3.25,3.25",
    ]
    assert (
        "flavor 'no-such-pool', resource 'nvidia.com/gpu' (4.0 accelerator-hours left out): flavor "
        "`no-such-pool` is no pool of cluster `eks-us-east-1`" in result.output
    )
    assert "ClusterQueue `scratch` is no team of the inventory" in result.output
    # two queries (reservation, usage; sent at the same time), each asking for the hour's mean of the accelerator
    # resources, no follower
    queries = sorted(form["query"] for _, form in holder[0].requests)
    assert queries == [
        f'sum by (cluster_queue, flavor, resource) (avg_over_time({metric}{{resource=~"google\\\\.com/tpu|'
        f'nvidia\\\\.com/gpu",replica_role!="follower"}}[1h]))'
        for metric in ("kueue_cluster_queue_resource_reservation", "kueue_cluster_queue_resource_usage")
    ]
    assert holder[0].requests[0][1]["start"] == f"{HOUR0 + 3600 - 0.001:.3f}"


@pytest.mark.parametrize(
    ("args", "want"),
    [
        # not a URL
        (["--prometheus", "prometheus:9090"], "--prometheus prometheus:9090: not an http(s) URL"),
        # a time that is not on the hour
        (
            ["--since", "2026-10-01T00:30"],
            "--since 2026-10-01T00:30: usage is hourly; give the start of an hour, e.g. 2026-10-01T00:00:00",
        ),
        # an empty range
        (["--until", "2026-10-01"], "--until 2026-10-01: is not after --since 2026-10-01"),
        # an unknown cluster, with a suggestion
        (["--cluster", "eks-us-east1"], "--cluster: no such cluster `eks-us-east1`"),
        # an output format qm meter cannot read
        (["--out", "usage.json"], "--out usage.json: write .csv or .parquet"),
        # an output inside the inventory
        (["--out", str(INVENTORY / "pulled.csv")], "inside the inventory"),
    ],
)
def test_user_mistakes_are_located_errors_with_exit_2(tmp_path: Path, args: list[str], want: str) -> None:
    base = {
        "--prometheus": "http://127.0.0.1:9",
        "--since": "2026-10-01",
        "--until": "2026-10-02",
        "--out": str(tmp_path / "u.csv"),
    }
    for option, value in zip(args[::2], args[1::2], strict=True):
        base[option] = value
    result = invoke(*[x for kv in base.items() for x in kv])
    assert result.exit_code == 2, result.output
    assert want in " ".join(result.output.split())
    assert "Traceback" not in result.output


def test_an_unreachable_server_is_exit_2_naming_the_url(tmp_path: Path) -> None:
    # port 9 (discard) on loopback: nothing listens there in a test environment, the connection is refused
    result = invoke(
        "--prometheus",
        "http://127.0.0.1:9",
        "--since",
        "2026-10-01",
        "--until",
        "2026-10-02",
        "--out",
        str(tmp_path / "u.csv"),
    )
    assert result.exit_code == 2, result.output
    assert "--prometheus http://127.0.0.1:9: cannot connect" in result.output


def test_series_without_a_cluster_label_need_the_cluster_option(
    server: tuple[str, list[Script]], tmp_path: Path
) -> None:
    url, holder = server
    holder[0] = Script(
        [(200, matrix(({"cluster_queue": "inference", "flavor": "p5-od", "resource": "nvidia.com/gpu"}, 1.0)))]
    )
    result = invoke(
        "--prometheus", url, "--since", "2026-10-01", "--until", "2026-10-01T01:00", "--out", str(tmp_path / "u.csv")
    )
    assert result.exit_code == 2, result.output
    assert "carry no `cluster` label; name the cluster they come from with --cluster NAME" in result.output


def test_a_bad_query_answer_is_shown_with_prometheus_own_words(
    server: tuple[str, list[Script]], tmp_path: Path
) -> None:
    url, holder = server
    holder[0] = Script([(400, {"status": "error", "errorType": "bad_data", "error": "parse error at char 3"})])
    result = invoke(
        "--prometheus",
        url,
        "--since",
        "2026-10-01",
        "--until",
        "2026-10-01T01:00",
        "--cluster",
        "eks-us-east-1",
        "--out",
        str(tmp_path / "u.csv"),
    )
    assert result.exit_code == 1, result.output
    assert "HTTP 400: parse error at char 3" in result.output


def test_an_answer_must_say_its_status_before_its_result(server: tuple[str, list[Script]]) -> None:
    # issue 30, point 3: the head of an answer is read event by event up to `data.result`, the series after it in
    # ijson's C backend; an answer with 64 KiB of something else first is refused, not read to its end
    url, holder = server
    holder[0] = Script([(200, {"data": {"padding": "x" * 300_000, "resultType": "matrix", "result": []}})])
    with pytest.raises(PrometheusError, match="does not start as Prometheus answers do"):
        Prometheus(url, environ={}).query_range("up", *DAY, 3600)


def test_slabs_of_records_are_the_records_cut_by_hours() -> None:
    # the records are made a slab of hours at a time; any slab size gives the same rows, by hour then key, and a
    # key that only one column answered for has 0 in the other
    since = dt.datetime(2026, 10, 1)
    usage = Hourly(since, 5)
    usage.put("accelerators_requested", ("c", "t2", "f"), np.array([0, 1, 4]), np.array([1.0, 2.0, 3.0]))
    usage.put("accelerators_used", ("c", "t2", "f"), np.array([0, 1]), np.array([0.5, 1.0]))
    usage.put("accelerators_used", ("c", "t1", "f"), np.array([3]), np.array([7.0]))
    whole = pd.concat(usage.slabs(rows=1_000), ignore_index=True)
    for rows in (1, 2, 3):
        assert pd.concat(usage.slabs(rows=rows), ignore_index=True).equals(whole)
    assert [
        (str(h)[11:16], t, u, r)
        for h, t, u, r in whole[["hour", "team", "accelerators_used", "accelerators_requested"]].itertuples(index=False)
    ] == [
        ("00:00", "t2", 0.5, 1.0),
        ("01:00", "t2", 1.0, 2.0),
        ("03:00", "t1", 7.0, 0.0),
        ("04:00", "t2", 0.0, 3.0),
    ]
    assert usage.total("accelerators_requested") == 6.0


def test_requests_run_a_few_at_a_time_and_answer_in_order() -> None:
    running, most, lock = [0], [0], threading.Lock()

    def work(item: int) -> int:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        threading.Event().wait(0.01)
        with lock:
            running[0] -= 1
        return item * item

    assert list(in_order(work, list(range(10)), 3)) == [i * i for i in range(10)]
    assert 1 <= most[0] <= 3
    assert list(in_order(work, [2, 3], 1)) == [4, 9]
