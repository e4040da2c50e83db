"""The ``graphiti`` adapter (issue 27): the real graphiti-core on its embedded Kuzu driver, embedding
with the local MiniLM in process (``embed_model=local``), its LLM a scripted OpenAI-compatible server
on loopback that answers Graphiti's extraction schemas (entities: the capitalised names of the
episode; facts: one per user line), every non-loopback connection refused; ``memeval run --system
graphiti:...`` end to end; an unparseable reply counted, never a crash; without the SDK, one line.

SmolLM2-135M (the local chat model) is not used here: each ``add_episode`` is at least three LLM
calls of ~2,200-token prompts under a JSON-schema grammar, and on this project's shared 2-core
machine the first of them had not returned after 8 minutes (README, third-party systems)."""

from __future__ import annotations

import importlib.util
import json
import re
import socket
import sys
from pathlib import Path

import pytest

from memeval.bench import lifelog
from memeval.bench.model import Session, Turn
from memeval.cli import main
from memeval.models.catalog import EMBEDDER, INSTALL, missing
from memeval.run import read_manifest, read_records
from memeval.systems.base import declared
from memeval.systems.registry import make_system
from memeval.testing.chat_stub import ScriptedChatServer, completion
from minibench import make_minibench

# found, not imported: importorskip would import graphiti_core while collecting, in every xdist worker (~1.5 s each)
if importlib.util.find_spec("graphiti_core") is None:
    pytest.skip("the graphiti extra is not installed: pip install 'memeval[graphiti]'", allow_module_level=True)

_NAME = re.compile(r"\b[A-Z][a-z]{2,}(?: [A-Z][a-z]{2,})*\b")
_REF = re.compile(r"<REFERENCE_TIME>\n(\S+ \S+)")


def _lines(prompt: str) -> list[str]:
    """The episode's user lines as the prompt quotes them (``user: ...``)."""
    return [m[len("user: ") :] for m in re.findall(r"^user: .*$", prompt, re.M)]


class GraphitiLLM:
    """Graphiti's LLM, scripted by the schema it asks for (``response_format.schema.title``)."""

    def __init__(self, garble: int = 0):
        self.titles: list[str] = []
        self.garble = garble  # the first N replies are prose, not JSON

    def __call__(self, body: dict):
        schema = (body.get("response_format") or {}).get("schema") or {}
        title = schema.get("title", "")
        self.titles.append(title)
        prompt = body["messages"][-1]["content"]
        if self.garble > 0:
            self.garble -= 1
            return completion("I think there are some entities here.", usage=(100, 8))
        if title == "ExtractedEntities":
            names = sorted({n for line in _lines(prompt) for n in _NAME.findall(line) if n not in ("My", "The", "And")})
            out: dict = {
                "extracted_entities": [{"name": "user", "entity_type_id": 0}]
                + [{"name": n, "entity_type_id": 0} for n in names]
            }
        elif title == "ExtractedEdges":
            ref = _REF.search(prompt)
            when = ref.group(1).replace(" ", "T") if ref else None
            facts = []
            for line in _lines(prompt):
                names = [n for n in _NAME.findall(line) if n not in ("My", "The", "And")]
                if names:
                    facts.append({"source_entity_name": "user", "target_entity_name": names[0], "relation_type": "MENTIONS",
                                  "fact": line, "valid_at": when, "invalid_at": None, "episode_indices": [0]})  # fmt: skip
            out = {"edges": facts}
        elif title == "SummarizedEntities":
            out = {"summaries": []}
        else:
            out = {}
        return completion(json.dumps(out), usage=(100, 8))


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
    assert not tried, f"graphiti tried to reach {tried}"


@pytest.fixture(autouse=True)
def local_embedder():
    if missing(EMBEDDER):
        pytest.skip(f"the local embedder is not installed: {INSTALL}")


def _spec(srv, **kw) -> str:
    extra = "".join(f",{k}={v}" for k, v in kw.items())
    return f"graphiti:llm_url={srv.base_url},llm_model=stub-llm,embed_model=local,schema_form=json_object,coroutines=1{extra}"


def test_graphiti_dates_facts_by_the_session_and_search_finds_them(loopback_only):
    llm = GraphitiLLM()
    with ScriptedChatServer(llm) as srv:
        s = make_system(_spec(srv, k=3, threshold=0.0))
        s.reset()
        s.ingest(
            Session(
                1, "2023/05/20 (Sat) 09:30", (Turn(1, 1, "user", "My dentist is Dr Okafor.", "2023/05/20 (Sat) 09:30"),)
            )
        )
        s.ingest(Session(2, "2023-06-20", (Turn(2, 2, "user", "I moved to Leeds in June.", "2023-06-20"),)))
        r = s.query("Who is my dentist?", "2023-07-01")
        stored = s.memories("core")
        usage = s.usage()
        bodies = list(srv.requests)
        s.close()
    assert {b["response_format"]["type"] for b in bodies} == {"json_object"} and all(
        b["max_tokens"] <= 1024 for b in bodies
    )
    facts = {
        m.content: m.timestamp for m in stored if m.content in ("My dentist is Dr Okafor.", "I moved to Leeds in June.")
    }
    assert facts == {
        "My dentist is Dr Okafor.": "2023-05-20T09:30:00",
        "I moved to Leeds in June.": "2023-06-20T00:00:00",
    }
    episodes = [m.content for m in stored if m.content.startswith("user: ")]
    assert episodes == ["user: My dentist is Dr Okafor.", "user: I moved to Leeds in June."]
    assert r.memories and r.memories[0].content == "My dentist is Dr Okafor." and len(r.memories) <= 3
    assert r.usage["embedding_calls"] >= 1 and r.usage["llm_calls"] == 0
    assert (
        usage["llm_calls"] == len(bodies)
        and usage["prompt_tokens"] == 100 * len(bodies)
        and usage["llm_unparseable"] == 0
    )
    assert s.params["k"] == 3 and s.params["threshold"] == 0.0 and declared(s).lists_memories


def test_unparseable_replies_are_counted_and_store_nothing(loopback_only):
    llm = GraphitiLLM(garble=100)  # every reply is prose
    with ScriptedChatServer(llm) as srv:
        s = make_system(_spec(srv, threshold=0.0))
        s.reset()
        s.ingest(Session(1, "2023-05-20", (Turn(1, 1, "user", "My dentist is Dr Okafor.", "2023-05-20"),)))
        stored = s.memories("core")
        usage = s.usage()
        s.close()
    assert usage["llm_unparseable"] == usage["llm_calls"] == len(llm.titles) > 0
    assert [m.content for m in stored] == ["user: My dentist is Dr Okafor."]  # the episode, no fact


def test_an_undated_session_is_one_line(loopback_only):
    from memeval.errors import MemevalError

    with ScriptedChatServer(GraphitiLLM()) as srv:
        s = make_system(_spec(srv))
        s.reset()
        with pytest.raises(MemevalError, match=r"session 7's date 'sometime' does not read as a date"):
            s.ingest(Session(7, "sometime", (Turn(1, 7, "user", "hello", "sometime"),)))
        s.close()


def test_memeval_run_with_graphiti_end_to_end(tmp_path, loopback_only):
    # the hand-written minibench's core tier (4 sessions, 6 turns, 4 questions): each session is several
    # Graphiti LLM and embedding calls, lifelog's tiny core (8 sessions, 96 turns, 63 questions) ~6x the CPU
    bench = make_minibench(tmp_path / "bench")
    llm = GraphitiLLM()
    out = tmp_path / "run"
    with ScriptedChatServer(llm) as srv:
        args = ["run", "--bench", str(bench), "--system", _spec(srv, k=5, threshold=0.0), "--tiers", "core"]
        assert main([*args, "--out", str(out), "--no-progress"]) == 0
    man, recs = read_manifest(out), read_records(out)
    turns = [json.loads(x) for x in (Path(bench) / "turns_core.jsonl").read_text().splitlines()]
    assert man["status"] == "complete" and man["config"]["system"]["name"] == "graphiti"
    assert man["config"]["system"]["version"].startswith("graphiti-core-")
    assert man["system_usage"]["llm_calls"] == len(llm.titles) > 0
    assert not [r for r in recs if r.get("error")] and all(len(r["memories"]) <= 5 for r in recs)
    said = {t["text"] for t in turns if t["speaker"] == "user"}
    returned = [m["text"] for r in recs for m in r["memories"]]
    assert returned and set(returned) <= said


def test_without_the_extra_graphiti_is_one_clear_line(tmp_path, capsys, monkeypatch):
    from incli import memeval_cli

    lifelog.generate("tiny", 1, tmp_path / "bench")
    monkeypatch.setitem(sys.modules, "graphiti_core", None)  # as if the extra were not installed (in process)
    spec = "graphiti:llm_url=http://127.0.0.1:9/v1,llm_model=m,embed_model=e"
    r = memeval_cli(capsys, "run", "--bench", tmp_path / "bench", "--system", spec, "--out", tmp_path / "r")
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert "install memeval[graphiti]" in r.stderr and len(r.stderr.strip().splitlines()) == 1
