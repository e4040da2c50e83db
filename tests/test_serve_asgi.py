"""The reference server on Starlette + uvicorn: connection limits uvicorn lacks (a silent connection,
oversized headers), faults that drop the connection before or after the work, one system call at a
time, and the same OpenAPI document. Loopback only; no timing figures (benchmarks/protocol.py)."""

import json
import socket
import threading
import time

import httpx

from memeval.systems import NoMemory
from memeval.systems.base import Recall
from memeval.systems.server import OPENAPI, Faults, Limits, ReferenceServer


def _connect(url: str, timeout: float = 15) -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=timeout)


def _read_all(s: socket.socket) -> bytes:
    """Everything until the server closes; a socket timeout (the server never closed) fails the test."""
    out = b""
    try:
        while chunk := s.recv(65536):
            out += chunk
    except ConnectionResetError:  # the server closed with bytes unread
        pass
    return out


def _post(path: str, body: dict) -> bytes:
    raw = json.dumps(body).encode()
    return f"POST {path} HTTP/1.1\r\nhost: x\r\ncontent-length: {len(raw)}\r\n\r\n".encode() + raw


SESSION = {"session_id": 1, "date": "2026-01-01", "turns": [{"turn_id": 1, "speaker": "u", "text": "t", "date": "d"}]}


def test_the_url_is_known_before_the_server_starts_and_port_0_picks_a_free_port():
    srv = ReferenceServer(NoMemory(), port=0)
    try:
        assert int(srv.url.rsplit(":", 1)[1]) > 0
        srv.start()
        assert httpx.get(srv.url + "/health").json() == {
            "ok": True,
            "name": "no_memory-http",
            "version": NoMemory.version,
            "params": {},
        }
    finally:
        srv.stop()


def test_a_connection_that_never_sends_is_closed_after_the_idle_time():
    with ReferenceServer(NoMemory(), limits=Limits(idle_timeout_s=0.2)) as srv:
        s = _connect(srv.url)
        assert _read_all(s) == b""  # closed by the server, without a reply (the socket timeout is 15 s)
        s.close()


def test_headers_above_64_kib_are_431_and_the_connection_is_closed():
    with ReferenceServer(NoMemory()) as srv:
        s = _connect(srv.url)
        s.sendall(b"GET /health HTTP/1.1\r\nhost: x\r\n" + b"x-pad: " + b"a" * 70_000 + b"\r\n\r\n")
        assert _read_all(s).startswith(b"HTTP/1.1 431")
        s.close()
        assert httpx.get(srv.url + "/health").status_code == 200


def test_drop_closes_the_connection_before_the_work_and_drop_after_after_it():
    with ReferenceServer(NoMemory(), faults=Faults(drop_rate=1.0, routes=("sessions",))) as srv:
        s = _connect(srv.url)
        s.sendall(_post("/sessions", SESSION))
        assert _read_all(s) == b""
        stats = srv.stats()
        assert stats["drop"] == 1 and stats["ingested"] == 0  # nothing stored
    with ReferenceServer(NoMemory(), faults=Faults(drop_after_rate=1.0, routes=("sessions",))) as srv:
        s = _connect(srv.url)
        s.sendall(_post("/sessions", SESSION))
        assert _read_all(s) == b""
        stats = srv.stats()
        assert stats["drop_after"] == 1 and stats["ingested"] == 1  # stored, then the reply was lost
        assert httpx.get(srv.url + "/health").status_code == 200


def test_a_stalled_request_holds_no_other_request_up():
    outcome: list[object] = []

    def stalled_query(url: str) -> None:
        try:
            outcome.append(httpx.post(url + "/query", json={"question": "q"}, timeout=30).status_code)
        except httpx.HTTPError as e:
            outcome.append(type(e).__name__)

    with ReferenceServer(NoMemory(), faults=Faults(stall_rate=1.0, stall_ms=8000)) as srv:
        stalled = threading.Thread(target=stalled_query, args=(srv.url,))
        stalled.start()
        while srv.stats()["stall"] < 1:
            time.sleep(0.01)
        assert httpx.get(srv.url + "/health").status_code == 200
        assert stalled.is_alive()  # answered while the stalled query still waits
    # stopping the server cuts the stalled query (not waited out: the stall is long only to outlast the check)
    stalled.join(30)
    assert not stalled.is_alive() and outcome and outcome != [200], outcome


class _Counting:
    """A system whose query blocks a little and records how many calls overlapped."""

    name, version, params = "counting", "1", {}

    def __init__(self):
        self.inside = self.most = 0

    def reset(self):
        pass

    def ingest(self, session):
        pass

    def query(self, question, asked_at):
        self.inside += 1
        self.most = max(self.most, self.inside)
        time.sleep(0.005)
        self.inside -= 1
        return Recall(("m",))


def test_the_system_sees_one_call_at_a_time_under_concurrent_clients():
    system = _Counting()
    with ReferenceServer(system) as srv:

        def client():
            with httpx.Client(base_url=srv.url) as c:
                for _ in range(10):
                    assert c.post("/query", json={"question": "q"}).json() == {"memories": ["m"]}

        threads = [threading.Thread(target=client) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert srv.stats()["query"] == 80
    assert system.most == 1


def test_the_openapi_document_served_is_the_one_in_the_package_and_unknown_routes_are_404_json():
    with ReferenceServer(NoMemory()) as srv:
        assert httpx.get(srv.url + "/openapi.json").json() == json.loads(json.dumps(OPENAPI))
        for method, path in (("GET", "/query"), ("POST", "/health"), ("GET", "/nowhere"), ("DELETE", "/reset")):
            r = httpx.request(method, srv.url + path)
            assert r.status_code == 404 and r.json() == {"error": f"no route {path}"}, (method, path)
