"""The reference server: any in-process system behind the HTTP protocol of memory-api.md.

It is how the HTTP path, latency-minus-round-trip and fault handling are tested on loopback, and an
example for vendors. The app is Starlette (:mod:`.server_app`) served by uvicorn with its httptools
parser on one event loop (uvloop where installed) in a background thread; the listening socket is
bound in the constructor, so ``port=0`` works and ``url`` is known at once.

``Faults`` injects a fixed service delay into ``POST /query`` and 500s, stalls, dropped connections
and replies dropped *after the work is done* into the routes it names (``reset``, ``sessions``,
``query``; seeded, so a test run is repeatable). A repeated ``Idempotency-Key`` on ``POST /sessions``
is a no-op that returns the first reply; keys are forgotten on ``POST /reset``. Haystacks are fenced
(:mod:`.fencing`): ``POST /reset`` returns a new generation, requests naming an older one get 409 and
never reach the system (``fencing=False``: the protocol before generations, a control for tests).
``GET /stats`` reports what was received, stored and injected, and what the current generation holds.

``Limits`` bounds what a client can hold: the request body size, a total deadline for the request
line and headers and another for the body (:mod:`.server_conn`), the keep-alive idle time, and the
listen backlog. An optional bearer token guards every route but ``GET /health`` and
``GET /openapi.json``.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
import time

import uvicorn

from ..errors import StateError
from .http_net import new_event_loop
from .server_app import ServerState, make_app
from .server_conn import deadline_protocol
from .server_spec import OPENAPI, ROUTES, Faults, Limits

__all__ = ["Faults", "Limits", "ReferenceServer", "OPENAPI", "ROUTES"]


class _Uvicorn(uvicorn.Server):
    """uvicorn's server, woken at once by :meth:`wake` (uvicorn looks at ``should_exit`` every 0.1 s)."""

    _woken: asyncio.Event | None = None
    _loop: asyncio.AbstractEventLoop | None = None

    async def main_loop(self) -> None:  # uvicorn's loop (a tick each 0.1 s), with a wake-up
        self._loop, self._woken = asyncio.get_running_loop(), asyncio.Event()
        counter = 0
        should_exit = await self.on_tick(counter)
        while not should_exit:
            counter = (counter + 1) % 864000
            try:
                await asyncio.wait_for(self._woken.wait(), 0.1)
            except asyncio.TimeoutError:
                pass
            should_exit = await self.on_tick(counter)

    def wake(self) -> None:
        """From any thread: look at ``should_exit`` now."""
        loop, woken = self._loop, self._woken
        if loop is not None and woken is not None:
            try:
                loop.call_soon_threadsafe(woken.set)
            except RuntimeError:  # the loop is already closed
                pass


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
        fencing: bool = True,
        name: str | None = None,
    ):
        self.state = ServerState(system, faults, limits, token, fencing, name)
        self.system, self.faults, self.limits, self.token = system, faults, limits, token
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.socket = socket.socket(family, socket.SOCK_STREAM)
        try:
            self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self.socket.bind((host, port))
            self.socket.listen(limits.backlog)
        except OSError:
            self.socket.close()
            raise
        self.socket.setblocking(False)
        uvicorn_log = logging.getLogger("uvicorn.error")
        if uvicorn_log.level == logging.NOTSET:  # malformed requests get their 400 without a log line each
            uvicorn_log.setLevel(logging.ERROR)
        config = uvicorn.Config(
            make_app(self.state),
            http=deadline_protocol(limits),
            ws="none",
            lifespan="off",
            log_config=None,
            access_log=False,
            proxy_headers=False,
            server_header=False,
            # uvicorn hints an int; a float works (it goes to loop.call_later)
            timeout_keep_alive=limits.idle_timeout_s,  # type: ignore[arg-type]
            backlog=limits.backlog,
        )
        self._uvicorn = _Uvicorn(config)
        self._thread: threading.Thread | None = None
        self._failed: BaseException | None = None

    @property
    def url(self) -> str:
        host, port = self.socket.getsockname()[:2]
        return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"

    @property
    def counts(self) -> dict:
        """The live counts (read-only use; :meth:`stats` gives a copy)."""
        return self.state.counts

    def stats(self) -> dict:
        """Counts: requests per route, sessions ingested and repeated, faults injected, requests refused."""
        return self.state.stats()

    @property
    def connections(self) -> int:
        """Connections open now (a connection cut at a deadline is gone)."""
        return len(self._uvicorn.server_state.connections)

    def start(self) -> "ReferenceServer":
        """Serve in a background thread; returns once the server accepts connections."""
        self._thread = threading.Thread(target=self._serve, name="memeval-serve", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._uvicorn.started and self._thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.002)
        if not self._uvicorn.started:
            self.stop()
            raise StateError(f"the reference server did not start ({self._failed!r})")
        return self

    def _serve(self) -> None:
        loop = new_event_loop()
        try:
            loop.run_until_complete(self._uvicorn.serve(sockets=[self.socket]))
            # what is still open after the server stopped listening: cut, and let the tasks end
            for conn in list(self._uvicorn.server_state.connections):
                conn.transport.abort()
            for task in list(self._uvicorn.server_state.tasks):
                task.cancel()
            loop.run_until_complete(asyncio.sleep(0.01))
        except BaseException as e:  # noqa: BLE001 -- reported by start()
            self._failed = e
        finally:
            loop.close()

    def serve_forever(self) -> None:
        """Serve until Ctrl-C (KeyboardInterrupt reaches the caller, who then calls :meth:`close`)."""
        if self._thread is None:
            self.start()
        thread = self._thread
        assert thread is not None  # set by start()
        while thread.is_alive():
            thread.join(0.5)

    def stop(self) -> None:
        """Stop listening, cut the connections still open and wait for the server thread."""
        self._uvicorn.should_exit = self._uvicorn.force_exit = True
        self._uvicorn.wake()
        if self._thread is not None:
            self._thread.join(30)
        self.socket.close()

    close = stop

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
