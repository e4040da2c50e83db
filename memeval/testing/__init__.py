"""Test doubles that run for real on loopback (used by the test suite and by users' own tests)."""

from __future__ import annotations

import threading
from socketserver import BaseServer

#: How often a background ``serve_forever`` looks for ``shutdown()``. The standard library's 0.5 s made
#: every ``with stub:`` block end up to half a second late (a test suite waited ~0.4 s per stub server).
SHUTDOWN_POLL_S = 0.02


def serve_in_background(server: BaseServer) -> threading.Thread:
    """Start ``server.serve_forever`` on a daemon thread that ``server.shutdown()`` stops within
    :data:`SHUTDOWN_POLL_S`; returns the started thread.

    >>> from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler
    >>> srv = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    >>> t = serve_in_background(srv)
    >>> srv.shutdown(); srv.server_close(); t.join(1); t.is_alive()
    False
    """
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": SHUTDOWN_POLL_S}, daemon=True)
    thread.start()
    return thread
