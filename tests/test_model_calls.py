"""Every model call bounded and readable (issue 26), against scripted loopback servers: max_tokens and
timeouts per role, tool_choice with tools, structured output asked form by form, tolerant parsing,
the judge-graded run that graded too little marked failed, per-token embeddings named, housekeeping
parameters out of the system's name."""

import json
import threading
import time

import httpx
import pytest

from memeval.llm import ROLE_LIMITS, ChatClient, ChatError
from memeval.multiturn.llm_agent import ChatAgent
from memeval.multiturn.replay import _assistant_tool_message
from memeval.multiturn.tools import ToolCall
from memeval.run import read_manifest, read_records, run_system
from memeval.scoring.judge import VERDICT_SCHEMA, Judge, Reader
from memeval.errors import SystemCallError
from memeval.systems.embeddings import EmbeddingClient
from memeval.testing.chat_stub import ScriptedChatServer
from minibench import make_minibench

VERDICT = json.dumps({"verdict": "correct", "evidence": "Biscuit"})


def test_every_call_carries_its_roles_max_tokens_and_tools_carry_tool_choice():
    with ScriptedChatServer(lambda body: "ok") as srv:
        ChatClient(srv.base_url, "m", role="judge").chat([{"role": "user", "content": "hi"}])
        ChatClient(srv.base_url, "m", role="agent", max_tokens=40).chat(
            [{"role": "user", "content": "hi"}], tools=[{"type": "function", "function": {"name": "f"}}]
        )
        ChatClient(srv.base_url, "m").chat([{"role": "user", "content": "hi"}])
    judge, agent, plain = srv.requests
    assert judge["max_tokens"] == ROLE_LIMITS["judge"].max_tokens and "tool_choice" not in judge
    assert agent["max_tokens"] == 40 and agent["tool_choice"] == "auto"
    assert plain["max_tokens"] == ROLE_LIMITS["chat"].max_tokens


def test_structured_output_asked_form_by_form_and_the_refused_form_not_asked_again():
    def reply(body):
        fmt = body.get("response_format")
        if fmt and fmt["type"] == "json_schema":  # llama-cpp-python's answer: HTTP 500 naming the field
            return 500, {"error": {"message": "body.response_format.type: Input should be 'text' or 'json_object'"}}
        return VERDICT

    with ScriptedChatServer(reply) as srv:
        c = ChatClient(srv.base_url, "m", role="judge", backoff=0.001)
        first = c.chat([{"role": "user", "content": "grade"}], schema=VERDICT_SCHEMA)
        second = c.chat([{"role": "user", "content": "grade"}], schema=VERDICT_SCHEMA)
    kinds = [(r.get("response_format") or {}).get("type") for r in srv.requests]
    assert kinds == ["json_schema", "json_object", "json_object"]  # no retry of a refusal, no second ask
    assert srv.requests[1]["response_format"]["schema"] == VERDICT_SCHEMA
    assert first.form == second.form == "json_object" and json.loads(first.text)["verdict"] == "correct"


def test_a_server_refusing_every_form_gets_the_prose_request():
    def reply(body):
        if "response_format" in body:
            return 400, {"error": {"message": "response_format is not supported"}}
        return "Sure: " + VERDICT

    with ScriptedChatServer(reply) as srv:
        res = ChatClient(srv.base_url, "m", backoff=0.001).chat([], schema={"type": "object"})
    assert res.form == "prose" and "response_format" not in srv.requests[-1] and len(srv.requests) == 3


def test_an_unrelated_server_error_is_retried_not_taken_for_a_refusal():
    with ScriptedChatServer(lambda body: 500) as srv:
        with pytest.raises(ChatError, match="gave up after 2 attempts"):
            ChatClient(srv.base_url, "m", backoff=0.001, max_attempts=2).chat([], schema={"type": "object"})
    assert len(srv.requests) == 2


def test_a_timed_out_attempt_is_retried_and_a_lasting_timeout_named():
    seen, gate = [], threading.Event()

    def reply(body):
        seen.append(time.monotonic())
        if len(seen) == 1:
            gate.wait(5)  # the first attempt outlives the client's timeout
        return "late" if len(seen) == 1 else "ok"

    with ScriptedChatServer(reply) as srv:
        c = ChatClient(srv.base_url, "m", timeout=0.5, backoff=0.01)
        assert c.chat([]).text == "ok"  # the second attempt, after the first timed out
        gate.set()
    assert len(seen) == 2
    with ScriptedChatServer(lambda body: (gate.clear(), gate.wait(3), "late")[-1]) as srv:
        with pytest.raises(ChatError, match="timed out"):
            ChatClient(srv.base_url, "m", timeout=0.3, backoff=0.01, max_attempts=2).chat([])
        gate.set()


def test_judge_reads_a_fenced_verdict_with_a_raw_newline_in_its_evidence():
    from memeval.bench.model import Question

    q = Question("Q1", "BASIC", "What is the dog called?", "Biscuit")
    raw = 'Here you go:\n```json\n{"verdict": "correct", "evidence": "called\nBiscuit"}\n```'
    with ScriptedChatServer(lambda body: raw) as srv:
        v = Judge(ChatClient(srv.base_url, "m", role="judge")).grade(q, "The dog is called Biscuit")
    assert (v.score, v.evidence) == (1.0, "called\nBiscuit")


def _reader_and_judge(judge_reply):
    def reply(body):
        content = body["messages"][0]["content"]
        if content.startswith("You answer a question"):
            return "Biscuit"
        return judge_reply

    return reply


def test_a_run_whose_judge_grades_under_half_is_failed_with_the_reason(tmp_path):
    bench = make_minibench(tmp_path / "b")
    with ScriptedChatServer(_reader_and_judge("I would say it is right.")) as srv:
        client = ChatClient(srv.base_url, "m", backoff=0.001)
        rd = run_system(
            bench, "bm25", tiers=["core"], mode="answer", judge=Judge(client), reader=Reader(client), out=tmp_path / "r"
        )
    m = read_manifest(rd)
    n = len(read_records(rd))
    assert m["status"] == "failed" and m["status_reasons"][0].startswith(f"the judge graded 0 of {n} questions")
    assert m["grading"]["unparseable"] == n and m["grading"]["unparseable_share"] == 1.0


def test_cli_exits_1_on_a_failed_grading_and_prints_no_nan(tmp_path, capsys):
    from memeval.cli import main

    bench = make_minibench(tmp_path / "b")
    with ScriptedChatServer(_reader_and_judge("no idea")) as srv:
        args = ["run", "--bench", str(bench), "--tiers", "core", "--system", "bm25", "--mode", "answer"]
        args += ["--judge-url", srv.base_url, "--judge-model", "m", "--reader-url", srv.base_url]
        args += ["--reader-model", "m", "--out", str(tmp_path / "r"), "--no-progress", "--judge-max-tokens", "64"]
        assert main(args) == 1
    err = capsys.readouterr().err
    assert "run failed: the judge graded 0 of" in err and "nan" not in err
    assert "judge: graded 0 of 4 (0%); unparseable replies 4 (100%)" in err
    assert {r["max_tokens"] for r in srv.requests} == {64, ROLE_LIMITS["reader"].max_tokens}


def test_a_run_whose_judge_grades_enough_stays_complete(tmp_path):
    bench = make_minibench(tmp_path / "b")
    with ScriptedChatServer(_reader_and_judge(VERDICT)) as srv:
        judge, reader = Judge(ChatClient(srv.base_url, "j", role="judge")), Reader(ChatClient(srv.base_url, "r"))
        rd = run_system(bench, "bm25", tiers=["core"], mode="answer", judge=judge, reader=reader, out=tmp_path / "r")
    m = read_manifest(rd)
    assert m["status"] == "complete" and m["grading"]["graded_share"] == 1.0
    roles = {(u["role"], u["model"], u["calls"]) for r in read_records(rd) for u in r["usage"]}
    assert roles == {("reader", "r", 1), ("judge", "j", 1)}


def test_one_vector_per_token_is_named_as_such():
    def handler(request):
        body = json.loads(request.content)
        data = [{"index": i, "embedding": [[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]]} for i in range(len(body["input"]))]
        return httpx.Response(200, json={"data": data})

    client = EmbeddingClient("http://embed.test/v1", "m", transport=httpx.MockTransport(handler))
    with pytest.raises(SystemCallError, match="one vector per token .*3 x 2"):
        client.embed(["a", "b"])


def test_the_cache_path_stays_out_of_the_systems_name(tmp_path):
    bench = make_minibench(tmp_path / "b")
    with ScriptedChatServer(lambda body: 404) as srv:
        spec = f"vector:k=3,model=stub,base_url={srv.base_url},cache={tmp_path / 'secret-dir' / 'e.sqlite'}"
        rd = run_system(bench, spec, tiers=["core"], runs_root=tmp_path / "runs", progress=False)
    assert "secret-dir" not in json.dumps(read_manifest(rd)["config"]) and "secret-dir" not in rd.name
    assert {r["system"] for r in read_records(rd)} == {f"vector:k=3,model=stub,base_url={srv.base_url}"}


def test_an_assistant_message_with_only_tool_calls_has_empty_content():
    msg = _assistant_tool_message("", [("0:0", ToolCall("get_price_list", {"customer": "Acme"}, "c1"))])
    assert msg["content"] == "" and msg["tool_calls"][0]["function"]["name"] == "get_price_list"


def test_chat_agent_asks_for_the_state_as_a_schema_object_when_the_reply_reports_none():
    state = {"currency": "USD", "lines": None}

    def reply(body):
        return json.dumps(state) if "response_format" in body else "Quote drafted."

    schema = {"currency": {"type": "string", "enum": ["USD", "EUR"]}, "lines": {"type": "integer"}}
    with ScriptedChatServer(reply) as srv:
        agent = ChatAgent(ChatClient(srv.base_url, "m", role="agent", max_tokens=32), state_schema=schema)
        step = agent.gen([{"role": "user", "content": "Draft a quote in dollars."}], seed=1, turn=0, step=0)
    assert (step.text, step.state, step.state_source) == ("Quote drafted.", state, "state_report")
    asked = srv.requests[1]["response_format"]["json_schema"]["schema"]
    assert asked["required"] == ["currency", "lines"] and srv.requests[1]["messages"][-2]["content"] == "Quote drafted."
    assert (srv.requests[0]["max_tokens"], srv.requests[1]["max_tokens"]) == (32, 256)  # a whole state fits
