"""The HTTP adapter's async core and its lean http:// transport: keep-alive reuse, the pool bound,
stale connections, chunked and read-until-close replies, cut or malformed replies as errors,
cancellation from another thread, and the async API. Loopback only."""

import asyncio
import socket
import threading
import time

import pytest

from memeval.bench import Session, Turn
from memeval.systems import NoMemory
from memeval.errors import SystemCallError
from memeval.systems.http import HttpSystem
from memeval.systems.server import Faults, Limits, ReferenceServer


class _Canned:
    """A loopback server that reads one request per connection and answers with fixed bytes."""

    def __init__(self, reply: bytes, close: bool = True):
        self.reply, self.close_after = reply, close
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        try:
            while True:
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    data += chunk
                head, _, body = data.partition(b"\r\n\r\n")
                length = next(
                    (
                        int(line.split(b":")[1])
                        for line in head.split(b"\r\n")
                        if line.lower().startswith(b"content-length")
                    ),
                    0,
                )
                while len(body) < length:
                    body += conn.recv(65536)
                conn.sendall(self.reply)
                if self.close_after:
                    return
        except OSError:
            pass
        finally:
            conn.close()

    def stop(self):
        self.sock.close()


def test_a_chunked_reply_is_reassembled():
    body = b'{"memories": ["Dr Okafor", "Biscuit"]}'
    chunked = b"".join(b"%x\r\n%s\r\n" % (len(body[i : i + 7]), body[i : i + 7]) for i in range(0, len(body), 7))
    srv = _Canned(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n" + chunked + b"0\r\n\r\n", close=False)
    try:
        h = HttpSystem(srv.url, max_attempts=1)
        assert h.query("q", None).memories == ("Dr Okafor", "Biscuit")
        assert h.query("q", None).memories == ("Dr Okafor", "Biscuit")  # the same connection, kept alive
        h.close()
    finally:
        srv.stop()


def test_a_reply_without_length_ends_with_the_connection():
    srv = _Canned(b'HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n{"memories": ["x"], "turn_ids": [4]}')
    try:
        h = HttpSystem(srv.url, max_attempts=1)
        r = h.query("q", None)
        assert r.memories == ("x",) and r.turn_ids == (4,)
        h.close()
    finally:
        srv.stop()


@pytest.mark.parametrize(
    "reply",
    [
        b'HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n{"memories": [',  # cut short
        b"HTTP/1.1 2x0 OK\r\ncontent-length: 2\r\n\r\n{}",  # not HTTP
        b"",  # closed without a reply
    ],
)
def test_a_cut_or_malformed_reply_is_a_connection_error_after_every_attempt(reply):
    srv = _Canned(reply)
    try:
        h = HttpSystem(srv.url, max_attempts=2, backoff=0.001)
        with pytest.raises(SystemCallError, match=r"gave up after 2 attempts \(connection error \(\w+\)\)"):
            h.query("q", None)
        h.close()
    finally:
        srv.stop()


def test_nothing_listening_is_a_connection_error():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    h = HttpSystem(f"http://127.0.0.1:{port}", max_attempts=2, backoff=0.001)
    with pytest.raises(SystemCallError, match=r"connection error \(ConnectError\)"):
        h.reset()


def test_sequential_queries_share_one_connection_and_a_closed_idle_one_is_replaced():
    with ReferenceServer(NoMemory(), limits=Limits(idle_timeout_s=0.5)) as srv:
        h = HttpSystem(srv.url, max_attempts=1)  # one attempt: a stale connection must not cost one
        for _ in range(20):
            h.query("q", None)
        assert srv.connections == 1
        deadline = time.monotonic() + 10
        while srv.connections and time.monotonic() < deadline:  # the server closes the idle connection
            time.sleep(0.05)
        assert srv.connections == 0
        assert h.query("q", None).memories == ()
        h.close()


def test_concurrent_queries_open_at_most_pool_connections():
    with ReferenceServer(NoMemory(), faults=Faults(delay_ms=30)) as srv:
        h = HttpSystem(srv.url, pool=4)
        seen, stop = [], threading.Event()

        def watch():
            while not stop.wait(0.005):
                seen.append(srv.connections)

        w = threading.Thread(target=watch)
        w.start()

        async def many():
            return await asyncio.gather(*(h.aquery(f"q{i}", None) for i in range(40)))

        results = h.run(many())
        stop.set()
        w.join()
        h.close()
    assert len(results) == 40 and all(r.memories == () for r in results)
    assert max(seen) <= 4 and max(seen) >= 2  # several in flight, never more than the pool


def test_the_sync_methods_refuse_to_run_on_the_adapters_own_loop():
    with ReferenceServer(NoMemory()) as srv:
        h = HttpSystem(srv.url)

        async def wrong():
            return h.query("q", None)

        with pytest.raises(RuntimeError, match="await the async methods"):
            h.run(wrong())
        h.close()


def test_cancel_from_another_thread_ends_a_query_in_flight_and_refuses_new_ones():
    with ReferenceServer(NoMemory(), faults=Faults(delay_ms=20_000)) as srv:
        h = HttpSystem(srv.url, timeout=60)
        h.reset()
        h.ingest(Session(1, "d", (Turn(1, 1, "u", "t", "d"),)), idempotency_key="k")
        errors = []

        def ask():
            try:
                h.query("q", None)
            except SystemCallError as e:
                errors.append(str(e))

        t = threading.Thread(target=ask)
        t.start()
        while srv.stats()["query"] < 1:
            time.sleep(0.01)
        h.cancel()
        t.join(15)
        assert not t.is_alive() and errors == ["POST /query: cancelled"]
        with pytest.raises(SystemCallError, match="cancelled"):
            h.query("q", None)
        assert srv.stats()["ingested"] == 1
