"""A scripted OpenAI-compatible chat server on loopback.

``with ScriptedChatServer(responder) as srv: ChatClient(srv.base_url, "m")`` — ``responder(body)``
gets the request JSON and returns a reply text, a full response dict, or an ``int`` HTTP status
(to simulate failures). Every request body and its headers are kept in ``srv.requests``.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable

__all__ = ["ScriptedChatServer", "completion"]


def completion(text: str = "", tool_calls: list | None = None, model: str = "stub") -> dict:
    msg: dict = {"role": "assistant", "content": text}
    if tool_calls:
        msg["tool_calls"] = tool_calls
    return {"id": "cmpl-stub", "object": "chat.completion", "model": model,
            "choices": [{"index": 0, "message": msg, "finish_reason": "stop"}]}


class ScriptedChatServer:
    def __init__(self, responder: Callable[[dict], str | dict | int]):
        self.responder = responder
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            disable_nagle_algorithm = True
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                outer.requests.append(body)
                outer.headers.append(dict(self.headers))
                out = outer.responder(body)
                if isinstance(out, int):
                    self.send_response(out)
                    self.send_header("content-length", "0")
                    self.end_headers()
                    return
                payload = json.dumps(completion(out) if isinstance(out, str) else out).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._server.shutdown()
        self._server.server_close()
