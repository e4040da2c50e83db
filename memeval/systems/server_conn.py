"""One connection of the reference server: uvicorn's httptools protocol with total deadlines.

uvicorn bounds only the keep-alive idle time between requests. This protocol adds what
:class:`~memeval.systems.server_spec.Limits` promises per connection, with event-loop timers (no
thread per connection):

- a new connection that sends nothing is closed after the idle time, like an idle keep-alive one;
- the request line and headers must arrive within ``header_timeout_s`` of their first byte, and
  within 64 KiB (431 above, as the standard library's server did); only the bytes up to the blank
  line that ends the headers count, so a body sent in the same write as its headers is limited by
  the body limit alone;
- the body must arrive within ``body_timeout_s`` of the end of the headers.

A request past a deadline has its connection closed (a slow client holds no more than a timer).
The application finds the connection's transport in ``scope["memeval.transport"]`` (the reference
server's ``drop`` faults close it before or after the work).
"""

from __future__ import annotations

import asyncio

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from .server_spec import Limits

__all__ = ["MAX_HEADER_BYTES", "deadline_protocol"]

MAX_HEADER_BYTES = 64 * 1024


def deadline_protocol(limits: Limits) -> type[asyncio.Protocol]:
    """The uvicorn HTTP protocol class (``uvicorn.Config(http=...)``) enforcing ``limits``."""

    class _DeadlineProtocol(HttpToolsProtocol):
        _timer: asyncio.TimerHandle | None = None
        _in_headers = False  # between the first byte of a request and the end of its headers
        _header_bytes = 0
        _tail = b""  # the last bytes of the headers so far (the blank line may span two reads)

        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            # uvicorn arms its idle timer only after a first response: a silent new connection too
            self.timeout_keep_alive_task = self.loop.call_later(limits.idle_timeout_s, self.timeout_keep_alive_handler)

        def connection_lost(self, exc) -> None:
            self._disarm()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            if self.transport.is_closing():  # refused or cut: what still arrives is not read
                return
            if not self._in_headers and (self.cycle is None or self.cycle.response_complete):
                self._in_headers, self._header_bytes, self._tail = True, 0, b""
                self._arm(limits.header_timeout_s)
            if self._in_headers:
                seen = self._tail + data
                end = seen.find(b"\r\n\r\n")  # the end of the headers: what follows is body
                self._header_bytes += len(data) if end < 0 else max(0, end + 4 - len(self._tail))
                self._tail = seen[-3:]
                if self._header_bytes > MAX_HEADER_BYTES:
                    self._refuse_headers()
                    return
            super().data_received(data)

        def on_message_begin(self) -> None:
            super().on_message_begin()
            # an ASGI extension key: uvicorn's HTTPScope names only the standard ones
            self.scope["memeval.transport"] = self.transport  # type: ignore[typeddict-unknown-key]

        def on_headers_complete(self) -> None:
            self._in_headers = False
            self._arm(limits.body_timeout_s)
            super().on_headers_complete()

        def on_message_complete(self) -> None:
            self._disarm()
            super().on_message_complete()

        # -- timers --------------------------------------------------------------------------------
        def _arm(self, seconds: float) -> None:
            self._disarm()
            self._timer = self.loop.call_later(seconds, self._cut)

        def _disarm(self) -> None:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

        def _cut(self) -> None:
            self._timer = None
            if not self.transport.is_closing():
                self.transport.close()

        def _refuse_headers(self) -> None:
            self._disarm()
            msg = b"request line and headers above 64 KiB"
            self.transport.write(
                b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: text/plain\r\n"
                b"content-length: " + str(len(msg)).encode() + b"\r\nconnection: close\r\n\r\n" + msg
            )
            self.transport.close()

    return _DeadlineProtocol
