"""The reference server's ASGI application (Starlette): the routes of memory-api.md over one system.

Everything here runs on the server's single event loop, so the system is called by one request at a
time (its ``reset``/``ingest``/``query`` need no locks) while injected delays and stalls are
``asyncio`` sleeps that hold no other request up. ``ServerState`` keeps the idempotency keys, the
seeded fault schedule, the current generation and the counts behind ``GET /stats``.

Fencing (:mod:`.fencing`): ``POST /reset`` starts a new generation and returns it; a reset's
``Idempotency-Key`` is applied once (kept across resets, the last 4,096), so a reset attempt that
lands after its retry changes nothing. A ``/sessions`` or ``/query`` naming a generation that is no
longer current is refused with 409 *when its work would run* (after any injected stall), so work
that outlived its client never reaches the memory. With ``fencing=False`` the server speaks the
protocol as it was before generations (204 on reset, headers ignored): the control for tests.

The guard in front of the routes refuses, before any body is read and with the connection closed:
a missing or wrong bearer token (401), a chunked body (411), a Content-Length that is not a
non-negative integer (400) or above the limit (413).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import random
import secrets
from collections import OrderedDict
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..bench.io import turn_from_dict
from ..bench.model import Session
from ..errors import ArgumentError, InputError, SystemContractError
from .base import declared, memory_to_json
from .fencing import GENERATION_HEADER, haystack_digest, session_digest
from .server_spec import OPEN_PATHS, OPENAPI, ROUTES, Faults, Limits

__all__ = ["ServerState", "make_app"]

_COUNTS = (
    "query",
    "reset",
    "session_requests",
    "ingested",
    "repeated",
    "repeated_reset",
    "stale",
    "error",
    "drop",
    "stall",
    "drop_after",
    "rejected",
)
_FAULTS = ("error", "drop", "stall", "drop_after")
#: the counter of requests per route (``sessions`` in the stats is what the current generation holds)
_ROUTE_COUNTER = {"reset": "reset", "sessions": "session_requests", "query": "query"}
_RESET_KEYS_KEPT = 4096
_GEN_HEADER = GENERATION_HEADER.lower()


class ServerState:
    """The system served, its idempotency keys, the seeded fault schedule and the counts."""

    def __init__(
        self, system, faults: Faults, limits: Limits, token: str | None, fencing: bool = True, name: str | None = None
    ):
        unknown = set(faults.routes) - set(ROUTES)
        if unknown:
            raise ArgumentError(f"unknown fault routes {sorted(unknown)} (routes: {', '.join(ROUTES)})")
        self.system, self.faults, self.limits = system, faults, limits
        self.bearer = None if token is None else f"Bearer {token}".encode()
        self.rng = random.Random(faults.seed)
        self.keys: dict[str, tuple[str, dict]] = {}
        self.counts = dict.fromkeys(_COUNTS, 0)
        self.fencing = fencing
        self._n_generations = 0
        self.generation = self._new_generation()
        self.reset_keys: OrderedDict[str, str] = OrderedDict()  # reset Idempotency-Key -> its generation
        self.stored: list[str] = []  # digests of the sessions stored in the current generation
        #: what ``GET /health`` reports: the served system's name (default ``<name>-http``: served, it is
        #: measured over the network and is not the in-process system), version and scalar params
        self.info = {
            "ok": True,
            "name": name or f"{system.name}-http",
            "version": str(system.version),
            "params": {k: v for k, v in dict(system.params).items() if isinstance(v, (str, int, float, bool))},
        }

    def _new_generation(self) -> str:
        self._n_generations += 1
        return f"{self._n_generations}-{secrets.token_hex(6)}"

    def stats(self) -> dict[str, Any]:
        """The counts, and what the current generation holds (``sessions``, ``digest``, ``generation``)."""
        return {**self.counts, **self.held()}

    def held(self) -> dict[str, Any]:
        """What the current generation holds: its id, sessions stored and their digest (memory-api.md)."""
        if not self.fencing:
            return {"sessions": len(self.stored)}
        return {"generation": self.generation, "sessions": len(self.stored), "digest": haystack_digest(self.stored)}

    def stale(self, generation: str | None) -> bool:
        """Whether a request naming ``generation`` must be refused (it is no longer current)."""
        return self.fencing and generation is not None and generation != self.generation

    def fault(self, route: str) -> str | None:
        """Count a request on ``route`` and draw its fault (None, or one of error/drop/stall/drop_after)."""
        f = self.faults
        self.counts[_ROUTE_COUNTER[route]] += 1
        if route not in f.routes:
            return None
        x = self.rng.random()
        for kind, rate in zip(_FAULTS, (f.error_rate, f.drop_rate, f.stall_rate, f.drop_after_rate)):
            if x < rate:
                self.counts[kind] += 1
                return kind
            x -= rate
        return None

    def ingest(self, session: Session, key: str | None, raw: bytes) -> tuple[int, dict]:
        """Store ``session``, or return the first reply of a repeated ``key`` (422 if it named another body)."""
        digest = hashlib.sha256(raw).hexdigest()
        if key is not None and key in self.keys:
            first_digest, first_reply = self.keys[key]
            if first_digest != digest:
                return 422, {"error": "Idempotency-Key already used for another session"}
            self.counts["repeated"] += 1
            return 200, first_reply
        self.system.ingest(session)
        reply = {"stored": len(session.turns)}
        if key is not None:
            self.keys[key] = (digest, reply)
        self.stored.append(session_digest(raw))
        self.counts["ingested"] += 1
        return 200, reply

    def reset(self, key: str | None = None) -> str:
        """Forget everything and start a new generation; a reset ``key`` already applied is a no-op
        returning the generation it started."""
        if self.fencing and key is not None and key in self.reset_keys:
            self.counts["repeated_reset"] += 1
            return self.reset_keys[key]
        self.system.reset()
        self.keys.clear()
        self.stored.clear()
        self.generation = self._new_generation()
        if self.fencing and key is not None:
            self.reset_keys[key] = self.generation
            while len(self.reset_keys) > _RESET_KEYS_KEPT:
                self.reset_keys.popitem(last=False)
        return self.generation


def make_app(state: ServerState):
    """The ASGI app: the guard (token and body limits) in front of Starlette's routes."""
    openapi = json.dumps(OPENAPI, ensure_ascii=False).encode()
    info = json.dumps(state.info, ensure_ascii=False).encode()

    async def health(request: Request) -> Response:
        return Response(info, media_type="application/json")

    async def openapi_json(request: Request) -> Response:
        return Response(openapi, media_type="application/json")

    async def stats(request: Request) -> Response:
        asked = request.query_params.get("generation")
        if asked is None:
            return JSONResponse(state.stats())
        if state.stale(asked):
            return _stale(state)
        return JSONResponse(state.held())

    sut = declared(state.system)
    lists, listing = sut.lists_memories, sut.memories

    async def memories(request: Request) -> Response:
        if state.stale(request.headers.get(_GEN_HEADER)):
            state.counts["stale"] += 1
            return _stale(state)
        if not lists:
            return _error(501, f"system {state.system.name!r} does not list its stored memories")
        haystack = request.query_params.get("haystack", "")
        try:
            held = listing(haystack)
        except SystemContractError as e:
            return _error(501, str(e))
        return JSONResponse({"haystack": haystack, "memories": [memory_to_json(m) for m in held]})

    async def work(request: Request) -> Response:
        route = request.scope["path"].lstrip("/")
        try:
            raw = await request.body()
        except ClientDisconnect:  # gone, or cut at the body deadline: nobody to answer
            return Response(status_code=400)
        try:
            body = json.loads(raw or b"{}")
        except (ValueError, RecursionError):
            return _error(400, "body is not JSON")
        if route == "query" and (not isinstance(body, dict) or not isinstance(body.get("question"), str)):
            return _error(400, "field 'question' must be a string")
        if route == "sessions":
            try:
                session = _session(body)
            except (KeyError, TypeError, AttributeError, InputError) as e:
                return _error(400, f"bad session: {e}")
        fault = state.fault(route)
        if fault == "drop":
            return await _drop(request)
        if fault == "stall":
            await asyncio.sleep(state.faults.stall_ms / 1000)
        if route == "query" and state.faults.delay_ms:
            await asyncio.sleep(state.faults.delay_ms / 1000)
        if fault == "error":
            return _error(500, "injected fault")
        # from here to the reply nothing is awaited: the generation checked is the one the work sees
        if route != "reset" and state.stale(request.headers.get(_GEN_HEADER)):
            state.counts["stale"] += 1
            return _stale(state)
        if route == "reset":
            generation = state.reset(request.headers.get("idempotency-key"))
            reply: Response = JSONResponse({"generation": generation}) if state.fencing else Response(status_code=204)
        elif route == "sessions":
            code, out = state.ingest(session, request.headers.get("idempotency-key"), raw)
            reply = JSONResponse(out, code)
        else:
            reply = JSONResponse(_recall(state.system.query(body["question"], body.get("asked_at"))))
        if fault == "drop_after":
            return await _drop(request)
        return reply

    async def no_route(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)  # the one exception this handler is registered for
        if exc.status_code in (404, 405):  # every unknown method+path is "no route", as before
            return _error(404, f"no route {request.scope['path']}")
        return _error(exc.status_code, exc.detail)

    routes = [
        Route("/health", health, methods=["GET"]),
        Route("/openapi.json", openapi_json, methods=["GET"]),
        Route("/stats", stats, methods=["GET"]),
        Route("/memories", memories, methods=["GET"]),
        *(Route(f"/{r}", work, methods=["POST"]) for r in ROUTES),
    ]
    return _Guard(Starlette(routes=routes, exception_handlers={HTTPException: no_route}), state)


class _Guard:
    """Pure ASGI middleware: what is refused before a body is read (the connection is then closed)."""

    def __init__(self, app, state: ServerState):
        self.app, self.state = app, state

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http":
            refusal = self._refusal(scope)
            if refusal is not None:
                self.state.counts["rejected"] += 1
                code, message, headers = refusal
                reply = JSONResponse({"error": message}, code, headers={**headers, "connection": "close"})
                return await reply(scope, receive, send)
        await self.app(scope, receive, send)

    def _refusal(self, scope) -> tuple[int, str, dict] | None:
        st = self.state
        headers = scope["headers"]
        if st.bearer is not None and scope["path"] not in OPEN_PATHS:
            if not hmac.compare_digest(_header(headers, b"authorization"), st.bearer):
                return 401, "missing or wrong bearer token", {"www-authenticate": "Bearer"}
        if scope["method"] != "POST":
            return None
        if b"chunked" in _header(headers, b"transfer-encoding").lower():
            return 411, "a Content-Length is required (chunked bodies are not accepted)", {}
        declared = _header(headers, b"content-length").strip() or b"0"
        if not declared.isdigit() or len(declared) > 18:
            return 400, "Content-Length must be a non-negative integer", {}
        n, cap = int(declared), st.limits.max_body_bytes
        if n > cap:
            return 413, f"body of {n} bytes is above the limit of {cap} bytes", {}
        return None


def _header(headers: list[tuple[bytes, bytes]], name: bytes) -> bytes:
    for k, v in headers:
        if k == name:
            return v
    return b""


def _error(code: int, message: str) -> Response:
    return JSONResponse({"error": message}, code)


def _stale(state: ServerState) -> Response:
    return JSONResponse(
        {"error": "generation is no longer current (the memory was reset since)", "generation": state.generation},
        409,
    )


async def _drop(request: Request) -> Response:
    """Close the connection without a reply, and wait until the server has seen it go."""
    transport = request.scope.get("memeval.transport")
    if transport is not None and not transport.is_closing():
        transport.close()
    try:
        async with asyncio.timeout(5):
            while (await request.receive())["type"] != "http.disconnect":
                pass
    except TimeoutError:
        pass
    return Response(status_code=500)  # never sent: the connection is gone


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
