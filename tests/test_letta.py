"""The ``letta`` adapter (issue 27) against a loopback contract server of Letta's REST API
(tests/letta_contract.py): ingest with dates and turn tags, search with k, the stored-memory dump
through pagination, 429 with Retry-After, error statuses, the API key only in a header, and
``memeval run --system letta:...`` end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from letta_contract import LettaContractServer
from memeval.bench import lifelog
from memeval.bench.model import Session, Turn
from memeval.cli import main
from memeval.errors import SystemCallError
from memeval.run import read_manifest, read_records
from memeval.systems.base import declared
from memeval.systems.registry import make_system, public_spec
from memeval.systems.thirdparty.letta import Letta


def _session(sid: int, date: str, lines: list[str], first: int = 1) -> Session:
    turns = tuple(Turn(first + i, sid, "user", text, date) for i, text in enumerate(lines))
    return Session(sid, date, turns)


@pytest.fixture
def server():
    with LettaContractServer() as srv:
        yield srv


def _letta(srv: LettaContractServer, **kw) -> Letta:
    sys = Letta(base_url=srv.url, **kw)
    sys.api._sleep = lambda s: None  # retries wait without sleeping; tests record the waits they ask for
    return sys


def test_ingest_keeps_dates_and_turns_and_search_names_them(server):
    s = _letta(server, k=2, model="openai/gpt-4o-mini", embedding="openai/text-embedding-3-small")
    s.reset()
    s.ingest(_session(1, "2023/05/20 (Sat) 02:21", ["My dentist is Dr Okafor.", "I bought a red bike."]))
    s.ingest(_session(2, "2023-06-01", ["The bike has a flat tyre."], first=3))
    agent = next(iter(server.agents.values()))
    assert agent["name"].startswith("memeval-") and agent["tags"] == ["memeval"]
    create = next(r for r in server.requests if r[0] == "POST" and r[1] == "/v1/agents/")
    assert create[3]["model"] == "openai/gpt-4o-mini" and create[3]["embedding"] == "openai/text-embedding-3-small"
    posts = [r[3] for r in server.requests if r[0] == "POST" and r[1].endswith("/archival-memory")]
    assert [p["created_at"] for p in posts] == ["2023-05-20T02:21:00", "2023-05-20T02:21:00", "2023-06-01T00:00:00"]
    assert posts[2] == {
        "text": "user: The bike has a flat tyre.",
        "tags": ["memeval-turn:3", "memeval-session:2"],
        "created_at": "2023-06-01T00:00:00",
    }
    r = s.query("red bike", "2023-07-01")
    search = server.requests[-1]
    assert search[1].endswith("/archival-memory/search") and search[2] == {"query": "red bike", "top_k": "2"}
    assert [m.content for m in r.memories] == ["user: I bought a red bike.", "user: The bike has a flat tyre."]
    assert r.turn_ids == (2, 3) and r.memories[0].timestamp == "2023-05-20T02:21"  # ts_date: minutes
    assert s.params["k"] == 2 and s.params["threshold"] is None


def test_memories_pages_through_every_passage_and_verify_counts_them(server):
    s = _letta(server, page=100)  # the server caps a page at 7: the adapter follows the cursor to an empty page
    s.reset()
    lines = [f"fact number {i}" for i in range(20)]
    s.ingest(_session(1, "2024-01-02", lines))
    got = s.memories("core")
    assert [m.content for m in got] == [f"user: {x}" for x in lines]
    lists = [r for r in server.requests if r[0] == "GET" and r[1].endswith("/archival-memory")]
    assert len(lists) == 4 and "after" not in lists[0][2] and lists[1][2]["after"].startswith("passage-")
    assert declared(s).lists_memories
    assert s.verify_ingest().problem is None
    server.passages[next(iter(server.passages))].pop()  # the server lost one
    assert s.verify_ingest().problem == "letta holds 19 passages, 20 were sent"


def test_a_server_that_ignores_the_cursor_is_an_error_not_a_loop(server, monkeypatch):
    s = _letta(server)
    s.reset()
    s.ingest(_session(1, "2024-01-02", [f"x {i}" for i in range(3)]))
    orig = server._passages
    monkeypatch.setattr(
        server, "_passages", lambda m, a, q, b: orig(m, a, {k: v for k, v in q.items() if k != "after"}, b)
    )
    with pytest.raises(SystemCallError, match="came back twice"):
        s.memories("core")


def test_429_waits_retry_after_and_5xx_is_retried(server):
    s = _letta(server, attempts=4)
    waits: list[float] = []
    s.api._sleep = waits.append
    s.reset()
    server.throttle += ["7", "3"]
    server.fail.append(503)
    s.ingest(_session(1, "2024-01-02", ["one line"]))
    assert waits[:2] == [7.0, 3.0] and len(waits) == 3  # the server's waits, then backoff for the 503
    assert len(server.passages[next(iter(server.passages))]) == 1


def test_429_past_the_attempts_and_4xx_are_one_line(server):
    s = _letta(server, attempts=2)
    s.reset()
    server.throttle += ["1", "1"]
    with pytest.raises(
        SystemCallError, match=r"archival-memory/search: HTTP 429: Rate limit exceeded \(after 2 attempts\)"
    ):
        s.query("anything", None)
    server.fail.append(400)
    with pytest.raises(
        SystemCallError,
        match=r"^GET /v1/agents/agent-[-0-9a-f]+/archival-memory/search: HTTP 400: injected failure 400$",
    ):
        s.query("anything", None)
    server.agents.clear()  # the agent was deleted behind our back
    with pytest.raises(SystemCallError, match=r"HTTP 404: Agent with id=agent-\S+ not found."):
        s.query("anything", None)


def test_a_malformed_search_reply_is_an_error(server, monkeypatch):
    s = _letta(server)
    s.reset()
    monkeypatch.setattr(server, "_search", lambda *a: (200, {"results": [{"content": 5}]}))
    with pytest.raises(SystemCallError, match="without a string 'content'"):
        s.query("x", None)
    monkeypatch.setattr(server, "_search", lambda *a: (200, ["not", "an", "object"]))
    with pytest.raises(SystemCallError, match="no 'results' list"):
        s.query("x", None)


def test_reset_deletes_the_previous_agent_and_close_the_last(server):
    s = _letta(server)
    s.reset()
    first = next(iter(server.agents))
    s.reset()
    assert server.deleted == [first] and len(server.agents) == 1
    s.close()
    assert not server.agents and len(server.deleted) == 2


def test_the_key_goes_in_the_header_only(monkeypatch, tmp_path):
    monkeypatch.setenv("MY_LETTA_KEY", "sk-let-secret")
    with LettaContractServer(key="sk-let-secret") as srv:
        s = make_system(f"letta:base_url={srv.url},key_env=MY_LETTA_KEY")
        s.reset()
        assert all(r[4].get("authorization") == "Bearer sk-let-secret" for r in srv.requests)
        assert "sk-let-secret" not in json.dumps(s.params)
        monkeypatch.delenv("MY_LETTA_KEY")
        with pytest.raises(SystemCallError, match=r"HTTP 401: Invalid or missing API key"):
            make_system(f"letta:base_url={srv.url},key_env=MY_LETTA_KEY").reset()
    assert (
        public_spec("letta:k=3,base_url=http://u:pw@127.0.0.1:1") == "letta:k=3,base_url=http://127.0.0.1:1"
    )  # where it is stays, without user-info


def test_memeval_run_with_letta_end_to_end(tmp_path, server):
    bench = lifelog.generate("tiny", 1, tmp_path / "bench")
    out = tmp_path / "run"
    code = main(["run", "--bench", str(bench), "--system", f"letta:base_url={server.url},k=5", "--tiers", "core",
                 "--out", str(out), "--no-progress"])  # fmt: skip
    assert code == 0
    man, recs = read_manifest(out), read_records(out)
    assert man["status"] == "complete" and man["config"]["system"]["name"] == "letta"
    assert man["config"]["system"]["params"]["k"] == 5
    turns = [json.loads(x) for x in (Path(bench) / "turns_core.jsonl").read_text().splitlines()]
    assert not server.agents and len(server.deleted) == 1  # the run closed the system: its agent deleted
    assert len([r for r in server.requests if r[0] == "POST" and r[1].endswith("/archival-memory")]) == len(turns)
    assert not [r for r in recs if r.get("error")]
    assert all(len(r["memories"]) <= 5 for r in recs)
    said = {f"{t['speaker']}: {t['text']}" for t in turns}
    returned = [m["text"] for r in recs for m in r["memories"]]
    assert returned and set(returned) <= said
    assert sum(1 for r in recs if r["score"] and r["score"] > 0) >= 5


def test_unknown_parameter_and_bad_url_are_one_line(capsys, tmp_path):
    bench = lifelog.generate("tiny", 1, tmp_path / "bench")
    assert main(["run", "--bench", str(bench), "--system", "letta:kk=3", "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "unknown parameter 'kk' (did you mean 'k'?)" in err and "Traceback" not in err
