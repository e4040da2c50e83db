"""The HTTP adapter's network backend: httpcore's async stream interface over a plain asyncio protocol.

httpcore's default async backend goes through anyio, whose per-call cost dominates on loopback: the
connection pool asks every pooled connection ``get_extra_info("is_readable")`` on each request, and
anyio answers by building its attribute table and polling the socket. Here a connection is an
``asyncio.Protocol`` that buffers what arrives, so that question is a field lookup and a read is a
buffer slice or one future. TLS goes through ``loop.start_tls``.

Per-operation timeouts are honoured when httpcore passes them; the adapter itself bounds a whole
attempt with one ``asyncio.timeout`` (connect + send + receive).
"""

from __future__ import annotations

import asyncio
import os
import ssl
import threading
from contextlib import nullcontext

import httpcore

__all__ = ["AsyncioBackend", "Pool", "new_event_loop", "background_loop"]

_COALESCE = 64 * 1024  # bytes of request held before they are sent ahead of the first read
_HIGH_WATER = 256 * 1024  # bytes buffered before the socket is no longer read (a reply cap stays a cap)


def new_event_loop() -> asyncio.AbstractEventLoop:
    """A uvloop event loop where uvloop is installed (not on Windows), else asyncio's own."""
    try:
        import uvloop  # on use: optional (no wheel on Windows)
    except ImportError:
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


_shared: dict = {}
_shared_lock = threading.Lock()


def background_loop() -> asyncio.AbstractEventLoop:
    """The process's event loop for HTTP clients, running in a daemon thread (started on first use,
    and again in a child process after ``fork``)."""
    with _shared_lock:
        loop, thread, pid = _shared.get("loop"), _shared.get("thread"), _shared.get("pid")
        if loop is None or pid != os.getpid() or not thread.is_alive():
            loop = new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="memeval-http", daemon=True)
            thread.start()
            _shared.update(loop=loop, thread=thread, pid=os.getpid())
        return loop


def _within(timeout: float | None):
    return nullcontext() if timeout is None else asyncio.timeout(timeout)


class _Protocol(asyncio.Protocol):
    def __init__(self) -> None:
        self.buffer = bytearray()
        self.eof = False
        self.error: BaseException | None = None
        self._reader: asyncio.Future | None = None
        self._drain: asyncio.Future | None = None
        self.transport: asyncio.Transport | None = None
        self.paused = False

    def connection_made(self, transport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if len(self.buffer) > _HIGH_WATER and not self.paused:
            self.paused = True
            self.transport.pause_reading()
        self._wake_reader()

    def take(self, max_bytes: int) -> bytes:
        data = bytes(self.buffer[:max_bytes])
        del self.buffer[:max_bytes]
        if self.paused and len(self.buffer) <= _HIGH_WATER // 2 and not self.transport.is_closing():
            self.paused = False
            self.transport.resume_reading()
        return data

    def eof_received(self) -> bool:
        self.eof = True
        self._wake_reader()
        return False  # close the transport

    def connection_lost(self, exc) -> None:
        self.eof = True
        self.error = exc
        self._wake_reader()
        if self._drain is not None and not self._drain.done():
            self._drain.set_result(None)

    def pause_writing(self) -> None:
        if self._drain is None or self._drain.done():
            self._drain = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        if self._drain is not None and not self._drain.done():
            self._drain.set_result(None)

    def _wake_reader(self) -> None:
        if self._reader is not None and not self._reader.done():
            self._reader.set_result(None)

    async def wait_readable(self) -> None:
        self._reader = asyncio.get_running_loop().create_future()
        try:
            await self._reader
        finally:
            self._reader = None

    async def drained(self) -> None:
        if self._drain is not None and not self._drain.done():
            await self._drain


class _Stream(httpcore.AsyncNetworkStream):
    """One connection. Writes are held until the first read (or 64 KiB), so a request's headers and
    body leave in one segment: half the send calls, each of which costs a loopback round of the
    kernel's TCP path."""

    def __init__(self, transport: asyncio.Transport, protocol: _Protocol):
        self._transport, self._protocol = transport, protocol
        self._pending: list[bytes] = []
        self._pending_bytes = 0

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        p = self._protocol
        if self._pending:
            await self._flush(timeout)
        if not p.buffer and not p.eof:
            try:
                async with _within(timeout):
                    await p.wait_readable()
            except TimeoutError:
                raise httpcore.ReadTimeout("read timed out") from None
        if p.buffer:
            return p.take(max_bytes)
        if p.error is not None:
            raise httpcore.ReadError(str(p.error) or type(p.error).__name__)
        return b""  # end of stream

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        self._pending.append(buffer)
        self._pending_bytes += len(buffer)
        if self._pending_bytes >= _COALESCE:
            await self._flush(timeout)

    async def _flush(self, timeout: float | None) -> None:
        data = b"".join(self._pending)
        self._pending.clear()
        self._pending_bytes = 0
        if self._transport.is_closing():
            raise httpcore.WriteError("connection closed")
        try:
            self._transport.write(data)
        except (OSError, RuntimeError) as e:
            raise httpcore.WriteError(str(e)) from None
        try:
            async with _within(timeout):
                await self._protocol.drained()
        except TimeoutError:
            raise httpcore.WriteTimeout("write timed out") from None
        if self._protocol.error is not None:
            raise httpcore.WriteError(str(self._protocol.error))

    async def aclose(self) -> None:
        self._pending.clear()
        self._transport.close()

    async def start_tls(self, ssl_context, server_hostname=None, timeout=None) -> "_Stream":
        loop = asyncio.get_running_loop()
        try:
            async with _within(timeout):
                transport = await loop.start_tls(
                    self._transport, self._protocol, ssl_context, server_hostname=server_hostname
                )
        except TimeoutError:
            self._transport.close()
            raise httpcore.ConnectTimeout("TLS handshake timed out") from None
        except (OSError, ssl.SSLError) as e:
            self._transport.close()
            raise httpcore.ConnectError(str(e)) from None
        return _Stream(transport, self._protocol)

    def get_extra_info(self, info: str):
        if info == "is_readable":  # what the pool asks of an idle connection: closed or unexpected bytes
            return self._protocol.eof or bool(self._protocol.buffer)
        if info == "client_addr":
            return self._transport.get_extra_info("sockname")
        if info == "server_addr":
            return self._transport.get_extra_info("peername")
        if info in ("ssl_object", "socket"):
            return self._transport.get_extra_info(info)
        return None


class AsyncioBackend(httpcore.AsyncNetworkBackend):
    """httpcore's ``AsyncNetworkBackend`` over asyncio transports (TCP_NODELAY is asyncio's default)."""

    async def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None) -> _Stream:
        loop = asyncio.get_running_loop()
        try:
            async with _within(timeout):
                transport, protocol = await loop.create_connection(
                    _Protocol, host, port, local_addr=None if local_address is None else (local_address, 0)
                )
        except TimeoutError:
            raise httpcore.ConnectTimeout(f"connect to {host}:{port} timed out") from None
        except OSError as e:
            raise httpcore.ConnectError(str(e)) from None
        sock = transport.get_extra_info("socket")
        for option in socket_options or ():
            if sock is not None:
                sock.setsockopt(*option)
        return _Stream(transport, protocol)

    async def connect_unix_socket(self, path, timeout=None, socket_options=None) -> _Stream:
        loop = asyncio.get_running_loop()
        try:
            async with _within(timeout):
                transport, protocol = await loop.create_unix_connection(_Protocol, path)
        except TimeoutError:
            raise httpcore.ConnectTimeout(f"connect to {path} timed out") from None
        except OSError as e:
            raise httpcore.ConnectError(str(e)) from None
        return _Stream(transport, protocol)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


class Pool(httpcore.AsyncConnectionPool):
    """httpcore's connection pool, with the keep-alive bookkeeping linear in the pool size.

    httpcore 1.0's own pass counts *all* connections once per idle connection (quadratic in the pool
    size, on every request and every release: at 16 connections that was most of the client's CPU).
    The rules are the same: drop closed and expired connections, close idle ones above the
    keep-alive limit, then give each queued request an available connection, a new one, or the
    place of an idle one.
    """

    def _assign_requests_to_connections(self) -> list:
        closing = []
        idle = 0
        for connection in list(self._connections):
            if connection.is_closed():
                self._connections.remove(connection)
            elif connection.has_expired():
                self._connections.remove(connection)
                closing.append(connection)
            elif connection.is_idle():
                idle += 1
                if idle > self._max_keepalive_connections:
                    self._connections.remove(connection)
                    closing.append(connection)
        for pool_request in [r for r in self._requests if r.is_queued()]:
            origin = pool_request.request.url.origin
            available = next((c for c in self._connections if c.can_handle_request(origin) and c.is_available()), None)
            if available is not None:
                pool_request.assign_to_connection(available)
            elif len(self._connections) < self._max_connections:
                connection = self.create_connection(origin)
                self._connections.append(connection)
                pool_request.assign_to_connection(connection)
            else:
                idle_one = next((c for c in self._connections if c.is_idle()), None)
                if idle_one is not None:
                    self._connections.remove(idle_one)
                    closing.append(idle_one)
                    connection = self.create_connection(origin)
                    self._connections.append(connection)
                    pool_request.assign_to_connection(connection)
        return closing
