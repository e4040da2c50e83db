"""The reference server: any in-process system behind the HTTP protocol of memory-api.md.

It is how the HTTP path, latency-minus-round-trip and fault handling are tested on loopback, and an
example for vendors. ``Faults`` injects a fixed service delay, 500s, stalls and dropped connections
into ``POST /query`` (seeded, so a test run is repeatable).
"""

from __future__ import annotations

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

__all__ = ["Faults", "ReferenceServer", "OPENAPI"]


@dataclass(frozen=True)
class Faults:
    delay_ms: float = 0.0      # added to every /query (server-side service time)
    error_rate: float = 0.0    # share of /query answered 500
    drop_rate: float = 0.0     # share of /query whose connection is closed without a response
    stall_rate: float = 0.0    # share of /query that sleep stall_ms before answering
    stall_ms: float = 2000.0
    seed: int = 0


_SESSION = {"type": "object", "required": ["session_id", "date", "turns"], "properties": {
    "session_id": {"type": ["integer", "string"]}, "date": {"type": "string"},
    "turns": {"type": "array", "items": {"type": "object", "required": ["turn_id", "speaker", "text", "date"],
              "properties": {"turn_id": {"type": "integer"}, "session_id": {"type": ["integer", "string"]},
                             "speaker": {"type": "string"}, "text": {"type": "string"}, "date": {"type": "string"},
                             "image": {"type": "string"}, "image_no": {"type": "integer"}}}}}}
OPENAPI = {
    "openapi": "3.1.0",
    "info": {"title": "memeval memory protocol", "version": "1",
             "description": "What memeval's HTTP adapter speaks. Sessions arrive in chronological order."},
    "paths": {
        "/reset": {"post": {"summary": "Forget everything", "responses": {"204": {"description": "reset"}}}},
        "/sessions": {"post": {"summary": "Store one session",
                               "requestBody": {"required": True, "content": {"application/json": {"schema": _SESSION}}},
                               "responses": {"200": {"description": "stored", "content": {"application/json": {
                                   "schema": {"type": "object", "properties": {"stored": {"type": "integer"}}}}}}}}},
        "/query": {"post": {"summary": "What the system remembers for a question",
                            "requestBody": {"required": True, "content": {"application/json": {"schema": {
                                "type": "object", "required": ["question"],
                                "properties": {"question": {"type": "string"},
                                               "asked_at": {"type": ["string", "null"]}}}}}},
                            "responses": {"200": {"description": "memories", "content": {"application/json": {
                                "schema": {"type": "object", "required": ["memories"], "properties": {
                                    "memories": {"type": "array", "items": {"oneOf": [
                                        {"type": "string"},
                                        {"type": "object", "required": ["text"], "properties": {
                                            "text": {"type": "string"}, "timestamp": {"type": "string"},
                                            "speaker": {"type": "string"}}}]}},
                                    "turn_ids": {"type": "array", "items": {"type": "integer"}},
                                    "answer": {"type": "string"}}}}}}}}},
        "/health": {"get": {"summary": "No-op, used to measure the network floor",
                            "responses": {"200": {"description": "ok"}}}},
    },
}


class ReferenceServer:
    """``with ReferenceServer(system, port=0, faults=Faults()) as srv: srv.url``."""

    def __init__(self, system, host: str = "127.0.0.1", port: int = 0, faults: Faults = Faults()):
        self.system, self.faults = system, faults
        self._rng = random.Random(faults.seed)
        self._rng_lock = threading.Lock()
        self._write_lock = threading.Lock()
        self.counts = {"query": 0, "error": 0, "drop": 0, "stall": 0}
        self._server = ThreadingHTTPServer((host, port), self._handler())
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def _fault(self) -> str | None:
        f = self.faults
        with self._rng_lock:
            x = self._rng.random()
            self.counts["query"] += 1
            for kind, rate in (("error", f.error_rate), ("drop", f.drop_rate), ("stall", f.stall_rate)):
                if x < rate:
                    self.counts[kind] += 1
                    return kind
                x -= rate
        return None

    def _handler(self):
        srv = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out as separate writes

            def log_message(self, *a):
                pass

            def _send(self, code: int, obj=None):
                body = b"" if obj is None else json.dumps(obj, ensure_ascii=False).encode()
                self.send_response(code)
                if obj is not None:
                    self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                try:
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout): nothing to do
                    self.close_connection = True

            def _body(self):
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                return json.loads(raw or b"{}")

            def do_GET(self):
                if self.path == "/health":
                    self._send(200, {"ok": True})
                elif self.path == "/openapi.json":
                    self._send(200, OPENAPI)
                else:
                    self._send(404, {"error": f"no route {self.path}"})

            def do_POST(self):
                try:
                    body = self._body()
                except (ValueError, UnicodeDecodeError):
                    return self._send(400, {"error": "body is not JSON"})
                if self.path == "/reset":
                    with srv._write_lock:
                        srv.system.reset()
                    return self._send(204)
                if self.path == "/sessions":
                    try:
                        turns = tuple(turn_from_dict({"session_id": body.get("session_id"), **t}, "request", i)
                                      for i, t in enumerate(body["turns"]))
                        session = Session(body["session_id"], body["date"], turns)
                    except (KeyError, TypeError, InputError) as e:
                        return self._send(400, {"error": f"bad session: {e}"})
                    with srv._write_lock:
                        srv.system.ingest(session)
                    return self._send(200, {"stored": len(turns)})
                if self.path == "/query":
                    return self._query(body)
                self._send(404, {"error": f"no route {self.path}"})

            def _query(self, body):
                if not isinstance(body, dict) or not isinstance(body.get("question"), str):
                    return self._send(400, {"error": "field 'question' must be a string"})
                fault = srv._fault()
                if fault == "drop":
                    self.close_connection = True
                    try:
                        self.connection.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                    return
                if fault == "stall":
                    time.sleep(srv.faults.stall_ms / 1000)
                if srv.faults.delay_ms:
                    time.sleep(srv.faults.delay_ms / 1000)
                if fault == "error":
                    return self._send(500, {"error": "injected fault"})
                r = srv.system.query(body["question"], body.get("asked_at"))
                out = {"memories": [memory_to_json(m) for m in r.memories]}
                if r.turn_ids is not None:
                    out["turn_ids"] = list(r.turn_ids)
                if r.answer is not None:
                    out["answer"] = r.answer
                self._send(200, out)

        return Handler

    def start(self) -> "ReferenceServer":
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._server.serve_forever()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
