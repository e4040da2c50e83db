"""The Scorer protocol and the one Judge protocol."""

import pytest

from memeval.bench.model import Question
from memeval.llm import ChatClient
from memeval.multiturn.judge import ChatJudge
from memeval.run import read_manifest, read_records, run_system
from memeval.scoring import scorers
from memeval.scoring.judge import Judge, JudgeProtocol, Reader
from memeval.scoring.rubric import RubricJudge
from memeval.systems.base import Memory
from minibench import make_minibench

CLIENT = ChatClient("http://127.0.0.1:9", "m", api_key_env=None, temperature=0)


def test_every_model_backed_grader_is_one_judge_protocol():
    for judge in (Judge(CLIENT), RubricJudge(CLIENT), ChatJudge(CLIENT)):
        assert isinstance(judge, JudgeProtocol)
        ident = judge.identity()
        assert ident["model"] == "m" and ident["prompt_hash"].startswith("sha256:")
    assert not isinstance(Reader(CLIENT), JudgeProtocol)  # a reader answers; it does not grade


@pytest.mark.parametrize(
    "mode,names",
    [
        ("dry", ["retrieval", "dry"]),
        ("memory", ["retrieval", "judge-memory"]),
        ("answer", ["retrieval", "judge-answer", "official"]),
    ],
)
def test_each_mode_names_its_scorers(mode, names):
    found = scorers.scorers_for(mode, Judge(CLIENT), Reader(CLIENT))
    assert [s.spec()["name"] for s in found] == names
    assert all(isinstance(s, scorers.Scorer) for s in found)
    for s in found:
        assert s.spec()["writes"] == list(s.writes) and s.spec()["version"]


def test_the_dry_scorer_grades_memory_content_not_its_date_or_speaker():
    q = Question("Q1", "TEMPORAL", "When did they move?", "2022-04-15", evidence_turns=(1,))
    dated = Memory("We moved last spring.", "2022-04-15", "Ana")  # the gold is only in the date stamp
    out = scorers.run_scorers(scorers.scorers_for("dry"), q, scorers.Response(None, (dated,), (1,)))
    assert out["score"] == 0.0 and out["retrieval_hit"] is True
    assert out["answer"] == "[2022-04-15] Ana: We moved last spring."


def test_a_run_manifest_lists_the_scorers_that_wrote_its_records(tmp_path):
    rd = run_system(make_minibench(tmp_path / "b"), "bm25", tiers=["core"], out=tmp_path / "r", progress=False)
    specs = read_manifest(rd)["scorers"]
    assert [s["name"] for s in specs] == ["retrieval", "dry"] and specs[1]["version"] == "dry-v2"
    written = {f for s in specs for f in s["writes"]}
    assert all(r["score"] is not None or r["ungraded_reason"] for r in read_records(rd))
    assert {"score", "verdict", "rule", "retrieval_hit", "retrieval_metrics"} <= written
