"""The event loops behind the HTTP path: uvloop where installed, and one shared background loop.

The HTTP adapter's requests of a whole process run on :func:`background_loop`, a daemon thread
started on first use (and again in a child process after ``fork``); the reference server runs its
own loop from :func:`new_event_loop` in its own thread.
"""

from __future__ import annotations

import asyncio
import os
import threading

__all__ = ["new_event_loop", "background_loop"]


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
        if loop is None or thread is None or pid != os.getpid() or not thread.is_alive():
            loop = new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="memeval-http", daemon=True)
            thread.start()
            _shared.update(loop=loop, thread=thread, pid=os.getpid())
        return loop
