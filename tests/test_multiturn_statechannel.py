"""B2: a chat agent reports its state itself (report_state tool call or a fenced state block),
validated against the sample's state schema; the extractor is only a fallback. Against the
scripted OpenAI-compatible stub (a real loopback server) a chat agent answering like a scripted
agent gets that agent's verdicts, with nothing undetermined."""

import json

import pytest

from memeval.cli import main
from memeval.llm import ChatClient
from memeval.multiturn.agents import make_agent
from memeval.multiturn.config import DEFAULT_CONFIG
from memeval.multiturn.extractor import RuleExtractor, extractor_accuracy
from memeval.multiturn.runner import run_sample
from memeval.multiturn.llm_agent import ChatAgent
from memeval.multiturn.records import read_sample_records
from memeval.multiturn.runner import run_suite
from memeval.multiturn.toolsets import fixture_tools
from memeval.multiturn.suite import generate_suite, save_suite
from memeval.testing.chat_stub import ScriptedChatServer, completion, scripted_agent_responder, tool_call
from multiturn_cli import chat_run_argv


@pytest.fixture(scope="module")
def suite():
    return generate_suite(seed=20261018, sessions=9, cross_session=1)


def chat_records(suite, scripted: str, channel: str, **kw):
    with ScriptedChatServer(scripted_agent_responder(make_agent(scripted), channel)) as srv:
        agent = ChatAgent(ChatClient(srv.base_url, "m", api_key_env=None))
        recs = run_suite(suite, agent, extractor=RuleExtractor(), **kw)
    return recs, srv


@pytest.mark.parametrize("scripted", ["correct", "drops_constraint", "keeps_old_value"])
@pytest.mark.parametrize("channel", ["tool", "block"])
def test_chat_agent_through_the_stub_matches_its_scripted_agent(suite, scripted, channel):
    ref = {r["sample_id"]: r for r in run_suite(suite, make_agent(scripted))}
    # the extractor is declared untrusted: any turn it had to read would make the sample undetermined
    recs, srv = chat_records(suite, scripted, channel, extractor_trusted=False)
    got = {r["sample_id"]: r for r in recs}
    assert set(got) == set(ref)
    assert [r["verdict"] for r in recs].count("undetermined") == 0
    assert {k: (r["verdict"], r["bad_turn"]) for k, r in got.items()} == {
        k: (r["verdict"], r["bad_turn"]) for k, r in ref.items()
    }
    want = "report_state" if channel == "tool" else "state_block"
    sources = {t["state_source"] for r in recs for run in r["runs"] for t in run["trace"]}
    assert sources == {want}
    if scripted == "correct":
        assert {r["verdict"] for r in recs} == {"pass"}
    else:
        assert "fail" in {r["verdict"] for r in recs}
    offered = {t["function"]["name"] for t in srv.requests[0]["tools"]}
    assert "report_state" in offered and "get_price_list" in offered
    assert "report_state" in srv.requests[0]["messages"][0]["content"]


def test_without_a_reported_state_the_untrusted_extractor_leaves_samples_undetermined(suite):
    score = extractor_accuracy(RuleExtractor(), suite.labels)
    assert not score.trusted(DEFAULT_CONFIG.extractor_threshold)
    recs, _ = chat_records(suite, "correct", "none", extractor_trusted=False)
    tasks = [r for r in recs if r["unit_type"] != "turn" or r["runs"][0]["state_checks"]]
    assert tasks and all(r["verdict"] == "undetermined" for r in tasks)


def test_reported_state_is_checked_against_the_schema(suite):
    s = next(
        s
        for s in suite.samples
        if s.unit_type == "task"
        and s.graded_from is None
        and len(s.turn_index) <= 3
        and any(e.key == "currency" for e in s.state_expect)
    )
    correct = make_agent("correct")

    def responder(body):
        out = scripted_agent_responder(correct, "tool")(body)
        msg = out["choices"][0]["message"]
        for c in msg.get("tool_calls") or []:
            if c["function"]["name"] == "report_state":
                st = json.loads(c["function"]["arguments"])
                st.update(currency="dollars", lines=str(st["lines"]), mood="happy")
                c["function"]["arguments"] = json.dumps(st)
        return out

    with ScriptedChatServer(responder) as srv:
        agent = ChatAgent(ChatClient(srv.base_url, "m", api_key_env=None))
        r = run_sample(s, agent, fixture_tools(suite), DEFAULT_CONFIG.with_(runs=1))
    t0 = r.runs[0][0].turns[0]
    assert "currency" not in t0.state and "lines" not in t0.state and t0.state["customer"]
    assert set(t0.state_errors) == {
        "currency: expected string in ['CNY', 'USD', 'EUR']",
        "lines: expected integer",
        "mood: not in the state schema",
    }
    cur = next(c for c in r.runs[0][1].state if c.key == "currency")
    assert r.verdict == "undetermined" and cur.status == "undetermined"
    acks = [
        json.loads(m["content"])
        for q in srv.requests
        for m in q["messages"]
        if m["role"] == "tool" and m["tool_call_id"].startswith("s")
    ]
    assert acks and acks[0]["ok"] is False and "lines: expected integer" in acks[0]["errors"]


def test_report_state_consumes_no_fixture_key(suite):
    s = next(s for s in suite.samples if s.unit_type == "task" and len(s.process.tools) >= 2)
    fx = suite.fixtures[s.replay.tool_fixture]
    with ScriptedChatServer(scripted_agent_responder(make_agent("correct"), "tool")) as srv:
        r = run_sample(
            s,
            ChatAgent(ChatClient(srv.base_url, "m", api_key_env=None)),
            fixture_tools(suite),
            DEFAULT_CONFIG.with_(runs=1),
        )
    keys = [c["key"] for t in r.runs[0][0].turns for c in t.tool_calls]
    assert r.verdict == "pass" and keys and set(keys) <= set(fx.calls)
    assert all(c["name"] != "report_state" for t in r.runs[0][0].turns for c in t.tool_calls)


def test_cli_run_chat_agent_options_and_trust_message(tmp_path, capsys):
    folder = tmp_path / "suite"
    save_suite(generate_suite(seed=5, sessions=4, cross_session=0), folder)
    with ScriptedChatServer(scripted_agent_responder(make_agent("correct"), "tool")) as srv:
        code = main(chat_run_argv(str(folder), str(tmp_path / "r.jsonl"), srv.base_url, "MT_NO_SUCH_KEY"))
    out = capsys.readouterr().out
    assert code == 0 and "undetermined" not in out and "NOT trusted" not in out
    recs = read_sample_records(tmp_path / "r.jsonl")
    assert recs and {r["verdict"] for r in recs} == {"pass"}
    # replies without a reported state: the extractor decides, and the message says why
    with ScriptedChatServer(scripted_agent_responder(make_agent("correct"), "none")) as srv:
        argv = chat_run_argv(str(folder), str(tmp_path / "r2.jsonl"), srv.base_url, "MT_NO_SUCH_KEY")
        main(argv)
        out = capsys.readouterr().out
        assert "NOT trusted" in out and "undetermined" in out
        main([*argv[:4], str(tmp_path / "r3.jsonl"), *argv[5:], "--trust-threshold", "0.5"])
        out = capsys.readouterr().out
    assert "NOT trusted" not in out
    assert "undetermined" not in {r["verdict"] for r in read_sample_records(tmp_path / "r3.jsonl")}
    assert main(["multiturn", "run", str(folder), "-o", str(tmp_path / "r4.jsonl"), "--trust-threshold", "2"]) == 2
    assert not (tmp_path / "r4.jsonl").exists()


def test_state_block_is_stripped_from_the_reply():
    from memeval.multiturn.statechannel import parse_state_block

    text, st = parse_state_block('Saved.\n```json\n{"state": {"saved": true}}\n```')
    assert (text, st) == ("Saved.", {"saved": True})
    assert parse_state_block('```json\n{"a": 1}\n```')[1] is None  # a json block that is not a state
    assert parse_state_block("```state\n{broken\n```")[1] is None
    assert completion("x")["choices"][0]["message"]["content"] == "x"
    assert tool_call("f", {"a": 1}, "i")["function"]["arguments"] == '{"a": 1}'


def test_report_state_beside_a_real_call_in_one_step(suite):
    from memeval.multiturn.agents import AgentStep, CorrectAgent
    from memeval.multiturn.replay import replay_once
    from memeval.multiturn.tools import ToolCall

    s = next(s for s in suite.samples if s.unit_type == "task" and 0 in s.process.tools and s.graded_from is None)
    ref = CorrectAgent()

    class Both:
        name = "both"

        def gen(self, messages, seed, turn, step):
            plain = [m for m in messages if not (m["role"] == "tool" and m["tool_call_id"].startswith("st"))]
            plain = [
                {**m, "tool_calls": [c for c in m["tool_calls"] if c["function"]["name"] != "report_state"]}
                if m.get("tool_calls")
                else m
                for m in plain
            ]
            out = ref.gen(plain, seed, turn, step)
            if out.tool_calls:  # its lookups and its state report in the same step
                return AgentStep(tool_calls=out.tool_calls + (ToolCall("report_state", {"lines": 0}, f"st{turn}"),))
            return AgentStep(out.text)

    tr = replay_once(s, Both(), fixture_tools(suite)(s))
    t0 = tr.turns[0]
    assert tr.status == "done" and t0.state == {"lines": 0} and t0.state_source == "report_state"
    assert [c["key"] for c in t0.tool_calls] == [f"0:{i}" for i in range(len(t0.tool_calls))]
