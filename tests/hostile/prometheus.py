"""Hostile Prometheus servers on loopback for the corpus (issue 29): each serves the answer a red team wrote, in a
thread of the test process, while `qm usage pull` runs in its own process against it."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

HOUR0 = 1790812800  # 2026-10-01T00:00:00Z (date -u -d @1790812800)
LABELS = {"cluster": "eks-us-east-1", "cluster_queue": "inference", "flavor": "p5-od", "resource": "nvidia.com/gpu"}
Answer = Callable[[BaseHTTPRequestHandler], None]


def matrix(*series: Any) -> bytes:
    """A query_range answer holding `series` (each a ready `{"metric": ..., "values": ...}` object)."""
    return json.dumps({"status": "success", "data": {"resultType": "matrix", "result": list(series)}}).encode()


def one_series(*points: tuple[float, str], labels: dict[str, Any] | None = None) -> bytes:
    """An answer of one series of the example's `inference` team in `p5-od`, with `points` as [time, value]."""
    return matrix({"metric": LABELS if labels is None else labels, "values": [list(p) for p in points]})


def at_hour(hour: int) -> float:
    """The evaluation time of the hour `hour` after 2026-10-01T00: 1 ms before its end, as `qm usage pull` asks."""
    return HOUR0 + 3600 * (hour + 1) - 0.001


def body(payload: bytes, status: int = 200) -> Answer:
    def answer(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(payload)))
        handler.end_headers()
        handler.wfile.write(payload)

    return answer


def drip(seconds: float) -> Answer:
    """Headers, then one byte of a valid answer every `seconds` (a server that is never quite silent)."""

    def answer(handler: BaseHTTPRequestHandler) -> None:
        payload = matrix()
        handler.send_response(200)
        handler.send_header("Content-Length", str(len(payload)))
        handler.end_headers()
        for byte in payload:
            handler.wfile.write(bytes([byte]))
            handler.wfile.flush()
            time.sleep(seconds)

    return answer


def endless(megabytes: int) -> Answer:
    """A valid start of an answer, then `megabytes` MB of series, each within what one series may take (a label of
    64 KB of its own and one point), and more while the client reads."""

    def answer(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.end_headers()
        handler.wfile.write(b'{"status":"success","data":{"resultType":"matrix","result":[')
        label = b"x" * (1 << 16)
        for i in range(megabytes * 16):
            handler.wfile.write(b'{"metric":{"a":"%d%s"},"values":[[%.3f,"1"]]},' % (i, label, at_hour(0)))

    return answer


@contextmanager
def serving(answer: Answer, host: str = "127.0.0.1", seen: list[dict[str, str]] | None = None) -> Iterator[str]:
    """Serve `answer` to every POST on `host`:<free port>; yield the base URL. The headers of each request go to
    `seen`."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if seen is not None:
                seen.append(dict(self.headers))
            with suppress(BrokenPipeError, ConnectionResetError):  # the client gave up, as it should
                answer(self)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer((host, 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://{host}:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def answering(answer: Answer) -> Callable[[Path], Any]:
    """A corpus `serve`: one server with `answer`."""
    return lambda case: serving(answer)


@contextmanager
def redirect_elsewhere(case: Path) -> Iterator[str]:
    """127.0.0.1 answers 302 to a server on `localhost` (another host to a browser or urllib); that server must
    never receive the credentials."""
    seen: list[dict[str, str]] = []
    with serving(body(one_series((at_hour(0), "1"))), "localhost", seen) as other:

        def moved(handler: BaseHTTPRequestHandler) -> None:
            handler.send_response(302)
            handler.send_header("Location", f"{other}/api/v1/query_range")
            handler.send_header("Content-Length", "0")
            handler.end_headers()

        with serving(moved) as url:
            yield url
    assert not [h for h in seen if "Authorization" in h], f"the other host received the credentials: {seen}"


def raw(*parts: bytes, every: float = 0.0, then: bytes = b"", forever: bool = False) -> Answer:
    """Bytes written as they are, past http.server's own status line and headers: `parts` whole, one byte of `then`
    every `every` seconds, and `then` again and again while the client reads when `forever`."""

    def answer(handler: BaseHTTPRequestHandler) -> None:
        handler.close_connection = True
        for part in parts:
            handler.wfile.write(part)
        while True:
            for byte in then:
                handler.wfile.write(bytes([byte]))
                time.sleep(every)
            if not forever:
                return
            time.sleep(0.001)

    return answer


OK_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
CHUNKED = OK_HEAD + b"Transfer-Encoding: chunked\r\n\r\n"


def chunk(data: bytes) -> bytes:
    """One chunk of a chunked body."""
    return b"%x\r\n%s\r\n" % (len(data), data)


def nested(depth: int) -> bytes:
    """A query_range answer whose one series' label value is an array nested `depth` deep."""
    return (
        b'{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"a":'
        + b"[" * depth
        + b"]" * depth
        + b'},"values":[]}]}}'
    )
