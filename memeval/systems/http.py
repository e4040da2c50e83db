"""The HTTP adapter: a memory system behind the protocol of memory-api.md.

One pooled ``httpx.Client`` per run, warmed before timing; each query timed with
``perf_counter_ns`` around the successful attempt; response bytes recorded; 429/5xx, timeouts and
dropped connections retried with exponential backoff (honouring ``Retry-After``) up to
``max_attempts``. Every ``POST /sessions`` carries an ``Idempotency-Key``, so a retried session is
never stored twice by a server that keeps the protocol.

``timeout`` is a *total* deadline per attempt (connect + send + receive): a server trickling bytes
cannot hold a request past it. ``cancel()`` aborts every request in flight (used on Ctrl-C).
Replies are read up to ``max_reply_bytes`` and ``/query`` replies are checked against the schema;
a reply that breaks either is a :class:`SystemCallError` (an error record), never a score.

The API key is read from the environment variable ``api_key_env`` and sent only in a header;
user-info in the URL (``http://user:pass@host``) is sent as basic auth and stripped from ``name``
and ``params`` (what manifests and records hold).
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import statistics
import threading
import time
from urllib.parse import urlsplit, urlunsplit

import httpcore
import httpx

from ..bench.model import Session
from ..errors import MemevalError
from ..retry import Retryable, RetryPolicy, retry_after
from .base import Recall, SystemCallError, memory_from_json

__all__ = ["HttpSystem", "ingest_key", "public_url", "parse_query_reply", "DEFAULT_MAX_REPLY_BYTES"]

RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
DEFAULT_MAX_REPLY_BYTES = 8 * 1024 * 1024


def public_url(spec: str) -> str:
    """``spec`` with any user-info removed from an http(s) URL: what may be written anywhere.

    >>> public_url("http://user:pass@127.0.0.1:8080/v1")
    'http://127.0.0.1:8080/v1'
    >>> public_url("bm25:k=3")
    'bm25:k=3'
    """
    if not spec.startswith(("http://", "https://")):
        return spec
    try:
        parts = urlsplit(spec)
    except ValueError:  # unparseable: keep only what follows the last '@'
        return spec.split("://", 1)[0] + "://" + spec.rpartition("@")[2] if "@" in spec else spec
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


def ingest_key(bench_hash: str, haystack: str, session_id, position: int = 0) -> str:
    """The ``Idempotency-Key`` of one session: a digest of (bench content hash, haystack, session id).

    ``haystack`` names what is ingested between two resets (for a tier with one haystack, the tier);
    ``position`` is the session's place in it, since a session id recurs when its turns are interleaved
    with other sessions' turns.

    >>> ingest_key("sha256:ab", "core", 3) == ingest_key("sha256:ab", "core", 3) != ingest_key("sha256:ab", "core", 4)
    True
    """
    raw = json.dumps([bench_hash, haystack, str(session_id), position], ensure_ascii=True)
    return "memeval-" + hashlib.sha256(raw.encode()).hexdigest()[:40]


def parse_query_reply(body: bytes) -> tuple[tuple[str, ...], tuple[int, ...] | None, str | None]:
    """``(memories, turn_ids, answer)`` of a ``/query`` reply, or ``ValueError`` naming what is wrong.

    >>> parse_query_reply(b'{"memories": ["a"], "turn_ids": [3]}')
    (('a',), (3,), None)
    >>> parse_query_reply(b'{"memories": "text"}')
    Traceback (most recent call last):
    ...
    ValueError: 'memories' must be a list of strings or memory objects, got a string
    """
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        raise ValueError("reply is not JSON") from None
    if not isinstance(data, dict):
        raise ValueError(f"reply must be a JSON object, got {_kind(data)}")
    memories = data.get("memories")
    if not isinstance(memories, list):
        raise ValueError(f"'memories' must be a list of strings or memory objects, got {_kind(memories)}")
    for i, m in enumerate(memories):
        if not isinstance(m, str) and not (isinstance(m, dict) and isinstance(m.get("text"), str)):
            raise ValueError(f"'memories[{i}]' must be a string or an object with a string 'text', got {_kind(m)}")
        if isinstance(m, dict) and m.get("image") is not None and not isinstance(m["image"], str):
            raise ValueError(f"'memories[{i}].image' must be a string (a bench path or a data: URL)")
    ids = data.get("turn_ids")
    if ids is not None:
        if not isinstance(ids, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
            raise ValueError(f"'turn_ids' must be a list of integers, got {_kind(ids)}")
        ids = tuple(ids)
    answer = data.get("answer")
    if answer is not None and not isinstance(answer, str):
        raise ValueError(f"'answer' must be a string, got {_kind(answer)}")
    return tuple(memory_from_json(m) for m in memories), ids, answer


def _kind(v) -> str:
    if v is None:
        return "null"
    return {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        int: "an integer",
        float: "a number",
    }.get(type(v), type(v).__name__)


# -- a total deadline per request: a network backend whose every read/write is bounded by it ----------
class _Deadlines(threading.local):
    at: float | None = None


class _Stream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream, backend: "_DeadlineBackend"):
        self._inner, self._backend = inner, backend

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, self._backend.budget(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, self._backend.budget(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._backend.forget(self)
        self._inner.close()

    def start_tls(self, ssl_context, server_hostname=None, timeout=None):
        inner = self._inner.start_tls(
            ssl_context, server_hostname, self._backend.budget(timeout, httpcore.ConnectTimeout)
        )
        self._backend.forget(self)
        return self._backend.track(_Stream(inner, self._backend))

    def get_extra_info(self, info: str):
        return self._inner.get_extra_info(info)

    def abort(self) -> None:
        sock = self._inner.get_extra_info("socket")
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)  # wakes a thread blocked in recv/send on it
            except OSError:
                pass


class _DeadlineBackend(httpcore.NetworkBackend):
    def __init__(self):
        self._sync = httpcore.SyncBackend()
        self.deadline = _Deadlines()
        self.cancelled = threading.Event()
        self._open: set[_Stream] = set()
        self._lock = threading.Lock()

    def budget(self, timeout: float | None, exc: type[Exception]) -> float | None:
        if self.cancelled.is_set():
            raise exc("cancelled")
        at = self.deadline.at
        if at is None:
            return timeout
        left = at - time.monotonic()
        if left <= 0:
            raise exc("total deadline passed")
        return left if timeout is None else min(timeout, left)

    def track(self, stream: _Stream) -> _Stream:
        with self._lock:
            self._open.add(stream)
        return stream

    def forget(self, stream: _Stream) -> None:
        with self._lock:
            self._open.discard(stream)

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        inner = self._sync.connect_tcp(
            host, port, self.budget(timeout, httpcore.ConnectTimeout), local_address, socket_options
        )
        return self.track(_Stream(inner, self))

    def connect_unix_socket(self, path, timeout=None, socket_options=None):
        inner = self._sync.connect_unix_socket(path, self.budget(timeout, httpcore.ConnectTimeout), socket_options)
        return self.track(_Stream(inner, self))

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)

    def abort_all(self) -> None:
        self.cancelled.set()
        with self._lock:
            streams = list(self._open)
        for s in streams:
            s.abort()


def _transport(limits: httpx.Limits, backend: _DeadlineBackend) -> httpx.HTTPTransport:
    transport = httpx.HTTPTransport(limits=limits)
    # httpx takes no network backend; its pool is swapped for the same pool built over ours
    transport._pool = httpcore.ConnectionPool(
        max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections,
        keepalive_expiry=limits.keepalive_expiry,
        network_backend=backend,
    )
    return transport


class _TooBig(Exception):
    pass


class HttpSystem:
    version = "http-v1"
    concurrent_queries = True
    accepts_idempotency_key = True

    def __init__(
        self,
        base_url: str,
        api_key_env: str = "MEMEVAL_API_KEY",
        api_key_header: str = "authorization",
        timeout: float = 30.0,
        max_attempts: int = 4,
        backoff: float = 0.05,
        pool: int = 32,
        transport: httpx.BaseTransport | None = None,
        max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
        images: str = "path",
    ):
        if images not in ("path", "inline"):
            raise MemevalError(f"HTTP system: images must be 'path' or 'inline', got {images!r}")
        #: how a turn's image file reaches the server: its bench path, or its bytes as a data: URL
        self.image_input = images
        if timeout <= 0 or max_attempts < 1 or max_reply_bytes < 1:
            raise MemevalError("HTTP system: timeout, attempts and reply cap must be positive")
        try:
            url = httpx.URL(base_url)
        except (httpx.InvalidURL, TypeError, ValueError) as e:
            raise MemevalError(f"malformed system URL {public_url(base_url)!r} ({e})") from None
        if url.scheme not in ("http", "https") or not url.host:
            raise MemevalError(f"malformed system URL {public_url(base_url)!r} (need http://HOST[:PORT])")
        auth = httpx.BasicAuth(url.username, url.password) if url.username or url.password else None
        self.base_url = public_url(base_url).rstrip("/")
        self.name = f"http:{self.base_url}"
        self.params = {
            "base_url": self.base_url,
            "timeout_s": timeout,
            "max_attempts": max_attempts,
            "api_key_env": api_key_env,
            "max_reply_bytes": max_reply_bytes,
            **({"images": images} if images != "path" else {}),
        }
        self.timeout, self.max_attempts, self.backoff, self.max_reply_bytes = (
            timeout,
            max_attempts,
            backoff,
            max_reply_bytes,
        )
        headers = {}
        key = os.environ.get(api_key_env) if api_key_env else None
        if key:
            headers[api_key_header] = f"Bearer {key}" if api_key_header.lower() == "authorization" else key
        limits = httpx.Limits(max_connections=pool, max_keepalive_connections=pool)
        self._backend = _DeadlineBackend()
        self._http = httpx.Client(
            base_url=self.base_url,
            headers=headers,
            auth=auth,
            timeout=timeout,
            transport=transport or _transport(limits, self._backend),
            limits=limits,
        )

    # -- protocol -------------------------------------------------------------------------------
    def reset(self) -> None:
        self._call("POST", "/reset")

    def ingest(self, session: Session, idempotency_key: str | None = None) -> None:
        body = {"session_id": session.session_id, "date": session.date, "turns": [t.to_dict() for t in session.turns]}
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
        self._call("POST", "/sessions", json=body, headers=headers)

    def query(self, question: str, asked_at: str | None) -> Recall:
        body, elapsed_ns, attempts = self._call("POST", "/query", json={"question": question, "asked_at": asked_at})
        try:
            memories, ids, answer = parse_query_reply(body)
        except ValueError as e:
            raise SystemCallError(f"POST /query: malformed reply ({e}; {len(body)} bytes)") from None
        return Recall(memories, ids, answer, latency_ms=elapsed_ns / 1e6, response_bytes=len(body), attempts=attempts)

    # -- timing -----------------------------------------------------------------------------------
    def warm(self, n: int = 5) -> None:
        """Open the pooled connection and get past TCP slow start before anything is timed."""
        for _ in range(n):
            self._call("GET", "/health")

    def network_floor_ms(self, n: int = 21) -> float:
        """Median round trip of the no-op ``GET /health`` on the warmed connection."""
        return statistics.median(self._call("GET", "/health")[1] / 1e6 for _ in range(n))

    def _once(self, method: str, path: str, **kw) -> tuple[httpx.Response, bytes]:
        """One attempt, bounded by the total deadline and the reply cap."""
        self._backend.deadline.at = time.monotonic() + self.timeout
        try:
            with self._http.stream(method, path, **kw) as resp:
                declared = resp.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > self.max_reply_bytes:
                    raise _TooBig(int(declared))
                chunks, size = [], 0
                for chunk in resp.iter_bytes():
                    size += len(chunk)
                    if size > self.max_reply_bytes:
                        raise _TooBig(size)
                    chunks.append(chunk)
                return resp, b"".join(chunks)
        finally:
            self._backend.deadline.at = None

    def _call(self, method: str, path: str, **kw) -> tuple[bytes, int, int]:
        """``(body, elapsed ns of the successful attempt, attempts)`` under the shared retry policy
        (``memeval.retry``); a wait between attempts ends at once on :meth:`cancel`."""
        cancelled = SystemCallError(f"{method} {path}: cancelled")

        def sleep(wait: float) -> None:
            if self._backend.cancelled.wait(wait):
                raise cancelled

        def attempt(n: int) -> tuple[bytes, int, int]:
            if self._backend.cancelled.is_set():
                raise cancelled
            t0 = time.perf_counter_ns()
            try:
                resp, body = self._once(method, path, **kw)
                elapsed = time.perf_counter_ns() - t0
            except _TooBig as e:
                raise SystemCallError(
                    f"{method} {path}: reply of {e.args[0]}+ bytes is above the cap of "
                    f"{self.max_reply_bytes} bytes (--max-reply-bytes)"
                ) from None
            except httpx.TimeoutException:
                if self._backend.cancelled.is_set():
                    raise cancelled from None
                raise Retryable(f"no complete reply within the {self.timeout}s deadline") from None
            except httpx.TransportError as e:
                if self._backend.cancelled.is_set():
                    raise cancelled from None
                raise Retryable(f"connection error ({type(e).__name__})") from None
            if resp.status_code < 400:
                return body, elapsed, n
            if resp.status_code not in RETRY_STATUS:
                raise SystemCallError(f"{method} {path}: HTTP {resp.status_code}")
            # Retry-After: 0 means "now": backoff applies, as before the shared policy
            raise Retryable(f"HTTP {resp.status_code}", retry_after(resp) or None)

        try:
            return RetryPolicy(self.max_attempts, self.backoff).call(attempt, sleep=sleep)
        except Retryable as e:
            raise SystemCallError(f"{method} {path}: gave up after {self.max_attempts} attempts ({e.reason})") from None

    def cancel(self) -> None:
        """Abort every request in flight and refuse new ones (Ctrl-C): blocked threads return within ms."""
        self._backend.abort_all()

    def close(self) -> None:
        self._http.close()
