"""Issue 24, item 1: fenced haystacks. A reset attempt or a session that outlives its client's deadline
never changes the memory of a later haystack; after ingest the harness checks what the server holds
before the first question. Loopback servers only."""

import time

import httpx
import pytest

from memeval.bench import Session, Turn
from memeval.run import read_manifest, read_records, run_system
from memeval.systems import BM25
from memeval.errors import SystemCallError
from memeval.systems.fencing import GENERATION_HEADER, haystack_digest, session_digest
from memeval.systems.http import HttpSystem, StaleGeneration
from memeval.systems.server import Faults, ReferenceServer
from minibench import make_minibench


@pytest.fixture
def bench(tmp_path):
    return make_minibench(tmp_path / "bench")


def _session(sid: int, text: str) -> Session:
    return Session(sid, "2026-01-01", (Turn(sid, sid, "user", text, "2026-01-01"),))


def _answers(run_dir) -> dict:
    """What each question got: the graded fields and what the system returned (not timings)."""
    return {
        (r["tier"], r["qid"], r["epoch"]): (r["score"], tuple(r["memories_returned"] or ()), r["error"])
        for r in read_records(run_dir)
    }


# -- the protocol, on the reference server ------------------------------------------------------------------------
def test_reset_returns_a_generation_and_a_repeated_reset_key_changes_nothing():
    with ReferenceServer(BM25(k=5)) as srv:
        first = httpx.post(srv.url + "/reset", headers={"idempotency-key": "r1"}).json()["generation"]
        body = b'{"session_id": 1, "date": "2026-01-01", "turns": [{"turn_id": 1, "speaker": "user", "text": "my cat is Tom", "date": "2026-01-01"}]}'
        headers = {"content-type": "application/json", GENERATION_HEADER: first}
        assert httpx.post(srv.url + "/sessions", content=body, headers=headers).status_code == 200
        late = httpx.post(srv.url + "/reset", headers={"idempotency-key": "r1"})  # the same reset, landing late
        assert late.json()["generation"] == first
        held = httpx.get(srv.url + "/stats", params={"generation": first}).json()
        assert held == {"generation": first, "sessions": 1, "digest": haystack_digest([session_digest(body)])}
        second = httpx.post(srv.url + "/reset", headers={"idempotency-key": "r2"}).json()["generation"]
        assert second != first
        assert httpx.get(srv.url + "/stats", params={"generation": first}).status_code == 409
        stale = httpx.post(srv.url + "/sessions", content=body, headers=headers)  # a session of the old haystack
        assert stale.status_code == 409 and stale.json()["generation"] == second
        assert httpx.post(srv.url + "/query", json={"question": "cat"}, headers=headers).status_code == 409
        assert httpx.get(srv.url + "/stats", params={"generation": second}).json()["sessions"] == 0
        assert srv.stats()["stale"] == 2 and srv.stats()["repeated_reset"] == 1


def test_a_session_stalled_past_the_next_reset_is_dropped_not_stored():
    faults = Faults(stall_rate=1.0, stall_ms=800, routes=("sessions",))
    with ReferenceServer(BM25(k=5), faults=faults) as srv:
        h = HttpSystem(srv.url, timeout=10, max_attempts=1)
        h.reset()
        # only the session is to give up: a 0.2 s deadline on the resets too failed them on a loaded machine
        h.timeout = 0.2
        with pytest.raises(SystemCallError, match="deadline"):
            h.ingest(_session(1, "my cat is Tom"), idempotency_key="k1")  # gives up; the server still works on it
        h.timeout = 10
        h.reset()  # the next haystack, before the stalled session wakes
        t0 = srv.stats()["stale"]
        deadline = time.monotonic() + 30
        while srv.stats()["stale"] == t0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert srv.stats()["stale"] == t0 + 1 and srv.stats()["ingested"] == 0
        assert h.verify_ingest().problem is None  # the new generation holds nothing, as sent
        h.close()


def test_verify_ingest_sees_a_memory_emptied_under_the_haystack():
    with ReferenceServer(BM25(k=5)) as srv:
        h = HttpSystem(srv.url)
        h.reset()
        h.ingest(_session(1, "my cat is Tom"), idempotency_key="k1")
        check = h.verify_ingest()
        assert (check.fenced, check.checked, check.problem) == (True, "count+digest", None)
        httpx.post(srv.url + "/reset")  # someone else resets the server
        assert "no longer current" in h.verify_ingest().problem
        with pytest.raises(StaleGeneration, match="409"):
            h.query("cat", None)
        h.close()


def test_verify_ingest_compares_the_digest_not_only_the_count():
    with ReferenceServer(BM25(k=5)) as srv:
        h = HttpSystem(srv.url)
        h.reset()
        h.ingest(_session(1, "my cat is Tom"), idempotency_key="k1")
        h._sent[0] = session_digest(b"another body")  # as if the server had stored another session
        assert "digest" in h.verify_ingest().problem
        h.close()


def test_an_unfenced_server_is_checked_by_count_and_the_manifest_says_so(bench, tmp_path):
    with ReferenceServer(BM25(k=3), fencing=False) as srv:
        h = HttpSystem(srv.url)
        h.reset()
        assert h.generation is None  # 204: no generation
        h.ingest(_session(1, "my cat is Tom"), idempotency_key="k1")
        assert (h.verify_ingest().fenced, h.verify_ingest().checked) == (False, "count")
        h.close()
        rd = run_system(bench, srv.url, out=tmp_path / "r", progress=False)
    state = read_manifest(rd)["memory_state"]
    assert state["unfenced"] == 2 and state["count"] == 2 and "unfenced" in state["note"]


def test_a_server_without_stats_is_unchecked_and_in_process_systems_have_no_memory_state(bench, tmp_path):
    def handler(request):
        if request.url.path == "/reset":
            return httpx.Response(204)
        if request.url.path == "/sessions":
            return httpx.Response(200, json={"stored": 1})
        if request.url.path == "/stats":
            return httpx.Response(404, json={"error": "no route"})
        return httpx.Response(200, json={"memories": []})

    h = HttpSystem("http://memory.test:9", transport=httpx.MockTransport(handler))
    h.reset()
    h.ingest(_session(1, "x"))
    assert (h.verify_ingest().checked, h.verify_ingest().problem) == ("none", None)
    rd = run_system(bench, "bm25:k=3", out=tmp_path / "local", progress=False)
    assert "memory_state" not in read_manifest(rd)


def test_a_haystack_whose_memory_is_never_as_sent_fails_loudly(bench, tmp_path, capfd):
    with ReferenceServer(BM25(k=3)) as srv:
        state = srv.state
        real = state.ingest

        def ingest_and_lose(session, key, raw):  # stores, then forgets every session it was sent
            code, out = real(session, key, raw)
            state.stored.clear()
            return code, out

        state.ingest = ingest_and_lose
        rd = run_system(bench, srv.url, tiers=["core"], out=tmp_path / "r", progress=False)
    recs = read_records(rd)
    assert recs and all("memory not as sent after a re-ingest" in r["error"] for r in recs)
    assert all(r["score"] is None for r in recs)
    err = capfd.readouterr().err
    assert "re-ingesting it" in err and "its questions are error records" in err
    state = read_manifest(rd)["memory_state"]
    assert state["reingested"] == 1 and state["failed"] == 1 and state["failed_haystacks"] == ["core"]


# -- the stalled /reset scenario of issue 24 (shortened) ---------------------------------------------------------
# The scenario's time scale: a stalled /reset attempt (stall_ms) outlives the client's deadline (timeout), is
# retried, and lands late while the haystack's questions (epochs x questions / concurrency, each delay_ms) are
# still being asked. Halved from 1.5 s / 0.5 s / 200 ms (every proportion kept): 6.7 -> ~3.5 s.
_STALL = dict(stall_rate=0.5, stall_ms=750, routes=("reset",), delay_ms=100)
_STALL_TIMEOUT_S = 0.25
_RUN = dict(epochs=12, concurrency=8, progress=False)


def _late_reset_seed() -> int:
    """A fault seed whose first /reset attempt stalls and whose second does not (the issue's case)."""
    import random

    for seed in range(100):
        rng = random.Random(seed)
        if rng.random() < 0.5 and rng.random() >= 0.5:
            return seed
    raise AssertionError("no seed")


def test_stalled_resets_change_no_record_when_fenced_and_do_without_fencing(bench, tmp_path):
    seed = _late_reset_seed()
    opts = {"timeout": _STALL_TIMEOUT_S, "max_attempts": 6, "backoff": 0.01}
    # the reference answers: a clean server (the query delay only paces the faulty runs; answers do not depend on it)
    with ReferenceServer(BM25(k=3)) as clean:
        want = _answers(run_system(bench, clean.url, out=tmp_path / "clean", http_options=opts, **_RUN))
    with ReferenceServer(BM25(k=3), faults=Faults(seed=seed, **_STALL)) as srv:
        rd = run_system(bench, srv.url, out=tmp_path / "fenced", http_options=opts, **_RUN)
        stats = srv.stats()
    assert stats["stall"] >= 1 and stats["repeated_reset"] >= 1, stats  # a late reset landed, and was a no-op
    got = _answers(rd)
    failed = {k for k, (_, _, err) in got.items() if err and "haystack" in err}
    assert {k: v for k, v in got.items() if k not in failed} == {k: v for k, v in want.items() if k not in failed}
    assert len(got) == len(want) and not failed  # here nothing even needed to fail
    # the control: the same faults against a server without generations change answers silently
    with ReferenceServer(BM25(k=3), faults=Faults(seed=seed, **_STALL), fencing=False) as old:
        rd_old = run_system(bench, old.url, out=tmp_path / "unfenced", http_options=opts, **_RUN)
    old_answers = _answers(rd_old)
    assert not any(err for _, _, err in old_answers.values())  # no error: the difference is silent
    assert sum(old_answers[k] != want[k] for k in want) > 0
    assert "unfenced" in read_manifest(rd_old)["memory_state"]["note"]


@pytest.mark.parametrize("held, ok", [({"generation": "g2", "sessions": 0}, True), ({"error": "x"}, False)])
def test_a_retried_reset_is_confirmed_before_anything_is_ingested(held, ok):
    """The first /reset attempt is lost; the retry gets g2: ingest waits for the server to confirm g2."""
    seen = []

    def handler(request):
        seen.append((request.url.path, request.headers.get("idempotency-key"), request.url.params.get("generation")))
        if request.url.path == "/reset":
            if len(seen) == 1:
                raise httpx.ConnectError("lost")
            return httpx.Response(200, json={"generation": "g2"})
        if request.url.path == "/stats":
            return httpx.Response(200 if ok else 409, json=held)
        return httpx.Response(200, json={"stored": 1})

    h = HttpSystem("http://memory.test:9", transport=httpx.MockTransport(handler), backoff=0.001)
    if ok:
        h.reset()
        h.ingest(_session(1, "x"), idempotency_key="k1")
        assert h.generation == "g2"
    else:
        with pytest.raises(SystemCallError, match="generation g2 not confirmed after 2 attempts"):
            h.reset()
        assert h.generation is None  # nothing is sent under an unconfirmed generation
    assert seen[0][1] == seen[1][1] and seen[0][1].startswith("memeval-reset-")  # one key for both attempts
    assert seen[2][0] == "/stats" and seen[2][2] == "g2"  # confirmed before the first session
    h.close()


def test_a_reset_that_needed_one_attempt_is_not_confirmed_and_each_reset_has_its_own_key():
    seen = []

    def handler(request):
        seen.append((request.url.path, request.headers.get("idempotency-key")))
        return httpx.Response(200, json={"generation": f"g{len(seen)}"})

    h = HttpSystem("http://memory.test:9", transport=httpx.MockTransport(handler))
    h.reset()
    h.reset()
    assert [p for p, _ in seen] == ["/reset", "/reset"] and seen[0][1] != seen[1][1]
    h.close()
