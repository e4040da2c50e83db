"""vector and hybrid retrieval over the tiny preset against the loopback embeddings stub."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from memeval.bench import lifelog
from memeval.bench.io import load_bench, read_questions, read_turns
from memeval.bench.model import haystacks_of
from memeval.errors import MemevalError
from memeval.run import read_manifest, read_records, run_system
from memeval.errors import SystemCallError
from memeval.systems.baselines import bm25_tokens
from memeval.systems.registry import make_system
from memeval.testing.chat_stub import ScriptedChatServer, hashed_embedding

SECRET = "sk-test-not-a-real-key-93f1"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return lifelog.generate("tiny", 1, tmp_path_factory.mktemp("vec") / "bench")


@pytest.fixture
def stub():
    with ScriptedChatServer(lambda body: 404) as srv:
        yield srv


def _cosines(turns, question: str) -> dict[int, float]:
    """Each turn's cosine to the question, computed here from the stub's own vectors."""
    q = np.array(hashed_embedding(question))
    return {t.turn_id: float(np.array(hashed_embedding(t.text)) @ q) for t in turns}


def test_vector_over_tiny_ranks_by_cosine_and_records_turn_ids(tiny, stub, tmp_path):
    cache = tmp_path / "emb.sqlite"
    rd = run_system(
        tiny,
        f"vector:k=5,model=stub-embed,base_url={stub.base_url},cache={cache}",
        tiers=["core"],
        out=tmp_path / "run",
        progress=False,
    )
    recs = read_records(rd)
    assert read_manifest(rd)["status"] == "complete"
    bench = load_bench(tiny)
    tier = bench.tier("core")
    questions = {q.id: q for q in read_questions(Path(tiny) / tier.questions_path("main"))}
    hay = haystacks_of(read_turns(Path(tiny) / tier.turns_file))
    assert len(recs) == len(questions) and not any(r.get("error") for r in recs)
    for r in recs[:10]:
        cos = _cosines([t for s in hay[r["haystack"]] for t in s.turns], questions[r["qid"]].text_to_ask)
        got = [cos[t] for t in r["retrieved_turns"]]
        assert len(got) == 5 and got == pytest.approx(sorted(cos.values(), reverse=True)[:5], abs=1e-5), r["qid"]
    with_evidence = [r for r in recs if r.get("retrieval_metrics")]
    assert with_evidence and any(r["retrieval_metrics"]["turn_recall_any@5"] > 0 for r in with_evidence)
    distinct = len({t.text for ss in hay.values() for s in ss for t in s.turns})
    sent = sum(len(b["input"]) for b in stub.embedding_requests)
    assert distinct <= sent <= distinct + len(questions)  # each turn text embedded once (batched per session)
    assert all(len(b["input"]) <= 64 and b["model"] == "stub-embed" for b in stub.embedding_requests)


def test_second_run_issues_no_embedding_call(tiny, tmp_path):
    cache = tmp_path / "emb.sqlite"
    runs = []
    for i in range(2):  # a new server (a new port) each time: the cache is keyed by model and text
        with ScriptedChatServer(lambda body: 404) as srv:
            spec = f"vector:k=4,model=stub-embed,base_url={srv.base_url},cache={cache}"
            runs.append(run_system(tiny, spec, tiers=["core"], out=tmp_path / f"r{i}", progress=False))
            calls = srv.embedding_calls
        assert (calls > 0) if i == 0 else (calls == 0), (i, calls)
    first, second = ({(r["qid"]): r["retrieved_turns"] for r in read_records(rd)} for rd in runs)
    assert first == second and len(first) > 10


def test_a_different_model_is_not_served_from_the_cache(tiny, stub, tmp_path):
    cache = tmp_path / "emb.sqlite"
    for model in ("a", "b"):
        make = make_system(f"vector:k=3,model={model},base_url={stub.base_url},cache={cache}")
        before = stub.embedding_calls
        make.client.embed(["one text", "another text"])
        assert stub.embedding_calls == before + 1
        make.close()


def test_hybrid_fuses_bm25_and_vector_by_reciprocal_rank(tiny, stub, tmp_path):
    cache = tmp_path / "emb.sqlite"
    common = f"model=stub-embed,base_url={stub.base_url},cache={cache}"
    rd = run_system(tiny, f"hybrid:k=5,depth=20,{common}", tiers=["core"], out=tmp_path / "h", progress=False)
    hy = {r["qid"]: r["retrieved_turns"] for r in read_records(rd)}
    vec = run_system(tiny, f"vector:k=20,{common}", tiers=["core"], out=tmp_path / "v", progress=False)
    bm = run_system(tiny, "bm25:k=20", tiers=["core"], out=tmp_path / "b", progress=False)
    dense = {r["qid"]: r["retrieved_turns"] for r in read_records(vec)}
    sparse = {r["qid"]: r["retrieved_turns"] for r in read_records(bm)}
    assert set(hy) == set(dense) and not any(r.get("error") for r in read_records(rd))
    differs = 0
    for qid, got in hy.items():
        score: dict[int, float] = {}
        for ranking in (sparse[qid], dense[qid]):
            for pos, tid in enumerate(ranking):
                score[tid] = score.get(tid, 0.0) + 1 / (61 + pos)
        best = sorted(score.values(), reverse=True)
        assert [round(score[t], 12) for t in got] == [round(s, 12) for s in best[:5]], qid
        differs += got != dense[qid][:5] and got != sparse[qid][:5]
    assert differs > 0  # the fusion is neither ranking alone
    assert read_manifest(rd)["config"]["system"]["params"]["rrf_k"] == 60


def test_key_only_in_the_header(tiny, stub, tmp_path, monkeypatch):
    monkeypatch.setenv("EMBED_KEY_FOR_TEST", SECRET)
    spec = f"vector:k=3,model=m,base_url={stub.base_url},cache={tmp_path / 'c.sqlite'},key_env=EMBED_KEY_FOR_TEST"
    rd = run_system(tiny, spec, tiers=["core"], out=tmp_path / "run", progress=False)
    assert stub.embedding_headers and all(h["authorization"] == f"Bearer {SECRET}" for h in stub.embedding_headers)
    for f in [*rd.rglob("*"), tmp_path / "c.sqlite"]:
        if f.is_file():
            assert SECRET.encode() not in f.read_bytes(), f


def test_transient_failures_are_retried_and_lasting_ones_are_reasons(stub, tmp_path):
    sys_ = make_system(f"vector:k=2,model=m,base_url={stub.base_url},cache=none")
    sys_.client.policy = type(sys_.client.policy)(3, 0.01)
    stub.embedding_faults = [503, 429]
    v = sys_.client.embed(["retried text"])
    assert stub.embedding_calls == 3 and v.shape == (1, 256)
    assert np.allclose(v[0], hashed_embedding("retried text"))
    stub.embedding_faults = [500, 500, 500]
    with pytest.raises(SystemCallError, match=r"gave up after 3 attempts \(HTTP 500\)"):
        sys_.client.embed(["never embedded"])
    stub.embedding_faults = [400]
    with pytest.raises(SystemCallError, match="HTTP 400"):
        sys_.client.embed(["refused"])
    assert stub.embedding_calls == 7  # a 400 is not retried


def test_a_failing_endpoint_stops_the_run_with_one_clear_error(tiny, tmp_path):
    with ScriptedChatServer(lambda body: 404) as srv:
        srv.embedding_faults = [400] * 50
        with pytest.raises(MemevalError, match="embeddings at http://127.0.0.1"):
            run_system(tiny, f"vector:model=m,base_url={srv.base_url},cache=none", tiers=["core"], out=tmp_path / "r")


@pytest.mark.parametrize(
    "spec,message",
    [
        ("vector:k=3", "needs an embeddings endpoint and model"),
        ("vector:model=m,base_url=ftp://x", "base_url must be http"),
        ("vector:model=m,base_url=http://u:secret@127.0.0.1:9/v1", "no credentials in base_url"),
        ("vector:model=m,base_url=http://127.0.0.1:9/v1,index=faiss", "index must be 'exact' or 'usearch'"),
        ("hybrid:k=3,colour=red", "unknown parameter .colour.; hybrid takes: k=integer, rrf_k=integer"),
    ],
)
def test_bad_specs_are_one_clear_error(spec, message, monkeypatch):
    monkeypatch.delenv("MEMEVAL_EMBED_URL", raising=False)
    monkeypatch.delenv("MEMEVAL_EMBED_MODEL", raising=False)
    with pytest.raises(MemevalError, match=message):
        make_system(spec)


def test_cli_bad_spec_exits_2_with_one_line(tiny, tmp_path):
    p = subprocess.run(
        [sys.executable, "-m", "memeval", "run", "--bench", str(tiny), "--system", "vector:k=3", "--no-progress"],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        cwd=tmp_path,
    )
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.strip().count("\n") == 0 and "MEMEVAL_EMBED_URL" in p.stderr


def test_endpoint_and_model_from_the_environment(stub, tmp_path, monkeypatch):
    monkeypatch.setenv("MEMEVAL_EMBED_URL", stub.base_url)
    monkeypatch.setenv("MEMEVAL_EMBED_MODEL", "env-model")
    s = make_system(f"vector:k=2,cache={tmp_path / 'c.sqlite'}")
    assert s.params == {"k": 2, "model": "env-model", "base_url": stub.base_url, "index": "exact"}
    s.client.embed(["x"])
    assert stub.embedding_requests[-1]["model"] == "env-model"


def test_usearch_index_agrees_with_exact_on_the_tiny_tier(tiny, stub, tmp_path):
    cache = tmp_path / "emb.sqlite"
    got = {}
    for index in ("exact", "usearch"):
        spec = f"vector:k=5,model=m,base_url={stub.base_url},cache={cache},index={index}"
        rd = run_system(tiny, spec, tiers=["core"], out=tmp_path / index, progress=False)
        got[index] = {r["qid"]: r["retrieved_turns"] for r in read_records(rd)}
    overlap = [len(set(got["exact"][q]) & set(got["usearch"][q])) / 5 for q in got["exact"]]
    assert sum(overlap) / len(overlap) >= 0.9


def test_the_base_install_does_not_import_the_ann_library(stub, tmp_path):
    code = (
        "import sys; from memeval.systems.registry import make_system; "
        f"s = make_system('vector:k=2,model=m,base_url={stub.base_url},cache=none'); "
        "s.client.embed(['a b']); print(json.dumps(sorted(m for m in sys.modules if 'usearch' in m)))"
    )
    out = subprocess.run([sys.executable, "-c", "import json; " + code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []


def test_stub_vectors_follow_shared_words():
    a, b, c = (np.array(hashed_embedding(t)) for t in ("red kayak trip", "the red kayak", "tax forms due"))
    assert a @ b > 0.5 > abs(a @ c)
    assert bm25_tokens("red kayak")  # the BM25 half sees the same words
