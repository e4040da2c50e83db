"""A system's optional capabilities are declared (``systems.base``), read in one place (``declared``),
and a misspelled or mistyped one fails loudly before anything is asked."""

import threading
import time

import pytest

from memeval.errors import MemevalError, SystemContractError
from memeval.run import read_manifest, read_records, run_system
from memeval.systems import BUILTIN
from memeval.systems.base import BaseMemorySystem, Capabilities, Recall, declared
from memeval.systems.baselines import BM25, NoMemory, Oracle, Recent
from memeval.systems.context import LongContext
from memeval.systems.http import HttpSystem
from memeval.systems.hybrid import Hybrid
from memeval.systems.mem0 import Mem0
from memeval.systems.vector import Vector
from minibench import make_minibench


class Plain:
    """A system that does not subclass the base: the six required members only."""

    name, version, params = "plain", "1", {}

    def reset(self):
        pass

    def ingest(self, session):
        pass

    def query(self, question, asked_at):
        return Recall()


class Threads(BaseMemorySystem):
    """Records which thread asked each question, whether it was closed, and reports its usage."""

    name, version = "threads", "1"
    capabilities = Capabilities(concurrent_queries=True)

    def __init__(self):
        self.params, self.seen, self.closed_n = {}, set(), 0

    def reset(self):
        pass

    def ingest(self, session):
        pass

    def query(self, question, asked_at):
        self.seen.add(threading.get_ident())
        time.sleep(0.02)  # long enough that a pool of 4 hands questions to more than one worker
        return Recall()

    def usage(self):
        return {"llm_calls": 3}

    def close(self):
        self.closed_n += 1


class OneAtATime(Threads):
    capabilities = Capabilities()


@pytest.fixture
def bench(tmp_path):
    return make_minibench(tmp_path / "bench")


def test_every_built_in_system_subclasses_the_base_and_declares_capabilities():
    classes = [NoMemory, Oracle, Recent, BM25, LongContext, Vector, Hybrid, Mem0, HttpSystem]
    for cls in classes:
        assert issubclass(cls, BaseMemorySystem) and "capabilities" in vars(cls), cls.__name__
    built = {make().__class__ for name, make in BUILTIN.items() if name not in ("vector", "hybrid")}
    assert built <= set(classes)
    assert LongContext.capabilities.context_keep == "last"
    assert BM25.capabilities == Capabilities()


def test_the_http_adapter_declares_concurrency_idempotent_ingest_and_its_image_input():
    h = HttpSystem("http://127.0.0.1:9", images="inline")
    try:
        caps = declared(h).capabilities
        assert (caps.concurrent_queries, caps.idempotent_ingest, caps.image_input) == (True, True, "inline")
        assert declared(HttpSystem("http://127.0.0.1:9")).capabilities.image_input == "path"
    finally:
        h.close()


def test_a_plain_object_gets_every_default():
    d = declared(Plain())
    assert d.capabilities == Capabilities()
    assert d.close() is None and d.cancel() is None and d.warm() is None
    assert d.usage() is None and d.network_floor_ms() is None
    assert d.prepare is None and d.lists_memories is False
    with pytest.raises(SystemContractError, match="does not list its stored memories"):
        d.memories("core")


def test_a_misspelled_capability_method_fails_loudly_on_a_plain_object_and_on_a_subclass():
    class Typo(Plain):
        def clsoe(self):
            pass

    with pytest.raises(SystemContractError, match="'clsoe' is not a capability; did you mean 'close'"):
        declared(Typo())
    with pytest.raises(
        SystemContractError, match="'network_floor' is not a capability; did you mean 'network_floor_ms'"
    ):

        class Sub(OneAtATime):  # refused where the class is written
            def network_floor(self):
                return 1.0


def test_a_misspelled_capability_flag_fails_where_it_is_written():
    with pytest.raises(TypeError, match="concurent_queries"):
        Capabilities(concurent_queries=True)  # type: ignore[call-arg]
    with pytest.raises(SystemContractError, match="'image_input' must be one of"):
        Capabilities(image_input="inlne")  # type: ignore[arg-type]
    with pytest.raises(SystemContractError, match="'concurrent_queries' must be True or False"):
        Capabilities(concurrent_queries="yes")  # type: ignore[arg-type]


def test_a_flag_declared_the_old_flat_way_is_refused_with_the_new_way():
    class Flat(Plain):
        concurrent_queries = True

    with pytest.raises(SystemContractError, match=r"declare it as capabilities = Capabilities\(concurrent_queries="):
        declared(Flat())

    class Legacy(Plain):
        accepts_idempotency_key = True

    with pytest.raises(SystemContractError, match=r"Capabilities\(idempotent_ingest="):
        declared(Legacy())

    class WrongType(Plain):
        capabilities = {"concurrent_queries": True}

    with pytest.raises(SystemContractError, match="must be a memeval Capabilities"):
        declared(WrongType())


def test_an_async_twin_or_a_private_name_is_not_a_typo():
    class Twins(Plain):
        async def aquery(self, question, asked_at):
            return Recall()

        async def anetwork_floor_ms(self):
            return 1.0

        _clsoe = None

    assert declared(Twins()).capabilities == Capabilities()


def test_only_the_built_in_oracle_may_see_the_question():
    assert declared(Oracle()).prepare is not None

    class Peeker(Plain):
        def prepare(self, question):
            self.gold = question.gold_answer

    with pytest.raises(SystemContractError, match="only the built-in oracle may see the bench question"):
        declared(Peeker())

    class OracleCopy(Oracle):  # a subclass is another system: no privilege
        pass

    with pytest.raises(SystemContractError, match="only the built-in oracle"):
        declared(OracleCopy())


def test_a_python_system_with_a_misspelled_capability_is_refused_before_a_run_folder_exists(bench, tmp_path):
    with pytest.raises(MemevalError, match="'clsoe' is not a capability"):
        run_system(bench, "python:test_capabilities:_typo_factory", out=tmp_path / "run", progress=False)
    assert not (tmp_path / "run").exists()


def _typo_factory():
    class Typo(Plain):
        def clsoe(self):
            pass

    return Typo()


def test_the_runner_asks_in_parallel_only_when_declared_closes_once_and_records_usage(bench, tmp_path, monkeypatch):
    made = {}

    def make(spec, **_):
        made[spec] = Threads() if spec == "threads" else OneAtATime()
        return made[spec]

    monkeypatch.setattr("memeval.run.runner.make_system", make)
    for spec in ("threads", "one"):
        run = run_system(bench, spec, concurrency=4, out=tmp_path / spec, progress=False)
        assert len(read_records(run)) == 8 and made[spec].closed_n == 1
        assert read_manifest(run)["system_usage"] == {"llm_calls": 3}
    assert len(made["threads"].seen) > 1  # declared concurrent: asked from the pool
    assert len(made["one"].seen) == 1  # not declared: one question at a time, on the run's thread


def test_the_readme_system_declares_what_it_says():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    block = text.split("class MyMemory(BaseMemorySystem):", 1)[0].rsplit("```python\n", 1)[1]
    block += (
        "class MyMemory(BaseMemorySystem):" + text.split("class MyMemory(BaseMemorySystem):", 1)[1].split("```", 1)[0]
    )
    ns: dict = {}
    exec(block, ns)
    d = declared(ns["MyMemory"]())
    assert d.capabilities == Capabilities() and d.usage() is None and not d.lists_memories
