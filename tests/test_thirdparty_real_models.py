"""A third-party open-source system offline on the local models (issue 27): LangMem's memory store
manager (the real ``langmem`` SDK) with SmolLM2-135M as its LLM (llama.cpp's server, ``memeval
models serve``) and the local MiniLM as its embedder (in process), over the first exchange of one
session of the tiny bench and two questions. Plumbing, not quality: the run completes, every question
has a record without an error, LangMem's one LLM call per session is bounded by ``max_tokens`` and
counted, and the stored-memory dump answers. (A 135M model rarely produces LangMem's tool calls: what it stores
is not checked.)

Skipped with the reason without the local extra or the langmem extra; under CI (``CI=1``) a missing
local extra fails (``real_models.require_local``). The model server (``served``) is the session's one
(tests/conftest.py), shared with test_real_models.py."""

from __future__ import annotations

import importlib.util
import json
import shutil

import pytest

from memeval.run import read_manifest, read_records, run_system
from memeval.systems.registry import make_system

# found, not imported: importorskip would import langmem while collecting, in every xdist worker (~1.1 s each)
if importlib.util.find_spec("langmem") is None:
    pytest.skip("the langmem extra is not installed: pip install 'memeval[langmem]'", allow_module_level=True)

pytestmark = pytest.mark.xdist_group("real_models")  # beside the other real-model module: one server for both
# the 135M model runs to the cap (no tool call fits in it either way: what is stored is not checked): each token
# is ~25-30 ms of the one server thread; the check is that the cap holds at the server, whatever its value
MAX_TOKENS = 16


@pytest.fixture(scope="module")
def one_session(_tiny, tmp_path_factory):
    """The tiny bench's core tier cut to the first exchange (2 turns) of its first session and its first
    two questions (plumbing: what they ask need not be in it; LangMem's prompt is ~500 tokens before the
    session's, and each token is read by the one server thread)."""
    root = tmp_path_factory.mktemp("one") / "bench"
    shutil.copytree(_tiny[0], root)  # the tiny preset, seed 1 (the session's shared copy)
    turns = [json.loads(x) for x in (root / "turns_core.jsonl").read_text(encoding="utf-8").splitlines()]
    keep = [t for t in turns if t["session_id"] == turns[0]["session_id"]][:2]
    assert [t["speaker"] for t in keep] == ["user", "assistant"]
    (root / "turns_core.jsonl").write_text("".join(json.dumps(t) + "\n" for t in keep), encoding="utf-8")
    qs = [json.loads(x) for x in (root / "questions_core.jsonl").read_text(encoding="utf-8").splitlines()]
    mine = qs[:2]
    (root / "questions_core.jsonl").write_text("".join(json.dumps(q) + "\n" for q in mine), encoding="utf-8")
    return root, len(mine)


def test_langmem_runs_offline_on_the_local_models(served, one_session, tmp_path):
    url, model = served
    bench, n_questions = one_session
    spec = f"langmem:llm_url={url},llm_model={model},embed_model=local,k=3,max_tokens={MAX_TOKENS},timeout=1200"
    out = tmp_path / "run"
    rd = run_system(bench, spec, tiers=["core"], out=out, progress=False, verify=False)
    man, recs = read_manifest(rd), read_records(rd)
    assert man["status"] == "complete" and man["config"]["system"]["name"] == "langmem"
    assert man["config"]["system"]["params"]["max_tokens"] == MAX_TOKENS
    assert len(recs) == n_questions and [r.get("error") for r in recs] == [None] * n_questions
    usage = man["system_usage"]
    assert usage["llm_calls"] >= 1 and usage["prompt_tokens"] > 0
    assert 0 < usage["completion_tokens"] <= MAX_TOKENS * usage["llm_calls"]  # bounded at the server
    assert usage["embedding_calls"] >= n_questions  # each question embedded by the local MiniLM
    assert all(len(r["memories"]) <= 3 for r in recs)


def test_langmem_dump_answers_after_a_local_ingest(served, one_session):
    from memeval.bench.model import Session, Turn

    url, model = served
    s = make_system(f"langmem:llm_url={url},llm_model={model},embed_model=local,max_tokens={MAX_TOKENS},timeout=1200")
    s.reset()
    s.ingest(Session(1, "2025-06-18", (Turn(1, 1, "user", "My dentist is Dr Okafor in Halstead.", "2025-06-18"),)))
    stored = s.memories("core")
    assert isinstance(stored, list) and all(m.timestamp == "2025-06-18" for m in stored)
    assert s.usage()["llm_calls"] == 1
    s.close()
