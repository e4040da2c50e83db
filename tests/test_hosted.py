"""The hosted REST adapters (Zep Cloud, Supermemory, mem0 platform) end to end against their loopback
contract servers, and the write path the runner measures for them: time to searchable, ingest time,
the causal guard. Loopback only; nothing reaches the network."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memeval.testing import serve_in_background
from memeval.bench.model import Session, Turn
from memeval.cli import main
from memeval.errors import MemevalError, SystemCallError
from memeval.run import read_manifest, read_records, run_system
from memeval.run.writepath import future_count, probe_hit, wait_searchable
from memeval.systems.base import Memory, Recall
from memeval.systems.registry import make_system
from memeval.testing.hosted_servers import KEY, ContractServer
from tests.minibench import make_minibench

SPECS = {"zep": "zep", "supermemory": "supermemory", "mem0": "mem0-platform"}
ENV = "MEMEVAL_TEST_HOSTED_KEY"


@pytest.fixture(scope="module")
def bench(tmp_path_factory) -> str:
    return make_minibench(tmp_path_factory.mktemp("mini"))


@pytest.fixture
def key(monkeypatch) -> str:
    monkeypatch.setenv(ENV, KEY)
    return KEY


def _run(bench: str, spec: str, srv: ContractServer, out: Path, *extra: str) -> int:
    return main(
        [
            "run",
            "--bench",
            bench,
            "--system",
            f"{spec}:k=3,key_env={ENV},base_url={srv.url}",
            "--out",
            str(out),
            "--no-progress",
            *extra,
        ]
    )


@pytest.mark.parametrize("api", sorted(SPECS))
def test_run_against_the_contract_server(api, bench, key, tmp_path, capsys):
    """Ingest, search, a 429 honoured, async indexing measured; dates preserved; the key only in the header."""
    with ContractServer(api, index_delay=0.3, throttle={"search": 2}) as srv:
        assert _run(bench, SPECS[api], srv, tmp_path / "r", "--searchable-timeout", "20") == 0
        log = list(srv.log)
    records = read_records(tmp_path / "r")
    assert len(records) == 8 and all(r["error"] is None for r in records)
    assert srv.throttled == 2  # both 429s were served, and waited out (no error record)
    q3 = next(r for r in records if r["tier"] == "core" and r["qid"] == "Q3")
    assert any("52 dollars" in m for m in q3["memories_returned"])
    assert any(m["timestamp"] == "2026-05-20" for m in q3["memories"])  # the session's date, not today's
    assert all(r["future_memories"] == 0 for r in records)
    m = read_manifest(tmp_path / "r")
    wp = m["write_path"]
    assert wp["indexing"] == "async" and set(wp["haystacks"]) == {"core", "big"}
    for h in wp["haystacks"].values():
        assert h["error"] is None and h["probes"] >= 2  # the first probe came before the index caught up
        assert h["searchable_ms"] >= 300 * 0.9  # the server's indexing delay, measured (never below it)
        assert h["ingest_ms"] > 0
    assert m["causal"]["checked"] == 8 and m["causal"]["questions_flagged"] == 0
    assert m["config"]["system"]["params"]["k"] == 3
    # a network system: latency is the search call's own, less the no-op round trip measured before
    assert m["network_floor_ms"]["before"] is not None
    assert all(r["speed_status"] != "in_process" and r["network_ms"] is not None for r in records)
    # the key went in the Authorization header of every request, and nowhere into the run folder
    assert all(auth is not None and auth.endswith(KEY) for _, _, auth, _ in log)
    assert all(KEY not in json.dumps(body) for *_, body in log)
    for f in (tmp_path / "r").iterdir():
        if f.is_file():
            assert KEY not in f.read_text(errors="replace"), f.name


@pytest.mark.parametrize("api", sorted(SPECS))
def test_search_sends_k_and_dates(api, key):
    """k reaches the API under its documented name, and every session date is sent with the session."""
    with ContractServer(api, index_delay=0.0, throttle={"search": 1}) as srv:
        s = make_system(f"{SPECS[api]}:k=4,key_env={ENV},base_url={srv.url}")
        s.reset()
        s.ingest(
            Session(3, "2026-03-01", (Turn(5, 3, "user", "My gym membership costs 45 dollars a month.", "2026-03-01"),))
        )
        recall = s.query("How much is the gym membership?", "2026-06-01")
        s.close()
    body = next(b for m, p, _, b in srv.log if p.endswith(("graph/search", "v4/search", "memories/search/")))
    assert body[{"zep": "limit", "supermemory": "limit", "mem0": "top_k"}[api]] == 4
    sent = json.dumps([b for m, p, _, b in srv.log if m == "POST"])
    assert "2026-03-01" in sent
    assert [getattr(m, "timestamp", None) for m in recall.memories] == ["2026-03-01"]
    assert recall.attempts == 2 and recall.latency_ms is not None and recall.response_bytes > 0  # one 429 waited out


@pytest.mark.parametrize("api", sorted(SPECS))
def test_dump_reads_every_page(api, key, monkeypatch):
    """``memories(haystack)`` follows the API's pagination to the last page."""
    import importlib

    mod = importlib.import_module(
        {
            "zep": "memeval.systems.hosted.zep",
            "supermemory": "memeval.systems.hosted.supermemory",
            "mem0": "memeval.systems.hosted.mem0_platform",
        }[api]
    )
    monkeypatch.setattr(mod, "_PAGE", 2)
    with ContractServer(api, index_delay=0.0) as srv:
        s = make_system(f"{SPECS[api]}:k=3,key_env={ENV},base_url={srv.url}")
        s.reset()
        for i in range(5):
            s.ingest(
                Session(
                    i,
                    f"2026-01-0{i + 1}",
                    (Turn(i + 1, i, "user", f"fact number {i} about lamps", f"2026-01-0{i + 1}"),),
                )
            )
        dumped = s.memories("core")
        s.close()
        pages = [p for m, p, _, b in srv.log if "list" in p or "edge/user" in p or p == "/v3/memories/"]
    assert sorted(m.content.split(": ")[-1] for m in dumped) == [f"fact number {i} about lamps" for i in range(5)]
    assert len(pages) >= 3  # five items at two per page


def test_never_searchable_is_an_error_record_with_the_reason(bench, key, tmp_path):
    with ContractServer("mem0", index_delay=3600) as srv:
        _run(bench, "mem0-platform", srv, tmp_path / "r", "--tiers", "core", "--searchable-timeout", "0.3")
    records = read_records(tmp_path / "r")
    assert len(records) == 4
    assert all(r["error"] and "not searchable 0.3s after ingest" in r["error"] for r in records)
    h = read_manifest(tmp_path / "r")["write_path"]["haystacks"]["core"]
    assert h["searchable_ms"] is None and "not searchable" in h["error"]
    assert read_manifest(tmp_path / "r")["status"] == "failed"


def test_an_api_error_is_an_error_record(bench, key, tmp_path):
    """A 400 on one question's search is that question's error record, in one line with the API's reason."""
    with ContractServer("supermemory", index_delay=0.0, fail_search="sister") as srv:
        _run(bench, "supermemory", srv, tmp_path / "r", "--tiers", "core", "--max-errors", "2")
    by_q = {r["qid"]: r for r in read_records(tmp_path / "r")}
    assert by_q["Q4"]["error"].startswith("POST /v4/search: HTTP 400: query rejected")
    assert all(by_q[q]["error"] is None for q in ("Q1", "Q2", "Q3"))


def test_429_waits_retry_after_and_past_the_attempts_is_a_call_error(key, monkeypatch):
    from memeval.systems.hosted.rest import Rest

    waits: list[float] = []
    monkeypatch.setattr(Rest, "_sleep", lambda self, seconds: waits.append(seconds))
    with ContractServer("zep", throttle={"search": 99}, retry_after=0.02) as srv:
        s = make_system(f"zep:k=3,key_env={ENV},base_url={srv.url},attempts=3")
        s.reset()
        with pytest.raises(SystemCallError, match=r"POST /graph/search: HTTP 429.*after 3 attempts"):
            s.query("anything", None)
        s.close()
    assert srv.throttled == 3
    assert waits == [0.02, 0.02]  # the server's Retry-After, not the policy's backoff (0.5 s, 1 s)


def test_wrong_key_is_one_line_naming_the_status(key, monkeypatch):
    monkeypatch.setenv(ENV, "not-the-key")
    with ContractServer("zep") as srv:
        s = make_system(f"zep:key_env={ENV},base_url={srv.url}")
        with pytest.raises(SystemCallError, match="POST /users: HTTP 401: Invalid or missing API key"):
            s.reset()
        s.close()


def test_missing_key_is_one_line_before_anything_is_sent(monkeypatch):
    monkeypatch.delenv("MEMEVAL_NO_SUCH_KEY", raising=False)
    with pytest.raises(MemevalError, match="set the environment variable MEMEVAL_NO_SUCH_KEY"):
        make_system("supermemory:key_env=MEMEVAL_NO_SUCH_KEY")


def test_probe_hit_needs_the_newest_session():
    s = Session(4, "2026-05-20", (Turn(6, 4, "user", "The gym raised the price to 52 dollars a month.", "2026-05-20"),))
    assert probe_hit(Recall(turn_ids=(6,)), s)
    assert not probe_hit(Recall(turn_ids=(5,)), s)
    assert probe_hit(Recall(memories=(Memory("User's gym price is 52 dollars a month", "2026-05-20"),)), s)
    # the same words from another day are an older session's memory, not this one's
    assert not probe_hit(Recall(memories=(Memory("User's gym price is 52 dollars a month", "2026-03-01"),)), s)
    assert not probe_hit(Recall(memories=(Memory("User adopted a beagle named Biscuit"),)), s)


def test_wait_searchable_counts_probes_and_failed_probes():
    s = Session(1, "2026-01-05", (Turn(1, 1, "user", "My dentist is Dr Okafor", "2026-01-05"),))
    t = [0.0]
    replies = iter([SystemCallError("HTTP 503"), Recall(), Recall(turn_ids=(1,))])

    def query(q, a):
        r = next(replies)
        if isinstance(r, Exception):
            raise r
        return r

    def sleep(x):
        t[0] += x

    got = wait_searchable(query, s, 10.0, clock=lambda: t[0], sleep=sleep, first_pause=1.0)
    assert got.probes == 3 and got.problem is None
    assert got.ms == pytest.approx((1.0 + 1.5) * 1000)
    never = wait_searchable(lambda q, a: Recall(), s, 2.0, clock=lambda: t[0], sleep=sleep, first_pause=1.0)
    assert never.ms is None and "never returned the newest session (1)" in never.problem


def test_future_count_compares_dates_and_times():
    mems = [Memory("a", "2026-06-02"), Memory("b", "2026-06-01T10:00"), Memory("c", None), "plain"]
    assert future_count(mems, "2026-06-01") == 1  # same day is not after a dated-only question
    assert future_count(mems, "2026-06-01T09:00") == 2
    assert future_count(mems, None) is None


class _Leaky:
    """Returns a memory dated after every question: the causal guard must flag it."""

    name, version, params = "leaky", "1", {"k": 1}

    def reset(self):
        pass

    def ingest(self, session):
        pass

    def query(self, question, asked_at):
        return Recall(memories=(Memory("from the future", "2099-01-01"), Memory("old", "2020-01-01")))


def leaky():
    return _Leaky()


def test_the_causal_guard_flags_and_counts_leaks(bench, tmp_path):
    run = run_system(bench, "python:tests.test_hosted:leaky", tiers=["core"], out=tmp_path / "r", progress=False)
    records = read_records(run)
    assert [r["future_memories"] for r in records] == [1, 1, 1, 1]
    causal = read_manifest(run)["causal"]
    assert causal["questions_flagged"] == 4 and causal["memories_flagged"] == 4 and causal["checked"] == 4
    from memeval.analysis.runs import headline_lines

    assert any("causal guard: 4 of 4" in line for line in headline_lines(run))


def test_a_synchronous_system_is_not_probed(bench, tmp_path):
    run = run_system(bench, "bm25:k=2", tiers=["core"], out=tmp_path / "r", progress=False)
    wp = read_manifest(run)["write_path"]
    assert wp["indexing"] == "sync" and wp["searchable_timeout_s"] is None
    assert "probes" not in wp["haystacks"]["core"] and wp["haystacks"]["core"]["ingest_ms"] >= 0


class _Everything:
    """Returns every ingested turn as text, without turn ids (as a hosted API returns rewritten facts)."""

    name, version, params = "everything", "1", {"k": 100, "threshold": 0.0}

    def reset(self):
        self.texts = []

    def ingest(self, session):
        self.texts += [t.text for t in session.turns]

    def query(self, question, asked_at):
        return Recall(memories=tuple(self.texts))


def everything():
    return _Everything()


def test_fairness_line_shows_search_params_and_warns_on_a_whole_haystack_without_turn_ids(bench, tmp_path):
    from memeval.analysis.aggregate import load_records
    from memeval.analysis.fairness import fairness_lines

    a = run_system(bench, "python:tests.test_hosted:everything", tiers=["core"], out=tmp_path / "a", progress=False)
    b = run_system(bench, "bm25:k=2", tiers=["core"], out=tmp_path / "b", progress=False)
    lines = fairness_lines(load_records([a, b]), [a, b])
    assert any("DIFFERS between runs: k" in x for x in lines)
    assert any("search params" in x and "threshold=0.0" in x for x in lines)
    warned = [x for x in lines if x.startswith("  WARNING")]
    assert len(warned) == 1 and "everything" in warned[0] and "bm25" not in warned[0]


def test_attribution_waits_for_an_indexing_system_before_its_stored_dump(bench, key, tmp_path, monkeypatch):
    """``memeval attribute`` re-ingests for the stored dump; an async system is dumped only once searchable."""
    monkeypatch.setenv("MEM0_API_KEY", KEY)  # the recorded spec names no key variable: the default is read
    with ContractServer("mem0", index_delay=0.3) as srv:
        assert _run(bench, "mem0-platform", srv, tmp_path / "r", "--tiers", "core") == 0
        assert read_manifest(tmp_path / "r")["config"]["system"]["spec"] == f"mem0-platform:k=3,base_url={srv.url}"
        assert main(["attribute", str(tmp_path / "r"), "--out", str(tmp_path / "a")]) == 0
    stored = {r["qid"]: r.get("attribution_stored") for r in read_records(tmp_path / "a")}
    assert stored["Q1"] is True and stored["Q2"] is True and stored["Q3"] is True


class _Echo:
    """A loopback server whose replies a test sets: (status, body bytes)."""

    def __init__(self, status: int, body: bytes):
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        class H(BaseHTTPRequestHandler):
            disable_nagle_algorithm = True  # headers and body at once: no ~40 ms delayed-ACK wait per reply

            def log_message(self, *a):
                pass

            def do_POST(self):
                self.rfile.read(int(self.headers.get("content-length") or 0))
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        serve_in_background(self.httpd)

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def test_replies_are_bounded_and_an_echoed_key_is_blanked(key):
    from memeval.systems.hosted.rest import Rest

    big = _Echo(200, b'{"results": "' + b"x" * 5000 + b'"}')
    echo = _Echo(400, json.dumps({"detail": f"bad token {KEY}"}).encode())
    try:
        with pytest.raises(SystemCallError, match="over the 1000-byte limit"):
            Rest("t", big.url, ENV, "Bearer", max_reply_bytes=1000).call("POST", "search", json_body={})
        with pytest.raises(SystemCallError) as e:
            Rest("t", echo.url, ENV, "Bearer").call("POST", "search", json_body={})
        assert KEY not in str(e.value) and "bad token ***" in str(e.value)
    finally:
        big.close()
        echo.close()
