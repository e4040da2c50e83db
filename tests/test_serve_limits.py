"""`memeval serve` hardening: bearer token, body limit, bad Content-Length, header/body deadlines,
backlog, and the limits stated in --help and the OpenAPI document. Loopback only."""

import os
import signal
import socket
import subprocess
import sys
import threading
import time

import httpx
import pytest

from memeval.cli import main
from memeval.systems import BM25, NoMemory
from memeval.systems.http import HttpSystem
from memeval.systems.server import OPENAPI, Limits, ReferenceServer


def _raw(url: str, data: bytes, timeout: float = 10.0) -> bytes:
    """Send raw bytes, return everything the server sends back until it closes (or the timeout)."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=timeout) as s:
        s.sendall(data)
        out = b""
        while True:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                break
            if not chunk:
                break
            out += chunk
        return out


def test_bearer_token_guards_every_route_but_health_and_openapi():
    with ReferenceServer(BM25(k=3), token="tok-123") as srv:
        assert httpx.post(srv.url + "/reset").status_code == 401
        assert httpx.post(srv.url + "/reset", headers={"authorization": "Bearer nope"}).status_code == 401
        assert httpx.post(srv.url + "/query", json={"question": "q"}).status_code == 401
        assert httpx.get(srv.url + "/stats").status_code == 401
        assert httpx.get(srv.url + "/health").status_code == 200
        assert httpx.get(srv.url + "/openapi.json").status_code == 200
        reset = httpx.post(srv.url + "/reset", headers={"authorization": "Bearer tok-123"})
        assert reset.status_code == 200 and isinstance(reset.json()["generation"], str)
        assert srv.stats()["reset"] == 1  # the refused resets never reached the system


def test_the_http_adapter_sends_the_token_from_its_key_env(monkeypatch):
    monkeypatch.setenv("MEMEVAL_TEST_SERVE_KEY", "tok-abc")
    with ReferenceServer(NoMemory(), token="tok-abc") as srv:
        h = HttpSystem(srv.url, api_key_env="MEMEVAL_TEST_SERVE_KEY")
        h.reset()
        assert h.query("q", None).memories == ()
        h.close()


def test_a_body_above_the_limit_is_refused_unread():
    with ReferenceServer(NoMemory(), limits=Limits(max_body_bytes=1000)) as srv:
        t0 = time.monotonic()
        # announces 200 MB but sends nothing: refused from the header alone
        reply = _raw(srv.url, b"POST /query HTTP/1.1\r\nhost: x\r\ncontent-length: 200000000\r\n\r\n")
        assert reply.startswith(b"HTTP/1.1 413") and time.monotonic() - t0 < 5
        r = httpx.post(srv.url + "/query", json={"question": "x" * 2000})
        assert r.status_code == 413 and "above the limit of 1000 bytes" in r.json()["error"]
        assert httpx.post(srv.url + "/query", json={"question": "small"}).status_code == 200


@pytest.mark.parametrize("value", [b"-1", b"abc", b"1e3", b"99999999999999999999999"])
def test_a_bad_content_length_is_400_and_never_hangs(value):
    with ReferenceServer(NoMemory()) as srv:
        t0 = time.monotonic()
        reply = _raw(srv.url, b"POST /query HTTP/1.1\r\nhost: x\r\ncontent-length: " + value + b"\r\n\r\n{}", 10)
        assert reply.startswith(b"HTTP/1.1 400") or reply.startswith(b"HTTP/1.1 413"), reply[:80]
        assert time.monotonic() - t0 < 5


def test_a_chunked_body_is_411():
    with ReferenceServer(NoMemory()) as srv:
        reply = _raw(
            srv.url, b"POST /query HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"
        )
        assert reply.startswith(b"HTTP/1.1 411")


def test_half_sent_requests_are_cut_by_the_header_and_body_deadlines():
    limits = Limits(header_timeout_s=0.5, body_timeout_s=0.5)  # the test's own, not the defaults
    with ReferenceServer(NoMemory(), limits=limits) as srv:
        host, port = srv.url.removeprefix("http://").split(":")
        socks = []
        for i in range(40):  # half the headers, or the headers and half the body
            s = socket.create_connection((host, int(port)), timeout=15)
            s.sendall(
                b"POST /query HTTP/1.1\r\nhost: x\r\n"
                if i % 2
                else b'POST /query HTTP/1.1\r\ncontent-length: 100\r\n\r\n{"question": '
            )
            socks.append(s)
        t0 = time.monotonic()
        stop = threading.Event()

        def trickle(s):  # a slow client that keeps sending a byte now and then never gets past the deadline
            try:
                while not stop.wait(0.1):  # 5 bytes per deadline
                    s.sendall(b"x")
            except OSError:
                pass

        trickler = socket.create_connection((host, int(port)), timeout=15)
        trickler.sendall(b"POST /query HTTP/1.1\r\n")
        threading.Thread(target=trickle, args=(trickler,), daemon=True).start()
        closed = []
        for s in [*socks, trickler]:
            try:
                while s.recv(65536):
                    pass
            except OSError:
                pass
            closed.append(time.monotonic() - t0)
        stop.set()
        for s in [*socks, trickler]:
            s.close()
        # the deadlines are 0.5 s; without them each client would wait for its own 15 s socket timeout
        # (8 s: a band for a loaded machine, not a claim that the cut comes at 0.5 s)
        assert max(closed) < 8.0, max(closed)
        deadline = time.monotonic() + 5
        while srv.connections > 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert srv.connections == 0  # the server holds none of them any more
        assert httpx.post(srv.url + "/query", json={"question": "q"}).status_code == 200  # and it still serves


def test_a_burst_of_connections_is_not_held_by_a_small_backlog():
    with ReferenceServer(NoMemory()) as srv:
        assert srv.socket.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN) == 1
        assert srv.limits.backlog >= 128  # what the socket listens with (bound in the constructor)
        host, port = srv.url.removeprefix("http://").split(":")
        socks = [socket.create_connection((host, int(port)), timeout=10) for _ in range(200)]
        for s in socks:
            s.close()
        assert httpx.get(srv.url + "/health").status_code == 200


def test_limits_are_stated_in_help_and_openapi(capsys):
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    for flag in (
        "--token-env",
        "--max-body-bytes",
        "--header-timeout",
        "--body-timeout",
        "--idle-timeout",
        "--backlog",
        "--drop-after-rate",
        "--fault-routes",
    ):
        assert flag in help_text, flag
    assert "Idempotency-Key" in help_text and "413" in help_text
    desc = OPENAPI["info"]["description"]
    assert "Idempotency-Key" in desc and "16 MiB" in desc and "Bearer" in desc
    params = OPENAPI["paths"]["/sessions"]["post"]["parameters"]
    assert params[0]["name"] == "Idempotency-Key" and "413" in OPENAPI["paths"]["/query"]["post"]["responses"]
    assert "bearer" in OPENAPI["components"]["securitySchemes"]


def test_serve_cli_with_token_env(tmp_path, capsys, monkeypatch):
    env = {**os.environ, "SERVE_TOKEN": "tok-cli"}
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = subprocess.Popen(
        [sys.executable, "-m", "memeval", "serve", "bm25", "--port", str(port), "--token-env", "SERVE_TOKEN"],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        line = p.stderr.readline()
        assert "bearer token required" in line and "tok-cli" not in line
        url = f"http://127.0.0.1:{port}"
        assert httpx.post(url + "/reset").status_code == 401
        assert httpx.post(url + "/reset", headers={"authorization": "Bearer tok-cli"}).status_code == 200
    finally:
        p.send_signal(signal.SIGINT)
        p.wait(10)
    # the refusal in process (tests/incli.py: the same path, without a second interpreter's ~1.5 s of imports)
    from incli import memeval_cli

    monkeypatch.delenv("NO_SUCH_VAR_X", raising=False)
    missing = memeval_cli(capsys, "serve", "bm25", "--token-env", "NO_SUCH_VAR_X")
    assert missing.returncode == 1 and "NO_SUCH_VAR_X" in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1
