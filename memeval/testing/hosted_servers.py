"""Loopback contract servers for the hosted memory APIs the adapters in ``memeval.systems.hosted``
speak (Zep Cloud, Supermemory, the mem0 platform): each implements, on 127.0.0.1 and a free port, the
documented request and response shapes of the endpoints its adapter uses -- authentication header,
pagination, 429 with ``Retry-After``, asynchronous indexing (what was added is searchable only
``index_delay`` seconds later) and error replies -- with a toy word-overlap search in place of the
service's retrieval. They check plumbing, never quality; no test reaches the network.

``throttle``: per route, how many of its first requests get ``429`` (``Retry-After: retry_after``);
``fail_search``: a word whose presence in a search query gets ``400`` (an error record); ``log``: every
request as ``(method, path, authorization header, JSON body)``.

>>> with ContractServer("mem0") as srv:
...     import httpx
...     r = httpx.post(srv.url + "/v3/memories/search/", json={"query": "x"}, headers={"Authorization": "Token k"})
>>> r.status_code
401
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable
from urllib.parse import parse_qs, urlsplit
from ..errors import ArgumentError, MemevalError
from . import serve_in_background

__all__ = ["ContractServer", "APIS", "KEY"]

#: the key every contract server accepts
KEY = "test-key-not-secret"
APIS = ("zep", "supermemory", "mem0")
_AUTH = {"zep": "Api-Key", "supermemory": "Bearer", "mem0": "Token"}
_WORD = re.compile(r"\w+")


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) > 2}


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


class _Reply(MemevalError):
    def __init__(self, status: int, body: Any, headers: dict[str, str] | None = None):
        super().__init__(status)
        self.status, self.body, self.headers = status, body, headers or {}


class ContractServer:
    """One hosted API on loopback (``api``: ``zep``, ``supermemory`` or ``mem0``); a context manager."""

    def __init__(
        self,
        api: str,
        *,
        key: str = KEY,
        index_delay: float = 0.3,
        throttle: dict[str, int] | None = None,
        retry_after: float = 0.05,
        fail_search: str | None = None,
    ) -> None:
        if api not in APIS:
            raise ArgumentError(f"api must be one of {APIS}")
        self.api, self.key, self.index_delay, self.retry_after = api, key, index_delay, retry_after
        self.throttle = dict(throttle or {})
        self.fail_search = fail_search
        self.log: list[tuple[str, str, str | None, Any]] = []
        self.throttled = 0
        self.items: list[dict[str, Any]] = []  # what was stored: {id, scope, text, date, meta, ready_at, doc}
        self.scopes: set[str] = set()
        self.threads: dict[str, str] = {}  # zep thread -> user
        self.docs: dict[str, dict[str, Any]] = {}  # supermemory documents
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None

    # ---- lifecycle
    def __enter__(self) -> ContractServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            disable_nagle_algorithm = True  # headers and body go out at once (no delayed-ACK wait per reply)

            def log_message(self, *args: Any) -> None:
                pass

            def _any(self) -> None:
                server._handle(self)

            do_GET = do_POST = do_DELETE = do_PATCH = _any

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        serve_in_background(self._httpd)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()

    @property
    def url(self) -> str:
        assert self._httpd is not None, "use the server as a context manager"
        base = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        return base + "/api/v2" if self.api == "zep" else base

    # ---- plumbing
    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(h.path)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        n = int(h.headers.get("content-length") or 0)
        raw = h.rfile.read(n) if n else b""
        auth = h.headers.get("authorization")
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        with self._lock:
            self.log.append((h.command, parts.path, auth, body))
        try:
            if auth != f"{_AUTH[self.api]} {self.key}":
                raise _Reply(401, {"error": "Unauthorized", "details": "Invalid or missing API key"})
            route, handler = self._route(h.command, parts.path)
            with self._lock:
                if self.throttle.get(route, 0) > 0:
                    self.throttle[route] -= 1
                    self.throttled += 1
                    raise _Reply(
                        429,
                        {"error": "Too Many Requests", "details": "Rate limit exceeded"},
                        {"Retry-After": f"{self.retry_after:g}"},
                    )
                status, out = handler(body if isinstance(body, dict) else {}, query, parts.path)
        except _Reply as r:
            status, out, extra = r.status, r.body, r.headers
        else:
            extra = {}
        data = json.dumps(out).encode()
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        for k, v in extra.items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(data)

    def _route(self, method: str, path: str) -> tuple[str, Callable[[dict, dict, str], tuple[int, Any]]]:
        table = {"zep": self._zep_routes, "supermemory": self._sm_routes, "mem0": self._mem0_routes}[self.api]()
        for (m, pattern), (name, fn) in table.items():
            if m == method and re.fullmatch(pattern, path):
                return name, fn
        raise _Reply(404, {"error": "Not Found", "details": f"no route {method} {path}"})

    def _store(self, scope: str, text: str, date: str | None, meta: dict | None, doc: str | None = None) -> dict:
        item = {
            "id": f"id-{next(self._ids):06d}",
            "scope": scope,
            "text": text,
            "date": date,
            "meta": dict(meta or {}),
            "ready_at": time.monotonic() + self.index_delay,
            "doc": doc,
        }
        self.items.append(item)
        return item

    def _search(self, scope: str, query: str, limit: int) -> list[tuple[float, dict]]:
        if self.fail_search and self.fail_search in query.lower():
            raise _Reply(400, {"error": "Bad Request", "details": f"query rejected ({self.fail_search!r})"})
        q, now = _words(query), time.monotonic()
        scored = []
        for it in self.items:
            if it["scope"] == scope and it["ready_at"] <= now:
                overlap = len(q & _words(it["text"]))
                if overlap:
                    scored.append((overlap / max(len(q), 1), it))
        scored.sort(key=lambda p: (-p[0], p[1]["id"]))
        return scored[:limit]

    def stored(self, scope: str | None = None) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(i) for i in self.items if scope is None or i["scope"] == scope]

    # ---- Zep Cloud (api/v2): users, threads, messages, graph search, edges by user
    def _zep_routes(self) -> dict:
        p = "/api/v2"
        return {
            ("POST", p + "/users"): ("users", self._zep_user),
            ("DELETE", p + "/users/[^/]+"): ("users", self._zep_delete_user),
            ("POST", p + "/threads"): ("threads", self._zep_thread),
            ("POST", p + "/threads/[^/]+/messages"): ("messages", self._zep_messages),
            ("POST", p + "/graph/search"): ("search", self._zep_search),
            ("POST", p + "/graph/edge/user/[^/]+"): ("edges", self._zep_edges),
        }

    def _zep_user(self, b: dict, q: dict, path: str) -> tuple[int, Any]:
        uid = b.get("user_id")
        if not isinstance(uid, str) or not uid:
            raise _Reply(400, {"message": "user_id is required"})
        if uid in self.scopes:
            raise _Reply(400, {"message": f"user {uid} already exists"})
        self.scopes.add(uid)
        return 201, {"user_id": uid, "uuid": f"u-{uid}", "created_at": _now()}

    def _zep_delete_user(self, b: dict, q: dict, path: str) -> tuple[int, Any]:
        uid = path.rsplit("/", 1)[1]
        if uid not in self.scopes:
            raise _Reply(404, {"message": "not found"})
        self.scopes.discard(uid)
        self.items = [i for i in self.items if i["scope"] != uid]
        return 200, {"message": "deleted"}

    def _zep_thread(self, b: dict, q: dict, path: str) -> tuple[int, Any]:
        tid, uid = b.get("thread_id"), b.get("user_id")
        if uid not in self.scopes:
            raise _Reply(404, {"message": f"user {uid} not found"})
        if not isinstance(tid, str) or tid in self.threads:
            raise _Reply(400, {"message": "thread_id missing or taken"})
        self.threads[tid] = uid
        return 201, {"thread_id": tid, "user_id": uid, "uuid": f"t-{tid}", "created_at": _now()}

    def _zep_messages(self, b: dict, q: dict, path: str) -> tuple[int, Any]:
        tid = path.split("/")[-2]
        if tid not in self.threads:
            raise _Reply(404, {"message": f"thread {tid} not found"})
        msgs = b.get("messages")
        if not isinstance(msgs, list) or not 1 <= len(msgs) <= 30:
            raise _Reply(400, {"message": "messages: 1 to 30 per request"})
        uuids = []
        for m in msgs:
            if not isinstance(m, dict) or not isinstance(m.get("content"), str) or m.get("role") is None:
                raise _Reply(400, {"message": "each message needs role and content"})
            it = self._store(self.threads[tid], m["content"], m.get("created_at"), {"name": m.get("name")})
            uuids.append(it["id"])
        return 200, {"message_uuids": uuids, "task_id": f"task-{uuids[0]}"}

    def _zep_edge(self, it: dict) -> dict:
        return {
            "uuid": it["id"],
            "fact": it["text"],
            "name": "MENTIONS",
            "valid_at": it["date"],
            "created_at": _now(),  # the ingest time: an adapter must not date a memory by it
            "source_node_uuid": "n-1",
            "target_node_uuid": "n-2",
        }

    def _zep_search(self, b: dict, q: dict, path: str) -> tuple[int, Any]:
        limit = b.get("limit", 10)
        if not isinstance(limit, int) or not 1 <= limit <= 50:
            raise _Reply(400, {"message": "limit must be 1..50"})
        if b.get("user_id") not in self.scopes:
            raise _Reply(404, {"message": "user not found"})
        hits = self._search(b["user_id"], str(b.get("query", "")), limit)
        scope = b.get("scope", "edges")
        if scope == "episodes":
            return 200, {
                "episodes": [{"uuid": i["id"], "content": i["text"], "created_at": _now(), "score": s} for s, i in hits]
            }
        return 200, {"edges": [self._zep_edge(i) | {"score": s} for s, i in hits]}

    def _zep_edges(self, b: dict, q: dict, path: str) -> tuple[int, Any]:
        uid = path.rsplit("/", 1)[1]
        if uid not in self.scopes:
            raise _Reply(404, {"message": "user not found"})
        limit, cursor = int(b.get("limit") or 10), b.get("uuid_cursor")
        now = time.monotonic()
        mine = sorted((i for i in self.items if i["scope"] == uid and i["ready_at"] <= now), key=lambda i: i["id"])
        if cursor:
            mine = [i for i in mine if i["id"] > cursor]
        return 200, [self._zep_edge(i) for i in mine[:limit]]

    # ---- Supermemory: v3 documents, v4 search, documents list, bulk delete
    def _sm_routes(self) -> dict:
        return {
            ("POST", "/v3/documents"): ("add", self._sm_add),
            ("DELETE", "/v3/documents/bulk"): ("delete", self._sm_delete),
            ("POST", "/v4/search"): ("search", self._sm_search),
            ("POST", "/v3/documents/list"): ("list", self._sm_list),
            ("GET", "/v3/documents/[^/]+"): ("get", self._sm_get),
        }

    def _sm_add(self, b: dict, q: dict, path: str) -> tuple[int, Any]:
        content, tag = b.get("content"), b.get("containerTag")
        if not isinstance(content, str) or not content:
            raise _Reply(400, {"error": "Bad Request", "details": "content field is required"})
        if not isinstance(tag, str) or not re.fullmatch(r"[\w-]{1,100}", tag):
            raise _Reply(400, {"error": "Bad Request", "details": "containerTag: alphanumeric, - and _, max 100"})
        meta = b.get("metadata") or {}
        doc = f"doc_{next(self._ids):06d}"
        self.docs[doc] = {"id": doc, "tag": tag, "content": content, "meta": meta, "ready_at": 0.0}
        for line in content.splitlines()[1:]:  # the first line is the adapter's dated header
            it = self._store(tag, line, meta.get("date"), meta, doc)
            self.docs[doc]["ready_at"] = it["ready_at"]
        return 200, {"id": doc, "status": "queued"}

    def _sm_status(self, d: dict) -> str:
        return "done" if d["ready_at"] <= time.monotonic() else "queued"

    def _sm_get(self, b: dict, q: dict, path: str) -> tuple[int, Any]:
        d = self.docs.get(path.rsplit("/", 1)[1])
        if d is None:
            raise _Reply(404, {"error": "Not Found", "details": "document not found"})
        return 200, {"id": d["id"], "status": self._sm_status(d), "metadata": d["meta"]}

    def _sm_delete(self, b: dict, q: dict, path: str) -> tuple[int, Any]:
        tags = set(b.get("containerTags") or [])
        gone = [k for k, d in self.docs.items() if d["tag"] in tags]
        for k in gone:
            del self.docs[k]
        self.items = [i for i in self.items if i["scope"] not in tags]
        return 200, {"success": True, "deletedCount": len(gone)}

    def _sm_search(self, b: dict, q: dict, path: str) -> tuple[int, Any]:
        query, limit = b.get("q"), b.get("limit", 10)
        if not isinstance(query, str) or not query:
            raise _Reply(400, {"error": "Bad Request", "details": "q is required"})
        hits = self._search(str(b.get("containerTag")), query, int(limit))
        kind = "chunk" if b.get("searchMode") == "documents" else "memory"
        threshold = float(b.get("threshold", 0.5))
        results = [
            {"id": i["id"], kind: i["text"], "similarity": s, "metadata": i["meta"], "updatedAt": _now(), "version": 1}
            for s, i in hits
            if s >= threshold
        ]
        return 200, {"results": results, "timing": 3, "total": len(results)}

    def _sm_list(self, b: dict, q: dict, path: str) -> tuple[int, Any]:
        tags, limit, page = set(b.get("containerTags") or []), int(b.get("limit") or 50), int(b.get("page") or 1)
        if not 1 <= limit <= 200:
            raise _Reply(400, {"error": "Bad Request", "details": "limit: 1..200"})
        docs = [d for d in self.docs.values() if d["tag"] in tags]
        pages = max(1, -(-len(docs) // limit))
        chunk = docs[(page - 1) * limit : page * limit]
        out = [
            {
                "id": d["id"],
                "title": d["content"].splitlines()[0],
                "content": d["content"],
                "status": self._sm_status(d),
                "containerTags": [d["tag"]],
                "metadata": d["meta"],
                "createdAt": _now(),
            }
            for d in chunk
        ]
        return 200, {"memories": out, "pagination": {"currentPage": page, "totalPages": pages, "totalItems": len(docs)}}

    # ---- mem0 platform: v3 add (async), v3 search, v3 list (paged), v1 delete all
    def _mem0_routes(self) -> dict:
        return {
            ("POST", "/v3/memories/add/"): ("add", self._mem0_add),
            ("POST", "/v3/memories/search/"): ("search", self._mem0_search),
            ("POST", "/v3/memories/"): ("list", self._mem0_list),
            ("DELETE", "/v1/memories/"): ("delete", self._mem0_delete),
            ("GET", "/v1/ping/"): ("ping", self._mem0_ping),
        }

    def _mem0_ping(self, b: dict, q: dict, path: str) -> tuple[int, Any]:
        return 200, {"status": "ok", "org_id": "org-1", "project_id": "proj-1", "user_email": None}

    def _mem0_add(self, b: dict, q: dict, path: str) -> tuple[int, Any]:
        msgs, user = b.get("messages"), b.get("user_id")
        if not isinstance(user, str) or not user:
            raise _Reply(400, {"error": "400 Bad Request", "details": {"message": "an entity id is required"}})
        if not isinstance(msgs, list) or not msgs:
            raise _Reply(400, {"error": "400 Bad Request", "details": {"message": "messages are required"}})
        meta = b.get("metadata") or {}
        for m in msgs:
            if (
                not isinstance(m, dict)
                or not isinstance(m.get("content"), str)
                or m.get("role") not in ("user", "assistant")
            ):
                raise _Reply(400, {"error": "400 Bad Request", "details": {"message": "role and content per message"}})
            self._store(user, m["content"], meta.get("date"), meta)
        return 200, {"event_id": f"evt-{next(self._ids)}", "status": "PENDING"}

    def _mem0_result(self, it: dict, score: float | None = None) -> dict:
        out = {
            "id": it["id"],
            "memory": it["text"],
            "user_id": it["scope"],
            "metadata": it["meta"],
            "created_at": _now(),  # the ingest time: an adapter must not date a memory by it
            "updated_at": None,
        }
        return out | ({"score": score} if score is not None else {})

    def _user(self, b: dict) -> str:
        if "user_id" in b:
            raise _Reply(400, {"error": "400 Bad Request", "details": {"message": "entity ids go inside filters"}})
        user = (b.get("filters") or {}).get("user_id")
        if not isinstance(user, str):
            raise _Reply(400, {"error": "400 Bad Request", "details": {"message": "filters.user_id is required"}})
        return user

    def _mem0_search(self, b: dict, q: dict, path: str) -> tuple[int, Any]:
        user, top_k = self._user(b), b.get("top_k", 10)
        if not isinstance(top_k, int) or not 1 <= top_k <= 1000:
            raise _Reply(400, {"error": "400 Bad Request", "details": {"message": "top_k: 1..1000"}})
        threshold = float(b.get("threshold", 0.1))
        hits = self._search(user, str(b.get("query", "")), top_k)
        return 200, {"results": [self._mem0_result(i, s) for s, i in hits if s >= threshold]}

    def _mem0_list(self, b: dict, q: dict, path: str) -> tuple[int, Any]:
        user = self._user(b)
        page, size = int(q.get("page", 1)), int(q.get("page_size", 100))
        now = time.monotonic()
        mine = [i for i in self.items if i["scope"] == user and i["ready_at"] <= now]
        chunk = mine[(page - 1) * size : page * size]
        nxt = f"/v3/memories/?page={page + 1}&page_size={size}" if page * size < len(mine) else None
        prev = f"/v3/memories/?page={page - 1}&page_size={size}" if page > 1 else None
        return 200, {
            "count": len(mine),
            "next": nxt,
            "previous": prev,
            "results": [self._mem0_result(i) for i in chunk],
        }

    def _mem0_delete(self, b: dict, q: dict, path: str) -> tuple[int, Any]:
        user = q.get("user_id")
        if not user:
            raise _Reply(400, {"error": "400 Bad Request", "details": {"message": "an entity id is required"}})
        self.items = [i for i in self.items if i["scope"] != user]
        return 200, {"message": "Memories deleted successfully!"}
