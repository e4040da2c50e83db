"""The ``langmem`` adapter (issue 27): the real LangMem SDK (memory store manager over LangGraph's
InMemoryStore) driven by a scripted OpenAI-compatible server on loopback (its LLM answers with
LangMem's ``Memory`` tool calls; ``/v1/embeddings`` are hashed bags of words), every non-loopback
connection refused; ``memeval run --system langmem:...`` end to end; without the SDK, one line."""

from __future__ import annotations

import importlib.util
import json
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from memeval.bench import lifelog
from memeval.cli import main
from memeval.errors import SystemCallError
from memeval.run import read_manifest, read_records
from memeval.systems.base import declared
from memeval.systems.registry import make_system
from memeval.testing.chat_stub import ScriptedChatServer, completion, tool_call

# found, not imported: importorskip would import langmem while collecting, in every xdist worker (~1.5 s each)
if importlib.util.find_spec("langmem") is None:
    pytest.skip("the langmem extra is not installed: pip install 'memeval[langmem]'", allow_module_level=True)

_HUMAN = re.compile(r"=+ Human Message =+\n\n(.*?)(?=\n\n=+ |\n</session_)", re.S)
_DATE = re.compile(r"This conversation took place on ([^\n]+?)\.\n")


class Extractor:
    """LangMem's LLM, scripted: every user line of the conversation becomes one memory (``date: text``),
    inserted with LangMem's ``Memory`` tool."""

    def __init__(self):
        self.calls = 0
        self.bodies: list[dict] = []

    def __call__(self, body: dict):
        self.calls += 1
        self.bodies.append(body)
        prompt = body["messages"][-1]["content"]
        date = _DATE.search(prompt)
        lines = _HUMAN.findall(prompt)
        calls = [
            tool_call("Memory", {"content": f"{date.group(1) if date else '?'}: {x}"}, f"c{i}")
            for i, x in enumerate(lines)
        ]
        return completion("", tool_calls=calls, usage=(100, 7))


@pytest.fixture
def loopback_only(monkeypatch):
    tried = []
    real = socket.socket.connect

    def connect(self, addr):
        if isinstance(addr, tuple) and addr[0] not in ("127.0.0.1", "::1", "localhost"):
            tried.append(addr)
            raise OSError(f"test: no network ({addr})")
        return real(self, addr)

    monkeypatch.setattr(socket.socket, "connect", connect)
    yield tried
    assert not tried, f"langmem tried to reach {tried}"


def _spec(srv, **kw) -> str:
    extra = "".join(f",{k}={v}" for k, v in kw.items())
    return f"langmem:llm_url={srv.base_url},llm_model=stub-llm,embed_model=stub-emb,embed_url={srv.base_url}{extra}"


def test_langmem_stores_dated_memories_and_search_finds_them(loopback_only):
    from memeval.bench.model import Session, Turn

    ex = Extractor()
    with ScriptedChatServer(ex) as srv:
        s = make_system(_spec(srv, k=2, max_tokens=300))
        s.reset()
        s.ingest(Session(1, "2023-05-20", (Turn(1, 1, "user", "My dentist is Dr Okafor.", "2023-05-20"),)))
        s.ingest(Session(2, "2023-06-20", (Turn(2, 2, "user", "I moved to Leeds last week.", "2023-06-20"),)))
        r = s.query("Who is my dentist Okafor?", "2023-07-01")
        stored = s.memories("core")
        s.close()
    assert ex.calls == 2 and all(b["max_tokens"] == 300 for b in ex.bodies)
    assert "This conversation took place on 2023-05-20." in ex.bodies[0]["messages"][-1]["content"]
    assert sorted(str(m) for m in stored) == [
        "[2023-05-20] 2023-05-20: My dentist is Dr Okafor.",
        "[2023-06-20] 2023-06-20: I moved to Leeds last week.",
    ]
    assert len(r.memories) == 2 and r.memories[0].content == "2023-05-20: My dentist is Dr Okafor."
    assert r.memories[0].timestamp == "2023-05-20"
    assert r.usage == {"llm_calls": 0, "embedding_calls": 1, "prompt_tokens": 0, "completion_tokens": 0}
    assert s.usage()["llm_calls"] == 2 and s.usage()["prompt_tokens"] == 200 and s.usage()["completion_tokens"] == 14
    assert s.params["k"] == 2 and s.params["threshold"] is None and declared(s).lists_memories


def test_langmem_llm_down_is_one_line(loopback_only):
    from memeval.bench.model import Session, Turn

    with ScriptedChatServer(lambda body: 400) as srv:
        s = make_system(_spec(srv, max_attempts=1))
        s.reset()
        with pytest.raises(SystemCallError, match=r"langmem ingest of session 1 failed \(\w+: Error code: 400"):
            s.ingest(Session(1, "2023-05-20", (Turn(1, 1, "user", "hello", "2023-05-20"),)))
        s.close()


def test_memeval_run_with_langmem_end_to_end(tmp_path, loopback_only):
    bench = lifelog.generate("tiny", 1, tmp_path / "bench")
    ex = Extractor()
    out = tmp_path / "run"
    with ScriptedChatServer(ex) as srv:
        code = main(
            [
                "run",
                "--bench",
                str(bench),
                "--system",
                _spec(srv, k=5),
                "--tiers",
                "core",
                "--out",
                str(out),
                "--no-progress",
            ]
        )
    assert code == 0
    man, recs = read_manifest(out), read_records(out)
    turns = [json.loads(x) for x in (Path(bench) / "turns_core.jsonl").read_text().splitlines()]
    sessions = {t["session_id"] for t in turns}
    assert man["status"] == "complete" and man["config"]["system"]["name"] == "langmem"
    assert man["config"]["system"]["version"].startswith("langmem-")
    assert man["system_usage"]["llm_calls"] == ex.calls == len(sessions)
    assert not [r for r in recs if r.get("error")] and all(len(r["memories"]) <= 5 for r in recs)
    said = {t["text"] for t in turns if t["speaker"] == "user"}
    returned = [m["text"].split(": ", 1)[1] for r in recs for m in r["memories"]]
    assert returned and set(returned) <= said
    assert sum(1 for r in recs if r["score"] and r["score"] > 0) >= 5


def test_without_the_extra_langmem_is_one_clear_line(tmp_path):
    code = (
        "import sys\n"
        "sys.modules['langmem'] = None  # as if the extra were not installed\n"
        "from memeval.cli import main\n"
        f"sys.exit(main(['run', '--bench', {str(tmp_path)!r}, '--system', "
        "'langmem:llm_url=http://127.0.0.1:9/v1,llm_model=m,embed_model=e', '--out', "
        + repr(str(tmp_path / "r"))
        + "]))\n"
    )
    lifelog.generate("tiny", 1, tmp_path / "bench")
    code = code.replace(repr(str(tmp_path)), repr(str(tmp_path / "bench")), 1)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert "install memeval[langmem]" in r.stderr and len(r.stderr.strip().splitlines()) == 1
