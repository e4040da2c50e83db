"""The HTTP adapter: a memory system behind the protocol of memory-api.md.

One pooled ``httpx.Client`` per run, warmed before timing; each query timed with
``perf_counter_ns`` around the successful attempt; response bytes recorded; 429/5xx, timeouts and
dropped connections retried with exponential backoff (honouring ``Retry-After``) up to
``max_attempts``. The API key is read from the environment variable ``api_key_env`` and sent only
in a header; it never appears in ``params`` (what the manifest records).
"""

from __future__ import annotations

import os
import statistics
import time

import httpx

from ..bench.model import Session
from .base import Recall, SystemCallError, memory_from_json

__all__ = ["HttpSystem"]

RETRY_STATUS = frozenset({429, 500, 502, 503, 504})


class HttpSystem:
    version = "http-v1"
    concurrent_queries = True

    def __init__(self, base_url: str, api_key_env: str = "MEMEVAL_API_KEY", api_key_header: str = "authorization",
                 timeout: float = 30.0, max_attempts: int = 4, backoff: float = 0.05, pool: int = 32,
                 transport: httpx.BaseTransport | None = None):
        self.base_url = base_url.rstrip("/")
        self.name = f"http:{self.base_url}"
        self.params = {"base_url": self.base_url, "timeout_s": timeout, "max_attempts": max_attempts,
                       "api_key_env": api_key_env}
        self.max_attempts, self.backoff = max_attempts, backoff
        headers = {}
        key = os.environ.get(api_key_env) if api_key_env else None
        if key:
            headers[api_key_header] = f"Bearer {key}" if api_key_header.lower() == "authorization" else key
        self._http = httpx.Client(base_url=self.base_url, headers=headers, timeout=timeout, transport=transport,
                                  limits=httpx.Limits(max_connections=pool, max_keepalive_connections=pool))

    # -- protocol -------------------------------------------------------------------------------
    def reset(self) -> None:
        self._call("POST", "/reset")

    def ingest(self, session: Session) -> None:
        body = {"session_id": session.session_id, "date": session.date,
                "turns": [t.to_dict() for t in session.turns]}
        self._call("POST", "/sessions", json=body)

    def query(self, question: str, asked_at: str | None) -> Recall:
        resp, elapsed_ns, attempts = self._call("POST", "/query", json={"question": question, "asked_at": asked_at})
        try:
            data = resp.json()
            memories = tuple(memory_from_json(m) for m in data.get("memories") or ())
            ids = data.get("turn_ids")
            answer = data.get("answer")
        except (ValueError, AttributeError, TypeError):
            raise SystemCallError(f"/query returned malformed JSON ({len(resp.content)} bytes)") from None
        return Recall(memories, None if ids is None else tuple(int(i) for i in ids),
                      None if answer is None else str(answer), latency_ms=elapsed_ns / 1e6,
                      response_bytes=len(resp.content), attempts=attempts)

    # -- timing -----------------------------------------------------------------------------------
    def warm(self, n: int = 5) -> None:
        """Open the pooled connection and get past TCP slow start before anything is timed."""
        for _ in range(n):
            self._call("GET", "/health")

    def network_floor_ms(self, n: int = 21) -> float:
        """Median round trip of the no-op ``GET /health`` on the warmed connection."""
        return statistics.median(self._call("GET", "/health")[1] / 1e6 for _ in range(n))

    def _call(self, method: str, path: str, **kw) -> tuple[httpx.Response, int, int]:
        last = "no attempt"
        for attempt in range(1, self.max_attempts + 1):
            t0 = time.perf_counter_ns()
            try:
                resp = self._http.request(method, path, **kw)
                elapsed = time.perf_counter_ns() - t0
            except httpx.TimeoutException:
                last = f"timeout after {self._http.timeout.read}s"
                wait = self.backoff * 2 ** (attempt - 1)
            except httpx.TransportError as e:
                last = f"connection error ({type(e).__name__})"
                wait = self.backoff * 2 ** (attempt - 1)
            else:
                if resp.status_code < 400:
                    return resp, elapsed, attempt
                last = f"HTTP {resp.status_code}"
                if resp.status_code not in RETRY_STATUS:
                    raise SystemCallError(f"{method} {path}: {last}")
                wait = _retry_after(resp) or self.backoff * 2 ** (attempt - 1)
            if attempt < self.max_attempts:
                time.sleep(min(wait, 30.0))
        raise SystemCallError(f"{method} {path}: gave up after {self.max_attempts} attempts ({last})")

    def close(self) -> None:
        self._http.close()


def _retry_after(resp: httpx.Response) -> float | None:
    try:
        return float(resp.headers["retry-after"])
    except (KeyError, ValueError):
        return None
