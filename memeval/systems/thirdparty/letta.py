"""``letta``: a Letta server's archival memory (passages) over its REST API, in plain httpx.

``letta[:k=10][,model=M][,embedding=E][,base_url=URL][,key_env=LETTA_API_KEY][,timeout=60][,attempts=5]``

Self-hosted (``base_url=http://localhost:8283``, no key needed) or Letta's cloud
(``https://api.letta.com``, the default; the key in ``$LETTA_API_KEY``). Endpoints (docs.letta.com, API reference; the ``letta-client`` SDK's ``agents`` and
``agents.passages`` resources):

- ``reset``: ``DELETE /v1/agents/{id}`` of the haystack before, then ``POST /v1/agents/`` (a fresh
  agent named by the haystack's scope ``memeval-<nonce>-<n>``, tagged ``memeval``; ``model`` and ``embedding`` are sent when
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

Inserts are synchronous (the passage is embedded before the reply): ``Capabilities(indexing="sync")``,
no time-to-searchable probe. The HTTP is the hosted adapters' (``systems/hosted/rest.py``): every
request bounded (deadline, reply bytes), 429/5xx/timeouts retried with ``Retry-After`` honoured, any
other error status one line naming the endpoint, the status and Letta's ``detail``; the key only as
``Authorization: Bearer`` (absent: no header, for a self-hosted server). Letta reports no
ingest-side token counts through these endpoints; ``usage`` counts the API requests.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from ...bench.model import Session
from ...errors import MemevalError, SystemCallError
from ...text.urls import public_url
from ..base import Capabilities, IngestCheck, Memory, Recall
from ..hosted.rest import MAX_REPLY_BYTES, HostedSystem, ts_date
from . import iso_datetime

__all__ = ["Letta", "DEFAULT_URL", "TURN_TAG", "SESSION_TAG"]

DEFAULT_URL = "https://api.letta.com"
TURN_TAG = "memeval-turn:"
SESSION_TAG = "memeval-session:"
_MAX_ID = 200  # an id longer than this in a reply is not an id
_MAX_PAGES = 10_000


class Letta(HostedSystem):
    """A Letta agent's archival memory as a memory system (see the module docstring)."""

    name = "letta"
    version = "rest-v1"
    default_key_env = "LETTA_API_KEY"
    capabilities = Capabilities(indexing="sync", concurrent_queries=True)
    floor_path = "v1/health/"

    def __init__(
        self,
        k: int = 10,
        model: str | None = None,
        embedding: str | None = None,
        base_url: str = DEFAULT_URL,
        key_env: str = "LETTA_API_KEY",
        timeout: float = 60.0,
        attempts: int = 5,
        page: int = 100,
        max_reply_bytes: int = MAX_REPLY_BYTES,
    ):
        if k < 1 or page < 1:
            raise MemevalError("system 'letta': k and page must be at least 1")
        super().__init__(
            base_url, key_env, "Bearer", timeout=timeout, attempts=attempts, max_reply_bytes=max_reply_bytes,
            key_optional=True,
        )  # fmt: skip
        self.k, self._page = int(k), int(page)
        self._model, self._embedding = model, embedding
        self._agent: str | None = None
        self._cancelled = False
        self._sent = 0  # turns sent since the last reset
        self.params: dict[str, Any] = {
            "k": self.k,
            "threshold": None,  # Letta's archival search takes none
            "search": "archival-memory/search (semantic)",
            "unit": "turn",
            "model": model,
            "embedding": embedding,
            "base_url": public_url(base_url),
        }

    def _agent_path(self, rest: str = "") -> str:
        if self._agent is None:
            raise SystemCallError("letta: ingest or query before reset")
        return f"v1/agents/{quote(self._agent, safe='')}{rest}"

    # -- protocol -----------------------------------------------------------------------------
    def reset(self) -> None:
        self._drop_agent()
        _, scope = self.new_scope()
        body: dict[str, Any] = {"name": scope, "memory_blocks": [], "tags": ["memeval"]}
        if self._model:
            body["model"] = self._model
        if self._embedding:
            body["embedding"] = self._embedding
        reply = self.api.call("POST", "v1/agents/", json_body=body)
        agent = reply.get("id") if isinstance(reply, dict) else None
        if not isinstance(agent, str) or not 0 < len(agent) <= _MAX_ID:
            raise SystemCallError("POST /v1/agents/: the reply names no agent id")
        self._agent, self._sent = agent, 0

    def _drop_agent(self) -> None:
        if self._agent is None:
            return
        try:
            self.api.call("DELETE", self._agent_path(), missing_ok=True)
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
            reply = self.api.call("POST", path, json_body=body)
            if not isinstance(reply, list) or not reply:
                raise SystemCallError(
                    "POST /v1/agents/{id}/archival-memory: the reply is not the list of passages created"
                )
            self._sent += 1

    def query(self, question: str, asked_at: str | None) -> Recall:
        sent = self.api.exchange(
            "GET", self._agent_path("/archival-memory/search"), params={"query": question, "top_k": self.k}
        )
        results = sent.data.get("results") if isinstance(sent.data, dict) else None
        if not isinstance(results, list):
            raise SystemCallError("GET /v1/agents/{id}/archival-memory/search: the reply has no 'results' list")
        memories, turns = [], []
        for r in results[: self.k]:  # never more than asked for, whatever the server sends
            if not isinstance(r, dict) or not isinstance(r.get("content"), str):
                raise SystemCallError("GET /v1/agents/{id}/archival-memory/search: a result without a string 'content'")
            tags = r.get("tags")
            turn = _tagged(tags if isinstance(tags, list) else [], TURN_TAG)
            memories.append(Memory(r["content"], ts_date(r.get("timestamp"))))
            if turn is not None and turn.lstrip("-").isdigit():
                turns.append(int(turn))
        return Recall(
            memories=tuple(memories),
            turn_ids=tuple(turns) if len(turns) == len(memories) else None,
            latency_ms=sent.ms,
            response_bytes=sent.nbytes,
            attempts=sent.attempts,
        )

    def memories(self, haystack: str) -> list[Memory]:
        """Every passage of the haystack's agent, oldest first, page by page (the ``after`` cursor, to
        an empty page: a server may cap a page below ``limit``)."""
        out: list[Memory] = []
        after: str | None = None
        path = self._agent_path("/archival-memory")
        seen: set[str] = set()
        for _ in range(_MAX_PAGES):
            params: dict[str, Any] = {"limit": self._page, "ascending": "true"}
            if after is not None:
                params["after"] = after
            page = self.api.call("GET", path, params=params)
            if not isinstance(page, list):
                raise SystemCallError("GET /v1/agents/{id}/archival-memory: the reply is not a list of passages")
            if not page:
                return out
            for p in page:
                pid = p.get("id") if isinstance(p, dict) else None
                if not isinstance(pid, str) or not isinstance(p.get("text"), str):
                    raise SystemCallError(
                        "GET /v1/agents/{id}/archival-memory: a passage without a string 'id' and 'text'"
                    )
                if pid in seen:  # a server that ignores ``after`` would page forever
                    raise SystemCallError(
                        f"GET /v1/agents/{{id}}/archival-memory: passage {pid[:_MAX_ID]!r} came back twice (pagination)"
                    )
                seen.add(pid)
                out.append(Memory(p["text"], ts_date(p.get("created_at"))))
                after = pid
        raise SystemCallError(f"letta: more than {_MAX_PAGES} pages for one haystack (dump stopped)")

    def verify_ingest(self) -> IngestCheck:
        held = len(self.memories(""))
        problem = None if held == self._sent else f"letta holds {held} passages, {self._sent} were sent"
        return IngestCheck(fenced=False, checked="count", problem=problem)

    def cancel(self) -> None:
        self._cancelled = True
        super().cancel()

    def close(self) -> None:
        try:
            if not self._cancelled:  # a cancelled run leaves its agent (no request after Ctrl-C)
                self._drop_agent()
        finally:
            super().close()


def _tagged(tags: list, prefix: str) -> str | None:
    for t in tags:
        if isinstance(t, str) and t.startswith(prefix):
            return t[len(prefix) :]
    return None
