import httpx
import pytest

from memeval.bench.model import Question, Session, Turn
from memeval.errors import MemevalError
from memeval.systems import BM25, NoMemory, Oracle, Recent, make_system, parse_spec
from memeval.errors import SystemCallError
from memeval.systems.http import HttpSystem
from memeval.systems.server import Faults, ReferenceServer


def _session(sid, *texts, start=1):
    return Session(sid, "2026-01-01", tuple(Turn(start + i, sid, "user", t, "2026-01-01") for i, t in enumerate(texts)))


def test_parse_spec_and_make_system():
    assert parse_spec("bm25:k=3,name=x,on=true,f=0.5") == ("bm25", {"k": 3, "name": "x", "on": True, "f": 0.5})
    s = make_system("bm25:k=3")
    assert isinstance(s, BM25) and s.params == {"k": 3}
    with pytest.raises(MemevalError, match="unknown system 'nope'"):
        make_system("nope")
    with pytest.raises(MemevalError, match="not key=value"):
        make_system("bm25:k")
    with pytest.raises(MemevalError, match="unknown parameter .z.; bm25 takes: k=integer"):
        make_system("bm25:z=1")


def test_python_factory_must_build_a_memory_system():
    """``python:MOD:FACTORY`` loads any callable; what it returns must be a memory system."""
    s = make_system("python:memeval.systems.baselines:BM25:k=4")
    assert isinstance(s, BM25) and s.params == {"k": 4}
    with pytest.raises(MemevalError, match=r"returned a dict, not a memory system \(needs name, version, params"):
        make_system("python:builtins:dict:k=4")
    with pytest.raises(MemevalError, match="cannot load memeval.nowhere:X"):
        make_system("python:memeval.nowhere:X")


def test_bm25_ranks_the_matching_turn_first_and_resets():
    s = BM25(k=2)
    s.ingest(_session(1, "We adopted a beagle named Biscuit", "The weather is grey today", "Pasta with spinach"))
    r = s.query("What is the beagle called?", None)
    assert r.turn_ids[0] == 1 and "Biscuit" in r.memories[0] and len(r.turn_ids) <= 2
    assert s.query("zebra quantum", None).turn_ids == ()  # nothing scores: nothing returned
    s.reset()
    assert s.query("beagle", None).memories == ()


def test_bm25_finds_cjk_text_by_bigrams():
    s = BM25(k=1)
    s.ingest(_session(1, "我的牙医是王医生", "今天天气很好"))
    assert s.query("牙医是谁", None).turn_ids == (1,)


def test_recent_keeps_only_the_token_budget_oldest_dropped():
    s = Recent(tokens=26)
    s.ingest(_session(1, "one two three", "four five six", "seven eight nine"))
    r = s.query("anything", None)
    assert r.turn_ids == (2, 3)  # 13 + 12 + 14 tokens with the date prefix (approx-v1)


def test_oracle_returns_evidence_and_no_memory_nothing():
    o = Oracle()
    o.ingest(_session(1, "a", "b", "c"))
    o.prepare(Question("Q", "BASIC", "?", "b", evidence_turns=(2, 99)))
    assert o.query("?", None).turn_ids == (2,)
    assert NoMemory().query("?", None).memories == ()


def test_http_adapter_against_reference_server_matches_in_process(monkeypatch):
    monkeypatch.setenv("MEMEVAL_API_KEY", "sk-test-777")
    local = BM25(k=2)
    with ReferenceServer(BM25(k=2)) as srv:
        h = HttpSystem(srv.url)
        h.warm()
        assert h.network_floor_ms() > 0
        sess = _session(7, "The spare key is under the blue flowerpot", "Lunch was a salad")
        for sys_ in (h, local):
            sys_.reset()
            sys_.ingest(sess)
        a, b = h.query("where is the spare key", "2026-02-01"), local.query("where is the spare key", "2026-02-01")
        assert (a.memories, a.turn_ids) == (b.memories, b.turn_ids)
        assert a.response_bytes == len(
            httpx.post(srv.url + "/query", json={"question": "where is the spare key"}).content
        )
        assert httpx.get(srv.url + "/openapi.json").json()["paths"]["/query"]["post"]
        assert "sk-test-777" not in str(h.params)
        h.close()


def test_http_adapter_retries_500s_and_gives_up_with_a_reason():
    with ReferenceServer(NoMemory(), faults=Faults(error_rate=1.0)) as srv:
        h = HttpSystem(srv.url, max_attempts=3, backoff=0.001)
        with pytest.raises(SystemCallError, match=r"gave up after 3 attempts \(HTTP 500\)"):
            h.query("q", None)
        assert srv.counts["error"] == 3


def test_http_adapter_honours_retry_after():
    calls = []

    def handler(request):
        calls.append(request)
        if len(calls) == 1:
            return httpx.Response(429, headers={"retry-after": "0.2"})
        return httpx.Response(200, json={"memories": ["m"], "turn_ids": [1]})

    import time

    h = HttpSystem("http://memory.test", transport=httpx.MockTransport(handler), backoff=0.0)
    t0 = time.perf_counter()
    r = h.query("q", None)
    assert time.perf_counter() - t0 >= 0.2 and r.memories == ("m",) and r.attempts == 2


def test_http_adapter_survives_dropped_connections():
    with ReferenceServer(NoMemory(), faults=Faults(drop_rate=0.5, seed=3)) as srv:
        h = HttpSystem(srv.url, max_attempts=8, backoff=0.001)
        for _ in range(20):
            assert h.query("q", None).memories == ()
        assert srv.counts["drop"] > 0
