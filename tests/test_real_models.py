"""Real models, offline (issue 26): the local extra's chat model (SmolLM2-135M-Instruct, llama.cpp) and
embedder (all-MiniLM-L6-v2 int8, onnxruntime), served by ``memeval models serve`` on a free loopback
port with one thread. These tests check the plumbing, never the model's wording: every question
graded with a schema verdict, usage on the records, a multi-turn run that reports its state, judges
and leniency on a real judge, and what an English-only embedder does on the bench's axes.

Without the extra (``pip install 'memeval[local]'``) the module is skipped with the reason; under CI
(``CI=1``) a missing extra is a failure, so CI cannot pass without meeting a real model.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import httpx
import numpy as np
import pytest

from memeval.cli import main
from memeval.llm import ChatClient
from memeval.models.catalog import EMBEDDER
from memeval.run import read_manifest, read_records, run_system
from memeval.scoring.judge import Judge, Reader
from real_models import require_local

# one question each: answer mode on 3 (plumbing: each question costs a reader and a judge prompt, ~300 tokens each
# read by a 135M model on one thread; the embedder test below covers the axes on the full tier)
AXES = ("BASIC", "TEMPORAL", "UPDATE")
# one retrieved turn per reader prompt: at k=3 the memories were ~60% of its 280-400 tokens (plumbing, not recall)
RETRIEVER = "bm25:k=1"
# the reader's cap in answer mode (its replies ran to 14-58 tokens; ~25 ms a token generated, and the judge then reads
# them): the run grades whatever the reader says, cut or not; the judge keeps its 256 (its JSON verdict must parse)
READER_TOKENS = 16
LIMITS = ["--agent-max-tokens", "64"]  # a 135M model rambles to its cap: keep the multi-turn run short


# one xdist worker runs this module and test_thirdparty_real_models.py: the model server (``served``, a session
# fixture in conftest.py) starts once for both
pytestmark = pytest.mark.xdist_group("real_models")


@pytest.fixture(scope="module")
def bench(_tiny, tmp_path_factory):
    """The tiny preset, seed 1: a copy of the session's shared one (a run writes its cache into the bench)."""
    return shutil.copytree(_tiny[0], tmp_path_factory.mktemp("real") / "bench")


@pytest.fixture(scope="module")
def five(bench, tmp_path_factory):
    """The tiny bench's core tier cut to one question of each of :data:`AXES`."""
    root = tmp_path_factory.mktemp("five") / "bench"
    shutil.copytree(bench, root)
    path = root / "questions_core.jsonl"
    qs = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    keep = [next(q for q in qs if q["axis"] == a) for a in AXES]
    path.write_text("".join(json.dumps(q) + "\n" for q in keep), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def answered(served, five, tmp_path_factory):
    """The answer-mode run; its judge keeps its replies in a model-call cache (``judge.client.cache``)."""
    from memeval.callcache import ModelCache

    url, model = served
    root = tmp_path_factory.mktemp("answer")
    judge = Judge(ChatClient(url, model, role="judge", cache=ModelCache(root / "cache")))
    reader = Reader(ChatClient(url, model, role="reader", max_tokens=READER_TOKENS))
    out = root / "run"
    rd = run_system(five, RETRIEVER, tiers=["core"], mode="answer", judge=judge, reader=reader, out=out, verify=False)
    return rd, judge


def test_answer_mode_grades_every_question_with_schema_verdicts_and_usage(answered):
    rd, judge = answered
    recs = read_records(rd)
    m = read_manifest(rd)
    assert len(recs) == len(AXES) and m["status"] == "complete"
    assert [r["ungraded_reason"] for r in recs if r["score"] is None] == []
    assert m["grading"]["graded"] == len(AXES) and m["grading"]["unparseable"] == 0
    assert judge.client.forms[0] == "json_object"  # llama.cpp's server took the schema (json_schema refused)
    for r in recs:
        roles = {u["role"]: u for u in r["usage"]}
        assert set(roles) == {"reader", "judge"}
        assert all(u["calls"] == 1 and u["prompt_tokens"] > 0 and u["completion_tokens"] > 0 for u in roles.values())
        assert roles["judge"]["completion_tokens"] <= 256 and roles["reader"]["completion_tokens"] <= READER_TOKENS


def test_judges_and_leniency_run_on_a_real_judge(served, answered, five, tmp_path, capsys):
    url, model = served
    rd, judge = answered
    again = tmp_path / "regraded"
    # the regrade asks the run's judge the run's judge prompts (temperature 0): its replies come from the run's
    # model-call cache, the real judge's replies byte for byte (the leniency probes below are new calls)
    args = ["regrade", str(rd), "--mode", "answer", "--out", str(again), "--bench", str(five)]
    assert main(args + ["--judge-url", url, "--judge-model", model, "--cache", str(judge.client.cache.folder)]) == 0
    cached = read_manifest(again).get("model_cache") or {}
    assert cached["hits"] == len(AXES) and cached["misses"] == 0, cached
    assert read_manifest(again)["grading"]["graded"] == len(AXES)
    assert main(["judges", str(rd), str(again)]) == 0
    assert "kappa" in capsys.readouterr().out
    probes = tmp_path / "probes.jsonl"
    assert main(["leniency", "build", str(five), "--out", str(probes), "--tier", "core", "--max-per-trap", "1"]) == 0
    lines = probes.read_text(encoding="utf-8").splitlines(keepends=True)
    probes.write_text("".join(lines[:3]), encoding="utf-8")  # 3 of the 6 traps: each probe is a judge prompt
    n = len(lines[:3])
    verdicts = tmp_path / "verdicts.jsonl"
    args = ["leniency", "grade", str(probes), "--judge-url", url, "--judge-model", model, "--concurrency", "1"]
    assert main(args + ["--out", str(verdicts)]) == 0
    rows = [json.loads(line) for line in verdicts.read_text(encoding="utf-8").splitlines()]
    assert n > 0 and len(rows) == n
    assert sum(r["score"] is not None for r in rows) >= n / 2  # the schema verdicts are readable


def test_multi_turn_with_live_tools_completes_with_a_reported_state(served, tmp_path, capsys):
    url, model = served
    suite, out = tmp_path / "suite", tmp_path / "records.jsonl"
    # one task session (2 turns; the smallest 2-session suite has 6): each turn is two growing agent prompts
    assert main(["multiturn", "generate", "-o", str(suite), "--sessions", "1", "--cross-session", "0"]) == 0
    args = ["multiturn", "run", str(suite), "-o", str(out), "--agent", "chat", "--base-url", url, "--model", model]
    assert main(args + ["--live-tools", "--runs", "1", *LIMITS]) == 0
    recs = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(recs) == 1
    assert [r["verdict"] for r in recs if r["verdict"] in ("incomplete", "undetermined")] == []
    for r in recs:
        turns = r["runs"][0]["trace"]
        assert turns and all(t["state_source"] == "state_report" and t["state"] for t in turns)
        (usage,) = r["runs"][0]["usage"]  # the agent's turns and state reports, one role
        assert usage["role"] == "agent" and usage["calls"] == 2 * len(turns) and usage["completion_tokens"] > 0


def _recall(run_dir, axis: str, metric: str = "turn_recall_any@10") -> float:
    vals = [
        r["retrieval_metrics"][metric] for r in read_records(run_dir) if r["axis"] == axis and r["retrieval_metrics"]
    ]
    assert vals, f"no {axis} questions with evidence"
    return sum(vals) / len(vals)


def test_an_english_embedder_wins_on_paraphrase_and_loses_across_languages(bench, tmp_path):
    """Tiny preset, largest tier: vector and hybrid (the embedder in process; the served endpoint has its
    own test below) rank evidence above bm25 on PARAPHRASE; vector below bm25 on XLING_QUERY
    (all-MiniLM-L6-v2 is English-only)."""
    require_local()
    cache = tmp_path / "emb.sqlite"
    # the full tier's haystack (all 420 turns: on the core or small tier bm25 ranks PARAPHRASE evidence as high as
    # the embedder) and only the questions of the two axes read below (15 of 82: each question is ranked and graded
    # apart, so their metrics are the same as in the whole run; the cut no longer matches the bench's content hash)
    axes = ("PARAPHRASE", "XLING_QUERY")
    cut = shutil.copytree(bench, tmp_path / "bench")
    path = cut / "questions_full.jsonl"
    qs = [q for q in path.read_text(encoding="utf-8").splitlines(keepends=True) if json.loads(q)["axis"] in axes]
    path.write_text("".join(qs), encoding="utf-8")

    def run(spec: str) -> Path:
        return run_system(cut, spec, tiers=["full"], runs_root=tmp_path / "runs", progress=False, verify=False)

    bm25 = run("bm25")
    vector = run(f"vector:model=local,cache={cache}")
    hybrid = run(f"hybrid:model=local,cache={cache}")  # the turns come back from the cache
    assert read_manifest(vector)["config"]["system"]["params"]["model"] == EMBEDDER.id
    assert read_manifest(hybrid)["config"]["system"]["spec"] == f"hybrid:model={EMBEDDER.id}"
    # ranked (ndcg@10): on the tiny preset's 5 PARAPHRASE questions bm25's v2 tokens find as many evidence
    # turns by rank 10 as the embedder (recall@10 0.8 each); the embedder ranks them higher (0.48, 0.73 vs 0.42)
    para = {
        name: _recall(rd, "PARAPHRASE", "turn_ndcg@10")
        for name, rd in (("bm25", bm25), ("vector", vector), ("hybrid", hybrid))
    }
    assert para["vector"] > para["bm25"] and para["hybrid"] > para["bm25"], para
    assert _recall(vector, "XLING_QUERY") < _recall(bm25, "XLING_QUERY")


def test_the_served_embeddings_are_the_in_process_ones(served):
    """``/v1/embeddings`` of ``memeval models serve`` through the embeddings client: one unit vector per
    text, the same as the in-process embedder's (to float rounding), with usage."""
    from memeval.models.embedder import OnnxEmbedder
    from memeval.systems.embeddings import EmbeddingClient

    url, _ = served
    texts = ["Where did I park the car?", "The car is on level 3.", "Wo habe ich geparkt?"]
    client = EmbeddingClient(url, EMBEDDER.id, api_key_env=None)
    remote = client.embed(texts)
    local = OnnxEmbedder().encode(texts)
    assert remote.shape == local.shape == (3, 384) and client.prompt_tokens > 0
    assert np.allclose(remote, local, atol=1e-5)


def test_the_embedder_batches_by_length_and_keeps_the_input_order():
    """Texts run in batches of similar length (less padding): each row is the text's own vector, the
    same as embedding it alone (no padding at all), whatever batch it ran in. Two embedders share the
    process's one ONNX session; each counts its own tokens."""
    from memeval.models.embedder import OnnxEmbedder

    require_local()
    texts = ["a car", "The car is parked on level 3 of the garage by the station, next to the lift. " * 3, "yes", "Hi"]
    texts += ["Where did I park the car last Tuesday evening?", ""]
    emb = OnnxEmbedder(batch=2)
    together = emb.encode(texts)
    one = OnnxEmbedder()
    alone = np.concatenate([one.encode([t]) for t in texts])
    assert together.shape == (len(texts), 384)
    assert np.allclose(together, alone, atol=1e-5)
    assert emb.tokens == sum(int(np.count_nonzero(emb._tok.encode(t).attention_mask)) for t in texts)
    assert emb._session is one._session and one.tokens == emb.tokens  # one session, two counts


@pytest.fixture(scope="module")
def app_model():
    """The chat model of ``memeval models serve``'s app (``make_app``), built in this process: the
    server's own settings, read from its object."""
    from llama_cpp.server import app as server_app

    from memeval.models.serve import make_app

    require_local()
    make_app(chat=True, embed=False)
    llm = server_app._llama_proxy._current_model  # type: ignore[union-attr]
    yield llm
    llm.close()


def test_the_chat_server_reads_only_the_new_part_of_a_prompt_it_has_seen_the_start_of(app_model):
    """``memeval models serve``'s chat model keeps a prompt cache: after prompts A then B, a prompt that
    starts like A is read from where it leaves A (B in between: llama.cpp's own reuse keeps only the
    last prompt); the cached states hold one row of logits, not one per token."""
    import llama_cpp

    from memeval.models.serve import PROMPT_CACHE_BYTES

    llm = app_model
    assert llm.cache is not None and llm.cache.capacity_bytes == PROMPT_CACHE_BYTES and not llm._logits_all

    def read(text: str) -> int:
        """Prompt tokens the model evaluated for one call."""
        before = llama_cpp.llama_perf_context(llm._ctx.ctx).n_p_eval
        llm.create_chat_completion([{"role": "user", "content": text}], max_tokens=2, temperature=0)
        return llama_cpp.llama_perf_context(llm._ctx.ctx).n_p_eval - before

    a = "Grade this. The user parked the car on level 3 of the station garage, beside the lift, on Tuesday."
    first = read(a + " Question one?")
    read("Something else entirely: list three colours.")
    again = read(a + " Question two?")
    assert first > 40 and 0 < again < 12, (first, again)  # without the cache: first minus the template (~25)
    assert all(state.scores.shape[0] == 1 for state in llm.cache.cache_state.values())
    assert llm.scores.shape == (1, llm.n_vocab())  # the host copy of the logits: one row, not n_batch (512)


def test_the_chat_server_applies_a_json_grammar_only_to_a_refused_token_with_the_same_reply(app_model):
    """``memeval models serve``'s chat model at temperature 0 with a JSON ``response_format``: the greedy
    token when the grammar allows it, the grammar over every candidate when not (both happen in one
    reply), and the reply is llama-cpp-python's own (its chain applies the grammar at every token)."""
    llm = app_model
    ask = [{"role": "user", "content": "Say hello."}]

    def reply() -> str:
        llm.reset()  # each reply reads the whole prompt in one batch (the same logits to the last bit)
        out = llm.create_chat_completion(ask, max_tokens=6, temperature=0, response_format={"type": "json_object"})
        return out["choices"][0]["message"]["content"]

    cache, served_sampler = llm.cache, llm._init_sampler
    before = dict(served_sampler.taken)
    llm.set_cache(None)
    try:
        fast = reply()
        taken = {k: n - before[k] for k, n in served_sampler.taken.items()}
        del llm._init_sampler  # llama-cpp-python's chain
        assert reply() == fast and fast.startswith("{"), fast
    finally:
        llm.set_cache(cache)
        llm._init_sampler = served_sampler
    assert taken["greedy"] > 0 and taken["grammar"] > 0 and sum(taken.values()) == 6, taken


def test_a_real_model_reply_is_served_from_the_model_call_cache(served, tmp_path):
    """One real call stored, then the same request from a new client (a new command): the cached bytes,
    no call (the server is gone from the client's path: a transport that fails any request)."""
    from memeval.callcache import ModelCache

    url, model = served
    cache = ModelCache(tmp_path / "cache")
    ask = [{"role": "user", "content": "Reply with a JSON object holding one short word as its answer."}]
    schema = {"type": "object", "properties": {"answer": {"type": "string", "maxLength": 12}}, "required": ["answer"]}
    first = ChatClient(url, model, role="judge", cache=cache).chat(ask, schema=schema, max_tokens=48)

    def refuse(request):
        raise AssertionError("a cached request reached the server")

    warm = ChatClient(url, model, role="judge", cache=cache, transport=httpx.MockTransport(refuse))
    again = warm.chat(ask, schema=schema, max_tokens=48)
    assert first.finish_reason == "stop" and not first.cached
    assert again.cached and again.raw == first.raw and again.text == first.text
    assert cache.counts()["hits"] == 1 and cache.counts()["stored"] == 1


def test_attribution_runs_on_a_real_reader_and_judge(answered, five, tmp_path):
    """Plumbing only (issue 28): the real model as the run's reader and judge under the conditions; each
    miss gets one cause, or none with the reason (a condition the judge could not grade)."""
    from memeval.analysis.attribution import MISS_CAUSES, attribute_run

    rd, run_judge = answered
    # cheap: the run cut to its first question, short replies (the run's reader model and prompt, capped),
    # a small budget, no stored dump: four model calls, all sent (a judge without the run's model-call cache)
    judge = Judge(ChatClient(run_judge.client.base_url, run_judge.client.model, role="judge"))
    one = tmp_path / "one"
    shutil.copytree(rd, one)
    lines = (one / "records.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (one / "records.jsonl").write_text(lines[0], encoding="utf-8")
    reader = Reader(ChatClient(judge.client.base_url, judge.client.model, role="reader", max_tokens=READER_TOKENS))
    out = attribute_run(
        one,
        judge=judge,
        reader=reader,
        out=tmp_path / "a",
        bench_dir=five,
        budget=64,
        all_conditions=True,
        reingest=False,
    )
    recs = read_records(out)
    summary = read_manifest(out)["attribution"]
    assert len(recs) == 1 and recs[0]["score"] is not None and summary["conditions"] == ["run", "oracle", "context"]
    for r in recs:
        if r["score"] is None:
            continue
        asked = r["attribution_answers"]  # every graded question: the real reader asked under each condition
        assert set(asked) == {"oracle", "context"}
        assert all(a["answer"] is not None or a.get("ungraded_reason") for a in asked.values())
        if r["score"] == 1.0:
            assert r["attribution"] == "correct"
        else:
            assert r["attribution"] in MISS_CAUSES or r["attribution_note"]
    assert summary["attributed_misses"] == sum(r["attribution"] in MISS_CAUSES for r in recs)
