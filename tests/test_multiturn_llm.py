"""Endpoint-backed parts over a real loopback server: the chat agent with tools, the LLM state
extractor, and the judge (verdicts without checkable evidence are discarded)."""

import json

from memeval.llm import ChatClient
from memeval.multiturn.config import DEFAULT_CONFIG
from memeval.multiturn.extractor import ChatExtractor, extractor_accuracy
from memeval.multiturn.grade import grade_run
from memeval.multiturn.runner import run_sample
from memeval.multiturn.judge import ChatJudge, verdict_from_reply
from memeval.multiturn.llm_agent import ChatAgent
from memeval.multiturn.records import result_record
from memeval.multiturn.replay import RunTrace, TurnRecord
from memeval.multiturn.toolsets import fixture_tools
from memeval.multiturn.sample import FinalExpect, Labels, ReplaySpec, Sample, StateExpect
from memeval.multiturn.suite import generate_suite
from memeval.multiturn.tools import Fixture, FixtureTools, RecordedCall
from memeval.testing.chat_stub import ScriptedChatServer, completion


def quote_sample():
    return Sample(
        "ss_x#g1",
        "ss_x",
        "task",
        (0, 1),
        "quote",
        {0: "Please draft a quote for Acme Trading, prices in yuan.", 1: "Add 2 x bolts."},
        (StateExpect("currency", "eq", "CNY", 0), StateExpect("total", "eq", 20.0, 1)),
        FinalExpect(),
        ReplaySpec("fx_x", "cfg", 7, "r5"),
        Labels(2, 0, 0, False),
        max_steps=3,
    )


FIX = Fixture(
    "fx_x",
    {
        "0:0": RecordedCall(
            "get_price_list",
            {"customer": "Acme Trading"},
            {"customer": "Acme Trading", "currency": "CNY", "prices": {"bolts": 10.0}},
        )
    },
)


def test_chat_agent_replays_with_tools_and_key_stays_out_of_records(monkeypatch):
    monkeypatch.setenv("MT_TEST_KEY", "sk-mt-secret")

    def responder(body):
        last = body["messages"][-1]
        if last["role"] == "user" and "draft" in last["content"]:
            return completion(
                "",
                [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "get_price_list", "arguments": '{"customer": "Acme Trading"}'},
                    }
                ],
            )
        if last["role"] == "tool":
            return "Quote for Acme Trading: 0 lines, total 0.00 CNY (excl. tax)."
        return "Quote for Acme Trading: 1 lines, total 20.00 CNY (excl. tax)."

    with ScriptedChatServer(responder) as srv:
        agent = ChatAgent(ChatClient(srv.base_url, "m", api_key_env="MT_TEST_KEY"))
        from memeval.multiturn.extractor import RuleExtractor

        s = quote_sample()
        r = run_sample(s, agent, lambda _: FixtureTools(FIX), DEFAULT_CONFIG, extractor=RuleExtractor())
    assert r.verdict == "pass", r.reason
    first = srv.requests[0]
    assert first["seed"] == 7 and {t["function"]["name"] for t in first["tools"]} >= {"get_price_list", "save_quote"}
    tool_msg = srv.requests[1]["messages"][-1]
    assert tool_msg["role"] == "tool" and json.loads(tool_msg["content"])["prices"] == {"bolts": 10.0}
    assert srv.headers[0]["authorization"] == "Bearer sk-mt-secret"
    assert "sk-mt-secret" not in json.dumps(result_record(r))
    usage = [u for run in result_record(r)["runs"] for u in run["usage"]]  # each run's own calls (issue 26)
    assert [(u["role"], u["model"], u["calls"]) for u in usage] == [("chat", "m", len(srv.requests) // 3)] * 3


def test_endpoint_failure_is_an_incomplete_record_with_reason():
    with ScriptedChatServer(lambda b: 400) as srv:
        agent = ChatAgent(ChatClient(srv.base_url, "m", api_key_env=None, max_attempts=1))
        r = run_sample(quote_sample(), agent, lambda _: FixtureTools(FIX), DEFAULT_CONFIG.with_(runs=1))
    assert r.verdict == "incomplete" and "agent_error at turn 0" in r.reason and "HTTP 400" in r.reason


def test_chat_extractor_accuracy_against_hand_labels():
    suite = generate_suite(seed=3, sessions=3, cross_session=0)
    labels = [l for l in suite.labels][:12]

    def responder(body):
        text = body["messages"][0]["content"].split("Reply:\n", 1)[1]
        lab = next(l for l in labels if l["text"] == text)
        st = dict(lab["state"] or {})
        if "currency" in st:
            st["currency"] = "XXX"  # this model always gets the currency wrong
        return json.dumps(st)

    with ScriptedChatServer(responder) as srv:
        sc = extractor_accuracy(ChatExtractor(ChatClient(srv.base_url, "m", api_key_env=None)), labels)
    n_cur = sum(1 for l in labels if l["state"] and "currency" in l["state"])
    assert n_cur > 0 and sc.per_key["currency"] == (0, n_cur)
    assert sc.accuracy == (sc.units - n_cur) / sc.units
    assert srv.requests[0]["response_format"] == {"type": "json_object"}


def _run():
    return RunTrace(
        "done",
        None,
        (
            TurnRecord(0, "Please draft a quote.", "Which customer is this quote for?", (), {}, {}, "agent", 1),
            TurnRecord(
                1,
                "It's for Acme.",
                "Quote for Acme: 1 lines, total 5.00 CNY (excl. tax). I will email it.",
                (),
                {},
                {},
                "agent",
                1,
            ),
        ),
    )


def test_judge_keeps_only_verdicts_with_evidence_found_in_the_transcript():
    run = _run()
    good = {
        "goal_met": {"answer": True, "evidence": [{"turn": 1, "sentence": "Quote for Acme: 1 lines"}]},
        "promised_not_done": {"answer": True, "evidence": [{"turn": 1, "sentence": "I will email it."}]},
        "added_unrequested": {"answer": False, "evidence": []},
    }
    answers, discarded, status = verdict_from_reply(good, run)
    assert status == "fail" and answers["promised_not_done"] is True and not discarded
    no_ev = {**good, "promised_not_done": {"answer": True, "evidence": []}}
    answers, discarded, status = verdict_from_reply(no_ev, run)
    assert status == "undetermined" and "promised_not_done" in discarded and answers["goal_met"] is True
    invented = {
        **good,
        "promised_not_done": {"answer": True, "evidence": [{"turn": 1, "sentence": "I will fax it."}]},
        "goal_met": {"answer": True, "evidence": [{"turn": 0, "sentence": "Quote for Acme"}]},
    }
    answers, discarded, status = verdict_from_reply(invented, run)
    assert status == "undetermined" and set(discarded) == {"goal_met", "promised_not_done"}


def test_chat_judge_over_endpoint_decides_the_open_part():
    run = _run()
    s = Sample(
        "ss_j#g1",
        "ss_j",
        "task",
        (0, 1),
        "quote",
        {0: "Please draft a quote.", 1: "It's for Acme."},
        (),
        FinalExpect(answer_must_contain=("Acme", "total", "CNY", "lines"), open_requirements=("polite",)),
        ReplaySpec("fx", "cfg", 1, "r5"),
        Labels(2, 0, 0, False),
    )
    reply = {
        "goal_met": {"answer": True, "evidence": [{"turn": 1, "sentence": "total 5.00 CNY"}]},
        "promised_not_done": {"answer": True, "evidence": [{"turn": 1, "sentence": "I will email it."}]},
        "added_unrequested": {"answer": False, "evidence": []},
    }
    with ScriptedChatServer(lambda b: json.dumps(reply)) as srv:
        g = grade_run(s, run, DEFAULT_CONFIG, judge=ChatJudge(ChatClient(srv.base_url, "judge", api_key_env=None)))
    assert g.coverage == 0.8 and g.verdict == "fail" and g.reason.startswith("judge:")
    assert "I will email it." in srv.requests[0]["messages"][0]["content"]
    with ScriptedChatServer(lambda b: "no idea") as srv:
        g = grade_run(s, run, DEFAULT_CONFIG, judge=ChatJudge(ChatClient(srv.base_url, "judge", api_key_env=None)))
    assert g.verdict == "undetermined" and "judge" in g.reason


def test_judge_is_asked_only_about_samples_with_an_open_part():
    import re
    from memeval.multiturn.agents import CorrectAgent

    suite = generate_suite(seed=20261018, sessions=24, cross_session=0)
    open_s = next(s for s in suite.samples if s.final_expect.open_requirements)
    closed = next(s for s in suite.samples if not s.final_expect.open_requirements and s.unit_type == "task")

    def responder(body):
        prompt = body["messages"][0]["content"]
        turn, text = re.findall(r"\[(\d+)\] assistant: (.+)", prompt)[-1]
        ev = [{"turn": int(turn), "sentence": text[:25]}]
        return json.dumps(
            {
                "goal_met": {"answer": True, "evidence": ev},
                "promised_not_done": {"answer": False, "evidence": []},
                "added_unrequested": {"answer": False, "evidence": []},
            }
        )

    with ScriptedChatServer(responder) as srv:
        judge = ChatJudge(ChatClient(srv.base_url, "judge", api_key_env=None))
        r_closed = run_sample(closed, CorrectAgent(), fixture_tools(suite), DEFAULT_CONFIG, judge=judge)
        assert len(srv.requests) == 0 and r_closed.verdict == "pass"
        r_open = run_sample(open_s, CorrectAgent(), fixture_tools(suite), DEFAULT_CONFIG, judge=judge)
    assert len(srv.requests) == 3 and r_open.verdict == "pass"
    assert r_open.runs[0][1].judge.answers == {"goal_met": True, "promised_not_done": False, "added_unrequested": False}
    assert r_open.runs[0][1].coverage < 1.0
