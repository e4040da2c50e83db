"""``supermemory``: the Supermemory API (documents in container tags, v4 search) over plain httpx.

``supermemory[:k=10][,mode=hybrid][,threshold=0][,rerank=false][,base_url=URL][,key_env=SUPERMEMORY_API_KEY]``

Endpoints and shapes as Supermemory documents them (github.com/supermemoryai/supermemory at 34876664,
``skills/supermemory/references/api-reference.md``, ``apps/docs/recall/search.mdx`` and
``apps/docs/ingestion/document-operations.mdx``; base URL ``https://api.supermemory.ai``, header
``Authorization: Bearer <key>``):

- reset: ``DELETE /v3/documents/bulk {containerTags: [previous tag]}`` (404 is fine); each haystack is
  a fresh container tag
- ingest: one ``POST /v3/documents {content, containerTag, customId, metadata: {session_id, date}}`` per
  session, the content the session's dated transcript; the reply is ``{id, status: "queued"}``:
  processing is asynchronous (queued, extracting, chunking, embedding, indexing, done)
- query: ``POST /v4/search {q, containerTag, searchMode, limit: k, threshold, rerank}``; a result is a
  ``memory`` (an extracted fact) or a ``chunk``; it is dated by the ``date`` its document's metadata
  carries, never by ``updatedAt`` (the ingest time)
- memories: ``POST /v3/documents/list {containerTags, limit, page}`` until ``pagination.totalPages``

``threshold`` defaults to 0 (the API's default is 0.5) so the search returns up to k results like every
other system; it is recorded beside k. The runner probes until the newest session is searchable.
"""

from __future__ import annotations

from typing import Any, Literal, Sequence

from ...bench.model import Session
from ...errors import MemevalError, SystemCallError
from ...text.urls import public_url
from ..base import Memory, Recall
from .rest import MAX_REPLY_BYTES, HostedSystem, ts_date

__all__ = ["Supermemory", "DEFAULT_URL"]

DEFAULT_URL = "https://api.supermemory.ai"
_PAGE = 100
_MAX_PAGES = 1000


class Supermemory(HostedSystem):
    """Supermemory as a memory system (see the module docstring)."""

    name = "supermemory"
    version = "api-v3-v4"
    default_key_env = "SUPERMEMORY_API_KEY"

    def __init__(
        self,
        k: int = 10,
        mode: Literal["hybrid", "memories", "documents"] = "hybrid",
        threshold: float = 0.0,
        rerank: bool = False,
        base_url: str = DEFAULT_URL,
        key_env: str = "SUPERMEMORY_API_KEY",
        timeout: float = 30.0,
        attempts: int = 5,
        max_reply_bytes: int = MAX_REPLY_BYTES,
    ) -> None:
        if k < 1:
            raise MemevalError(f"supermemory: k must be at least 1, got {k}")
        if mode not in ("hybrid", "memories", "documents"):
            raise MemevalError(f"supermemory: mode must be hybrid, memories or documents, got {mode!r}")
        if not 0 <= threshold <= 1:
            raise MemevalError(f"supermemory: threshold must be in [0, 1], got {threshold}")
        super().__init__(
            base_url, key_env, "Bearer", timeout=timeout, attempts=attempts, max_reply_bytes=max_reply_bytes
        )
        self.k, self.mode, self.threshold, self.rerank = k, mode, float(threshold), bool(rerank)
        self.params = {
            "k": k,
            "mode": mode,
            "threshold": float(threshold),
            "rerank": bool(rerank),
            "base_url": public_url(base_url),
        }
        self._docs = 0

    def reset(self) -> None:
        old, _ = self.new_scope()
        if old is not None:
            self.api.call("DELETE", "v3/documents/bulk", json_body={"containerTags": [old]}, missing_ok=True)
        self._docs = 0

    def ingest(self, session: Session) -> None:
        tag = self.need_scope()
        self._docs += 1
        lines = [f"Conversation on {session.date}"] + [f"{t.speaker}: {t.text}" for t in session.turns]
        body = {
            "content": "\n".join(lines),
            "containerTag": tag,
            "customId": f"{tag}-d{self._docs}",
            "metadata": {"session_id": str(session.session_id), "date": session.date},
        }
        reply = self.api.call("POST", "v3/documents", json_body=body)
        if isinstance(reply, dict) and reply.get("status") == "failed":
            raise SystemCallError(f"POST /v3/documents: session {session.session_id!r} failed to process")

    def query(self, question: str, asked_at: str | None) -> Recall:
        body = {
            "q": question,
            "containerTag": self.need_scope(),
            "searchMode": self.mode,
            "limit": self.k,
            "threshold": self.threshold,
            "rerank": self.rerank,
        }
        sent = self.api.exchange("POST", "v4/search", json_body=body)
        reply = sent.data
        results = reply.get("results") if isinstance(reply, dict) else None
        if not isinstance(results, list):
            raise SystemCallError("POST /v4/search: expected {results: [...]}")
        return self.timed(sent, tuple(m for m in map(_memory, results) if m is not None)[: self.k])

    def memories(self, haystack: str) -> Sequence[str]:
        """Every document stored under the haystack's container tag, page after page."""
        tag, out = self.need_scope(), []
        for page in range(1, _MAX_PAGES + 1):
            reply = self.api.call(
                "POST", "v3/documents/list", json_body={"containerTags": [tag], "limit": _PAGE, "page": page}
            )
            docs = reply.get("memories") if isinstance(reply, dict) else None
            if not isinstance(docs, list):
                raise SystemCallError("POST /v3/documents/list: expected {memories: [...], pagination}")
            for d in docs:
                text = isinstance(d, dict) and (d.get("content") or d.get("summary") or d.get("title"))
                if isinstance(text, str) and text:
                    out.append(Memory(text, ts_date((d.get("metadata") or {}).get("date"))))
            pages = (reply.get("pagination") or {}).get("totalPages")
            if not docs or not isinstance(pages, int) or page >= pages:
                return out
        raise SystemCallError(f"supermemory: more than {_MAX_PAGES} pages for one haystack (dump stopped)")


def _memory(item: Any) -> Memory | None:
    if not isinstance(item, dict):
        return None
    text = item.get("memory") or item.get("chunk") or item.get("content")
    meta = item.get("metadata")
    when = meta.get("date") if isinstance(meta, dict) else None
    return Memory(text, ts_date(when)) if isinstance(text, str) and text else None
