"""The structured rubric judge, against a scripted OpenAI-compatible server on loopback."""

import json
from contextlib import contextmanager

import pytest

from memeval.bench.loaders.booksuite import BookCase, History, Message, load_booksuite
from memeval.cli import main
from memeval.llm import ChatClient, prompt_hash
from memeval.scoring.booksuite_scores import judge_scores, layer_table
from memeval.scoring.rubric import RubricJudge, load_prompt, parse_verdict, VerdictError
from memeval.testing.chat_stub import ScriptedChatServer

from booksuite_paths import SUITE

CASE = BookCase(
    test_id="layer1_99_x",
    layer="layer1",
    title="t",
    description="d",
    histories=(
        History("c2", "2024-03-01 09:00:00", (Message("user", "new code ZZ-9"),)),
        History("c1", "2024-01-02 10:00:00", (Message("user", "my code is AB-12"), Message("assistant", "noted"))),
    ),
    user_question="what is my code?",
    evaluation_criteria="must say ZZ-9 (the newer code)",
    expected_behavior="gives ZZ-9",
)


def verdict(p=4, r=3, reasoning=3, pro=2, veto=False, drop_evidence=None, veto_evidence="x"):
    out = {
        d: {"grade": g, "evidence": f"answer says ZZ-9; c2 says ZZ-9 ({d})", "boundary": "b"}
        for d, g in (("precision", p), ("recall", r), ("reasoning", reasoning), ("proactivity", pro))
    }
    if drop_evidence:
        out[drop_evidence]["evidence"] = " "
    out["hallucination"] = {"veto": veto, "evidence": veto_evidence if veto else ""}
    return json.dumps(out)


@pytest.fixture(scope="module")
def server():
    """One loopback server for the module (each shutdown costs a poll interval); tests swap its script."""
    with ScriptedChatServer(lambda body: 500) as srv:
        yield srv


@contextmanager
def scripted(srv, responder):
    srv.responder = responder
    srv.requests.clear()
    yield srv


def judge_for(srv, **kw):
    return RubricJudge(ChatClient(srv.base_url, "judge-m", api_key_env=None, backoff=0.01, max_attempts=2), **kw)


def test_graded_verdict_reward_success_and_provenance(server):
    with scripted(server, lambda body: "Here you go:\n" + verdict(4, 3, 3, 2)) as srv:
        res = judge_for(srv).grade(CASE, "Your code is ZZ-9.", facts=[("ZZ-9", "ZZ 9")])
    # (3/3 + 2/3 + 2/3 + 1/3) / 4
    assert res.reward == pytest.approx(8 / 12) and res.success is True and res.ungraded_reason is None
    assert res.verdict.grade("proactivity").label == "pass" and res.verdict.grade("precision").label == "excellent"
    assert res.judge == {"base_url": srv.base_url, "model": "judge-m", "temperature": 0.0}
    assert res.prompt_hash == prompt_hash(load_prompt()) and res.prompt_version == "booksuite-rubric-v1"
    body = srv.requests[0]
    assert body["temperature"] == 0.0 and body["response_format"] == {"type": "json_object"}
    user = body["messages"][1]["content"]
    # the conversations in date order, the question, criteria, facts and the answer are all in the prompt
    assert user.index("### Conversation c1 (2024-01-02 10:00:00)") < user.index("### Conversation c2")
    assert "user: my code is AB-12" in user and "what is my code?" in user and "must say ZZ-9" in user
    assert "- ZZ-9 | ZZ 9" in user and user.rstrip().endswith("Your code is ZZ-9.")
    d = res.to_dict()
    assert d["grades"]["recall"]["grade"] == 3 and d["prompt_hash"].startswith("sha256:")


def test_success_needs_precision_recall_reasoning_at_least_good(server):
    with scripted(server, lambda body: verdict(4, 4, 2, 4)) as srv:
        res = judge_for(srv).grade(CASE, "AB-12")
    assert res.reward == pytest.approx((3 + 3 + 1 + 3) / 12) and res.success is False


def test_hallucination_veto_zeroes_the_reward(server):
    with scripted(server, lambda body: verdict(4, 4, 4, 4, veto=True, veto_evidence="invents code QQ-1")) as srv:
        res = judge_for(srv).grade(CASE, "ZZ-9, and your PIN is 1234")
    assert res.reward == 0.0 and res.success is False and res.verdict.veto_evidence == "invents code QQ-1"


@pytest.mark.parametrize(
    "reply,reason",
    [
        (verdict(drop_evidence="recall"), "verdict discarded: recall: verdict without evidence"),
        (verdict(veto=True, veto_evidence=""), "verdict discarded: hallucination: veto without evidence"),
        (verdict(p=5), "verdict discarded: precision: grade must be 1-4"),
    ],
)
def test_verdict_without_evidence_or_valid_grade_is_ungraded(reply, reason, server):
    with scripted(server, lambda body: reply) as srv:
        res = judge_for(srv).grade(CASE, "ZZ-9")
    assert res.reward is None and res.success is None and res.ungraded_reason.startswith(reason)
    assert len(srv.requests) == 1  # a discarded verdict is not fished for again


def test_failing_endpoint_is_ungraded_not_zero(server):
    with scripted(server, lambda body: 503) as srv:
        res = judge_for(srv).grade(CASE, "ZZ-9")
    assert res.reward is None and "judge call failed" in res.ungraded_reason and "2 attempts" in res.ungraded_reason
    assert len(srv.requests) == 2


def test_unreadable_reply_is_asked_again_then_ungraded(server):
    replies = iter(["I think it is fine", verdict(3, 3, 3, 3)])
    with scripted(server, lambda body: next(replies)) as srv:
        res = judge_for(srv).grade(CASE, "ZZ-9")
    assert res.reward == pytest.approx(8 / 12) and res.attempts == 2
    with scripted(server, lambda body: "no json here") as srv:
        res = judge_for(srv, parse_attempts=3).grade(CASE, "ZZ-9")
    assert (
        res.reward is None and res.ungraded_reason == "no JSON verdict in the judge's reply" and len(srv.requests) == 3
    )


def test_labels_accepted_as_grades():
    obj = json.loads(verdict())
    obj["precision"]["grade"] = "excellent"
    obj["recall"]["grade"] = "2"
    v = parse_verdict(obj)
    assert v.grade_map == {"precision": 4, "recall": 2, "reasoning": 3, "proactivity": 2}
    with pytest.raises(VerdictError, match="veto"):
        parse_verdict({**obj, "hallucination": {"veto": "no"}})


def test_judge_refuses_nonzero_temperature():
    with pytest.raises(ValueError, match="temperature 0"):
        RubricJudge(ChatClient("http://127.0.0.1:9", "m", api_key_env=None, temperature=0.7))


def test_ungraded_cases_are_counted_separately_in_the_layer_table(server):
    suite = load_booksuite(SUITE)
    answers = {
        "layer1_01_bank_account": "good",
        "layer1_02_insurance_claim": "bad",
        "layer2_01_multiple_vehicles": "good",
    }

    def responder(body):
        text = body["messages"][1]["content"]
        return 500 if text.rstrip().endswith("bad") else verdict(4, 4, 4, 1)

    with scripted(server, responder) as srv:
        scores = judge_scores(suite, answers, judge_for(srv), "s")
    assert [s.status for s in scores] == ["scored", "ungraded", "scored"]
    rows = {r.key: r for r in layer_table(scores)}
    assert rows["layer1"].means["s"] == pytest.approx(0.75) and rows["layer1"].counts["s"] == 1
    assert rows["overall"].counts["s"] == 2


def test_compare_with_judge_metric_over_loopback(tmp_path, capsys, server):
    p = tmp_path / "r.json"
    p.write_text(
        json.dumps(
            {
                "a": {"layer3_01_travel_coordination": "renew your passport"},
                "b": {"layer3_01_travel_coordination": "no idea"},
            }
        )
    )

    def responder(body):
        ans = body["messages"][1]["content"].rstrip()
        return verdict(4, 3, 3, 4) if ans.endswith("passport") else verdict(1, 1, 1, 1)

    with scripted(server, responder) as srv:
        rc = main(
            [
                "compare",
                "--suite",
                str(SUITE),
                "--metric",
                "judge",
                "--responses",
                str(p),
                "--judge-url",
                srv.base_url,
                "--judge-model",
                "jm",
                "--judge-key-env",
                "MEMEVAL_NO_KEY",
                "--out",
                str(tmp_path / "o.jsonl"),
            ]
        )
    assert rc == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("Overall"))
    assert line.split()[1:] == [f"{(3 + 2 + 2 + 3) / 12:.3f}", "0.000"]
    recs = [json.loads(x) for x in (tmp_path / "o.jsonl").read_text().splitlines()]
    assert {r["system"]: r["passed"] for r in recs} == {"a": True, "b": False}
    assert recs[0]["judge"]["model"] == "jm" and recs[0]["prompt_hash"] == prompt_hash(load_prompt())


def test_docstring_examples():
    import doctest

    from memeval.scoring import rubric as mod

    res = doctest.testmod(mod)
    assert res.attempted >= 2 and res.failed == 0


def test_score_answers_with_judge_without_json_mode(tmp_path, capsys, server):
    p = tmp_path / "a.json"
    p.write_text(json.dumps({"layer1_01_bank_account": "4429853327"}))
    with scripted(server, lambda body: verdict(4, 2, 3, 3)) as srv:
        rc = main(
            [
                "score-answers",
                "--suite",
                str(SUITE),
                "--answers",
                str(p),
                "--metric",
                "judge",
                "--judge-url",
                srv.base_url,
                "--judge-model",
                "jm",
                "--no-judge-json-mode",
            ]
        )
    assert rc == 0 and "response_format" not in srv.requests[0]
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("layer1_01_bank_account"))
    assert line.split()[1:4] == ["layer1", f"{(3 + 1 + 2 + 2) / 12:.3f}", "no"]
    assert line.endswith("prec=4 reca=2 reas=3 proa=3")
