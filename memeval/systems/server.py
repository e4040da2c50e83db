"""The reference server: any in-process system behind the HTTP protocol of memory-api.md.

It is how the HTTP path, latency-minus-round-trip and fault handling are tested on loopback, and an
example for vendors. ``Faults`` injects a fixed service delay into ``POST /query`` and 500s, stalls,
dropped connections and replies dropped *after the work is done* into the routes it names
(``reset``, ``sessions``, ``query``; seeded, so a test run is repeatable).

A repeated ``Idempotency-Key`` on ``POST /sessions`` is a no-op that returns the first reply; keys are
forgotten on ``POST /reset``. ``GET /stats`` reports what was received, stored and injected.

``Limits`` bounds what a client can hold: the request body size, a total deadline for the request
line and headers and another for the body, the keep-alive idle time, and the listen backlog. An
optional bearer token guards every route but ``GET /health`` and ``GET /openapi.json``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import random
import socket
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from ..bench.io import turn_from_dict
from ..bench.model import Session
from ..errors import InputError
from .base import memory_to_json

__all__ = ["Faults", "Limits", "ReferenceServer", "OPENAPI", "ROUTES"]

ROUTES = ("reset", "sessions", "query")


@dataclass(frozen=True)
class Faults:
    delay_ms: float = 0.0  # added to every /query (server-side service time)
    error_rate: float = 0.0  # share of requests answered 500 (work not done)
    drop_rate: float = 0.0  # share of requests whose connection is closed before the work
    stall_rate: float = 0.0  # share of requests that sleep stall_ms before the work
    stall_ms: float = 2000.0
    seed: int = 0
    drop_after_rate: float = 0.0  # share of requests whose reply is dropped after the work is done
    routes: tuple[str, ...] = ("query",)  # which of ROUTES the rates apply to


@dataclass(frozen=True)
class Limits:
    max_body_bytes: int = 16 * 1024 * 1024  # larger bodies: 413, connection closed, body never read
    header_timeout_s: float = 10.0  # total time for the request line and headers, from the first byte
    body_timeout_s: float = 30.0  # total time for the body
    idle_timeout_s: float = 120.0  # keep-alive connection idle between requests
    backlog: int = 1024  # listen backlog (bursts of new connections)


_SESSION = {
    "type": "object",
    "required": ["session_id", "date", "turns"],
    "properties": {
        "session_id": {"type": ["integer", "string"]},
        "date": {"type": "string"},
        "turns": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["turn_id", "speaker", "text", "date"],
                "properties": {
                    "turn_id": {"type": "integer"},
                    "session_id": {"type": ["integer", "string"]},
                    "speaker": {"type": "string"},
                    "text": {"type": "string"},
                    "date": {"type": "string"},
                    "image": {
                        "type": "string",
                        "description": "a path inside the bench folder, or the bytes as a "
                        "data:image/...;base64, URL (memeval run --http-images inline)",
                    },
                    "image_no": {"type": "integer"},
                },
            },
        },
    },
}
_ERROR = {
    "description": "error",
    "content": {"application/json": {"schema": {"type": "object", "properties": {"error": {"type": "string"}}}}},
}
_LIMIT_RESPONSES = {
    "400": {**_ERROR, "description": "body is not JSON, or Content-Length is not a non-negative integer"},
    "401": {**_ERROR, "description": "missing or wrong bearer token (when the server was started with one)"},
    "411": {**_ERROR, "description": "no Content-Length (chunked bodies are not accepted)"},
    "413": {**_ERROR, "description": "body above the server's limit (memeval serve: --max-body-bytes)"},
}
OPENAPI = {
    "openapi": "3.1.0",
    "info": {
        "title": "memeval memory protocol",
        "version": "1",
        "description": (
            "What memeval's HTTP adapter speaks. Sessions arrive in chronological order. Every POST /sessions "
            "carries an Idempotency-Key header (a digest of the bench's content hash, the haystack and the "
            "session id): a server must treat a repeated key as a no-op that returns the first reply, and "
            "forget its keys on POST /reset. The client gives every request a total deadline (connect + send "
            "+ receive) and caps the reply size; a /query reply that breaks the schema is an error, not a "
            "score. The reference server (memeval serve) limits the request body (default 16 MiB; 413 "
            "above), gives the request line and headers 10 s and the body 30 s in total, closes keep-alive "
            "connections idle for 120 s, listens with a backlog of 1024, and with --token-env NAME requires "
            "'Authorization: Bearer <token>' on every route but /health and /openapi.json."
        ),
    },
    "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
    "paths": {
        "/reset": {
            "post": {
                "summary": "Forget everything (stored sessions and idempotency keys)",
                "security": [{"bearer": []}, {}],
                "responses": {"204": {"description": "reset"}, **_LIMIT_RESPONSES},
            }
        },
        "/sessions": {
            "post": {
                "summary": "Store one session (a repeated Idempotency-Key is a no-op)",
                "security": [{"bearer": []}, {}],
                "parameters": [
                    {
                        "name": "Idempotency-Key",
                        "in": "header",
                        "required": False,
                        "schema": {"type": "string", "maxLength": 255},
                        "description": "digest of (bench content hash, haystack, session id); memeval always sends it",
                    }
                ],
                "requestBody": {"required": True, "content": {"application/json": {"schema": _SESSION}}},
                "responses": {
                    "200": {
                        "description": "stored (or a repeat: the first reply)",
                        "content": {
                            "application/json": {
                                "schema": {"type": "object", "properties": {"stored": {"type": "integer"}}}
                            }
                        },
                    },
                    "422": {**_ERROR, "description": "key reused with another session"},
                    **_LIMIT_RESPONSES,
                },
            }
        },
        "/query": {
            "post": {
                "summary": "What the system remembers for a question",
                "security": [{"bearer": []}, {}],
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "required": ["question"],
                                "properties": {
                                    "question": {"type": "string"},
                                    "asked_at": {"type": ["string", "null"]},
                                },
                            }
                        }
                    },
                },
                "responses": {
                    "200": {
                        "description": "memories",
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "required": ["memories"],
                                    "properties": {
                                        "memories": {
                                            "type": "array",
                                            "items": {
                                                "oneOf": [
                                                    {"type": "string"},
                                                    {
                                                        "type": "object",
                                                        "required": ["text"],
                                                        "properties": {
                                                            "text": {"type": "string"},
                                                            "timestamp": {"type": "string"},
                                                            "speaker": {"type": "string"},
                                                            "image": {
                                                                "type": "string",
                                                                "description": "a path inside the bench "
                                                                "folder or a data:image/...;base64, URL",
                                                            },
                                                        },
                                                    },
                                                ]
                                            },
                                        },
                                        "turn_ids": {"type": "array", "items": {"type": "integer"}},
                                        "answer": {"type": "string"},
                                    },
                                }
                            }
                        },
                    },
                    **_LIMIT_RESPONSES,
                },
            }
        },
        "/health": {
            "get": {
                "summary": "No-op, used to measure the network floor (never needs the token)",
                "responses": {"200": {"description": "ok"}},
            }
        },
        "/stats": {
            "get": {
                "summary": "Counts: requests per route, sessions stored and repeated, faults injected",
                "security": [{"bearer": []}, {}],
                "responses": {
                    "200": {
                        "description": "counts",
                        "content": {
                            "application/json": {
                                "schema": {"type": "object", "additionalProperties": {"type": "integer"}}
                            }
                        },
                    }
                },
            }
        },
    },
}

_OPEN = ("/health", "/openapi.json")


class ReferenceServer:
    """``with ReferenceServer(system, port=0, faults=Faults()) as srv: srv.url``."""

    def __init__(
        self,
        system,
        host: str = "127.0.0.1",
        port: int = 0,
        faults: Faults = Faults(),
        limits: Limits = Limits(),
        token: str | None = None,
    ):
        unknown = set(faults.routes) - set(ROUTES)
        if unknown:
            raise ValueError(f"unknown fault routes {sorted(unknown)} (routes: {', '.join(ROUTES)})")
        self.system, self.faults, self.limits, self.token = system, faults, limits, token
        self._rng = random.Random(faults.seed)
        self._rng_lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._keys: dict[str, tuple[str, dict]] = {}
        self.counts = {
            "query": 0,
            "reset": 0,
            "sessions": 0,
            "ingested": 0,
            "repeated": 0,
            "error": 0,
            "drop": 0,
            "stall": 0,
            "drop_after": 0,
            "rejected": 0,
        }
        self._watched: dict[object, float] = {}
        self._watch_lock = threading.Lock()
        self._stopping = threading.Event()
        server_cls = type(
            "_Server",
            (ThreadingHTTPServer,),
            {
                "request_queue_size": limits.backlog,
                "daemon_threads": True,
                "handle_error": lambda self, request, client_address: None,
            },
        )  # a client that vanished: not our error
        self._server = server_cls((host, port), self._handler())
        self._thread: threading.Thread | None = None
        self._watchdog = threading.Thread(target=self._watch_loop, daemon=True)
        self._watchdog.start()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def stats(self) -> dict:
        with self._rng_lock:
            return dict(self.counts)

    def _count(self, key: str) -> None:
        with self._rng_lock:
            self.counts[key] += 1

    def _fault(self, route: str) -> str | None:
        f = self.faults
        with self._rng_lock:
            self.counts[route] += 1
            if route not in f.routes:
                return None
            x = self._rng.random()
            for kind, rate in (
                ("error", f.error_rate),
                ("drop", f.drop_rate),
                ("stall", f.stall_rate),
                ("drop_after", f.drop_after_rate),
            ):
                if x < rate:
                    self.counts[kind] += 1
                    return kind
                x -= rate
        return None

    # -- total deadlines: a watchdog shuts the socket of a request that is still arriving past its deadline
    def _watch(self, handler, seconds: float) -> None:
        with self._watch_lock:
            self._watched[handler] = time.monotonic() + seconds

    def _unwatch(self, handler) -> None:
        with self._watch_lock:
            self._watched.pop(handler, None)

    def _watch_loop(self) -> None:
        while not self._stopping.wait(0.1):
            now = time.monotonic()
            with self._watch_lock:
                late = [h for h, at in self._watched.items() if at < now]
                for h in late:
                    del self._watched[h]
            for h in late:
                h.close_connection = True
                try:
                    h.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def _handler(self):
        srv = self
        limits = self.limits

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out as separate writes

            def log_message(self, *a):
                pass

            def handle_one_request(self):
                self.connection.settimeout(limits.idle_timeout_s)
                try:
                    if not self.rfile.peek(1):  # the client closed the connection
                        self.close_connection = True
                        return
                except OSError:  # idle past the keep-alive limit, or reset
                    self.close_connection = True
                    return
                self.connection.settimeout(max(limits.header_timeout_s, limits.body_timeout_s))
                srv._watch(self, limits.header_timeout_s)
                try:
                    super().handle_one_request()
                except OSError:
                    self.close_connection = True
                finally:
                    srv._unwatch(self)

            def _send(self, code: int, obj=None, close: bool = False, headers: dict | None = None):
                srv._unwatch(self)
                body = b"" if obj is None else json.dumps(obj, ensure_ascii=False).encode()
                self.send_response(code)
                if obj is not None:
                    self.send_header("content-type", "application/json")
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                if close:
                    self.send_header("connection", "close")
                    self.close_connection = True
                self.send_header("content-length", str(len(body)))
                try:
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:  # the client gave up (timeout): nothing to do
                    self.close_connection = True

            def _reject(self, code: int, message: str, **headers):
                srv._count("rejected")
                self._send(code, {"error": message}, close=True, headers=headers)

            def _drop(self):
                srv._unwatch(self)
                self.close_connection = True
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

            def _authorised(self) -> bool:
                if srv.token is None or self.path in _OPEN:
                    return True
                got = self.headers.get("authorization", "")
                if hmac.compare_digest(got.encode(), f"Bearer {srv.token}".encode()):
                    return True
                self._reject(401, "missing or wrong bearer token", **{"www-authenticate": "Bearer"})
                return False

            def _body(self) -> tuple[bytes | None, str | None]:
                """(raw body, None), or (None, why) after a reply was sent."""
                if "chunked" in self.headers.get("transfer-encoding", "").lower():
                    self._reject(411, "a Content-Length is required (chunked bodies are not accepted)")
                    return None, "rejected"
                declared = self.headers.get("content-length", "0").strip() or "0"
                if not declared.isdigit() or len(declared) > 18:
                    self._reject(400, "Content-Length must be a non-negative integer")
                    return None, "rejected"
                n = int(declared)
                if n > limits.max_body_bytes:
                    self._reject(413, f"body of {n} bytes is above the limit of {limits.max_body_bytes} bytes")
                    return None, "rejected"
                srv._watch(self, limits.body_timeout_s)
                try:
                    raw = self.rfile.read(n)
                except OSError:
                    raw = b""
                srv._unwatch(self)
                if len(raw) < n:  # the client stopped sending, or ran out of time
                    self.close_connection = True
                    return None, "incomplete"
                return raw, None

            def do_GET(self):
                srv._unwatch(self)
                if not self._authorised():
                    return
                if self.path == "/health":
                    self._send(200, {"ok": True})
                elif self.path == "/openapi.json":
                    self._send(200, OPENAPI)
                elif self.path == "/stats":
                    self._send(200, srv.stats())
                else:
                    self._send(404, {"error": f"no route {self.path}"})

            def do_POST(self):
                if not self._authorised():
                    return
                raw, why = self._body()
                if why:
                    return
                try:
                    body = json.loads(raw or b"{}")
                except (ValueError, RecursionError):
                    return self._send(400, {"error": "body is not JSON"})
                route = self.path.lstrip("/")
                if route not in ROUTES:
                    return self._send(404, {"error": f"no route {self.path}"})
                if route == "query" and (not isinstance(body, dict) or not isinstance(body.get("question"), str)):
                    return self._send(400, {"error": "field 'question' must be a string"})
                if route == "sessions":
                    try:
                        session = _session(body)
                    except (KeyError, TypeError, AttributeError, InputError) as e:
                        return self._send(400, {"error": f"bad session: {e}"})
                fault = srv._fault(route)
                if fault == "drop":
                    return self._drop()
                if fault == "stall":
                    time.sleep(srv.faults.stall_ms / 1000)
                if route == "query" and srv.faults.delay_ms:
                    time.sleep(srv.faults.delay_ms / 1000)
                if fault == "error":
                    return self._send(500, {"error": "injected fault"})
                if route == "reset":
                    with srv._write_lock:
                        srv.system.reset()
                        srv._keys.clear()
                    code, out = 204, None
                elif route == "sessions":
                    code, out = srv._ingest(session, self.headers.get("idempotency-key"), raw)
                else:
                    code, out = 200, _recall(srv.system.query(body["question"], body.get("asked_at")))
                if fault == "drop_after":
                    return self._drop()
                self._send(code, out)

        return Handler

    def _ingest(self, session: Session, key: str | None, raw: bytes) -> tuple[int, dict]:
        digest = hashlib.sha256(raw).hexdigest()
        with self._write_lock:
            if key is not None and key in self._keys:
                first_digest, first_reply = self._keys[key]
                if first_digest != digest:
                    return 422, {"error": "Idempotency-Key already used for another session"}
                self._count("repeated")
                return 200, first_reply
            self.system.ingest(session)
            reply = {"stored": len(session.turns)}
            if key is not None:
                self._keys[key] = (digest, reply)
            self._count("ingested")
        return 200, reply

    def start(self) -> "ReferenceServer":
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._server.serve_forever()

    def stop(self) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()

    def close(self) -> None:
        """Release the socket of a server that ran ``serve_forever`` in the caller's thread."""
        self._stopping.set()
        self._server.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def _session(body) -> Session:
    turns = tuple(
        turn_from_dict({"session_id": body.get("session_id"), **t}, "request", i) for i, t in enumerate(body["turns"])
    )
    return Session(body["session_id"], body["date"], turns)


def _recall(r) -> dict:
    out = {"memories": [memory_to_json(m) for m in r.memories]}
    if r.turn_ids is not None:
        out["turn_ids"] = list(r.turn_ids)
    if r.answer is not None:
        out["answer"] = r.answer
    return out
