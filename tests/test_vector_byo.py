"""examples/byo_system.py: a hosted memory API (a loopback fake here) wrapped in the in-process
protocol, run over the tiny preset in process and behind ``memeval serve``'s HTTP protocol."""

import json
import re
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from memeval.bench import lifelog
from memeval.errors import MemevalError
from memeval.run import read_manifest, read_records, run_system
from memeval.systems.registry import make_system
from memeval.systems.server import ReferenceServer
from memeval.testing import serve_in_background

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
KEY = "hosted-key-for-tests-5521"


class FakeHostedMemory:
    """A hosted memory service: memories per user, word-overlap search, a bearer key required."""

    def __init__(self):
        self.store: dict[str, list[dict]] = {}
        self.calls: list[tuple[str, str]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def _reply(self, status, obj=None):
                payload = json.dumps(obj).encode() if obj is not None else b""
                self.send_response(status)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def _route(self, method):
                url = urlsplit(self.path)
                outer.calls.append((method, url.path))
                if self.headers.get("authorization") != f"Bearer {KEY}":
                    return self._reply(401, {"error": "bad key"})
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                if method == "DELETE" and url.path == "/v1/memories":
                    outer.store.pop(parse_qs(url.query)["user_id"][0], None)
                    return self._reply(200, {"deleted": True})
                if method == "POST" and url.path == "/v1/memories":
                    mems = outer.store.setdefault(body["user_id"], [])
                    mems += [{"memory": m["content"], **m} for m in body["messages"]]
                    return self._reply(201, {"added": len(body["messages"])})
                if method == "POST" and url.path == "/v1/memories/search":
                    words = set(re.findall(r"\w+", body["query"].lower()))
                    mems = outer.store.get(body["user_id"], [])
                    overlap = [len(words & set(re.findall(r"\w+", m["memory"].lower()))) for m in mems]
                    order = sorted((i for i in range(len(mems)) if overlap[i]), key=lambda i: (-overlap[i], i))
                    return self._reply(200, {"results": [mems[i] for i in order[: body["limit"]]]})
                return self._reply(404, {"error": "no route"})

            def do_POST(self):
                self._route("POST")

            def do_DELETE(self):
                self._route("DELETE")

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        serve_in_background(self._server)

    def close(self):
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return lifelog.generate("tiny", 1, tmp_path_factory.mktemp("byo") / "bench")


@pytest.fixture
def hosted(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLES))
    monkeypatch.setenv("HOSTED_MEMORY_KEY", KEY)
    fake = FakeHostedMemory()
    yield fake
    fake.close()


def _check(rd, fake):
    recs = read_records(rd)
    assert read_manifest(rd)["status"] == "complete" and recs and not any(r.get("error") for r in recs)
    assert any(r["retrieved_turns"] for r in recs)
    for r in recs:
        assert len(r["retrieved_turns"]) == len(r["memories_returned"]) <= 5
    hits = [r for r in recs if r.get("retrieval_metrics")]
    assert any(r["retrieval_metrics"]["turn_recall_any@5"] > 0 for r in hits)
    assert {("DELETE", "/v1/memories"), ("POST", "/v1/memories"), ("POST", "/v1/memories/search")} <= set(fake.calls)
    for f in rd.rglob("*"):
        assert not f.is_file() or KEY.encode() not in f.read_bytes(), f


def test_byo_system_in_process(tiny, hosted, tmp_path):
    spec = f"python:byo_system:HostedMemory:url={hosted.url},k=5"
    _check(run_system(tiny, spec, tiers=["core"], out=tmp_path / "r", progress=False), hosted)


def test_byo_system_behind_the_http_protocol(tiny, hosted, tmp_path):
    system = make_system(f"python:byo_system:HostedMemory:url={hosted.url},k=5")
    with ReferenceServer(system) as srv:
        _check(run_system(tiny, srv.url, tiers=["core"], out=tmp_path / "r", progress=False), hosted)


def test_a_refused_key_stops_the_run_with_the_reason(tiny, hosted, tmp_path, monkeypatch):
    monkeypatch.setenv("HOSTED_MEMORY_KEY", "wrong")
    with pytest.raises(MemevalError, match="hosted memory API: HTTP 401 on /v1/memories"):
        run_system(tiny, f"python:byo_system:HostedMemory:url={hosted.url}", tiers=["core"], out=tmp_path / "r")


def test_the_example_stays_short():
    code = [x for x in (EXAMPLES / "byo_system.py").read_text().split('"""', 2)[2].splitlines() if x.strip()]
    assert len(code) <= 45, len(code)  # imports and all: "bring your own system in ~30 lines"
