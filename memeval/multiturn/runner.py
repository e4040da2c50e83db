"""Run agents over a suite: replay every sample (three runs each), grade, write one record per sample.

Records are appended and flushed as each sample finishes; an agent's failure becomes a record with
its reason (``incomplete``), never a crash or a dropped sample.
"""

from __future__ import annotations

from typing import Callable, Iterable, Iterator

from ..errors import InputError
from .agents import Agent
from .config import DEFAULT_CONFIG, GraderConfig
from ..systems.base import MemorySystem
from .crosssession import run_user_topic, run_user_topic_memory
from .domain import LOOKUP_TOOLS, TOOLS, WRITE_TOOLS, World
from .grade import run_sample
from .judge import Judge
from .records import RecordWriter, read_records, record_key, result_record
from .replay import StateExtractor
from .sample import Sample
from .suite import Suite
from .tools import FixtureTools, LiveTools, ToolSource

__all__ = ["fixture_tools", "live_tools", "load_tool_runner", "registry", "run_suite", "READ_ONLY_TOOLS"]

READ_ONLY_TOOLS = frozenset(TOOLS) - WRITE_TOOLS


def registry(suite: Suite, sample: Sample) -> frozenset[str]:
    """The tool names of the sample's config snapshot (the built-in registry when it lists none)."""
    tools = (suite.configs.get(sample.replay.config_snapshot) or {}).get("tools")
    return frozenset(tools) if isinstance(tools, dict) and tools else frozenset(TOOLS)


def fixture_tools(suite: Suite) -> Callable[[Sample], ToolSource]:
    """Replay mode: the recorded returns only; a tool outside the registry is the agent's fault."""
    return lambda s: FixtureTools(
        suite.fixtures[s.replay.tool_fixture], READ_ONLY_TOOLS, LOOKUP_TOOLS, registry(suite, s)
    )


def live_tools(
    suite: Suite, world: World | None = None, call: Callable[[str, dict], object] | None = None
) -> Callable[[Sample], ToolSource]:
    """Health-check mode: call the (possibly changed) live tools and compare with the recording.
    ``call(name, args)`` runs the user's own tools (see :func:`load_tool_runner`); default: the
    built-in world's."""
    run = call or (world or suite.world()).call
    return lambda s: LiveTools(run, suite.fixtures.get(s.replay.tool_fixture), known=registry(suite, s))


def load_tool_runner(spec: str) -> Callable[[str, dict], object]:
    """``module:attr`` -> a callable ``(name, args) -> result``: the attribute itself, or what it
    returns when called without arguments (a factory)."""
    import importlib
    import inspect

    mod, _, attr = spec.partition(":")
    if not mod or not attr:
        raise InputError("<command line>", None, "--tool-runner", f"{spec!r} is not 'module:function'")
    try:
        obj = getattr(importlib.import_module(mod), attr)
    except (ImportError, AttributeError) as e:
        raise InputError("<command line>", None, "--tool-runner", f"cannot load {spec}: {e}") from None
    try:
        takes_two = len(inspect.signature(obj).parameters) >= 2
    except (TypeError, ValueError):
        takes_two = True
    return obj if takes_two else obj()


def iter_results(
    suite: Suite,
    agent: Agent,
    tools_factory,
    cfg: GraderConfig = DEFAULT_CONFIG,
    *,
    judge: Judge | None = None,
    extractor: StateExtractor | None = None,
    extractor_trusted: bool = True,
    sample_ids: Iterable[str] | None = None,
    memory: MemorySystem | None = None,
) -> Iterator:
    """Results per sample; user x topic units go through ``memory`` when one is given (the earlier
    session ingested, the later one fed what it returns), else the earlier session is replayed
    into the same conversation."""
    wanted = set(sample_ids) if sample_ids is not None else None
    by_session = {}
    for s in suite.samples:
        by_session.setdefault(s.session_ref, []).append(s)
    kw = dict(judge=judge, extractor=extractor, extractor_trusted=extractor_trusted)
    for s in suite.samples:
        if wanted is not None and s.sample_id not in wanted:
            continue
        if s.unit_type == "user_topic":
            priors = [
                p
                for ref in s.prior_sessions
                for p in sorted(by_session.get(ref, []), key=lambda x: x.sample_id)
                if p.unit_type != "turn"
            ]
            if memory is not None:
                yield run_user_topic_memory(s, priors, agent, tools_factory, memory, cfg, **kw).with_prior
            else:
                yield run_user_topic(s, priors, agent, tools_factory, cfg, **kw).with_prior
        else:
            yield run_sample(s, agent, tools_factory, cfg, **kw)


def run_suite(
    suite: Suite,
    agent: Agent,
    out_path=None,
    cfg: GraderConfig = DEFAULT_CONFIG,
    *,
    tools_factory=None,
    run_id: str = "",
    **kw,
) -> list[dict]:
    """Records for every sample; appended to ``out_path`` (JSONL) as they finish when given.

    A rerun into the same file resumes: a torn last line is dropped, and samples that already have a
    record for this agent and grading config are not run again (their records are returned as read).
    """
    tools_factory = tools_factory or fixture_tools(suite)
    records = []
    writer = RecordWriter(out_path) if out_path else None
    name = getattr(agent, "name", type(agent).__name__)  # as result records name it
    done: dict[tuple, dict] = {}
    if writer and writer.path.stat().st_size:
        for r in read_records(writer.path):
            if r.get("agent") == name and r.get("config_id") == cfg.config_id:
                done[record_key(r)] = r
    todo = [s.sample_id for s in suite.samples if (s.sample_id, name, cfg.config_id) not in done]
    new: dict[str, dict] = {}
    try:
        for res in iter_results(suite, agent, tools_factory, cfg, sample_ids=todo if done else None, **kw):
            rec = result_record(res, run_id)
            new[rec["sample_id"]] = rec
            if writer:
                writer.write(rec)
    finally:
        if writer:
            writer.close()
    for s in suite.samples:
        rec = new.get(s.sample_id) or done.get((s.sample_id, name, cfg.config_id))
        if rec is not None:
            records.append(rec)
    return records
