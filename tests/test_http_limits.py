"""Issue 24, items 2, 4 and 7 (HTTP side): large bodies sent with their headers are limited by the body
limit only; replies are capped on decompressed bytes as they are read; user-info and an API key for
the same header are refused. Loopback servers only."""

import json
import socket
import struct
import tracemalloc
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from memeval.testing import serve_in_background
from memeval.bench import Session, Turn
from memeval.errors import MemevalError
from memeval.systems import BM25
from memeval.errors import SystemCallError
from memeval.systems.http import HttpSystem
from memeval.systems.server import Limits, ReferenceServer

MIB = 1024 * 1024


def _big_session(sid: int, size: int) -> Session:
    return Session(sid, "2026-01-01", (Turn(sid, sid, "user", "word " * (size // 5), "2026-01-01"),))


def _raw_post(url: str, path: str, body: bytes) -> bytes:
    """One POST written with a single ``sendall`` (headers and body in the same write); the reply."""
    host, port = url.removeprefix("http://").split(":")
    head = f"POST {path} HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\n"
    head += f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    with socket.create_connection((host, int(port)), timeout=30) as s:
        s.sendall(head.encode() + body)
        reply = b""
        while chunk := s.recv(65536):
            reply += chunk
    return reply


# -- item 2: the header limit counts header bytes only ----------------------------------------------------------
def test_a_1_mib_session_sent_in_one_write_with_its_headers_is_stored():
    with ReferenceServer(BM25(k=3)) as srv:
        session = _big_session(1, MIB)
        body = json.dumps(
            {"session_id": 1, "date": "2026-01-01", "turns": [t.to_dict() for t in session.turns]}
        ).encode()
        assert len(body) > MIB
        reply = _raw_post(srv.url, "/sessions", body)
        assert reply.startswith(b"HTTP/1.1 200"), reply[:200]
        h = HttpSystem(srv.url)  # the adapter writes each request in one write too
        h.reset()
        for i in range(3):
            h.ingest(_big_session(10 + i, MIB), idempotency_key=f"k{i}")
        assert h.verify_ingest().problem is None
        assert srv.stats()["ingested"] == 4
        h.close()


def test_headers_alone_above_64_kib_are_still_431_and_a_body_above_the_limit_413():
    with ReferenceServer(BM25(k=3), limits=Limits(max_body_bytes=2 * MIB)) as srv:
        host, port = srv.url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=30) as s:
            s.sendall(b"POST /query HTTP/1.1\r\nhost: x\r\nx-pad: " + b"a" * (70 * 1024) + b"\r\n\r\n")
            assert s.recv(100).startswith(b"HTTP/1.1 431")
        with socket.create_connection((host, int(port)), timeout=30) as s:  # declared above the limit: unread
            s.sendall(b"POST /sessions HTTP/1.1\r\nhost: x\r\ncontent-length: %d\r\n\r\n" % (3 * MIB) + b"x" * 1000)
            assert s.recv(100).startswith(b"HTTP/1.1 413")


# -- item 4: decompression bounded while streaming ----------------------------------------------------------------
def _zeros_json(size: int, encoding: str) -> bytes:
    """``{"memories": ["000..."]}`` with ``size`` zeros, gzip- or zlib-compressed, without compressing ``size``
    bytes: after a full flush deflate starts afresh, so one compressed MiB of zeros is repeated (256 MiB at
    level 9 cost ~2 s of CPU per test; this ~0.2 s, the checksums).

    >>> import gzip
    >>> all(gzip.decompress(_zeros_json(n, "gzip")) == b'{"memories": ["' + b"0" * n + b'"]}' for n in (0, 5, MIB + 3))
    True
    >>> zlib.decompress(_zeros_json(2 * MIB + 1, "deflate")) == b'{"memories": ["' + b"0" * (2 * MIB + 1) + b'"]}'
    True
    """
    head, tail, chunk = b'{"memories": ["', b'"]}', b"0" * MIB
    c = zlib.compressobj(9, zlib.DEFLATED, -15)  # raw deflate: the container is written below
    start = c.compress(head) + c.flush(zlib.Z_FULL_FLUSH)
    one = c.compress(chunk) + c.flush(zlib.Z_FULL_FLUSH)
    n, rest = divmod(size, MIB)
    body = start + one * n + c.compress(b"0" * rest + tail) + c.flush()
    crc, adler = zlib.crc32(head), zlib.adler32(head)
    for _ in range(n):
        crc, adler = zlib.crc32(chunk, crc), zlib.adler32(chunk, adler)
    last = b"0" * rest + tail
    crc, adler = zlib.crc32(last, crc), zlib.adler32(last, adler)
    total = len(head) + size + len(tail)
    if encoding == "gzip":
        return b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff" + body + struct.pack("<II", crc, total & 0xFFFFFFFF)
    return b"\x78\xda" + body + struct.pack(">I", adler)


class _Bomb:
    """A loopback server answering every request with a compressed body that inflates to ``size`` bytes."""

    def __init__(self, size: int, encoding: str = "gzip"):
        body = _zeros_json(size, encoding)

        class H(BaseHTTPRequestHandler):
            disable_nagle_algorithm = True  # headers and body at once: no ~40 ms delayed-ACK wait per reply
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_POST(self):
                self.rfile.read(int(self.headers.get("content-length") or 0))
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-encoding", encoding)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.compressed = len(body)
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        serve_in_background(self.server)

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_a_compression_bomb_is_refused_at_the_cap_without_inflating_it(encoding):
    bomb = _Bomb(256 * MIB, encoding)
    try:
        assert bomb.compressed < MIB  # ~250 KiB on the wire
        h = HttpSystem(bomb.url, max_reply_bytes=MIB, max_attempts=1)
        tracemalloc.start()
        try:
            with pytest.raises(SystemCallError, match="above the cap"):
                h.query("q", None)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        h.close()
    finally:
        bomb.close()
    assert peak < 16 * MIB, f"peak {peak / MIB:.0f} MiB while refusing a 256 MiB bomb"


def test_a_compressed_reply_under_the_cap_is_decoded():
    bomb = _Bomb(1000)
    try:
        h = HttpSystem(bomb.url, max_reply_bytes=MIB)
        assert h.query("q", None).memories == ("0" * 1000,)
        h.close()
    finally:
        bomb.close()


# -- item 7: a URL's user-info and MEMEVAL_API_KEY ----------------------------------------------------------------
def test_user_info_and_an_api_key_for_the_same_header_are_refused_in_one_line(monkeypatch):
    monkeypatch.setenv("MEMEVAL_API_KEY", "k-123")
    with pytest.raises(MemevalError, match="carries user-info and \\$MEMEVAL_API_KEY is set") as e:
        HttpSystem("http://u:p@127.0.0.1:9")
    assert "\n" not in str(e.value) and "p@" not in str(e.value)
    HttpSystem("http://u:p@127.0.0.1:9", api_key_header="x-api-key").close()  # two headers: both sent
