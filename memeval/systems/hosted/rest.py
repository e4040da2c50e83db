"""What every hosted REST adapter shares: one bounded JSON client and a base class.

:class:`Rest` sends a request to a hosted API over plain ``httpx``: the key read once from the
environment variable the adapter names (``key_env``) and only ever sent in a request header, a
deadline per attempt, a cap on the reply's bytes, and the project's one retry policy
(``memeval.retry``): 429 and 5xx replies, timeouts and dropped connections are retried with
exponential backoff, a server's ``Retry-After`` honoured in its place (every wait capped). What fails
for good is a :class:`~memeval.errors.SystemCallError` in one line naming the method, the path and the
status (never the key): from ``query`` an error record, from ``reset``/``ingest`` a stopped, resumable
run.

:class:`HostedSystem` is the base of each adapter: it declares what hosted memory APIs have in common
(``Capabilities(indexing="async", concurrent_queries=True)``: what was added is searchable only after
the service has processed it, so the runner probes before asking), gives each haystack a fresh scope
(a user, a container tag) named ``memeval-<nonce>-<n>``, and closes and cancels its client.

>>> ts_date("2026-05-20T00:00:00Z"), ts_date("2026-05-20T14:02:11.5+00:00"), ts_date(None)
('2026-05-20', '2026-05-20T14:02', None)
>>> rfc3339("2026-05-20"), rfc3339("2023/05/20 (Sat) 02:21")
('2026-05-20T00:00:00Z', '2023-05-20T02:21:00Z')
"""

from __future__ import annotations

import json
import os
import statistics
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any, Mapping

import httpx

from ...errors import MemevalError, SystemCallError
from ...retry import Retryable, RetryPolicy, retry_after
from ...text.urls import public_url
from ...text.when import parse_when
from ..base import BaseMemorySystem, Capabilities, Recall

__all__ = ["Rest", "Reply", "HostedSystem", "ts_date", "rfc3339", "role_of", "MAX_REPLY_BYTES"]

#: the largest reply accepted from a hosted API (a bigger one is an error, not read)
MAX_REPLY_BYTES = 8 * 1024 * 1024
_DETAIL = 160  # characters of an error reply's body kept in the one-line reason


@dataclass(frozen=True)
class Reply:
    """A call's parsed JSON ``data`` with the time of its successful attempt (``ms``), the attempts it
    took and the reply's size in bytes (what a record's speed fields read)."""

    data: Any
    ms: float
    attempts: int
    nbytes: int


class Rest:
    """A JSON client for one hosted API (see the module docstring).

    ``auth`` turns the key into the header the API documents (``Authorization: Token ...`` for mem0,
    ``Api-Key ...`` for Zep, ``Bearer ...`` for Supermemory). ``requests`` and ``retries`` count what
    was sent (for the manifest's system usage).
    """

    def __init__(
        self,
        system: str,
        base_url: str,
        key_env: str,
        auth: str,
        *,
        timeout: float = 30.0,
        attempts: int = 5,
        backoff: float = 0.5,
        max_wait: float = 30.0,
        max_reply_bytes: int = MAX_REPLY_BYTES,
        key_optional: bool = False,
    ) -> None:
        key = os.environ.get(key_env, "").strip() if key_env else ""
        if not key and not key_optional:  # key_optional: a self-hosted server may need none (Letta)
            raise MemevalError(
                f"system {system!r}: set the environment variable {key_env} to the API key (key_env= names "
                "another variable; the key is only ever sent in a request header)"
            )
        if not base_url.startswith(("http://", "https://")):
            raise MemevalError(f"system {system!r}: base_url must be an http(s) URL, got {public_url(base_url)!r}")
        if attempts < 1 or timeout <= 0 or max_reply_bytes < 1:
            raise MemevalError(f"system {system!r}: attempts, timeout and max_reply_bytes must be positive")
        self.system, self.max_reply_bytes, self.timeout = system, max_reply_bytes, timeout
        self._key = key  # only to blank it out of an error reply that echoes it
        self.policy = RetryPolicy(max_attempts=attempts, backoff=backoff, max_wait=max_wait)
        self._client = httpx.Client(
            base_url=base_url.rstrip("/") + "/",
            headers={"Accept": "application/json", **({"Authorization": f"{auth} {key}"} if key else {})},
            timeout=httpx.Timeout(timeout),
            follow_redirects=False,
        )
        self._cancel = threading.Event()
        self._lock = threading.Lock()
        self.requests = 0
        self.retries = 0

    def call(self, method: str, path: str, **options: Any) -> Any:
        """The parsed JSON reply of ``method path`` (None for an empty reply, or a 404 when
        ``missing_ok``); :class:`SystemCallError` when it fails for good. ``options``: :meth:`exchange`'s."""
        return self.exchange(method, path, **options).data

    def exchange(
        self,
        method: str,
        path: str,
        *,
        json_body: Any = None,
        params: Mapping[str, Any] | None = None,
        missing_ok: bool = False,
        raw: bool = False,
    ) -> Reply:
        """:meth:`call` with the timing of the successful attempt; ``raw``: any status is returned,
        the body not parsed (the no-op round trip of :meth:`HostedSystem.network_floor_ms`)."""
        what = f"{method} /{path.lstrip('/')}"

        def attempt(n: int) -> tuple[int, bytes, float, int]:
            if self._cancel.is_set():
                raise SystemCallError(f"{what}: cancelled")
            with self._lock:
                self.requests += 1
                self.retries += n > 1
            t0 = time.perf_counter()
            try:
                with self._client.stream(
                    method, path.lstrip("/"), json=json_body, params=dict(params) if params else None
                ) as resp:
                    body = self._read(resp, what, t0)
                ms = (time.perf_counter() - t0) * 1000
            except httpx.TimeoutException as e:
                raise Retryable(f"{what}: timed out ({type(e).__name__})", connection=True) from None
            except httpx.TransportError as e:
                raise Retryable(f"{what}: {type(e).__name__}: {e}", connection=True) from None
            if not raw and (resp.status_code == 429 or resp.status_code >= 500):
                raise Retryable(f"{what}: HTTP {resp.status_code}{self._detail(body)}", retry_after(resp))
            return resp.status_code, body, ms, n

        try:
            status, body, ms, n_attempts = self.policy.call(attempt, sleep=self._sleep)
        except Retryable as e:
            n = self.policy.max_attempts
            raise SystemCallError(
                f"{e.reason} (after {n} attempt{'s' if n > 1 else ''})", connection=e.connection
            ) from None
        if raw or (status == 404 and missing_ok) or (status < 400 and not body.strip()):
            return Reply(None, ms, n_attempts, len(body))
        if status >= 400:
            raise SystemCallError(f"{what}: HTTP {status}{self._detail(body)}")
        try:
            return Reply(json.loads(body), ms, n_attempts, len(body))
        except ValueError:
            raise SystemCallError(f"{what}: the reply is not JSON{self._detail(body)}") from None

    def _detail(self, body: bytes) -> str:
        """The error body, with the key masked where the server echoes it (no key: nothing to mask)."""
        text = _detail(body)
        return text.replace(self._key, "***") if self._key else text

    def _read(self, resp: httpx.Response, what: str, t0: float) -> bytes:
        """The reply's body, at most ``max_reply_bytes``, read within ``timeout`` seconds of ``t0`` (a
        server trickling bytes is cut off, like one that sends nothing)."""
        size = resp.headers.get("content-length")
        if size is not None and size.isdigit() and int(size) > self.max_reply_bytes:
            raise SystemCallError(f"{what}: reply of {size} bytes, over the {self.max_reply_bytes}-byte limit")
        buf = bytearray()
        for chunk in resp.iter_bytes():
            buf += chunk
            if len(buf) > self.max_reply_bytes:
                raise SystemCallError(f"{what}: reply over the {self.max_reply_bytes}-byte limit")
            if time.perf_counter() - t0 > self.timeout:
                raise httpx.ReadTimeout(f"reply not read within {self.timeout:g}s")
        return bytes(buf)

    def _sleep(self, seconds: float) -> None:
        if self._cancel.wait(seconds):
            raise SystemCallError("cancelled while waiting to retry")

    def cancel(self) -> None:
        self._cancel.set()

    def close(self) -> None:
        self._client.close()


def _detail(body: bytes) -> str:
    """An error reply's message, short and on one line (``error``/``detail``/``message`` where JSON)."""
    text = body.decode("utf-8", "replace").strip()
    try:
        obj = json.loads(text)
    except ValueError:
        obj = None
    if isinstance(obj, dict):
        for k in ("details", "detail", "message", "error"):
            v = obj.get(k)
            if isinstance(v, dict):
                v = v.get("message", v)
            if v:
                text = str(v)
                break
    text = " ".join(text.split())
    return f": {text[:_DETAIL]}" if text else ""


class HostedSystem(BaseMemorySystem):
    """The base of a hosted REST adapter (see the module docstring): ``api`` is its client, ``scope``
    the haystack's user or container (set by :meth:`new_scope` in ``reset``)."""

    capabilities = Capabilities(indexing="async", concurrent_queries=True)
    #: the environment variable the key is read from unless ``key_env=`` names another
    default_key_env = ""
    #: what the no-op round trip requests (a documented ping where the API has one, else the base URL:
    #: any status will do, only the time is kept)
    floor_path = ""

    def __init__(
        self,
        base_url: str,
        key_env: str,
        auth: str,
        *,
        timeout: float,
        attempts: int,
        max_reply_bytes: int,
        key_optional: bool = False,
    ) -> None:
        self.api = Rest(
            self.name,
            base_url,
            key_env or self.default_key_env,
            auth,
            timeout=timeout,
            attempts=attempts,
            max_reply_bytes=max_reply_bytes,
            key_optional=key_optional,
        )
        self._nonce = uuid.uuid4().hex[:8]
        self._n = 0
        self.scope: str | None = None
        self.session_dates: dict[str, str] = {}  # session id -> its date, for memories the API returns undated

    def new_scope(self) -> tuple[str | None, str]:
        """(the previous scope, a fresh one) for a reset: ``memeval-<nonce>-<n>``."""
        self._n += 1
        old, self.scope = self.scope, f"memeval-{self._nonce}-{self._n}"
        self.session_dates = {}
        return old, self.scope

    def need_scope(self) -> str:
        if self.scope is None:
            raise SystemCallError(f"{self.name}: ingest or query before reset")
        return self.scope

    def warm(self) -> None:
        """Open the pooled connection before anything is timed."""
        self.api.exchange("GET", self.floor_path, raw=True)

    def network_floor_ms(self, n: int = 5) -> float | None:
        """The median of ``n`` no-op round trips (``floor_path``), subtracted from each query's latency."""
        return statistics.median(self.api.exchange("GET", self.floor_path, raw=True).ms for _ in range(n))

    def timed(self, reply: Reply, memories: tuple[Any, ...]) -> Recall:
        """A query's recall with the search call's own timing, size and attempts."""
        return Recall(memories=memories, latency_ms=reply.ms, response_bytes=reply.nbytes, attempts=reply.attempts)

    def usage(self) -> Mapping[str, int] | None:
        """Requests sent to the API (retries included); hosted APIs report no model tokens."""
        return {"api_requests": self.api.requests, "api_retries": self.api.retries}

    def cancel(self) -> None:
        self.api.cancel()

    def close(self) -> None:
        self.api.close()


def ts_date(value: Any) -> str | None:
    """A returned timestamp as a memory's date: ``YYYY-MM-DD``, with ``THH:MM`` when not midnight."""
    parsed = parse_when(value)
    if parsed is None:
        return None if value in (None, "") else str(value)
    when, timed = parsed
    return when.strftime("%Y-%m-%dT%H:%M") if timed and (when.hour or when.minute) else when.strftime("%Y-%m-%d")


def rfc3339(date: str) -> str:
    """A bench date as RFC 3339 UTC (what hosted APIs take for ``created_at``)."""
    parsed = parse_when(date)
    if parsed is None:
        raise MemevalError(f"session date {date!r} is not an ISO date (YYYY-MM-DD[THH:MM])")
    return parsed[0].strftime("%Y-%m-%dT%H:%M:%SZ")


def role_of(speaker: str) -> str:
    """A bench speaker as a chat role: ``assistant`` for an assistant, else ``user`` (LoCoMo's named
    speakers are people)."""
    return "assistant" if speaker.strip().lower() in ("assistant", "ai", "bot", "agent") else "user"
