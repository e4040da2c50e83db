"""mem0 (the optional extra): the open-source ``mem0ai`` Memory run over the tiny preset against a
loopback OpenAI-compatible stub (chat for mem0's fact extraction, ``/v1/embeddings`` for its
embedder), with every non-loopback connection refused; and the base install never imports mem0ai."""

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from memeval.analysis.aggregate import load_records
from memeval.analysis.costs import cost_table
from memeval.bench import lifelog
from memeval.errors import MemevalError
from memeval.run import read_manifest, read_records, run_system
from memeval.testing.chat_stub import ScriptedChatServer


class Stub:
    """mem0's LLM extracts every user line of the new messages as one fact (the server hashes embeddings)."""

    def __init__(self):
        self.chats = 0

    def __call__(self, body):
        self.chats += 1
        prompt = body["messages"][-1]["content"]
        new = prompt.split("## New Messages", 1)[1].split("\n## ", 1)[0]
        facts = [line[len("user: ") :] for line in new.splitlines() if line.startswith("user: ")]
        reply = json.dumps({"memory": [{"text": f} for f in facts]})
        return {
            "id": "c",
            "object": "chat.completion",
            "model": body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 7, "total_tokens": 107},
        }


@pytest.fixture
def loopback_only(monkeypatch):
    """Any connection to a host other than loopback fails the test (telemetry, model downloads)."""
    tried = []
    real = socket.socket.connect

    def connect(self, addr):
        if isinstance(addr, tuple) and addr[0] not in ("127.0.0.1", "::1", "localhost"):
            tried.append(addr)
            raise OSError(f"test: no network ({addr})")
        return real(self, addr)

    monkeypatch.setattr(socket.socket, "connect", connect)
    yield tried
    assert not tried, f"mem0 tried to reach {tried}"


def test_mem0_runs_the_tiny_preset_against_loopback_stubs(tmp_path, loopback_only, monkeypatch):
    monkeypatch.setenv("MEM0_DIR", str(tmp_path / "mem0home"))
    bench = lifelog.generate("tiny", 1, tmp_path / "bench")
    sessions = {json.loads(x)["session_id"] for x in (Path(bench) / "turns_core.jsonl").read_text().splitlines()}
    stub = Stub()
    with ScriptedChatServer(stub) as srv:
        spec = f"mem0:llm_url={srv.base_url},llm_model=stub-llm,embed_model=stub-emb,k=5"
        rd = run_system(bench, spec, tiers=["core"], out=tmp_path / "run", progress=False)
    recs = read_records(rd)
    man = read_manifest(rd)
    assert man["status"] == "complete" and man["config"]["system"]["name"] == "mem0"
    assert man["config"]["system"]["version"].startswith("mem0ai-")
    assert len(recs) == 63 and not [r for r in recs if r.get("error")]
    # one mem0 add (one extraction call) per session; every search is one embedding call
    usage = man["system_usage"]
    assert usage["llm_calls"] == stub.chats == len(sessions)
    assert usage["embedding_calls"] == srv.embedding_calls > 0
    assert usage["prompt_tokens"] >= 100 * len(sessions) and usage["completion_tokens"] == 7 * len(sessions)
    assert all(r["system_calls"] == 1 and r["system_completion_tokens"] == 0 for r in recs)
    # the summary's cost table shows them beside the cost (not priced: mem0 names no model per call)
    row = cost_table(load_records(rd)).row(0, named=True)
    assert row["system_calls"] == 1 and row["system_tokens"] == sum(r["system_prompt_tokens"] for r in recs) / 63
    # what mem0 stored is what the users said, and search finds it
    said = {json.loads(x)["text"] for x in (Path(bench) / "turns_core.jsonl").read_text().splitlines()}
    returned = [m["text"] for r in recs for m in r["memories"]]
    assert returned and set(returned) <= said
    assert all(len(r["memories"]) <= 5 for r in recs)
    assert sum(1 for r in recs if r["score"] and r["score"] > 0) >= 5


def test_mem0_llm_down_at_ingest_stops_the_run_with_one_line(tmp_path, loopback_only, monkeypatch):
    monkeypatch.setenv("MEM0_DIR", str(tmp_path / "mem0home"))  # not the temp folder every xdist worker shares
    bench = lifelog.generate("tiny", 1, tmp_path / "bench")
    stub = Stub()
    with ScriptedChatServer(lambda body: stub(body) if "input" in body else 400) as srv:
        spec = f"mem0:llm_url={srv.base_url},llm_model=stub-llm,embed_model=stub-emb"
        with pytest.raises(MemevalError, match=r"mem0 add of session \S+ failed .*rerun the same command"):
            run_system(bench, spec, tiers=["core"], out=tmp_path / "run", progress=False)
    assert read_manifest(tmp_path / "run")["status"] == "error"


def test_mem0_needs_its_models_named():
    with pytest.raises(MemevalError, match="needs llm_url, llm_model and embed_model"):
        from memeval.systems.registry import make_system

        make_system("mem0:llm_model=x")


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_the_base_install_never_imports_mem0():
    r = _python(
        "import sys\n"
        "import memeval, memeval.cli, memeval.run, memeval.workbench, memeval.systems.mem0\n"
        "from memeval.systems.registry import make_system\n"
        "make_system('bm25')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mem0', 'qdrant_client', 'openai')))\n"
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


def test_without_the_extra_mem0_is_one_clear_line():
    r = _python(
        "import sys\n"
        "sys.modules['mem0'] = None  # as if mem0ai were not installed\n"
        "from memeval.systems.registry import make_system\n"
        "from memeval.errors import MemevalError\n"
        "try:\n"
        "    make_system('mem0:llm_url=http://127.0.0.1:9/v1,llm_model=m,embed_model=e')\n"
        "except MemevalError as e:\n"
        "    print(e)\n"
    )
    assert r.returncode == 0, r.stderr
    assert "pip install 'memeval[mem0]'" in r.stdout
