"""A loopback contract server for Letta's REST API: the endpoints the ``letta`` adapter uses, with the
request and reply shapes of Letta's API reference (docs.letta.com/api, the ``letta-client`` SDK):

- ``GET /v1/health/`` → ``{"version", "status"}``;
- ``POST /v1/agents/`` → an AgentState (``{"id": "agent-<uuid4>", "name", "tags", ...}``);
- ``DELETE /v1/agents/{agent_id}`` → ``{}`` (404 ``{"detail": ...}`` for an unknown agent);
- ``POST /v1/agents/{agent_id}/archival-memory`` ``{"text", "created_at"?, "tags"?}`` → a list of the
  Passages created (``{"id": "passage-<uuid4>", "text", "created_at", "tags", "agent_id", ...}``);
  422 ``{"detail": [{"loc", "msg", "type"}]}`` without a string ``text``;
- ``GET /v1/agents/{agent_id}/archival-memory?after&before&limit&ascending`` → a list of Passages,
  cursor-paginated by passage id, at most :attr:`max_page` a page whatever ``limit`` asks;
- ``GET /v1/agents/{agent_id}/archival-memory/search?query&top_k`` → ``{"results": [{"id", "content",
  "timestamp", "tags"}], "count"}`` (ranked here by shared words: a contract, not a retriever).

Faults, for the adapter's tests: ``throttle`` (a list of ``Retry-After`` values: the next requests get
429 with that header, one each), ``fail`` (statuses returned next, one per request, with a
``{"detail"}`` body), and ``key`` (when set, a request without ``Authorization: Bearer <key>`` gets
401). Every request is kept in ``requests`` as ``(method, path, query, body, headers)``.
"""

from __future__ import annotations

import json
import re
import threading
import uuid
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from memeval.testing import serve_in_background

_AGENT = re.compile(r"^/v1/agents/([^/]+)$")
_PASSAGES = re.compile(r"^/v1/agents/([^/]+)/archival-memory$")
_SEARCH = re.compile(r"^/v1/agents/([^/]+)/archival-memory/search$")


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


class LettaContractServer:
    def __init__(self, key: str | None = None, max_page: int = 7):
        self.key, self.max_page = key, max_page
        self.agents: dict[str, dict] = {}
        self.passages: dict[str, list[dict]] = {}
        self.deleted: list[str] = []
        self.throttle: list[str] = []
        self.fail: list[int] = []
        self.requests: list[tuple[str, str, dict, object, dict]] = []
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out at once (no delayed-ACK wait per reply)

            def log_message(self, *args):
                pass

            def _reply(self, status: int, body: object, headers: dict | None = None) -> None:
                raw = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(raw)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(raw)

            def _handle(self, method: str) -> None:
                n = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(n) if n else b""
                url = urlsplit(self.path)
                query = {k: v[-1] for k, v in parse_qs(url.query).items()}
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    return self._reply(400, {"detail": "body is not JSON"})
                with outer._lock:
                    outer.requests.append(
                        (method, url.path, query, body, {k.lower(): v for k, v in self.headers.items()})
                    )
                    if outer.throttle:
                        return self._reply(
                            429, {"detail": "Rate limit exceeded"}, {"retry-after": outer.throttle.pop(0)}
                        )
                    if outer.fail:
                        status = outer.fail.pop(0)
                        return self._reply(status, {"detail": f"injected failure {status}"})
                    if outer.key and self.headers.get("authorization") != f"Bearer {outer.key}":
                        return self._reply(401, {"detail": "Invalid or missing API key"})
                    status, out = outer.route(method, url.path, query, body)
                self._reply(status, out)

            def do_GET(self):
                self._handle("GET")

            def do_POST(self):
                self._handle("POST")

            def do_DELETE(self):
                self._handle("DELETE")

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> LettaContractServer:
        serve_in_background(self._server)
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    # -- the API ---------------------------------------------------------------------------------
    def route(self, method: str, path: str, query: dict, body: object) -> tuple[int, object]:
        if method == "GET" and path.rstrip("/") == "/v1/health":
            return 200, {"version": "contract", "status": "ok"}
        if method == "POST" and path in ("/v1/agents", "/v1/agents/"):
            agent_id = f"agent-{uuid.uuid4()}"
            b = body if isinstance(body, dict) else {}
            self.agents[agent_id] = {
                "id": agent_id,
                "name": b.get("name"),
                "tags": b.get("tags") or [],
                "agent_type": "memgpt_v2_agent",
                "memory": {"blocks": b.get("memory_blocks") or []},
                "created_at": _now(),
            }
            self.passages[agent_id] = []
            return 200, self.agents[agent_id]
        for pattern, handler in ((_SEARCH, self._search), (_PASSAGES, self._passages), (_AGENT, self._agent)):
            m = pattern.match(path)
            if m:
                agent_id = m.group(1)
                if agent_id not in self.agents:
                    return 404, {"detail": f"Agent with id={agent_id} not found."}
                return handler(method, agent_id, query, body)
        return 404, {"detail": "Not Found"}

    def _agent(self, method: str, agent_id: str, query: dict, body: object) -> tuple[int, object]:
        if method == "DELETE":
            del self.agents[agent_id]
            del self.passages[agent_id]
            self.deleted.append(agent_id)
            return 200, {}
        if method == "GET":
            return 200, self.agents[agent_id]
        return 405, {"detail": "Method Not Allowed"}

    def _passages(self, method: str, agent_id: str, query: dict, body: object) -> tuple[int, object]:
        store = self.passages[agent_id]
        if method == "POST":
            if not isinstance(body, dict) or not isinstance(body.get("text"), str):
                return 422, {"detail": [{"loc": ["body", "text"], "msg": "Field required", "type": "missing"}]}
            p = {
                "id": f"passage-{uuid.uuid4()}",
                "text": body["text"],
                "created_at": body.get("created_at") or _now(),
                "tags": list(body.get("tags") or []),
                "agent_id": agent_id,
                "embedding": None,
                "embedding_config": None,
                "metadata": {},
            }
            store.append(p)
            return 200, [p]
        if method != "GET":
            return 405, {"detail": "Method Not Allowed"}
        ordered = store if query.get("ascending", "true") != "false" else store[::-1]
        ids = [p["id"] for p in ordered]
        start = ids.index(query["after"]) + 1 if query.get("after") in ids else 0
        end = ids.index(query["before"]) if query.get("before") in ids else len(ids)
        limit = min(int(query.get("limit") or 100), self.max_page)
        return 200, ordered[start:end][:limit]

    def _search(self, method: str, agent_id: str, query: dict, body: object) -> tuple[int, object]:
        if "query" not in query:
            return 422, {"detail": [{"loc": ["query", "query"], "msg": "Field required", "type": "missing"}]}
        want = _words(query["query"])
        top_k = int(query.get("top_k") or 10)
        scored = [(len(want & _words(p["text"])), i, p) for i, p in enumerate(self.passages[agent_id])]
        hits = [p for s, _, p in sorted(scored, key=lambda x: (-x[0], x[1])) if s > 0][:top_k]
        results = [{"id": p["id"], "content": p["text"], "timestamp": p["created_at"], "tags": p["tags"]} for p in hits]
        return 200, {"results": results, "count": len(results)}


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()
