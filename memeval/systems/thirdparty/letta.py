"""``letta``: a Letta server's archival memory (passages) over its REST API, in plain httpx.

``letta:url=URL[,k=10][,model=M][,embedding=E][,key_env=LETTA_API_KEY][,timeout=60][,max_attempts=5]``

Self-hosted (``url=http://localhost:8283``) or Letta's cloud (``url=https://api.letta.com``, the
default). Endpoints (docs.letta.com, API reference; the ``letta-client`` SDK's ``agents`` and
``agents.passages`` resources):

- ``reset``: ``DELETE /v1/agents/{id}`` of the haystack before, then ``POST /v1/agents/`` (a fresh
  agent named ``memeval-<random>``, tagged ``memeval``; ``model`` and ``embedding`` are sent when
  given, e.g. ``openai/gpt-4o-mini`` and ``openai/text-embedding-3-small``);
- ``ingest``: one ``POST /v1/agents/{id}/archival-memory`` per turn, ``{"text": "speaker: text",
  "created_at": the turn's date in ISO 8601, "tags": ["memeval-turn:<turn id>",
  "memeval-session:<session id>"]}``: the date is preserved as the passage's own timestamp, and the
  tags let a result name its turn;
- ``query``: ``GET /v1/agents/{id}/archival-memory/search?query=...&top_k=k`` (Letta's semantic
  search; it has no score threshold, so ``threshold`` is recorded as None);
- ``memories(haystack)``: every passage, ``GET /v1/agents/{id}/archival-memory?after=<last id>&limit=N``
  page by page until an empty page (a server may cap a page below ``limit``);
- ``verify_ingest``: the passage count against the turns sent (Letta's API has no fencing).

Inserts are synchronous (the passage is embedded before the reply), so a question never meets a
memory still indexing. Every request is bounded (``timeout`` in total, replies read up to
``max_reply_bytes``); 429 and 5xx replies, timeouts and dropped connections are retried with
exponential backoff, honouring ``Retry-After`` (``memeval.retry``); any other error status is one
line naming the endpoint, the status and Letta's ``detail``. The API key is read from the
environment variable ``key_env`` and sent only as ``Authorization: Bearer``; a self-hosted server
without one needs no key. Letta reports no ingest-side token counts through these endpoints.
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from typing import Any, Callable
from urllib.parse import quote

import httpx

from ...bench.model import Session
from ...errors import MemevalError, SystemCallError
from ...retry import Retryable, RetryPolicy, retry_after
from ...text.urls import public_url
from ..base import BaseMemorySystem, Capabilities, IngestCheck, Memory, Recall
from . import iso_datetime

__all__ = ["Letta", "TURN_TAG", "SESSION_TAG"]

TURN_TAG = "memeval-turn:"
SESSION_TAG = "memeval-session:"
_RETRY = frozenset({429, 500, 502, 503, 504})
_MAX_ID = 200  # an id longer than this in a reply is not an id


class Letta(BaseMemorySystem):
    """A Letta agent's archival memory as a memory system (see the module docstring)."""

    capabilities = Capabilities(concurrent_queries=True)

    def __init__(
        self,
        url: str = "https://api.letta.com",
        k: int = 10,
        model: str | None = None,
        embedding: str | None = None,
        key_env: str = "LETTA_API_KEY",
        timeout: float = 60.0,
        max_attempts: int = 5,
        backoff: float = 1.0,
        page: int = 100,
        max_reply_bytes: int = 8 * 1024 * 1024,
    ):
        if not url.startswith(("http://", "https://")):
            raise MemevalError(f"system 'letta': url must be http:// or https://, got {public_url(url)!r}")
        if k < 1 or page < 1 or max_attempts < 1 or timeout <= 0:
            raise MemevalError("system 'letta': k, page and max_attempts must be at least 1, timeout positive")
        self.name, self.version = "letta", "rest-v1"
        self.k, self._page, self._cap = int(k), int(page), int(max_reply_bytes)
        self._base = url.rstrip("/")
        self._model, self._embedding = model, embedding
        headers = {"content-type": "application/json", "accept": "application/json"}
        key = os.environ.get(key_env) if key_env else None
        if key:
            headers["authorization"] = f"Bearer {key}"
        self._http = httpx.Client(base_url=self._base, headers=headers, timeout=httpx.Timeout(timeout))
        self._policy = RetryPolicy(int(max_attempts), float(backoff))
        self._sleep: Callable[[float], None] = time.sleep  # how retries wait (tests record the waits)
        self._cancelled = threading.Event()
        self._agent: str | None = None
        self._sent = 0  # turns sent since the last reset
        self.params: dict[str, Any] = {
            "url": public_url(self._base),
            "k": self.k,
            "threshold": None,  # Letta's archival search takes none
            "search": "archival-memory/search (semantic)",
            "unit": "turn",
            "model": model,
            "embedding": embedding,
        }

    # -- HTTP ---------------------------------------------------------------------------------
    def _call(self, method: str, path: str, *, body: Any = None, params: dict | None = None) -> Any:
        """One request, retried by the shared policy; the JSON reply (None for an empty body)."""
        where = f"{method} {path.split('?')[0]}"

        def attempt(_n: int) -> Any:
            if self._cancelled.is_set():
                raise SystemCallError(f"letta {where}: cancelled")
            try:
                with self._http.stream(method, path, json=body, params=params) as resp:
                    raw = self._read(resp, where)
            except httpx.TimeoutException as e:
                raise Retryable(f"timed out ({type(e).__name__})", connection=True) from None
            except httpx.TransportError as e:
                raise Retryable(f"{type(e).__name__}: {e}", connection=True) from None
            if resp.status_code in _RETRY:
                raise Retryable(f"HTTP {resp.status_code}", retry_after(resp))
            if resp.status_code >= 400:
                raise SystemCallError(f"letta {where}: HTTP {resp.status_code} ({_detail(raw)})")
            if not raw.strip():
                return None
            try:
                return json.loads(raw)
            except (ValueError, RecursionError):
                raise SystemCallError(f"letta {where}: the reply is not JSON") from None

        try:
            return self._policy.call(attempt, sleep=self._wait)
        except Retryable as e:
            raise SystemCallError(
                f"letta {where}: gave up after {self._policy.max_attempts} attempts ({e.reason})",
                connection=e.connection,
            ) from None

    def _read(self, resp: httpx.Response, where: str) -> bytes:
        out, size = [], 0
        for chunk in resp.iter_bytes():
            size += len(chunk)
            if size > self._cap:
                raise SystemCallError(f"letta {where}: reply above {self._cap} bytes")
            out.append(chunk)
        return b"".join(out)

    def _wait(self, seconds: float) -> None:
        if self._cancelled.wait(0) or seconds <= 0:
            return
        self._sleep(seconds)

    def _agent_path(self, rest: str = "") -> str:
        if self._agent is None:
            raise SystemCallError("letta: no agent (reset was not called)")
        return f"/v1/agents/{quote(self._agent, safe='')}{rest}"

    # -- protocol -----------------------------------------------------------------------------
    def reset(self) -> None:
        self._drop_agent()
        body: dict[str, Any] = {
            "name": f"memeval-{uuid.uuid4().hex[:12]}",
            "memory_blocks": [],
            "tags": ["memeval"],
        }
        if self._model:
            body["model"] = self._model
        if self._embedding:
            body["embedding"] = self._embedding
        reply = self._call("POST", "/v1/agents/", body=body)
        agent = reply.get("id") if isinstance(reply, dict) else None
        if not isinstance(agent, str) or not 0 < len(agent) <= _MAX_ID:
            raise SystemCallError("letta POST /v1/agents/: the reply names no agent id")
        self._agent, self._sent = agent, 0

    def _drop_agent(self) -> None:
        if self._agent is None:
            return
        try:
            self._call("DELETE", self._agent_path())
        finally:
            self._agent = None

    def ingest(self, session: Session) -> None:
        path = self._agent_path("/archival-memory")
        for t in session.turns:
            when = iso_datetime(t.date or session.date)
            body: dict[str, Any] = {
                "text": f"{t.speaker}: {t.text}",
                "tags": [f"{TURN_TAG}{t.turn_id}", f"{SESSION_TAG}{session.session_id}"],
            }
            if when:
                body["created_at"] = when
            reply = self._call("POST", path, body=body)
            if not isinstance(reply, list) or not reply:
                raise SystemCallError(f"letta POST {path}: the reply is not the list of passages created")
            self._sent += 1

    def query(self, question: str, asked_at: str | None) -> Recall:
        reply = self._call(
            "GET", self._agent_path("/archival-memory/search"), params={"query": question, "top_k": self.k}
        )
        results = reply.get("results") if isinstance(reply, dict) else None
        if not isinstance(results, list):
            raise SystemCallError("letta archival-memory/search: the reply has no 'results' list")
        memories, turns = [], []
        for r in results[: self.k]:  # never more than asked for, whatever the server sends
            if not isinstance(r, dict) or not isinstance(r.get("content"), str):
                raise SystemCallError("letta archival-memory/search: a result without a string 'content'")
            tags = r.get("tags")
            tags = tags if isinstance(tags, list) else []
            turn = _tagged(tags, TURN_TAG)
            memories.append(Memory(r["content"], _stamp(r.get("timestamp"))))
            if turn is not None and turn.lstrip("-").isdigit():
                turns.append(int(turn))
        return Recall(tuple(memories), tuple(turns) if len(turns) == len(memories) else None)

    def memories(self, haystack: str) -> list[Memory]:
        """Every passage of the haystack's agent, oldest first, page by page."""
        out: list[Memory] = []
        after: str | None = None
        path = self._agent_path("/archival-memory")
        seen: set[str] = set()
        while True:
            params: dict[str, Any] = {"limit": self._page, "ascending": "true"}
            if after is not None:
                params["after"] = after
            page = self._call("GET", path, params=params)
            if not isinstance(page, list):
                raise SystemCallError(f"letta GET {path}: the reply is not a list of passages")
            if not page:
                return out
            for p in page:
                pid = p.get("id") if isinstance(p, dict) else None
                if not isinstance(pid, str) or not isinstance(p.get("text"), str):
                    raise SystemCallError(f"letta GET {path}: a passage without a string 'id' and 'text'")
                if pid in seen:  # a server that ignores ``after`` would page forever
                    raise SystemCallError(f"letta GET {path}: passage {pid[:_MAX_ID]!r} came back twice (pagination)")
                seen.add(pid)
                out.append(Memory(p["text"], _stamp(p.get("created_at"))))
                after = pid

    def verify_ingest(self) -> IngestCheck:
        held = len(self.memories(""))
        problem = None if held == self._sent else f"letta holds {held} passages, {self._sent} were sent"
        return IngestCheck(fenced=False, checked="count", problem=problem)

    def cancel(self) -> None:
        self._cancelled.set()

    def close(self) -> None:
        try:
            if not self._cancelled.is_set():
                self._drop_agent()
        finally:
            self._http.close()


def _tagged(tags: list, prefix: str) -> str | None:
    for t in tags:
        if isinstance(t, str) and t.startswith(prefix):
            return t[len(prefix) :]
    return None


def _stamp(v: object) -> str | None:
    """A timestamp from a reply: kept as text (at most 64 characters), None when absent."""
    return v[:64] if isinstance(v, str) and v else None


def _detail(raw: bytes) -> str:
    """Letta's error ``detail`` (FastAPI's shape), else the start of the body, on one line."""
    try:
        data = json.loads(raw)
        detail = data.get("detail") if isinstance(data, dict) else None
        text = (
            detail
            if isinstance(detail, str)
            else json.dumps(detail)
            if detail is not None
            else raw.decode("utf-8", "replace")
        )
    except (ValueError, RecursionError):
        text = raw.decode("utf-8", "replace")
    return " ".join(text.split())[:200] or "no body"
