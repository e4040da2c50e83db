"""``mem0-platform``: the hosted mem0 platform API (add, search, list) over plain httpx; the
open-source in-process ``mem0`` adapter (``systems/mem0.py``) stays beside it.

``mem0-platform[:k=10][,threshold=0][,rerank=false][,infer=true][,base_url=URL][,key_env=MEM0_API_KEY]``

Endpoints and shapes as mem0's client and API reference send them (github.com/mem0ai/mem0 at 8d5b7865,
``mem0/client/main.py``, ``mem0/client/types.py``, ``docs/api-reference/memory/*.mdx``; base URL
``https://api.mem0.ai``, header ``Authorization: Token <key>``):

- reset: ``DELETE /v1/memories/?user_id=<previous user>`` (404 is fine); each haystack is a fresh user
- ingest: one ``POST /v3/memories/add/ {messages: [{role, content}], user_id, metadata: {session_id,
  date}, timestamp, infer}`` per session (``timestamp``: the session's date as Unix seconds); the reply
  is ``{event_id, status: "PENDING"}``: extraction runs in the background
- query: ``POST /v3/memories/search/ {query, filters: {user_id}, top_k: k, threshold, rerank}`` →
  ``{results: [{id, memory, score, metadata, created_at}]}``; a memory is dated by its metadata's
  ``date`` (the session's), never by ``created_at`` (which may be the ingest time)
- memories: ``POST /v3/memories/?page=N&page_size=100 {filters: {user_id}}`` while ``next`` is set

``threshold`` defaults to 0 (the API's default is 0.1) so the search returns up to k results like every
other system; it is recorded beside k. The runner probes until the newest session is searchable.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Sequence

from ...bench.model import Session
from ...errors import MemevalError, SystemCallError
from ...text.urls import public_url
from ...text.when import parse_when
from ..base import Memory, Recall
from .rest import MAX_REPLY_BYTES, HostedSystem, role_of, ts_date

__all__ = ["Mem0Platform", "DEFAULT_URL"]

DEFAULT_URL = "https://api.mem0.ai"
_PAGE = 100
_MAX_PAGES = 1000
_EPOCH = dt.datetime(1970, 1, 1)  # Unix timestamps count from it (parse_when's datetimes are UTC-naive)


class Mem0Platform(HostedSystem):
    """The mem0 platform as a memory system (see the module docstring)."""

    name = "mem0-platform"
    version = "api-v3"
    default_key_env = "MEM0_API_KEY"
    floor_path = "v1/ping/"  # the client's key check (``MemoryClient._validate_api_key``)

    def __init__(
        self,
        k: int = 10,
        threshold: float = 0.0,
        rerank: bool = False,
        infer: bool = True,
        base_url: str = DEFAULT_URL,
        key_env: str = "MEM0_API_KEY",
        timeout: float = 30.0,
        attempts: int = 5,
        max_reply_bytes: int = MAX_REPLY_BYTES,
    ) -> None:
        if not 1 <= k <= 1000:
            raise MemevalError(f"mem0-platform: k must be 1..1000 (the API's top_k range), got {k}")
        if not 0 <= threshold <= 1:
            raise MemevalError(f"mem0-platform: threshold must be in [0, 1], got {threshold}")
        super().__init__(
            base_url, key_env, "Token", timeout=timeout, attempts=attempts, max_reply_bytes=max_reply_bytes
        )
        self.k, self.threshold, self.rerank, self.infer = k, float(threshold), bool(rerank), bool(infer)
        self.params = {
            "k": k,
            "threshold": float(threshold),
            "rerank": bool(rerank),
            "infer": bool(infer),
            "base_url": public_url(base_url),
        }

    def reset(self) -> None:
        old, _ = self.new_scope()
        if old is not None:
            self.api.call("DELETE", "v1/memories/", params={"user_id": old}, missing_ok=True)

    def ingest(self, session: Session) -> None:
        user = self.need_scope()
        messages = [  # a named speaker (LoCoMo's people) keeps the name in the content
            {
                "role": role_of(t.speaker),
                "content": t.text if role_of(t.speaker) == t.speaker else f"{t.speaker}: {t.text}",
            }
            for t in session.turns
            if t.text.strip()
        ]
        if not messages:
            return
        when = parse_when(session.date)
        body: dict[str, Any] = {
            "messages": messages,
            "user_id": user,
            "metadata": {"session_id": str(session.session_id), "date": session.date},
            "infer": self.infer,
        }
        if when is not None:
            body["timestamp"] = int((when[0] - _EPOCH).total_seconds())
        self.api.call("POST", "v3/memories/add/", json_body=body)

    def query(self, question: str, asked_at: str | None) -> Recall:
        body = {
            "query": question.strip() or "?",
            "filters": {"user_id": self.need_scope()},
            "top_k": self.k,
            "threshold": self.threshold,
            "rerank": self.rerank,
        }
        sent = self.api.exchange("POST", "v3/memories/search/", json_body=body)
        reply = sent.data
        results = reply.get("results") if isinstance(reply, dict) else reply
        if not isinstance(results, list):
            raise SystemCallError("POST /v3/memories/search/: expected {results: [...]}")
        return self.timed(sent, tuple(m for m in map(_memory, results) if m is not None)[: self.k])

    def memories(self, haystack: str) -> Sequence[str]:
        """Every memory mem0 holds for the haystack's user, page after page (``next``)."""
        user, out = self.need_scope(), []
        for page in range(1, _MAX_PAGES + 1):
            reply = self.api.call(
                "POST",
                "v3/memories/",
                json_body={"filters": {"user_id": user}},
                params={"page": page, "page_size": _PAGE},
            )
            results = reply.get("results") if isinstance(reply, dict) else None
            if not isinstance(results, list):
                raise SystemCallError("POST /v3/memories/: expected {count, next, results: [...]}")
            out += [m for m in map(_memory, results) if m is not None]
            if not reply.get("next") or not results:
                return out
        raise SystemCallError(f"mem0-platform: more than {_MAX_PAGES} pages for one haystack (dump stopped)")


def _memory(item: Any) -> Memory | None:
    if not isinstance(item, dict):
        return None
    text = item.get("memory")
    meta = item.get("metadata")
    when = meta.get("date") if isinstance(meta, dict) else None
    return Memory(text, ts_date(when)) if isinstance(text, str) and text else None
