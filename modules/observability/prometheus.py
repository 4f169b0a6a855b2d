"""A small Prometheus HTTP API client: `query_range` with retries on transient errors and credentials from the
environment only (never from the inventory, which is reviewed in git).

Credentials: `QM_PROMETHEUS_TOKEN` (sent as `Authorization: Bearer ...`), or `QM_PROMETHEUS_USER` with
`QM_PROMETHEUS_PASSWORD` (basic auth). Transient errors (HTTP 429, 5xx, a reset or dropped connection, a
timeout) are retried with exponential backoff; an auth failure (401, 403) stops at once with exit 2.
API: https://prometheus.io/docs/prometheus/latest/querying/api/#range-queries (read 2026-08).
"""

from __future__ import annotations

import base64
import datetime as dt
import http.client
import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from quartermaster.errors import ProblemsFound, UsageError

TOKEN_ENV = "QM_PROMETHEUS_TOKEN"
USER_ENV = "QM_PROMETHEUS_USER"
PASSWORD_ENV = "QM_PROMETHEUS_PASSWORD"
RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
TRANSIENT_ERRORS = (
    ConnectionResetError,
    ConnectionAbortedError,
    http.client.RemoteDisconnected,
    http.client.IncompleteRead,
    TimeoutError,
)


class AuthError(UsageError):
    """Prometheus refused the credentials (or their absence): exit 2."""


class PrometheusError(ProblemsFound):
    """Prometheus answered with an error, or stayed unavailable after every retry: exit 1."""


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
        return f"Bearer {token}"
    user, password = environ.get(USER_ENV, ""), environ.get(PASSWORD_ENV, "")
    if user or password:
        if not (user and password):
            missing = PASSWORD_ENV if user else USER_ENV
            raise UsageError(
                f"{missing} is not set: basic auth needs both {USER_ENV} and {PASSWORD_ENV} in the environment."
            )
        return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    return None


def check_url(url: str) -> str:
    """The base URL without a trailing slash; a UsageError for anything but http(s)://host[:port][/path]."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UsageError(
            f"--prometheus {url}: not an http(s) URL; give the server's base URL, e.g. "
            "http://prometheus.monitoring:9090 (the API path /api/v1 is added)."
        )
    if parts.query or parts.fragment:
        raise UsageError(f"--prometheus {url}: has a query or fragment; give the base URL only.")
    return url.rstrip("/")


@dataclass
class Prometheus:
    """The HTTP API of one Prometheus (or a compatible server: Thanos Query, Mimir, VictoriaMetrics)."""

    url: str
    environ: Mapping[str, str] = field(default_factory=lambda: os.environ)
    timeout: float = 120.0
    attempts: int = 5
    backoff: float = 1.0
    """Seconds before the first retry; doubled for each next one."""
    sleep: Callable[[float], None] = time.sleep
    retries: int = 0
    """How many retries this client has made (for the summary line)."""

    def __post_init__(self) -> None:
        self.url = check_url(self.url)
        self._auth = auth_header(self.environ)

    def query_range(self, query: str, start: dt.datetime, end: dt.datetime, step_seconds: int) -> list[Series]:
        """Evaluate `query` at start, start + step, ... <= end (UTC); the matrix as `Series`."""
        params = {
            "query": query,
            "start": f"{start.timestamp():.3f}",
            "end": f"{end.timestamp():.3f}",
            "step": str(step_seconds),
        }
        body = self._post("/api/v1/query_range", params)
        data = body.get("data") or {}
        if data.get("resultType") != "matrix":
            raise PrometheusError(
                f"{self.url}: query_range answered a {data.get('resultType')!r}, not a matrix; "
                "is this a Prometheus-compatible API?"
            )
        return [Series(dict(r["metric"]), *_points(r["values"])) for r in data["result"]]

    def _post(self, path: str, params: dict[str, str]) -> dict[str, Any]:
        """POST a form to the API, retrying transient failures; the decoded JSON body of a success."""
        data = urllib.parse.urlencode(params).encode()
        headers = {
            "Content-Type": "application/x-www-form-urlencoded",
            "Accept": "application/json",
            "User-Agent": "quartermaster",
        }
        if self._auth:
            headers["Authorization"] = self._auth
        where = f"{self.url}{path}"
        for attempt in range(1, self.attempts + 1):
            problem = ""
            try:
                request = urllib.request.Request(where, data=data, headers=headers, method="POST")
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    return self._decode(where, response.read())
            except urllib.error.HTTPError as error:
                with error:  # the error holds the connection's answer; close it whatever happens next
                    if error.code in (401, 403):
                        raise AuthError(self._auth_message(error.code)) from None
                    if error.code not in RETRY_STATUS:
                        raise PrometheusError(f"{where}: HTTP {error.code}: {self._api_error(error)}") from None
                    problem = f"HTTP {error.code}"
            except urllib.error.URLError as error:
                if not isinstance(error.reason, TRANSIENT_ERRORS):
                    raise UsageError(
                        f"--prometheus {self.url}: cannot connect ({error.reason}); check the URL "
                        "and that the server is reachable from here."
                    ) from None
                problem = type(error.reason).__name__
            except TRANSIENT_ERRORS as error:
                problem = type(error).__name__
            if attempt == self.attempts:
                raise PrometheusError(
                    f"{where}: still failing after {self.attempts} attempts (last: {problem}); "
                    "try again later, or pull a shorter range with --chunk-hours."
                )
            self.retries += 1
            self.sleep(self.backoff * 2 ** (attempt - 1))
        raise AssertionError("unreachable")  # the loop returns or raises

    def _decode(self, where: str, raw: bytes) -> dict[str, Any]:
        try:
            body = json.loads(raw)
        except ValueError:
            raise PrometheusError(f"{where}: the answer is not JSON; is --prometheus the server's base URL?") from None
        if not isinstance(body, dict) or body.get("status") != "success":
            error = body.get("error", body) if isinstance(body, dict) else body
            raise PrometheusError(f"{where}: {error}")
        return body

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

    @staticmethod
    def _api_error(error: urllib.error.HTTPError) -> str:
        try:
            body = json.loads(error.read())
            return str(body.get("error") or body)
        except (ValueError, OSError, AttributeError):
            return str(error.reason)


def _points(values: list[list[Any]]) -> tuple[np.ndarray, np.ndarray]:
    """The API's `[[unix time, "value"], ...]` as float arrays (values are strings: "1.5", "NaN", "+Inf")."""
    if not values:
        return np.empty(0), np.empty(0)
    times, texts = zip(*values, strict=True)
    return np.asarray(times, dtype=np.float64), np.asarray(texts, dtype=np.float64)
