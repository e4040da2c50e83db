"""memeval regrade: new grades for a run's stored answers and memories, never a system call."""

import json

import pytest

from memeval.analysis.aggregate import load_records
from memeval.cli import main
from memeval.llm import ChatClient
from memeval.run import read_manifest, read_records, run_system
from memeval.run.regrade import regrade_run
from memeval.scoring.judge import Judge, Reader
from memeval.systems.baselines import BM25
from memeval.systems.server import Faults, ReferenceServer
from memeval.testing.chat_stub import ScriptedChatServer
from minibench import STORY, make_minibench

GRADED = ("score", "verdict", "rule", "ungraded_reason", "retrieval_hit", "retrieval_metrics", "retrieval_source")
KEPT = ("answer", "memories_returned", "memories", "retrieved_turns", "latency_ms", "error", "attempts")


def _by_key(recs):
    return {(r["tier"], r["qid"], r["epoch"]): r for r in recs}


@pytest.fixture
def bench(tmp_path):
    return make_minibench(tmp_path / "bench")


def test_regrade_over_http_run_calls_no_system_and_keeps_memory_fields(bench, tmp_path, capsys):
    with ReferenceServer(BM25(k=2)) as srv:
        src = run_system(
            bench, srv.url, mode="dry", out=tmp_path / "src", progress=False, http_options={"max_attempts": 1}
        )
        srv.faults = Faults(error_rate=1.0)  # from now on every request fails
        before = srv.stats()
        assert main(["regrade", str(src), "--mode", "dry", "--out", str(tmp_path / "re")]) == 0
        assert srv.stats() == before  # not one request reached the system
    assert capsys.readouterr().out.strip() == str(tmp_path / "re")
    old, new = _by_key(read_records(src)), _by_key(read_records(tmp_path / "re"))
    assert old.keys() == new.keys() and len(new) == 8
    assert all(r["error"] is None for r in new.values())
    for k, r in new.items():
        assert {f: r[f] for f in GRADED + KEPT} == {f: old[k][f] for f in GRADED + KEPT}
        assert r["run_id"] == "re" and r["mode"] == "dry"
    # the memories kept their content apart from date and speaker (a re-grade reads the content)
    mem = next(m for r in new.values() for m in r["memories"] if "Biscuit" in m["text"])
    story = {text: (date, speaker) for _, date, speaker, text in STORY}
    assert (mem["timestamp"], mem["speaker"]) == story[mem["text"]]
    assert not mem["text"].startswith("[")
    man = read_manifest(tmp_path / "re")
    assert man["regraded_from"]["run_id"] == "src" and man["regraded_from"]["grader"]["name"] == "dry"
    assert man["regraded_from"]["path"] == str(src.resolve()) and man["status"] == "complete"
    assert [s["name"] for s in man["scorers"]] == ["retrieval", "dry"]


def test_regrade_with_the_same_grader_gives_identical_scores(bench, tmp_path):
    src = run_system(bench, "recent:tokens=30", mode="dry", out=tmp_path / "src", progress=False)
    re = regrade_run(src, "dry", out=tmp_path / "re")
    old, new = _by_key(read_records(src)), _by_key(read_records(re))
    assert {k: [r[f] for f in GRADED] for k, r in old.items()} == {k: [r[f] for f in GRADED] for k, r in new.items()}
    # the last few turns answer one question and miss others: the run is not trivially all-correct
    assert {r["score"] for r in old.values()} == {0.0, 1.0, None}


def test_records_written_before_the_memories_field_are_regraded_from_their_strings(bench, tmp_path):
    src = run_system(bench, "bm25:k=2", mode="dry", out=tmp_path / "src", progress=False)
    path = src / "records.jsonl"
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    path.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "memories"}) + "\n" for r in lines))
    re = regrade_run(src, "dry", out=tmp_path / "re")
    new = read_records(re)
    assert len(new) == len(lines) and all(r["memories"] is None and r["score"] is not None for r in new[:3])
    # analysis reads the old strings as memories whose text still carries the display metadata
    df = load_records(re)
    first = df.row(0, named=True)
    assert first["memories"] == [{"text": m, "timestamp": None, "speaker": None} for m in first["memories_returned"]]
    assert first["memories_returned"][0].startswith("[2026-")


def _judge_reply(verdict):
    def reply(body):
        content = body["messages"][0]["content"]
        if content.startswith("You answer a question"):
            return "Biscuit"
        return json.dumps({"verdict": verdict, "evidence": "quoted"})

    return reply


def test_answer_regrade_with_a_new_judge_reuses_the_stored_answers(bench, tmp_path):
    with ScriptedChatServer(_judge_reply("correct")) as a:
        client = ChatClient(a.base_url, "judge-a", backoff=0.001)
        src = run_system(
            bench,
            "bm25",
            tiers=["core"],
            mode="answer",
            judge=Judge(client),
            reader=Reader(client),
            out=tmp_path / "src",
            progress=False,
        )
    with ScriptedChatServer(_judge_reply("wrong")) as b:
        re = regrade_run(
            src, "answer", judge=Judge(ChatClient(b.base_url, "judge-b", backoff=0.001)), out=tmp_path / "re"
        )
        prompts = [r["messages"][0]["content"] for r in b.requests]
    old, new = _by_key(read_records(src)), _by_key(read_records(re))
    assert [r["answer"] for r in old.values()] == [r["answer"] for r in new.values()] == ["Biscuit"] * 4
    assert [r["score"] for r in old.values()] == [1.0] * 4 and [r["score"] for r in new.values()] == [0.0] * 4
    assert len(prompts) == 4 and not any(p.startswith("You answer a question") for p in prompts)  # no reader call
    man = read_manifest(re)
    assert man["config"]["grader"]["judge"]["model"] == "judge-b"
    assert man["regraded_from"]["grader"]["judge"]["model"] == "judge-a"


def test_answer_regrade_of_a_run_without_answers_needs_a_reader(bench, tmp_path, capsys):
    src = run_system(bench, "bm25", tiers=["core"], mode="dry", out=tmp_path / "src", progress=False)
    with ScriptedChatServer(_judge_reply("correct")) as s:
        code = main(
            [
                "regrade",
                str(src),
                "--mode",
                "answer",
                "--judge-url",
                s.base_url,
                "--judge-model",
                "j",
                "--out",
                str(tmp_path / "re"),
            ]
        )
        err = capsys.readouterr().err
        assert code == 1 and len(err.strip().splitlines()) == 1 and "needs a reader" in err
        assert not (tmp_path / "re").exists()
        re = regrade_run(
            src,
            "answer",
            judge=Judge(ChatClient(s.base_url, "j", backoff=0.001)),
            reader=Reader(ChatClient(s.base_url, "r", backoff=0.001)),
            out=tmp_path / "re",
        )
        n_reader = sum(r["messages"][0]["content"].startswith("You answer a question") for r in s.requests)
    assert n_reader == 4 and all(r["answer"] == "Biscuit" and r["score"] == 1.0 for r in read_records(re))


def test_regrade_refuses_its_own_source_folder_and_an_existing_run(bench, tmp_path, capsys):
    src = run_system(bench, "bm25", tiers=["core"], mode="dry", out=tmp_path / "src", progress=False)
    assert main(["regrade", str(src), "--mode", "dry", "--out", str(src)]) == 1
    assert "new folder" in capsys.readouterr().err
    regrade_run(src, "dry", out=tmp_path / "re")
    assert main(["regrade", str(src), "--mode", "dry", "--out", str(tmp_path / "re")]) == 1
    assert "already holds a run" in capsys.readouterr().err


def test_memory_regrade_with_the_same_judge_gives_identical_grades(bench, tmp_path):
    def reply(body):  # a deterministic judge: correct when the memories hold the gold's key word
        content = body["messages"][0]["content"]
        text = content.split("<<<")[1] if "<<<" in content else content
        ok = any(w in text for w in ("Biscuit", "Okafor"))
        return json.dumps({"verdict": "correct" if ok else "wrong", "evidence": "Biscuit" if ok else "nothing"})

    with ScriptedChatServer(reply) as s:
        judge = Judge(ChatClient(s.base_url, "j", backoff=0.001))
        src = run_system(bench, "bm25:k=1", mode="memory", judge=judge, out=tmp_path / "src", progress=False)
        re = regrade_run(src, "memory", judge=judge, out=tmp_path / "re")
    fields = ("score", "verdict", "ungraded_reason", "judge_evidence", "answer")
    old, new = _by_key(read_records(src)), _by_key(read_records(re))
    assert {k: [r[f] for f in fields] for k, r in old.items()} == {k: [r[f] for f in fields] for k, r in new.items()}
    assert {r["score"] for r in old.values()} == {0.0, 1.0, None}  # some right, some wrong, ABSTAIN not gradable
    assert read_manifest(re)["config"]["grader"] == read_manifest(src)["config"]["grader"]
