"""A small Prometheus HTTP API client: `query_range` with retries on transient errors and credentials from the
environment only (never from the inventory, which is reviewed in git).

Credentials: `QM_PROMETHEUS_TOKEN` (sent as `Authorization: Bearer ...`), or `QM_PROMETHEUS_USER` with
`QM_PROMETHEUS_PASSWORD` (basic auth). Transient errors (HTTP 429, 5xx, a reset or dropped connection, a
timeout) are retried with exponential backoff; an auth failure (401, 403) stops at once with exit 2.
API: https://prometheus.io/docs/prometheus/latest/querying/api/#range-queries (read 2026-08).

What a network client of Quartermaster promises: credentials are checked before use, go to the configured host
only (a redirect is refused, never followed, and a URL with credentials in it is refused without echoing them) and
are never printed; every query has one overall deadline over connecting, the status line, headers, 1xx answers,
chunk lines, the body, trailers and every retry (a watchdog closes the connection when it passes, wherever the
client waits); the answer has a size limit, a nesting limit and a size limit per series (what its hourly points can
take), so memory is bounded whatever the answer's shape; it is parsed as it streams (one series at a time, never the
whole body in memory); each series is checked (labels are text, no two series alike, points are pairs of a time
inside the asked range, each time once and in order, and a number of accelerators within `bounds`) before it is
used; a protocol error (a malformed status line, an over-long header line, too many headers, a bad chunk) is an
error naming the server, never a traceback.

Speed: the answer's head (`status`, `data.resultType`, which Prometheus writes before `data.result`) is read
event by event; each series of the result is then built by ijson's C backend and its points checked as arrays
(point by point only to name the first bad one).
"""

from __future__ import annotations

import base64
import datetime as dt
import http.client
import io
import json
import os
import re
import socket
import ssl
import threading
import time
import urllib.parse
from collections.abc import Callable, Mapping
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any

import ijson
import numpy as np

from quartermaster.bounds import MAX_ACCELERATORS, accelerators_problem
from quartermaster.errors import ProblemsFound, UsageError
from quartermaster.textsafety import log_line

TOKEN_ENV = "QM_PROMETHEUS_TOKEN"
USER_ENV = "QM_PROMETHEUS_USER"
PASSWORD_ENV = "QM_PROMETHEUS_PASSWORD"
RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
REDIRECT_STATUS = frozenset({301, 302, 303, 307, 308})
TRANSIENT_ERRORS = (
    ConnectionResetError,
    ConnectionAbortedError,
    http.client.RemoteDisconnected,
    http.client.IncompleteRead,
    TimeoutError,
)
DEADLINE_SECONDS = 300.0
"""Default overall deadline of one query, its retries included."""
MAX_ANSWER_BYTES = 512 * 1024 * 1024
"""Default limit on one answer's size: a week of hourly points for 20,000 series is about 60 MB."""
READ_BYTES = 1 << 16
HEAD_BYTES = 1 << 16
"""How much of an answer may come before its `data.result`: Prometheus writes about 60 bytes there."""
ERROR_BODY_BYTES = 1 << 16
"""How much of an error answer is read for its message."""
MAX_NESTING = 16
"""The deepest an answer may nest arrays and objects: a matrix answer nests 6 deep (answer, data, result, series,
values, point); parsing a deeper one would cost memory growing with the square of its depth."""
LABELS_BYTES = 1 << 16
"""The most one series' labels may take."""
POINT_BYTES = 64
"""The most one point may take: `[1790816399.999,"12345.678901"]` is 31 bytes."""
TOKEN = re.compile(r"[A-Za-z0-9._~+/-]+=*", re.ASCII)
"""A bearer token's characters (RFC 6750 section 2.1, b64token)."""


RANGE_PATH = "/api/v1/query_range"


def range_params(query: str, start: dt.datetime, end: dt.datetime, step_seconds: int) -> dict[str, str]:
    """The form of a range query: `query` evaluated at start, start + step, ... <= end."""
    return {
        "query": query,
        "start": f"{start.timestamp():.3f}",
        "end": f"{end.timestamp():.3f}",
        "step": str(step_seconds),
    }


class AuthError(UsageError):
    """Prometheus refused the credentials (or their absence): exit 2."""


class PrometheusError(ProblemsFound):
    """Prometheus answered with an error, or stayed unavailable after every retry: exit 1."""


class _Transient(Exception):
    """A failure worth retrying; its text names it."""


@dataclass(frozen=True)
class Series:
    """One series of a range query: its labels, and its points as two arrays (unix times and values)."""

    labels: dict[str, str]
    times: np.ndarray
    values: np.ndarray


def auth_header(environ: Mapping[str, str]) -> str | None:
    """The Authorization header from the environment, or None; a user without a password is a usage error."""
    token = environ.get(TOKEN_ENV, "").strip()
    if token:
        if not TOKEN.fullmatch(token):
            raise UsageError(
                f"{TOKEN_ENV} holds a character a bearer token cannot have (a line break, a space, a quote or a "
                "letter outside ASCII; RFC 6750 allows A-Z a-z 0-9 - . _ ~ + / and = at the end); set it to the "
                "token alone. Its value is not shown."
            )
        return f"Bearer {token}"
    user, password = environ.get(USER_ENV, ""), environ.get(PASSWORD_ENV, "")
    if user or password:
        if not (user and password):
            missing = PASSWORD_ENV if user else USER_ENV
            raise UsageError(
                f"{missing} is not set: basic auth needs both {USER_ENV} and {PASSWORD_ENV} in the environment."
            )
        for name, value in ((USER_ENV, user), (PASSWORD_ENV, password)):
            if not value.isprintable() or (name == USER_ENV and ":" in value):
                raise UsageError(
                    f"{name} holds a line break or another control character"
                    f"{' or a colon (basic auth cannot send one in a user name, RFC 7617)' if name == USER_ENV else ''}"
                    "; set it to the value alone. Its value is not shown."
                )
        return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    return None


def check_url(url: str) -> str:
    """The base URL without a trailing slash; a UsageError for anything but http(s)://host[:port][/path] (credentials
    in the URL are refused and never shown)."""
    parts = urllib.parse.urlsplit(url)
    shown = log_line(url)
    if parts.username is not None or parts.password is not None:
        host = parts.hostname or ""
        raise UsageError(
            f"--prometheus {parts.scheme}://***@{log_line(host)}...: credentials in the URL are not accepted (they "
            f"would show in logs and process lists); set {TOKEN_ENV}, or {USER_ENV} and {PASSWORD_ENV}, in the "
            "environment."
        )
    try:
        port = parts.port
    except ValueError:
        port = -1
    if parts.scheme not in ("http", "https") or not parts.hostname or port == -1 or not url.isprintable():
        raise UsageError(
            f"--prometheus {shown}: not an http(s) URL; give the server's base URL, e.g. "
            "http://prometheus.monitoring:9090 (the API path /api/v1 is added)."
        )
    if parts.query or parts.fragment:
        raise UsageError(f"--prometheus {shown}: has a query or fragment; give the base URL only.")
    return url.rstrip("/")


@dataclass
class Prometheus:
    """The HTTP API of one Prometheus (or a compatible server: Thanos Query, Mimir, VictoriaMetrics)."""

    url: str
    environ: Mapping[str, str] = field(default_factory=lambda: os.environ)
    deadline: float = DEADLINE_SECONDS
    """Seconds one query may take in all: connecting, every read, every retry and its wait."""
    max_bytes: int = MAX_ANSWER_BYTES
    """The largest answer read; a larger one is refused (pull a shorter range with --chunk-hours)."""
    attempts: int = 5
    backoff: float = 1.0
    """Seconds before the first retry; doubled for each next one."""
    sleep: Callable[[float], None] = time.sleep
    retries: int = 0
    """How many retries this client has made (for the summary line)."""

    def __post_init__(self) -> None:
        self.url = check_url(self.url)
        self._auth = auth_header(self.environ)
        self._parts = urllib.parse.urlsplit(self.url)

    def query_range(self, query: str, start: dt.datetime, end: dt.datetime, step_seconds: int) -> list[Series]:
        """Evaluate `query` at start, start + step, ... <= end (UTC); the matrix as `Series`, each checked."""
        window = (start.timestamp() - 0.001, end.timestamp() + 0.001)
        params = range_params(query, start, end, step_seconds)
        points = int((end - start).total_seconds() // step_seconds) + 1
        return self._post(RANGE_PATH, params, lambda body: self._matrix(body, window, points))

    def _post(self, path: str, params: dict[str, str], parse: Callable[[_Body], list[Series]]) -> list[Series]:
        """POST a form to the API, retrying transient failures, all within the deadline; the parsed answer."""
        where = f"{self.url}{path}"
        ends = time.monotonic() + self.deadline
        for attempt in range(1, self.attempts + 1):
            try:
                return self._once(path, params, parse, ends)
            except _Transient as problem:
                last = str(problem)
            except TimeoutError:
                last = "TimeoutError"
            wait = self.backoff * 2 ** (attempt - 1)
            out_of_time = time.monotonic() + wait >= ends
            if attempt == self.attempts or out_of_time:
                raise PrometheusError(
                    f"{where}: still failing after {attempt} attempts (last: {last})"
                    f"{f', with the {self.deadline:g} s deadline reached' if out_of_time else ''}; try again later, "
                    "or pull a shorter range with --chunk-hours."
                )
            self.retries += 1
            self.sleep(wait)
        raise AssertionError("unreachable")  # the loop returns or raises

    def _connection(self, seconds: float) -> http.client.HTTPConnection:
        host, port = self._parts.hostname or "", self._parts.port
        if self._parts.scheme == "https":
            return http.client.HTTPSConnection(host, port, timeout=seconds, context=ssl.create_default_context())
        return http.client.HTTPConnection(host, port, timeout=seconds)

    def _once(
        self, path: str, params: dict[str, str], parse: Callable[[_Body], list[Series]], ends: float
    ) -> list[Series]:
        """One request, with a watchdog that closes its connection when the deadline passes."""
        watchdog = _Watchdog(ends)
        try:
            return self._exchange(path, params, parse, ends, watchdog)
        except Exception:
            if watchdog.expired:  # whatever the closed connection made http.client or the parser say
                raise _late(f"{self.url}{path}") from None
            raise
        finally:
            watchdog.cancel()

    def _exchange(
        self,
        path: str,
        params: dict[str, str],
        parse: Callable[[_Body], list[Series]],
        ends: float,
        watchdog: _Watchdog,
    ) -> list[Series]:
        """One request to the configured host only (http.client follows no redirect)."""
        where = f"{self.url}{path}"
        headers = {
            "Content-Type": "application/x-www-form-urlencoded",
            "Accept": "application/json",
            "User-Agent": "quartermaster",
        }
        if self._auth:
            headers["Authorization"] = self._auth
        connection = self._connection(max(0.001, ends - time.monotonic()))
        response: http.client.HTTPResponse | None = None
        try:
            try:
                connection.connect()
                watchdog.watch(connection)
                connection.request("POST", self._parts.path + path, urllib.parse.urlencode(params), headers)
                response = connection.getresponse()
            except TRANSIENT_ERRORS as error:
                raise _Transient(type(error).__name__) from None
            except http.client.HTTPException as error:
                raise _not_http(where, error) from None
            except OSError as error:
                raise UsageError(
                    f"--prometheus {self.url}: cannot connect ({error.strerror or error}); check the URL and that "
                    "the server is reachable from here."
                ) from None
            body = _Body(response, connection, ends, self.max_bytes, where)
            if response.status in (401, 403):
                raise AuthError(self._auth_message(response.status))
            if response.status in REDIRECT_STATUS:
                target = urllib.parse.urlsplit(response.getheader("Location") or "")
                host = target.netloc.rpartition("@")[2] or "?"  # never the credentials a Location may hold
                raise UsageError(
                    f"--prometheus {self.url}: answered HTTP {response.status}, a redirect to "
                    f"{log_line(target.scheme or self._parts.scheme)}://{log_line(host)}"
                    f"{log_line(target.path)}; redirects are not followed (credentials go to the configured host "
                    "only). Give the URL it redirects to as --prometheus."
                )
            if response.status in RETRY_STATUS:
                raise _Transient(f"HTTP {response.status}")
            if response.status != 200:
                raise PrometheusError(f"{where}: HTTP {response.status}: {body.error_text()}")
            try:
                return parse(body)
            except ijson.JSONError:
                raise PrometheusError(
                    f"{where}: the answer is not JSON; is --prometheus the server's base URL?"
                ) from None
            except TRANSIENT_ERRORS as error:
                raise _Transient(type(error).__name__) from None
            except http.client.HTTPException as error:  # a bad chunk line, trailers past the line limit
                raise _not_http(where, error) from None
        finally:
            if response is not None:
                response.close()
            connection.close()

    def _matrix(self, body: _Body, window: tuple[float, float], points: int) -> list[Series]:
        """The series of a `query_range` answer: its head read event by event up to `data.result`, then each series
        (at most `points` points) built by ijson's C backend and checked."""
        where = f"{self.url}{RANGE_PATH}"
        head = body.head(HEAD_BYTES)
        status = result_type = error = None
        reaches_result = False
        try:
            for prefix, event, value in ijson.parse(io.BytesIO(head), use_float=True):
                if prefix == "data.result" and event == "start_array":
                    reaches_result = True
                    break
                if prefix == "status":
                    status = value
                elif prefix == "error":
                    error = value
                elif prefix == "data.resultType":
                    result_type = value
        except ijson.IncompleteJSONError:
            if body.ended:  # the whole answer was read: it is not JSON
                raise
        if not (reaches_result or body.ended):
            raise PrometheusError(
                f"{where}: the answer does not start as Prometheus answers do (`status` and `data.resultType` "
                f"before `data.result`, within its first {HEAD_BYTES:,} bytes); is --prometheus the server's base "
                "URL?"
            )
        if status != "success":
            raise PrometheusError(f"{where}: {log_line(str(error if error is not None else status))[:300]}")
        if result_type != "matrix":
            raise PrometheusError(
                f"{where}: query_range answered a {log_line(repr(result_type))[:80]}, not a matrix; is this a "
                "Prometheus-compatible API?"
            )
        if not reaches_result:
            return []
        body.unread(head)
        series: list[Series] = []
        seen: dict[frozenset[tuple[str, str]], int] = {}
        # ijson reads ahead a buffer at most: a series may take its labels and its points, and one read more
        body.per_series = READ_BYTES + LABELS_BYTES + POINT_BYTES * points
        for item in ijson.items(body, "data.result.item", use_float=True):
            body.series_read()
            one = _series(item, len(series), window, where)
            labels = frozenset(one.labels.items())
            if labels in seen:
                raise PrometheusError(
                    f"{where}: series {len(series) + 1} of the answer has the labels of series {seen[labels] + 1} "
                    f"({_named(one.labels)}); a query's series differ in their labels, so the answer is not used."
                )
            seen[labels] = len(series)
            series.append(one)
        return series

    def _auth_message(self, code: int) -> str:
        sent = (
            "a bearer token from " + TOKEN_ENV
            if self._auth and self._auth.startswith("Bearer")
            else f"basic auth from {USER_ENV}/{PASSWORD_ENV}"
            if self._auth
            else "no credentials"
        )
        return (
            f"--prometheus {self.url}: authentication failed (HTTP {code}; sent {sent}). Set {TOKEN_ENV}, or "
            f"{USER_ENV} and {PASSWORD_ENV}, in the environment; credentials are never read from the "
            "inventory."
        )


class _Body:
    """An answer's body as a file for the streaming parser: each read waits at most until the deadline, and the
    whole body may hold at most `limit` bytes."""

    def __init__(
        self,
        response: http.client.HTTPResponse,
        connection: http.client.HTTPConnection,
        ends: float,
        limit: int,
        where: str,
    ) -> None:
        self.response, self.connection, self.ends, self.limit, self.where = response, connection, ends, limit, where
        self.read_bytes = 0
        self.ended = False
        """Whether the last byte of the body has been read."""
        self._again = b""
        self._nesting = _Nesting(MAX_NESTING)
        self.per_series: int | None = None
        """The most bytes one series may take (with a read ahead), once the series are read."""
        self._series_bytes = 0
        self._series = 0

    def series_read(self) -> None:
        """The parser gave one more series: count the bytes of the next from here."""
        self._series += 1
        self._series_bytes = 0

    def head(self, size: int) -> bytes:
        """The first `size` bytes of the body (all of it when shorter)."""
        parts: list[bytes] = []
        got = 0
        while got < size and (chunk := self.read()):
            parts.append(chunk)
            got += len(chunk)
        return b"".join(parts)

    def unread(self, data: bytes) -> None:
        """Give `data` (bytes read already) to the next reads again."""
        self._again = data + self._again

    def read(self, size: int = READ_BYTES) -> bytes:
        if size == 0:  # the parser's probe for bytes or text
            return b""
        if self._again:
            chunk, self._again = self._again[:READ_BYTES], self._again[READ_BYTES:]
            return chunk
        left = self.ends - time.monotonic()
        if left <= 0:
            raise PrometheusError(
                f"{self.where}: no complete answer within the deadline ({self.read_bytes:,} bytes read); the server "
                "is too slow or stalled. Try again later, raise --timeout, or pull a shorter range."
            )
        if self.connection.sock is not None:
            self.connection.sock.settimeout(left)
        try:
            chunk = self.response.read1(min(size if size > 0 else READ_BYTES, READ_BYTES))
        except TimeoutError:
            raise PrometheusError(
                f"{self.where}: no complete answer within the deadline ({self.read_bytes:,} bytes read); the server "
                "is too slow or stalled. Try again later, raise --timeout, or pull a shorter range."
            ) from None
        self.read_bytes += len(chunk)
        self.ended = not chunk
        if self.read_bytes > self.limit:
            raise PrometheusError(
                f"{self.where}: the answer is larger than {self.limit:,} bytes; pull a shorter range with "
                "--chunk-hours."
            )
        if self._nesting.deepest(chunk) > MAX_NESTING:
            raise PrometheusError(
                f"{self.where}: the answer nests arrays and objects more than {MAX_NESTING} deep (a Prometheus "
                "matrix nests 6); it is not a query_range answer, and it is not used."
            )
        self._series_bytes += len(chunk)
        if self.per_series is not None and self._series_bytes > self.per_series:
            raise PrometheusError(
                f"{self.where}: series {self._series + 1} of the answer takes more than {self.per_series:,} bytes, "
                "more than its labels and one point per hour of the asked range can take; the answer is not used."
            )
        return chunk

    def error_text(self) -> str:
        """The API's `error` of an error answer (at most ERROR_BODY_BYTES read), else the HTTP reason."""
        raw = b""
        try:
            while len(raw) < ERROR_BODY_BYTES and (chunk := self.read()):
                raw += chunk
            body = json.loads(raw[:ERROR_BODY_BYTES])
            text = str(body.get("error") or body)
        except (ValueError, OSError, AttributeError, ProblemsFound):
            text = str(self.response.reason)
        return log_line(text)[:300]


class _Watchdog:
    """Closes a connection's socket when the deadline passes, wherever the client is waiting then: the status line,
    headers, 1xx answers, chunk lines, the body or trailers (a socket timeout bounds each read only, and http.client
    reads status lines, headers and chunk lines without asking)."""

    def __init__(self, ends: float) -> None:
        self.ends = ends
        self.expired = False
        self._timer: threading.Timer | None = None

    def watch(self, connection: http.client.HTTPConnection) -> None:
        """Start watching a connected connection."""
        self._timer = threading.Timer(max(0.0, self.ends - time.monotonic()), self._expire, (connection,))
        self._timer.daemon = True
        self._timer.start()

    def _expire(self, connection: http.client.HTTPConnection) -> None:
        self.expired = True
        if connection.sock is not None:
            with suppress(OSError):
                connection.sock.shutdown(socket.SHUT_RDWR)

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()


class _Nesting:
    """How deep a JSON text nests arrays and objects, read chunk by chunk as arrays: brackets inside strings do not
    count (a string starts and ends at a quote that an even run of backslashes precedes)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.depth = 0
        self.in_string = False
        self.backslashes = 0
        """Backslashes at the end of the text read so far."""

    def deepest(self, chunk: bytes) -> int:
        """The deepest nesting within `chunk`, going on from the chunks before it."""
        if not chunk:
            return self.depth
        text = np.frombuffer(chunk, dtype=np.uint8)
        at = np.arange(text.size)
        backslash = text == 92
        last_other = np.maximum.accumulate(np.where(backslash, -1, at))
        # backslashes just before each position (those at the chunk's start continue the previous chunk's run)
        before = np.empty(text.size, dtype=np.int64)
        before[0] = self.backslashes
        before[1:] = np.where(last_other[:-1] < 0, at[1:] + self.backslashes, at[1:] - 1 - last_other[:-1])
        quote = (text == 34) & (before % 2 == 0)
        inside = self.in_string ^ (np.cumsum(quote) % 2).astype(bool)
        opens = (text == 91) | (text == 123)
        closes = (text == 93) | (text == 125)
        step = np.where(inside, 0, opens.astype(np.int64) - closes.astype(np.int64))
        depth = self.depth + np.cumsum(step)
        self.depth = int(depth[-1])
        self.in_string = bool(inside[-1])
        self.backslashes = int(text.size - 1 - last_other[-1]) + (self.backslashes if last_other[-1] < 0 else 0)
        return int(depth.max())


def _late(where: str) -> PrometheusError:
    return PrometheusError(
        f"{where}: no complete answer within the deadline; the server is too slow or stalled (the deadline covers "
        "connecting, the status line, headers, the body and trailers). Try again later, raise --timeout, or pull a "
        "shorter range."
    )


def _not_http(where: str, error: http.client.HTTPException) -> PrometheusError:
    return PrometheusError(
        f"{where}: the answer is not valid HTTP ({type(error).__name__}: {log_line(str(error))[:120]}); is "
        "--prometheus the server's base URL?"
    )


def _series(item: Any, index: int, window: tuple[float, float], where: str) -> Series:
    """One series of a matrix, checked: labels are text, points are [time in the asked window, number of
    accelerators within the bounds]. The points are checked as arrays; when a check fails, point by point, to name
    the first bad one."""

    def refuse(what: str) -> PrometheusError:
        return PrometheusError(f"{where}: series {index + 1} of the answer: {what}; the answer is not used.")

    if not isinstance(item, dict) or not isinstance(item.get("metric"), dict) or "values" not in item:
        raise refuse("is not an object with `metric` and `values`")
    labels = item["metric"]
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in labels.items()):
        raise refuse("a label value that is not text")
    points = item["values"]
    if not isinstance(points, list) or set(map(type, points)) - {list} or set(map(len, points)) - {2}:
        raise refuse(f"({_named(labels)}) `values` is not a list of [time, value] pairs")
    moments, texts = zip(*points, strict=True) if points else ((), ())
    try:
        if set(map(type, moments)) - {int, float} or set(map(type, texts)) - {str}:
            raise ValueError("not [unix time, text]")
        times = np.array(moments, dtype=float)
        values = np.fromiter(map(float, texts), dtype=float, count=len(texts))
    except (ValueError, OverflowError):
        return _series_point_by_point(labels, points, window, refuse)
    low, high = window
    if (
        (times < low).any()
        or (times > high).any()
        or (np.diff(times) <= 0).any()
        or not np.isfinite(values).all()
        or (values < 0).any()
        or (values > MAX_ACCELERATORS).any()
    ):
        return _series_point_by_point(labels, points, window, refuse)
    return Series(dict(labels), times, values)


def _named(labels: dict[str, str]) -> str:
    return log_line(", ".join(f"{k}={v!r}" for k, v in sorted(labels.items())))[:300]


def _series_point_by_point(
    labels: dict[str, str],
    points: list[list[Any]],
    window: tuple[float, float],
    refuse: Callable[[str], PrometheusError],
) -> Series:
    """The series with each point checked in turn; the first bad one is refused with what is wrong with it."""
    named = _named(labels)
    times = np.empty(len(points))
    values = np.empty(len(points))
    for i, (moment, text) in enumerate(points):
        if isinstance(moment, bool) or not isinstance(moment, (int, float)) or not isinstance(text, str):
            raise refuse(f'({named}) point {i + 1} is not [unix time, "value"]')
        if not window[0] <= moment <= window[1]:
            raise refuse(f"({named}) point {i + 1} is at {moment:.3f}, outside the asked range")
        if i and moment <= times[i - 1]:
            raise refuse(
                f"({named}) point {i + 1} is at {moment:.3f}, not after point {i} ({times[i - 1]:.3f}): each time "
                "comes once, in order"
            )
        try:
            value = float(text)
        except ValueError:
            raise refuse(f"({named}) point {i + 1} has the value {log_line(text)[:40]!r}, not a number") from None
        problem = accelerators_problem(value)
        if problem:
            raise refuse(f"({named}) point {i + 1}: the value {log_line(text)[:40]} {problem}")
        times[i], values[i] = moment, value
    return Series(dict(labels), times, values)
