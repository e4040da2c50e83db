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

Haystacks are fenced (:mod:`.fencing`): ``reset`` sends a fresh ``Idempotency-Key`` (the same on its
retries) and keeps the generation the server returns; every ``/sessions`` and ``/query`` then carries
it, and a 409 (generation no longer current) is a :class:`StaleGeneration` error, never retried. A
reset that needed more than one attempt is confirmed (``GET /stats?generation=G``) before anything is
ingested. ``verify_ingest`` compares what the server holds for the generation (session count and
digest) with what was sent; a server that returns no generation is *unfenced* and only its count is
checked (where its ``/stats`` gives one).

``timeout`` is a *total* deadline per attempt (connect + send + receive, one ``asyncio.timeout``): a
server trickling bytes cannot hold a request past it. ``cancel()`` aborts every request in flight
and refuses new ones (used on Ctrl-C). Replies are read up to ``max_reply_bytes`` *decompressed*,
counted as they are inflated (a gzip or deflate reply is never expanded past the cap; other encodings,
which are never asked for, are refused), and ``/query`` replies are checked against the schema; a
reply that breaks either is a :class:`SystemCallError` (an error record), never a score.

The API key is read from the environment variable ``api_key_env`` and sent only in a header;
user-info in the URL (``http://user:pass@host``) is sent as basic auth and stripped from ``name``
and ``params`` (what manifests and records hold). Both at once for the same ``Authorization`` header
are refused with one line (neither silently wins).
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
import uuid
import zlib
from dataclasses import replace
from typing import Any

import httpx

from ..bench.model import Session
from ..errors import MemevalError, ProtocolError, StateError, SystemCallError, SystemContractError
from ..text.urls import public_url
from ..retry import Retryable, RetryPolicy, retry_after
from .base import BaseMemorySystem, Capabilities, IngestCheck, Recall, memory_from_json
from .fencing import GENERATION_HEADER, haystack_digest, session_digest
from .http_net import background_loop
from .http_wire import WireTransport

__all__ = [
    "HttpSystem",
    "StaleGeneration",
    "HttpRefused",
    "ingest_key",
    "parse_query_reply",
    "valid_name",
    "DEFAULT_MAX_REPLY_BYTES",
]

RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
DEFAULT_MAX_REPLY_BYTES = 8 * 1024 * 1024


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
    """``(memories, turn_ids, answer)`` of a ``/query`` reply, or :class:`ProtocolError` (a ``ValueError``) naming what is wrong.

    >>> parse_query_reply(b'{"memories": ["a"], "turn_ids": [3]}')
    (('a',), (3,), None)
    >>> parse_query_reply(b'{"memories": "text"}')
    Traceback (most recent call last):
    ...
    memeval.errors.ProtocolError: 'memories' must be a list of strings or memory objects, got a string
    """
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        raise ProtocolError("reply is not JSON") from None
    if not isinstance(data, dict):
        raise ProtocolError(f"reply must be a JSON object, got {_kind(data)}")
    memories = data.get("memories")
    if not isinstance(memories, list):
        raise ProtocolError(f"'memories' must be a list of strings or memory objects, got {_kind(memories)}")
    for i, m in enumerate(memories):
        if not isinstance(m, str) and not (isinstance(m, dict) and isinstance(m.get("text"), str)):
            raise ProtocolError(f"'memories[{i}]' must be a string or an object with a string 'text', got {_kind(m)}")
        if isinstance(m, dict) and m.get("image") is not None and not isinstance(m["image"], str):
            raise ProtocolError(f"'memories[{i}].image' must be a string (a bench path or a data: URL)")
    ids = data.get("turn_ids")
    if ids is not None:
        if not isinstance(ids, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
            raise ProtocolError(f"'turn_ids' must be a list of integers, got {_kind(ids)}")
        ids = tuple(ids)
    answer = data.get("answer")
    if answer is not None and not isinstance(answer, str):
        raise ProtocolError(f"'answer' must be a string, got {_kind(answer)}")
    return tuple(memory_from_json(m) for m in memories), ids, answer


def _generation_of(body: bytes) -> str | None:
    """The generation in a ``/reset`` reply (None for 204, or a reply without one: unfenced)."""
    if not body.strip():
        return None
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return None
    g = data.get("generation") if isinstance(data, dict) else None
    return g if isinstance(g, str) and 0 < len(g) <= 255 and g.isascii() and g.isprintable() else None


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


class HttpRefused(SystemCallError):
    """A reply with a status that is not retried (4xx but 429): ``status`` is the HTTP status."""

    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


class StaleGeneration(HttpRefused):
    """409: the generation the request named is no longer current (the memory was reset since)."""


class _TooBig(MemevalError):
    pass


class _BadEncoding(MemevalError):
    pass


class _Inflater:
    """A reply body decoded as it is read, never past ``cap`` decompressed bytes (``_TooBig`` above).

    >>> import gzip
    >>> inf = _Inflater("gzip", cap=10_000)
    >>> len(inf.feed(gzip.compress(b"x" * 5000)))
    5000
    >>> _Inflater("gzip", cap=1000).feed(gzip.compress(b"x" * 5000))
    Traceback (most recent call last):
    ...
    memeval.systems.http._TooBig: 1001
    """

    def __init__(self, encoding: str, cap: int):
        self.cap, self.size, self._raw_fallback = cap, 0, False
        enc = encoding.strip().lower()
        if enc in ("", "identity"):
            self._z = None
        elif enc in ("gzip", "x-gzip"):
            self._z = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif enc == "deflate":  # zlib-wrapped as the RFC says, or raw deflate as some servers send
            self._z, self._raw_fallback = zlib.decompressobj(), True
        else:
            raise _BadEncoding(f"content-encoding {encoding!r} was not asked for")

    def feed(self, data: bytes) -> bytes:
        if self._z is None:
            self.size += len(data)
            if self.size > self.cap:
                raise _TooBig(self.size)
            return data
        out: list[bytes] = []
        while data:
            try:
                piece = self._z.decompress(data, self.cap - self.size + 1)  # never more than the cap allows
            except zlib.error as e:
                if self._raw_fallback and self.size == 0 and not out:
                    self._z, self._raw_fallback = zlib.decompressobj(-zlib.MAX_WBITS), False
                    continue
                raise _BadEncoding(f"reply body does not decode ({e})") from None
            self._raw_fallback = False
            self.size += len(piece)
            if self.size > self.cap:
                raise _TooBig(self.size)
            out.append(piece)
            rest = self._z.unconsumed_tail
            if not piece and rest == data:
                break
            data = rest
        return b"".join(out)


_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-+@")


def valid_name(v: object) -> bool:
    """A name or version a server may report: 1-64 characters of ``[A-Za-z0-9._+@-]``, not dot-led or -ended.

    >>> valid_name("bm25-http"), valid_name("../x"), valid_name("a b")
    (True, False, False)
    """
    return isinstance(v, str) and 0 < len(v) <= 64 and set(v) <= _NAME_CHARS and v.strip(".") == v


def _server_info(body: bytes) -> dict[str, Any]:
    """The ``name``, ``version`` and ``params`` a ``/health`` reply reports, where they are well formed:
    a name or version of at most 64 characters from ``[A-Za-z0-9._-+@]``, params an object of at most
    32 scalar values (anything else is left out; a server's reply is not trusted).

    >>> _server_info(b'{"ok": true, "name": "bm25-http", "version": "1.2", "params": {"k": 10}}')
    {'name': 'bm25-http', 'version': '1.2', 'params': {'k': 10}}
    >>> _server_info(b'{"name": "../etc passwd", "version": 3}'), _server_info(b"ok")
    ({}, {})
    """
    try:
        data = json.loads(body[:65536]) if len(body) <= 65536 else None
    except (ValueError, RecursionError):
        return {}
    if not isinstance(data, dict):
        return {}
    out: dict[str, Any] = {}
    for k in ("name", "version"):
        v = data.get(k)
        if valid_name(v):
            out[k] = v
    params = data.get("params")
    if (
        isinstance(params, dict)
        and len(params) <= 32
        and all(
            isinstance(k, str) and len(k) <= 64 and isinstance(v, (str, int, float, bool, type(None)))
            for k, v in params.items()
        )
    ):
        out["params"] = {k: (v[:200] if isinstance(v, str) else v) for k, v in params.items()}
    return out


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
        #: the system's name, version and settings as the server reports them (``fetch_info``); until
        #: then, and for a server that reports none, "http" and "unknown" (never the URL or its port)
        self.name, self.server_version = "http", "unknown"
        self.server_params: dict[str, Any] = {}
        self.server_named = False
        self._host = (url.host or "") + url.path.rstrip("/")
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
        if url.username or url.password:  # user-info in the URL: basic auth
            if key and api_key_header.lower() == "authorization":
                raise MemevalError(
                    f"system URL {self.base_url!r} carries user-info and ${api_key_env} is set: both would be "
                    f"the Authorization header; remove the user-info or unset {api_key_env}"
                )
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
        self._urls = {
            p: base.join(p.lstrip("/")) for p in ("/reset", "/sessions", "/query", "/health", "/stats", "/memories")
        }
        #: the generation the server returned on the last reset (None: unfenced, or not reset yet)
        self.generation: str | None = None
        self._sent: list[str] = []  # digests of the session bodies stored since the last reset
        self._reset_attempts = 0

    # -- protocol (any thread but the loop's) ------------------------------------------------------
    def reset(self) -> None:
        self.run(self.areset())

    def verify_ingest(self) -> IngestCheck:
        """What the server holds for the current generation, against what was sent since the reset."""
        return self.run(self.averify_ingest())

    def ingest(self, session: Session, idempotency_key: str | None = None) -> None:
        self.run(self.aingest(session, idempotency_key))

    def memories(self, haystack: str) -> tuple[str, ...]:
        """``GET /memories`` (optional in the protocol): what the current generation stores. A server
        without it (404, 405, 501) is a :class:`SystemContractError`, as for an in-process system that
        does not list its memories; a malformed reply is a :class:`SystemCallError`."""
        return self.run(self.amemories(haystack))

    def query(self, question: str, asked_at: str | None) -> Recall:
        return self.run(self.aquery(question, asked_at))

    @property
    def label(self) -> str:
        """What runs, records and tables call this system: the server's own name, else its host and
        path (never the port: a server on another port is the same system)."""
        return self.name if self.server_named else self._host or "http"

    def fetch_info(self) -> dict[str, Any]:
        """``GET /health`` once (under the retry policy) and take the name, version and params the
        server reports there (``{"name", "version", "params"}``, each optional); a reply that is not
        such an object leaves them unknown. Raises :class:`SystemCallError` when the server cannot
        be reached."""
        body, _, _ = self.run(self._call("GET", "/health"))
        info = _server_info(body)
        if info.get("name"):
            self.name, self.server_named = info["name"], True
        self.server_version = info.get("version") or "unknown"
        self.server_params = info.get("params") or {}
        return info

    def health_problem(self, timeout: float = 5.0) -> str | None:
        """One ``GET /health`` attempt, without retries: None when the server answers 2xx, else what failed."""
        return self.run(self._health_once(min(timeout, self.timeout)))

    async def _health_once(self, timeout: float) -> str | None:
        try:
            async with asyncio.timeout(timeout):
                resp, _ = await self._once("GET", "/health")
        except (TimeoutError, httpx.TimeoutException):
            return f"GET /health: no reply within {timeout:g}s"
        except (httpx.TransportError, _TooBig) as e:
            return f"GET /health: {type(e).__name__}"
        return None if resp.status_code < 400 else f"GET /health: HTTP {resp.status_code}"

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
            raise StateError("HttpSystem: on its own event loop, await the async methods (aquery, ...)")
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
        """Reset under a fresh key (the same on retries); keep the generation the server returns. A reset
        that took more than one attempt is confirmed current before anything is ingested."""
        self.generation, self._sent = None, []
        key = f"memeval-reset-{uuid.uuid4().hex}"
        body, _, attempts = await self._call("POST", "/reset", headers={"Idempotency-Key": key})
        self._reset_attempts = attempts
        generation = _generation_of(body)
        if generation is not None and attempts > 1:  # an earlier attempt may still land: is ours current?
            try:
                held = await self._stats(generation)
            except StaleGeneration:
                held = {"generation": "another"}
            if held.get("generation", generation) != generation or held.get("sessions", 0) != 0:
                raise SystemCallError(
                    f"POST /reset: generation {generation} not confirmed after {attempts} attempts "
                    f"(the server holds {held.get('generation')!r} with {held.get('sessions')!r} sessions)"
                )
        self.generation = generation

    async def aingest(self, session: Session, idempotency_key: str | None = None) -> None:
        body = {"session_id": session.session_id, "date": session.date, "turns": [t.to_dict() for t in session.turns]}
        raw = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
        headers = {"content-type": "application/json", **self._fence()}
        if idempotency_key:
            headers["Idempotency-Key"] = idempotency_key
        await self._call("POST", "/sessions", content=raw, headers=headers)
        self._sent.append(session_digest(raw))

    async def aquery(self, question: str, asked_at: str | None) -> Recall:
        body, elapsed_ns, attempts = await self._call(
            "POST", "/query", json={"question": question, "asked_at": asked_at}, headers=self._fence() or None
        )
        try:
            memories, ids, answer = parse_query_reply(body)
        except ValueError as e:
            raise SystemCallError(f"POST /query: malformed reply ({e}; {len(body)} bytes)") from None
        return Recall(memories, ids, answer, latency_ms=elapsed_ns / 1e6, response_bytes=len(body), attempts=attempts)

    async def amemories(self, haystack: str) -> tuple[str, ...]:
        try:
            body, _, _ = await self._call(
                "GET", "/memories", params={"haystack": haystack}, headers=self._fence() or None
            )
        except HttpRefused as e:  # 409 (StaleGeneration) included: raised as it is
            if e.status in (404, 405, 501):
                raise SystemContractError(
                    f"system {self.label!r} does not list its stored memories (GET /memories: HTTP {e.status})"
                ) from None
            raise
        try:
            memories, _, _ = parse_query_reply(body)
        except ValueError as e:
            raise SystemCallError(f"GET /memories: malformed reply ({e}; {len(body)} bytes)") from None
        return memories

    async def averify_ingest(self) -> IngestCheck:
        fenced, retried = self.generation is not None, self._reset_attempts > 1
        n, digest = len(self._sent), haystack_digest(self._sent)
        try:
            held = await self._stats(self.generation)
        except StaleGeneration:
            problem = f"generation {self.generation} is no longer current: the memory was reset during ingest"
            return IngestCheck(fenced, "count+digest", problem, retried)
        except HttpRefused as e:
            if e.status in (404, 405, 501):  # no /stats: nothing to check against
                return IngestCheck(fenced, "none", None, retried)
            raise
        got_n, got_digest = held.get("sessions"), held.get("digest")
        if not isinstance(got_n, int) or isinstance(got_n, bool):
            return IngestCheck(fenced, "none", None, retried)
        checked = "count+digest" if fenced and isinstance(got_digest, str) else "count"
        if got_n != n:
            return IngestCheck(fenced, checked, f"the server holds {got_n} sessions, {n} were sent", retried)
        if checked == "count+digest" and got_digest != digest:
            problem = f"the server's digest of its {got_n} sessions is not that of the sessions sent"
            return IngestCheck(fenced, checked, problem, retried)
        return IngestCheck(fenced, checked, None, retried)

    async def _stats(self, generation: str | None) -> dict:
        body, _, _ = await self._call("GET", "/stats", params={"generation": generation} if generation else None)
        try:
            held = json.loads(body)
        except (ValueError, RecursionError):
            raise SystemCallError(f"GET /stats: reply is not JSON ({len(body)} bytes)") from None
        if not isinstance(held, dict):
            raise SystemCallError(f"GET /stats: reply must be a JSON object, got {_kind(held)}")
        return held

    def _fence(self) -> dict[str, str]:
        return {GENERATION_HEADER: self.generation} if self.generation is not None else {}

    async def awarm(self, n: int = 5) -> None:
        for _ in range(n):
            await self._call("GET", "/health")

    async def anetwork_floor_ms(self, n: int = 21) -> float:
        return statistics.median([(await self._call("GET", "/health"))[1] / 1e6 for _ in range(n)])

    async def _once(
        self, method: str, path: str, json=None, headers=None, content=None, params=None
    ) -> tuple[httpx.Response, bytes]:
        """One attempt, bounded by the reply cap on decompressed bytes (the caller bounds it in time)."""
        url = self._urls[path] if params is None else self._urls[path].copy_merge_params(params)
        request = httpx.Request(method, url, headers={**self._headers, **(headers or {})}, json=json, content=content)
        resp = await self._transport.handle_async_request(request)
        resp.request = request
        try:
            declared = resp.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > self.max_reply_bytes:
                raise _TooBig(int(declared))
            if resp.is_stream_consumed:  # read whole by the transport (httpx.MockTransport): already decoded
                if len(resp.content) > self.max_reply_bytes:
                    raise _TooBig(len(resp.content))
                return resp, resp.content
            inflater = _Inflater(resp.headers.get("content-encoding", ""), self.max_reply_bytes)
            chunks = []
            async for chunk in resp.aiter_raw():  # raw: decoded here, counted as it is inflated
                chunks.append(inflater.feed(chunk))
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
            except _BadEncoding as e:
                raise SystemCallError(f"{method} {path}: {e}") from None
            except (TimeoutError, httpx.TimeoutException):
                raise Retryable(f"no complete reply within the {self.timeout}s deadline", connection=True) from None
            except httpx.TransportError as e:
                raise Retryable(f"connection error ({type(e).__name__})", connection=True) from None
            if resp.status_code < 400:
                return body, elapsed, n
            if resp.status_code == 409 and path != "/reset":
                raise StaleGeneration(
                    f"{method} {path}: HTTP 409, generation {self.generation} is no longer current "
                    "(the memory was reset since)",
                    409,
                )
            if resp.status_code not in RETRY_STATUS:
                raise HttpRefused(f"{method} {path}: HTTP {resp.status_code}", resp.status_code)
            # Retry-After: 0 means "now": backoff applies, as before the shared policy
            raise Retryable(f"HTTP {resp.status_code}", retry_after(resp) or None)

        try:
            return await RetryPolicy(self.max_attempts, self.backoff).acall(attempt)
        except Retryable as e:
            raise SystemCallError(
                f"{method} {path}: gave up after {self.max_attempts} attempts ({e.reason})", connection=e.connection
            ) from None
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
