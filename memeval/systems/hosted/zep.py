"""``zep``: Zep Cloud's memory API (users, threads, messages, graph search) over plain httpx.

``zep[:k=10][,search=edges][,reranker=rrf][,base_url=URL][,key_env=ZEP_API_KEY][,batch=30]``

Endpoints and shapes as the public SDK sends them (github.com/getzep/zep-python at a80dee37,
``src/zep_cloud/{user,thread,graph,graph/edge}/raw_client.py``; base URL ``https://api.getzep.com/api/v2``,
header ``Authorization: Api-Key <key>``; the v3 identifier model, which Zep's v4 announcement says keeps
working):

- reset: ``DELETE users/{user_id}`` of the previous haystack (404 is fine), ``POST users {user_id}``
- ingest: ``POST threads {thread_id, user_id}`` per session, then ``POST threads/{id}/messages
  {messages: [{role, name, content, created_at}]}`` in batches of ``batch`` turns; ``created_at`` is
  the session's date (RFC 3339), so Zep's facts carry the bench's time, not the ingest's
- query: ``POST graph/search {query, user_id, limit: k, scope, reranker}``; a fact (edge) is dated by
  its ``valid_at`` (when it became true, from the messages' dates), an episode by the session date it
  carries; the ingest time (``created_at`` of an edge) is never used as a memory's date
- memories: ``POST graph/edge/user/{user_id} {limit, uuid_cursor}``, page after page

Zep builds its graph asynchronously: the runner probes until the newest session is searchable
(``Capabilities(indexing="async")``). The key is read from ``key_env`` and sent in the header only.
"""

from __future__ import annotations

from typing import Any, Literal, Sequence

from ...bench.model import Session
from ...errors import MemevalError, SystemCallError
from ...text.urls import public_url
from ..base import Memory, Recall
from .rest import MAX_REPLY_BYTES, HostedSystem, rfc3339, role_of, ts_date

__all__ = ["Zep", "DEFAULT_URL"]

DEFAULT_URL = "https://api.getzep.com/api/v2"
#: the most characters of a question sent as a search query (memeval's bound; long questions are cut)
MAX_QUERY_CHARS = 400
_PAGE = 100
_MAX_PAGES = 1000


class Zep(HostedSystem):
    """Zep Cloud as a memory system (see the module docstring)."""

    name = "zep"
    version = "cloud-api-v2"
    default_key_env = "ZEP_API_KEY"

    def __init__(
        self,
        k: int = 10,
        search: Literal["edges", "episodes", "nodes"] = "edges",
        reranker: str = "rrf",
        base_url: str = DEFAULT_URL,
        key_env: str = "ZEP_API_KEY",
        batch: int = 30,
        timeout: float = 30.0,
        attempts: int = 5,
        max_reply_bytes: int = MAX_REPLY_BYTES,
    ) -> None:
        if not 1 <= k <= 50:
            raise MemevalError(f"zep: k must be 1..50 (the graph search limit), got {k}")
        if search not in ("edges", "episodes", "nodes"):
            raise MemevalError(f"zep: search must be edges, episodes or nodes, got {search!r}")
        if batch < 1:
            raise MemevalError(f"zep: batch must be at least 1, got {batch}")
        super().__init__(
            base_url, key_env, "Api-Key", timeout=timeout, attempts=attempts, max_reply_bytes=max_reply_bytes
        )
        self.k, self.search, self.reranker, self.batch = k, search, reranker, batch
        self.params = {"k": k, "search": search, "reranker": reranker, "base_url": public_url(base_url)}
        self._threads = 0

    def reset(self) -> None:
        old, new = self.new_scope()
        if old is not None:
            self.api.call("DELETE", f"users/{old}", missing_ok=True)
        self.api.call("POST", "users", json_body={"user_id": new})
        self._threads = 0

    def ingest(self, session: Session) -> None:
        user = self.need_scope()
        self._threads += 1
        thread = f"{user}-t{self._threads}"
        self.api.call("POST", "threads", json_body={"thread_id": thread, "user_id": user})
        when = rfc3339(session.date)
        msgs = [
            {"role": role_of(t.speaker), "name": t.speaker, "content": t.text, "created_at": when}
            for t in session.turns
            if t.text.strip()
        ]
        for i in range(0, len(msgs), self.batch):
            self.api.call("POST", f"threads/{thread}/messages", json_body={"messages": msgs[i : i + self.batch]})

    def query(self, question: str, asked_at: str | None) -> Recall:
        user = self.need_scope()
        body = {
            "query": question[:MAX_QUERY_CHARS],
            "user_id": user,
            "limit": self.k,
            "scope": self.search,
            "reranker": self.reranker,
        }
        sent = self.api.exchange("POST", "graph/search", json_body=body)
        reply = sent.data
        if not isinstance(reply, dict):
            raise SystemCallError("POST /graph/search: expected a JSON object")
        items = reply.get(self.search) or []
        if not isinstance(items, list):
            raise SystemCallError(f"POST /graph/search: {self.search!r} is not a list")
        return self.timed(sent, tuple(m for m in map(self._memory, items) if m is not None)[: self.k])

    def _memory(self, item: Any) -> Memory | None:
        if not isinstance(item, dict):
            return None
        if self.search == "edges":
            text, when = item.get("fact"), item.get("valid_at")
        elif self.search == "episodes":
            text, when = item.get("content"), (item.get("metadata") or {}).get("date")
        else:
            text, when = item.get("summary") or item.get("name"), None
        return Memory(text, ts_date(when)) if isinstance(text, str) and text else None

    def memories(self, haystack: str) -> Sequence[str]:
        """Every fact Zep holds for the haystack's user, page after page (``uuid_cursor``)."""
        user, out, cursor = self.need_scope(), [], None
        for _ in range(_MAX_PAGES):
            body: dict[str, Any] = {"limit": _PAGE} | ({"uuid_cursor": cursor} if cursor else {})
            page = self.api.call("POST", f"graph/edge/user/{user}", json_body=body)
            if not isinstance(page, list):
                raise SystemCallError(f"POST /graph/edge/user/{user}: expected a JSON list")
            out += [m for m in (Memory(e["fact"], ts_date(e.get("valid_at"))) for e in page if _fact(e))]
            if len(page) < _PAGE:
                return out
            cursor = page[-1].get("uuid") if isinstance(page[-1], dict) else None
            if not cursor:
                return out
        raise SystemCallError(f"zep: more than {_MAX_PAGES * _PAGE} facts for one haystack (dump stopped)")


def _fact(e: Any) -> bool:
    return isinstance(e, dict) and isinstance(e.get("fact"), str) and bool(e["fact"])
