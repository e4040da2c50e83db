"""A scripted OpenAI-compatible chat server on loopback.

``with ScriptedChatServer(responder) as srv: ChatClient(srv.base_url, "m")`` — ``responder(body)``
gets the request JSON and returns a reply text, a full response dict, an ``int`` HTTP status
(to simulate failures), or ``(status, body dict)`` (an error reply with a body). Every request body and its headers are kept in ``srv.requests``, every reply body sent, byte for byte, in ``srv.replies``. A text
reply reports ``usage`` (:func:`stub_usage`); a dict reply carries whatever ``usage`` it holds.

``POST /v1/embeddings`` is served apart from the responder: deterministic hashed bag-of-words vectors
(``hashed_embedding``, ``srv.embedding_dim`` dimensions, unit length) with ``usage``; its request
bodies and headers are kept in ``srv.embedding_requests`` and ``srv.embedding_headers`` (not in
``srv.requests``), and statuses queued in
``srv.embedding_faults`` are returned first, one per request (to simulate failures).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable

from . import serve_in_background

__all__ = [
    "ScriptedChatServer",
    "completion",
    "stub_usage",
    "tool_call",
    "scripted_agent_responder",
    "hashed_embedding",
    "embeddings_reply",
]


def completion(
    text: str = "", tool_calls: list | None = None, model: str = "stub", usage: tuple[int, int] | None = None
) -> dict:
    """A chat completion; ``usage=(prompt_tokens, completion_tokens)`` adds the endpoint's ``usage`` object."""
    msg: dict = {"role": "assistant", "content": text}
    if tool_calls:
        msg["tool_calls"] = tool_calls
    return {
        "id": "cmpl-stub",
        "object": "chat.completion",
        "model": model,
        "choices": [{"index": 0, "message": msg, "finish_reason": "stop"}],
        **(
            {"usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)}}
            if usage
            else {}
        ),
    }


class ScriptedChatServer:
    embedding_dim = 256
    embedding_requests: list[dict]  # set by the first /v1/embeddings request
    embedding_headers: list[dict]
    embedding_faults: list[int]  # set by a test: statuses returned first, one per embeddings request

    def __init__(self, responder: Callable[[dict], str | dict | int | tuple[int, dict]]):
        self.responder = responder
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self.replies: list[bytes] = []  # the body of every reply sent with a body, byte for byte
        outer = self

        class Handler(BaseHTTPRequestHandler):
            disable_nagle_algorithm = True
            # keep-alive (every reply carries content-length): a client's calls reuse one connection, not a
            # connect and a server thread per call (a multi-turn suite makes ~1,000 calls)
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_POST(self):
                if self.path.rstrip("/").endswith("/embeddings"):
                    return _serve_embeddings(outer, self)
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                outer.requests.append(body)
                outer.headers.append(dict(self.headers))
                out = outer.responder(body)
                if isinstance(out, int):
                    self.send_response(out)
                    self.send_header("content-length", "0")
                    self.end_headers()
                    return
                status, reply = out if isinstance(out, tuple) else (200, out)
                if isinstance(reply, str):
                    reply = completion(reply, usage=stub_usage(body, reply))
                payload = json.dumps(reply).encode()
                outer.replies.append(payload)
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)

    @property
    def embedding_calls(self) -> int:
        """``/v1/embeddings`` requests served so far (failed ones included)."""
        return len(getattr(self, "embedding_requests", ()))

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self):
        serve_in_background(self._server)
        return self

    def __exit__(self, *exc):
        self._server.shutdown()
        self._server.server_close()


def stub_usage(body: dict, reply: str) -> tuple[int, int]:
    """The ``usage`` the stub reports for a text reply: whitespace-separated words of the request's
    message contents (prompt) and of the reply (completion).

    >>> stub_usage({"messages": [{"role": "user", "content": "two words"}]}, "one")
    (2, 1)
    """
    msgs = body.get("messages") or []
    prompt = sum(len(m["content"].split()) for m in msgs if isinstance(m, dict) and isinstance(m.get("content"), str))
    return prompt, len(reply.split())


def tool_call(name: str, args: dict, call_id: str) -> dict:
    """One OpenAI ``tool_calls`` entry."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def scripted_agent_responder(agent, channel: str = "tool") -> Callable[[dict], dict]:
    """A responder that answers like a scripted multi-turn agent (``memeval.multiturn.agents``):
    its tool calls as ``tool_calls``, its reply as content, and its state through ``channel``:
    ``"tool"`` (a ``report_state`` call before the reply), ``"block"`` (a fenced state block in
    the reply) or ``"none"`` (the reply only, for an extractor to read)."""
    state_tool = "report_state"

    def respond(body: dict) -> dict:
        msgs = [m for m in body["messages"] if m.get("role") != "system"]
        last_user = max(i for i, m in enumerate(msgs) if m.get("role") == "user")
        state_ids, plain = set(), []
        for m in msgs:  # the scripted agent never sees the state channel
            if m.get("role") == "assistant" and m.get("tool_calls"):
                calls = [c for c in m["tool_calls"] if c["function"]["name"] != state_tool]
                state_ids |= {c["id"] for c in m["tool_calls"] if c["function"]["name"] == state_tool}
                if calls:
                    plain.append({**m, "tool_calls": calls})
                continue
            if m.get("role") == "tool" and m.get("tool_call_id") in state_ids:
                continue
            plain.append(m)
        reported = any(m.get("role") == "tool" and m.get("tool_call_id") in state_ids for m in msgs[last_user:])
        turn = sum(1 for m in msgs if m.get("role") == "user") - 1
        step = sum(1 for m in msgs[last_user:] if m.get("role") == "assistant")
        out = agent.gen(plain, body.get("seed") or 0, turn, step)
        if out.tool_calls:
            return completion(
                "",
                [tool_call(c.name, dict(c.args), c.id or f"c{turn}_{step}_{i}") for i, c in enumerate(out.tool_calls)],
            )
        if channel == "tool" and out.state is not None and not reported:
            return completion("", [tool_call(state_tool, dict(out.state), f"s{turn}_{step}")])
        if channel == "block" and out.state is not None:
            return completion(f"{out.text}\n```state\n{json.dumps(dict(out.state))}\n```")
        return completion(out.text)

    return respond


_WORD = re.compile(r"\w+")


def hashed_embedding(text: str, dim: int = 256) -> list[float]:
    """A deterministic unit vector for ``text``: each lower-cased word adds +-1 at a hashed position
    (the sign hashed too); texts sharing words point the same way. No words: the zero vector.

    >>> v = hashed_embedding("the cat sat", 16)
    >>> round(sum(x * x for x in v), 6), v == hashed_embedding("The CAT sat", 16)
    (1.0, True)
    """
    v = [0.0] * dim
    for word in _WORD.findall(text.lower()):
        h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "big")
        v[h % dim] += 1.0 if (h >> 32) & 1 else -1.0
    norm = math.sqrt(sum(x * x for x in v))
    return [x / norm for x in v] if norm else v


def embeddings_reply(body: dict, dim: int = 256) -> dict:
    """The OpenAI ``/v1/embeddings`` reply to ``body`` (``input``: a string or a list of strings)."""
    inputs = body.get("input")
    inputs = [inputs] if isinstance(inputs, str) else list(inputs or [])
    tokens = sum(len(_WORD.findall(str(t))) for t in inputs)
    return {
        "object": "list",
        "model": body.get("model", "stub"),
        "data": [
            {"object": "embedding", "index": i, "embedding": hashed_embedding(str(t), dim)}
            for i, t in enumerate(inputs)
        ],
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }


def _serve_embeddings(server: ScriptedChatServer, handler: BaseHTTPRequestHandler) -> None:
    body = json.loads(handler.rfile.read(int(handler.headers.get("content-length", 0))) or b"{}")
    with _EMBED_LOCK:
        if not hasattr(server, "embedding_requests"):
            server.embedding_requests, server.embedding_headers = [], []
        server.embedding_requests.append(body)
        server.embedding_headers.append(dict(handler.headers))
        faults = getattr(server, "embedding_faults", None)
        status = faults.pop(0) if faults else 200
    payload = json.dumps(embeddings_reply(body, server.embedding_dim)).encode() if status == 200 else b""
    handler.send_response(status)
    handler.send_header("content-type", "application/json")
    handler.send_header("content-length", str(len(payload)))
    handler.end_headers()
    handler.wfile.write(payload)


_EMBED_LOCK = threading.Lock()
