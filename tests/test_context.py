"""Reading budgets: ``context:tokens=N`` (the long-context reader baseline) and --context-max-tokens.

Token counts here are worked out by hand (approx-v1: a word of up to 4 characters is one token, each
punctuation mark one): a memory shows as ``[2026-01-05] u: aa bb cc dd`` = 9 tokens of date and speaker
(``[ 2026 - 01 - 05 ] u :``) + 4 words = 13.
"""

import json

from memeval.bench import Question, Turn, save_bench, write_questions, write_turns
from memeval.bench.model import Bench, Tier
from memeval.cli import main
from memeval.llm import ChatClient
from memeval.run import read_manifest, read_records, run_system
from memeval.scoring.judge import Judge, Reader
from memeval.testing.chat_stub import ScriptedChatServer
from minibench import make_minibench

VERDICT = json.dumps({"verdict": "correct", "evidence": "x"})
WORDS = ["aa bb cc dd", "ee ff gg hh", "ii jj kk ll"]


def _bench(root):
    turns = [Turn(i + 1, i + 1, "u", w, "2026-01-05") for i, w in enumerate(WORDS)]
    qs = [Question("Q1", "BASIC", "What came last?", "ll", evidence_turns=(3,))]
    write_turns(root / "turns.jsonl", turns)
    write_questions(root / "questions.jsonl", qs)
    save_bench(
        Bench(
            name="ctx",
            version="1",
            root=str(root),
            tiers=(Tier("core", "turns.jsonl", "questions.jsonl", n_turns=3, n_questions=1, n_tokens=39),),
        )
    )
    return root


def _reply(body):
    content = body["messages"][0]["content"]
    return "ll" if content.startswith("You answer a question") else VERDICT


def _memories_in(prompt: str) -> list[str]:
    block = prompt.split("Memories:\n")[1].split("\n\nQuestion:")[0]
    return [line.removeprefix("- ") for line in block.splitlines()]


def _answer(bench, system, out, **kw):
    with ScriptedChatServer(_reply) as srv:
        client = ChatClient(srv.base_url, "m", backoff=0.001)
        rd = run_system(
            bench, system, mode="answer", judge=Judge(client), reader=Reader(client), out=out, progress=False, **kw
        )
        prompts = [r["messages"][0]["content"] for r in srv.requests]
    return rd, [p for p in prompts if p.startswith("You answer a question")]


def test_long_context_reader_gets_the_last_n_tokens(tmp_path):
    bench = _bench(tmp_path / "b")
    rd, prompts = _answer(bench, "context:tokens=24", tmp_path / "r")
    # 24 tokens: the last turn whole (13), then 11 for the one before: 9 of date and speaker + its last 2 words
    assert _memories_in(prompts[0]) == ["[2026-01-05] u: gg hh", "[2026-01-05] u: ii jj kk ll"]
    (rec,) = read_records(rd)
    assert rec["memories_returned"] == ["[2026-01-05] u: gg hh", "[2026-01-05] u: ii jj kk ll"]
    assert rec["retrieved_turns"] == [2, 3]
    assert (rec["context_tokens"], rec["context_dropped_tokens"], rec["context_limit"]) == (24, 39 - 24, 24)
    assert rec["context_truncated"] is True and rec["score"] == 1.0
    rd, prompts = _answer(bench, "context:tokens=100", tmp_path / "r2")  # the whole haystack fits
    (rec,) = read_records(rd)
    assert len(_memories_in(prompts[0])) == 3 and rec["context_truncated"] is False
    assert (rec["context_tokens"], rec["context_dropped_tokens"]) == (39, 0)


def test_context_max_tokens_caps_what_the_reader_reads_not_what_is_recorded(tmp_path):
    bench = make_minibench(tmp_path / "b")
    full, p_full = _answer(bench, "bm25:k=5", tmp_path / "full", tiers=["core"])
    capped, p_cap = _answer(bench, "bm25:k=5", tmp_path / "cap", tiers=["core"], context_max_tokens=12)
    by_q = {r["qid"]: r for r in read_records(full)}
    assert read_manifest(full)["config_id"] != read_manifest(capped)["config_id"]
    assert "context_max_tokens" not in read_manifest(full)["config"]  # runs without a cap keep their config id
    n_cut = 0
    for rec, prompt in zip(read_records(capped), p_cap):
        before = by_q[rec["qid"]]
        assert rec["memories_returned"] == before["memories_returned"]  # the system's output is unchanged
        assert rec["retrieval_metrics"] == before["retrieval_metrics"]
        assert before["context_truncated"] is False and before["context_dropped_tokens"] == 0
        assert rec["context_limit"] == 12 and rec["context_tokens"] <= 12
        assert rec["context_tokens"] + rec["context_dropped_tokens"] == before["context_tokens"]
        read = _memories_in(prompt)
        first = before["memories_returned"][0]
        assert first.startswith(read[0]) and len(read) <= len(before["memories_returned"])  # best first, cut
        n_cut += rec["context_truncated"]
    assert n_cut >= 3  # every question whose memories exceed 12 tokens was cut


def test_cli_flag_and_bad_value(tmp_path, capsys):
    bench = _bench(tmp_path / "b")
    with ScriptedChatServer(_reply) as srv:
        args = ["run", "--bench", str(bench), "--system", "context:tokens=100", "--mode", "answer", "--no-progress"]
        args += ["--judge-url", srv.base_url, "--judge-model", "j", "--reader-url", srv.base_url]
        args += ["--reader-model", "r", "--out", str(tmp_path / "r"), "--context-max-tokens", "13"]
        assert main(args) == 0
    (rec,) = read_records(tmp_path / "r")
    # the newest end kept (the system reads from the end of the history): the last turn, whole
    assert (rec["context_tokens"], rec["context_dropped_tokens"], rec["context_limit"]) == (13, 26, 13)
    assert main(["run", "--bench", str(bench), "--system", "context:tokens=0", "--out", str(tmp_path / "x")]) == 1
    assert "tokens must be a positive number" in capsys.readouterr().err
    args = ["run", "--bench", str(bench), "--system", "bm25", "--context-max-tokens", "5", "--out", str(tmp_path / "y")]
    assert main(args) == 1 and "applies to --mode answer only" in capsys.readouterr().err
    assert not (tmp_path / "y").exists()
