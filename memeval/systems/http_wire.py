"""A lean httpx transport for plain ``http://``: HTTP/1.1 keep-alive over asyncio, parsed by httptools.

httpx's default transport (httpcore + h11 + anyio) spends ~0.5 ms of CPU per request on loopback:
about ten times the request itself, so a load generator on a 2-core machine measured its own
overhead. This transport keeps httpx's ``Request``/``Response`` and the adapter's code unchanged and
does the wire part with uvicorn's C parser (httptools): a pool of keep-alive connections, one request
at a time on each, the request written in one ``write``, the reply's headers returned as soon as they
are parsed and its body streamed (reading pauses above 256 KiB buffered, so a reply cap holds).

What it leaves out, since the memory protocol needs none of it: TLS (``https://`` goes through httpx's
own transport), proxies, HTTP/2, ``HEAD``, ``Expect: 100-continue``, upgrades. Time limits are the
caller's (the adapter bounds each attempt with one ``asyncio.timeout``); a cancelled request closes its
connection. A reply cut short, a connection refused or closed without a reply, and a malformed reply
raise ``httpx.TransportError`` subclasses, as httpx's own transport does.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import AsyncIterator

import httptools
import httpx

__all__ = ["WireTransport"]

_PAUSE_AT = 256 * 1024


class _Connection(asyncio.Protocol):
    """One TCP connection and the reply being read on it."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.idle_bytes = False  # bytes arrived while no request was out: not reusable
        self._busy = False
        self._parser = httptools.HttpResponseParser(self)
        self._head: asyncio.Future | None = None
        self._wake: asyncio.Future | None = None
        self._headers: list[tuple[bytes, bytes]] = []
        self._reason = b""
        self._chunks: deque[bytes] = deque()
        self._buffered = 0
        self._paused = False
        self._done = False
        self._keep_alive = False
        self._until_close = False
        self._error: Exception | None = None

    # -- asyncio.Protocol --------------------------------------------------------------------------
    def connection_made(self, transport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        if not self._busy:
            self.idle_bytes = True
            return
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError as e:
            self._fail(httpx.RemoteProtocolError(f"malformed reply ({e})"))
            assert self.transport is not None  # set by connection_made, before any data
            self.transport.close()

    def eof_received(self) -> bool:
        self._on_close()
        return False

    def connection_lost(self, exc) -> None:
        self._on_close()

    def _on_close(self) -> None:
        self.closed = True
        if not self._busy or self._done:
            return
        if self._head is not None and self._head.done() and self._until_close:
            self.on_message_complete()  # a body without length or chunks ends with the connection
        elif self._head is None or not self._head.done():
            self._fail(httpx.RemoteProtocolError("Server disconnected without sending a response."))
        else:
            self._fail(httpx.RemoteProtocolError("Server disconnected in the middle of the reply."))

    # -- httptools callbacks -------------------------------------------------------------------------
    def on_status(self, reason: bytes) -> None:
        self._reason += reason

    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers.append((name, value))

    def on_headers_complete(self) -> None:
        names = {k.lower() for k, _ in self._headers}
        self._until_close = b"content-length" not in names and b"transfer-encoding" not in names
        self._keep_alive = self._parser.should_keep_alive()
        if self._head is not None and not self._head.done():
            self._head.set_result(self._parser.get_status_code())

    def on_body(self, body: bytes) -> None:
        self._chunks.append(body)
        self._buffered += len(body)
        if self._buffered > _PAUSE_AT and not self._paused:
            self._paused = True
            assert self.transport is not None
            self.transport.pause_reading()
        self._notify()

    def on_message_complete(self) -> None:
        self._done = True
        self._notify()

    # -- one exchange --------------------------------------------------------------------------------
    def _fail(self, error: Exception) -> None:
        if self._error is None:
            self._error = error
        if self._head is not None and not self._head.done():
            self._head.set_exception(error)
            self._head.exception()  # retrieved here: the waiter may be gone (cancelled)
        self._notify()

    def _notify(self) -> None:
        if self._wake is not None and not self._wake.done():
            self._wake.set_result(None)

    async def send(self, data: bytes) -> int:
        """Write one request; the reply's status once its headers are parsed."""
        self._busy, self._done, self._error = True, False, None
        self._headers, self._reason, self._chunks, self._buffered = [], b"", deque(), 0
        self._head = asyncio.get_running_loop().create_future()
        if self.closed:
            raise httpx.RemoteProtocolError("Server disconnected without sending a response.")
        assert self.transport is not None  # set by connection_made, before create_connection returns
        self.transport.write(data)
        return await self._head

    async def body(self) -> AsyncIterator[bytes]:
        while True:
            while self._chunks:
                chunk = self._chunks.popleft()
                self._buffered -= len(chunk)
                if self._paused and self._buffered <= _PAUSE_AT // 2 and not self.closed:
                    self._paused = False
                    assert self.transport is not None
                    self.transport.resume_reading()
                yield chunk
            if self._error is not None:
                raise self._error
            if self._done:
                return
            self._wake = asyncio.get_running_loop().create_future()
            try:
                await self._wake
            finally:
                self._wake = None

    def reusable(self) -> bool:
        return self._done and self._keep_alive and not self.closed and not self.idle_bytes

    def finish(self) -> None:
        self._busy = False

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()


class _Body(httpx.AsyncByteStream):
    def __init__(self, transport: "WireTransport", conn: _Connection):
        self._transport, self._conn, self._released = transport, conn, False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._conn.body():
                yield chunk
        except BaseException:
            self._release(reuse=False)
            raise
        self._release(reuse=True)

    async def aclose(self) -> None:
        self._release(reuse=False)  # after a full read this is a no-op; before it, the connection is spent

    def _release(self, reuse: bool) -> None:
        if not self._released:
            self._released = True
            self._transport._release(self._conn, reuse and self._conn.reusable())


class WireTransport(httpx.AsyncBaseTransport):
    """``httpx.AsyncBaseTransport`` for ``http://`` with up to ``max_connections`` keep-alive connections."""

    def __init__(self, max_connections: int = 32):
        self.max_connections = max_connections
        self._idle: list[_Connection] = []
        self._open = 0
        self._waiters: deque[asyncio.Future] = deque()
        self._closed = False

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.scheme != "http" or request.method == "HEAD":
            raise httpx.UnsupportedProtocol(f"{request.method} {request.url.scheme}:// is not handled here")
        body = await request.aread()
        head = [request.method.encode(), b" ", request.url.raw_path, b" HTTP/1.1\r\n"]
        for name, value in request.headers.raw:
            head += [name, b": ", value, b"\r\n"]
        head.append(b"\r\n")
        conn = await self._acquire(request.url)  # never a closed one: nothing awaited since it was checked
        try:
            status = await conn.send(b"".join(head) + body)
        except BaseException:
            self._release(conn, False)
            raise
        return httpx.Response(
            status,
            headers=conn._headers,
            stream=_Body(self, conn),
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": conn._reason.strip()},
            request=request,
        )

    async def _acquire(self, url: httpx.URL) -> _Connection:
        if self._closed:
            raise httpx.ConnectError("transport closed")
        while True:
            while self._idle:
                conn = self._idle.pop()  # the most recently used: warm, least likely to have timed out
                if not conn.closed and not conn.idle_bytes:
                    return conn
                conn.close()
                self._open -= 1
            if self._open < self.max_connections:
                break
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            finally:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
        self._open += 1
        try:
            _, conn = await asyncio.get_running_loop().create_connection(_Connection, url.host, url.port or 80)
        except BaseException as e:
            self._open -= 1
            self._wake_one()
            if isinstance(e, OSError):
                raise httpx.ConnectError(str(e) or type(e).__name__) from None
            raise
        return conn

    def _release(self, conn: _Connection, reuse: bool) -> None:
        conn.finish()
        if reuse and not self._closed:
            self._idle.append(conn)
        else:
            conn.close()
            self._open -= 1
        self._wake_one()

    def _wake_one(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    async def aclose(self) -> None:
        self._closed = True
        for conn in self._idle:
            conn.close()
        self._open -= len(self._idle)
        self._idle.clear()
