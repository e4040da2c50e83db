import json

from memeval.bench.model import Question
from memeval.llm import ChatClient
from memeval.run import read_manifest, read_records, run_system
from memeval.scoring.judge import Judge, Reader
from memeval.testing.chat_stub import ScriptedChatServer
from minibench import make_minibench

Q = Question("Q9", "STALE", "Where does the user live now?", "Lyon", stale_answer="Paris", evidence_turns=(3,))


def test_judge_verdicts_evidence_and_failures():
    replies = iter(
        [
            '{"verdict": "correct", "evidence": "moved to Lyon"}',
            'Sure: {"verdict": "partial"}',  # no evidence: discarded
            "I think it is fine",  # no verdict
            500,
            500,
            500,  # endpoint down: ungraded after retries
        ]
    )
    with ScriptedChatServer(lambda body: next(replies)) as srv:
        j = Judge(ChatClient(srv.base_url, "judge-m", backoff=0.001))
        v = j.grade(Q, "They moved to Lyon in May")
        assert (v.score, v.verdict, v.evidence) == (1.0, "correct", "moved to Lyon")
        assert j.grade(Q, "x").ungraded_reason == "verdict without evidence discarded"
        assert j.grade(Q, "x").ungraded_reason == "judge reply has no valid verdict"
        v = j.grade(Q, "x")
        assert v.score is None and v.ungraded_reason.startswith("judge failed:")
        prompt = srv.requests[0]["messages"][0]["content"]
        assert "Paris" in prompt and "They moved to Lyon in May" in prompt and srv.requests[0]["temperature"] == 0
        assert j.identity()["prompt_hash"].startswith("sha256:") and j.identity()["model"] == "judge-m"
    abstain = Question("Q0", "ABSTAIN", "?", "", expect="no_memory")
    assert j.grade(abstain, "x", kind="memory").ungraded_reason == "not gradable in memory mode"


def test_judge_verdicts_score_one_half_zero():
    """The published credit: correct 1, partial 0.5 (half, not any other fraction), wrong 0."""
    replies = iter(
        [
            '{"verdict": "partial", "evidence": "says it is not known"}',
            '{"verdict": "Partial ", "evidence": "unsure"}',  # case and spaces are not the verdict
            '{"verdict": "wrong", "evidence": "Paris"}',
            '{"verdict": "correct", "evidence": "Lyon"}',
        ]
    )
    with ScriptedChatServer(lambda body: next(replies)) as srv:
        j = Judge(ChatClient(srv.base_url, "judge-m", backoff=0.001))
        got = [(v.score, v.verdict) for v in (j.grade(Q, "x") for _ in range(4))]
    assert got == [(0.5, "partial"), (0.5, "partial"), (0.0, "wrong"), (1.0, "correct")]


def test_answer_mode_run_reader_then_judge_ungraded_is_not_zero(tmp_path):
    bench = make_minibench(tmp_path / "b")

    def reply(body):
        content = body["messages"][0]["content"]
        if content.startswith("You answer a question"):
            return "Biscuit" if "beagle" in content.split("Question:")[-1] else "It was never mentioned."
        if "Question: Who is the user's dentist?" in content:
            return 503  # judge down for this question
        ok = "Biscuit" in content.split("<<<")[1]
        return json.dumps({"verdict": "correct" if ok else "wrong", "evidence": "Biscuit" if ok else "never mentioned"})

    with ScriptedChatServer(reply) as srv:
        client = ChatClient(srv.base_url, "m", backoff=0.001, max_attempts=2)
        rd = run_system(
            bench,
            "bm25",
            tiers=["core"],
            mode="answer",
            judge=Judge(client),
            reader=Reader(client),
            out=tmp_path / "r",
            progress=False,
        )
    recs = {r["qid"]: r for r in read_records(rd)}
    assert (
        recs["Q2"]["answer"] == "Biscuit" and recs["Q2"]["score"] == 1.0 and recs["Q2"]["judge_evidence"] == "Biscuit"
    )
    assert recs["Q1"]["score"] is None and recs["Q1"]["ungraded_reason"].startswith("judge failed")
    assert recs["Q3"]["score"] == 0.0 and recs["Q3"]["verdict"] == "wrong"
    grader = read_manifest(rd)["config"]["grader"]
    assert grader["judge"]["prompt"] == "judge_v1" and grader["reader"]["prompt"] == "reader_v1"
    from memeval.analysis.aggregate import load_records, overall_table

    row = overall_table(load_records(rd)).row(0, named=True)
    assert row["ungraded"] == 1 and row["graded"] == 3  # the ungraded question is not counted as 0


def test_cli_answer_mode_keys_only_in_headers(tmp_path, monkeypatch):
    from pathlib import Path

    from memeval.cli import main

    bench = make_minibench(tmp_path / "b")
    monkeypatch.setenv("JUDGE_KEY", "sk-judge-SECRET-1")
    monkeypatch.setenv("READER_KEY", "sk-reader-SECRET-2")

    def reply(body):
        content = body["messages"][0]["content"]
        if content.startswith("You answer a question"):
            return "Biscuit"
        return json.dumps({"verdict": "wrong", "evidence": "Biscuit"})

    with ScriptedChatServer(reply) as srv:
        out = tmp_path / "run"
        assert (
            main(
                [
                    "run",
                    "--bench",
                    bench,
                    "--system",
                    "bm25",
                    "--tiers",
                    "core",
                    "--mode",
                    "answer",
                    "--judge-url",
                    srv.base_url,
                    "--judge-model",
                    "j",
                    "--judge-key-env",
                    "JUDGE_KEY",
                    "--reader-url",
                    srv.base_url,
                    "--reader-model",
                    "r",
                    "--reader-key-env",
                    "READER_KEY",
                    "--out",
                    str(out),
                    "--no-progress",
                ]
            )
            == 0
        )
    auth = sorted({h["authorization"] for h in srv.headers})
    assert auth == ["Bearer sk-judge-SECRET-1", "Bearer sk-reader-SECRET-2"]
    assert len(read_records(out)) == 4
    for f in Path(out).rglob("*"):
        text = f.read_text()
        assert "SECRET" not in text, f
