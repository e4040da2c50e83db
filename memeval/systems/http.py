"""The HTTP adapter: a memory system behind the protocol of memory-api.md.

One pooled httpx transport per run (for ``http://`` the lean :mod:`.http_wire`, for ``https://``
httpx's own) on the process's HTTP event loop (a daemon thread, uvloop where installed;
:mod:`.http_net`), warmed before timing. The ``async`` methods (``aquery``, ...)
run on that loop, so one process keeps many requests in flight without a thread each (``loadtest``
schedules its open loop there); the plain methods (``query``, ...) wait for them from any other
thread (the runner's workers). Each query is timed with ``perf_counter_ns`` around the successful
attempt, on the loop; response bytes recorded; 429/5xx, timeouts and dropped connections retried
with exponential backoff (honouring ``Retry-After``) up to ``max_attempts``. Every
``POST /sessions`` carries an ``Idempotency-Key``, so a retried session is never stored twice by a
server that keeps the protocol.

``timeout`` is a *total* deadline per attempt (connect + send + receive, one ``asyncio.timeout``): a
server trickling bytes cannot hold a request past it. ``cancel()`` aborts every request in flight
and refuses new ones (used on Ctrl-C). Replies are read up to ``max_reply_bytes`` and ``/query``
replies are checked against the schema; a reply that breaks either is a :class:`SystemCallError`
(an error record), never a score.

The API key is read from the environment variable ``api_key_env`` and sent only in a header;
user-info in the URL (``http://user:pass@host``) is sent as basic auth and stripped from ``name``
and ``params`` (what manifests and records hold).
"""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import hashlib
import json
import os
import statistics
import threading
import time
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from ..bench.model import Session
from ..errors import MemevalError
from ..retry import Retryable, RetryPolicy, retry_after
from .base import BaseMemorySystem, Capabilities, Recall, SystemCallError, memory_from_json
from .http_net import background_loop
from .http_wire import WireTransport

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


class _TooBig(Exception):
    pass


def _transport(scheme: str, pool: int) -> httpx.AsyncBaseTransport:
    """The lean wire transport for ``http://``; httpx's own (TLS and all) for ``https://``."""
    if scheme == "http":
        return WireTransport(max_connections=pool)
    return httpx.AsyncHTTPTransport(limits=httpx.Limits(max_connections=pool, max_keepalive_connections=pool))


class HttpSystem(BaseMemorySystem):
    version = "http-v1"
    #: many queries in flight at once; every session sent with an Idempotency-Key
    capabilities = Capabilities(concurrent_queries=True, idempotent_ingest=True)

    def __init__(
        self,
        base_url: str,
        api_key_env: str = "MEMEVAL_API_KEY",
        api_key_header: str = "authorization",
        timeout: float = 30.0,
        max_attempts: int = 4,
        backoff: float = 0.05,
        pool: int = 32,
        transport: httpx.AsyncBaseTransport | None = None,
        max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
        images: str = "path",
    ):
        if images not in ("path", "inline"):
            raise MemevalError(f"HTTP system: images must be 'path' or 'inline', got {images!r}")
        if images == "inline":  # a turn's image reaches the server as its bytes (a data: URL)
            self.capabilities = replace(self.capabilities, image_input="inline")
        if timeout <= 0 or max_attempts < 1 or max_reply_bytes < 1 or pool < 1:
            raise MemevalError("HTTP system: timeout, attempts, pool and reply cap must be positive")
        try:
            url = httpx.URL(base_url)
        except (httpx.InvalidURL, TypeError, ValueError) as e:
            raise MemevalError(f"malformed system URL {public_url(base_url)!r} ({e})") from None
        if url.scheme not in ("http", "https") or not url.host:
            raise MemevalError(f"malformed system URL {public_url(base_url)!r} (need http://HOST[:PORT])")
        self.base_url = public_url(base_url).rstrip("/")
        self.name = f"http:{self.base_url}"
        self.params: dict[str, Any] = {
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
        headers = {"accept": "application/json", "user-agent": f"memeval-http/{self.version}"}
        key = os.environ.get(api_key_env) if api_key_env else None
        if key:
            headers[api_key_header] = f"Bearer {key}" if api_key_header.lower() == "authorization" else key
        if url.username or url.password:  # user-info in the URL: basic auth (it wins over a bearer key)
            basic = base64.b64encode(f"{url.username}:{url.password}".encode()).decode("ascii")
            headers["authorization"] = f"Basic {basic}"
        self._headers = headers
        self._loop = background_loop()
        self._cancelled = threading.Event()
        self._tasks: set[asyncio.Task] = set()
        self._closed = False
        # httpx's transport is called directly: no cookies, redirects or auth flows to run per request
        # (the protocol has none), and no httpx timeouts: each attempt has one total deadline (_call)
        self._transport = transport or _transport(url.scheme, pool)
        base = httpx.URL(self.base_url + "/")
        self._urls = {p: base.join(p.lstrip("/")) for p in ("/reset", "/sessions", "/query", "/health")}

    # -- protocol (any thread but the loop's) ------------------------------------------------------
    def reset(self) -> None:
        self.run(self.areset())

    def ingest(self, session: Session, idempotency_key: str | None = None) -> None:
        self.run(self.aingest(session, idempotency_key))

    def query(self, question: str, asked_at: str | None) -> Recall:
        return self.run(self.aquery(question, asked_at))

    def warm(self, n: int = 5) -> None:
        """Open the pooled connection and get past TCP slow start before anything is timed."""
        self.run(self.awarm(n))

    def network_floor_ms(self, n: int = 21) -> float:
        """Median round trip of the no-op ``GET /health`` on the warmed connection."""
        return self.run(self.anetwork_floor_ms(n))

    def run(self, coro):
        """Run ``coro`` on the adapter's event loop and wait for it (Ctrl-C while waiting stops it too)."""
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self._loop:
            coro.close()
            raise RuntimeError("HttpSystem: on its own event loop, await the async methods (aquery, ...)")
        fut = asyncio.run_coroutine_threadsafe(coro, self._loop)
        try:
            return fut.result()
        except concurrent.futures.CancelledError:
            raise SystemCallError("cancelled") from None
        except BaseException:
            fut.cancel()
            raise

    # -- protocol (on the loop) -----------------------------------------------------------------------
    async def areset(self) -> None:
        await self._call("POST", "/reset")

    async def aingest(self, session: Session, idempotency_key: str | None = None) -> None:
        body = {"session_id": session.session_id, "date": session.date, "turns": [t.to_dict() for t in session.turns]}
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
        await self._call("POST", "/sessions", json=body, headers=headers)

    async def aquery(self, question: str, asked_at: str | None) -> Recall:
        body, elapsed_ns, attempts = await self._call(
            "POST", "/query", json={"question": question, "asked_at": asked_at}
        )
        try:
            memories, ids, answer = parse_query_reply(body)
        except ValueError as e:
            raise SystemCallError(f"POST /query: malformed reply ({e}; {len(body)} bytes)") from None
        return Recall(memories, ids, answer, latency_ms=elapsed_ns / 1e6, response_bytes=len(body), attempts=attempts)

    async def awarm(self, n: int = 5) -> None:
        for _ in range(n):
            await self._call("GET", "/health")

    async def anetwork_floor_ms(self, n: int = 21) -> float:
        return statistics.median([(await self._call("GET", "/health"))[1] / 1e6 for _ in range(n)])

    async def _once(self, method: str, path: str, json=None, headers=None) -> tuple[httpx.Response, bytes]:
        """One attempt, bounded by the reply cap (the caller bounds it in time)."""
        request = httpx.Request(method, self._urls[path], headers={**self._headers, **(headers or {})}, json=json)
        resp = await self._transport.handle_async_request(request)
        resp.request = request
        try:
            declared = resp.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > self.max_reply_bytes:
                raise _TooBig(int(declared))
            chunks, size = [], 0
            async for chunk in resp.aiter_bytes():
                size += len(chunk)
                if size > self.max_reply_bytes:
                    raise _TooBig(size)
                chunks.append(chunk)
            return resp, b"".join(chunks)
        finally:
            await resp.aclose()

    async def _call(self, method: str, path: str, **kw) -> tuple[bytes, int, int]:
        """``(body, elapsed ns of the successful attempt, attempts)`` under the shared retry policy
        (``memeval.retry``); :meth:`cancel` ends an attempt or a wait between attempts at once."""
        if self._cancelled.is_set():
            raise SystemCallError(f"{method} {path}: cancelled")
        task = asyncio.current_task()
        assert task is not None  # a coroutine of the shared loop always runs in a task
        self._tasks.add(task)

        async def attempt(n: int) -> tuple[bytes, int, int]:
            t0 = time.perf_counter_ns()
            try:
                async with asyncio.timeout(self.timeout):
                    resp, body = await self._once(method, path, **kw)
                elapsed = time.perf_counter_ns() - t0
            except _TooBig as e:
                raise SystemCallError(
                    f"{method} {path}: reply of {e.args[0]}+ bytes is above the cap of "
                    f"{self.max_reply_bytes} bytes (--max-reply-bytes)"
                ) from None
            except (TimeoutError, httpx.TimeoutException):
                raise Retryable(f"no complete reply within the {self.timeout}s deadline") from None
            except httpx.TransportError as e:
                raise Retryable(f"connection error ({type(e).__name__})") from None
            if resp.status_code < 400:
                return body, elapsed, n
            if resp.status_code not in RETRY_STATUS:
                raise SystemCallError(f"{method} {path}: HTTP {resp.status_code}")
            # Retry-After: 0 means "now": backoff applies, as before the shared policy
            raise Retryable(f"HTTP {resp.status_code}", retry_after(resp) or None)

        try:
            return await RetryPolicy(self.max_attempts, self.backoff).acall(attempt)
        except Retryable as e:
            raise SystemCallError(f"{method} {path}: gave up after {self.max_attempts} attempts ({e.reason})") from None
        except asyncio.CancelledError:
            if not self._cancelled.is_set():
                raise
            task.uncancel()  # our own cancel(): an error of this call, not of the task that made it
            raise SystemCallError(f"{method} {path}: cancelled") from None
        finally:
            self._tasks.discard(task)

    def cancel(self) -> None:
        """Abort every request in flight and refuse new ones (Ctrl-C): waiting threads return within ms."""
        self._cancelled.set()

        def cancel_all() -> None:
            for task in list(self._tasks):
                task.cancel()

        try:
            self._loop.call_soon_threadsafe(cancel_all)
        except RuntimeError:  # the loop is gone (interpreter exit)
            pass

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self.run(self._transport.aclose())

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            await self._transport.aclose()
