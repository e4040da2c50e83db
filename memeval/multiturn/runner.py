"""The runner: replay a sample ``cfg.runs`` times and grade it (:func:`run_sample`), run a user x
topic unit across sessions (:func:`run_user_topic`, :func:`run_user_topic_memory`), and run agents
over a suite, one record per sample (:func:`run_suite`).

Records are appended and flushed as each sample finishes (the shared JSONL store,
:class:`memeval.atomic.JsonlAppender`, never through a symbolic link), by one writer at a time (a
``flock`` on ``.NAME.lock`` beside the file: a second writer is refused with one line); an agent's
failure becomes a record with its reason (``incomplete``), never a crash or a dropped sample. A memory
system that refuses or cannot be reached stops the run with one line (:class:`MemoryUnavailable`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Iterable, Iterator, Sequence, TypedDict

from pathlib import Path

from ..atomic import JsonlAppender, LinkRefused, WriterLock
from ..errors import MemevalError
from ..llm import metered, usage_entries
from ..scoring.judge import JudgeProtocol
from ..errors import SystemCallError
from ..systems.base import MemorySystem, Recall
from .agents import Agent
from .config import DEFAULT_CONFIG, GraderConfig
from .crosssession import (
    CrossSessionResult,
    memory_message,
    memory_outcome,
    retrieval_outcome,
    retrieved_needs,
    session_from_messages,
)
from .grade import RunGrade, SampleResult, combine_runs, grade_run
from .records import read_sample_records, record_key, result_record
from .replay import RunTrace, StateExtractor, replay_once, stopped_in_prefix, teacher_forced_prefix
from .sample import Sample
from .suite import Suite
from .toolsets import fixture_tools
from .tools import ToolSource

__all__ = ["run_sample", "run_user_topic", "run_user_topic_memory", "iter_results", "run_suite", "MemoryUnavailable"]


class MemoryUnavailable(MemevalError):
    """The memory system refused a reset or an ingest, or could not be reached (one line)."""


class _GradeKw(TypedDict):
    """The grading keywords :func:`iter_results` hands on to every sample it runs."""

    judge: JudgeProtocol | None
    extractor: StateExtractor | None
    extractor_trusted: bool


def run_sample(
    sample: Sample,
    agent: Agent,
    tools_factory: Callable[[Sample], ToolSource],
    cfg: GraderConfig = DEFAULT_CONFIG,
    *,
    judge: JudgeProtocol | None = None,
    extractor: StateExtractor | None = None,
    extractor_trusted: bool = True,
    prior_messages: Sequence[dict] = (),
    forced_prefix: Sequence[dict] | None = None,
) -> SampleResult:
    """Replay ``cfg.runs`` times (fresh tools each run), grade each run, combine.

    ``forced_prefix``: the recorded shared prefix (``replay.teacher_forced_prefix``). A run that stops
    inside the prefix is replayed again from ``graded_from`` on that recording (teacher forcing), so
    the sample is graded on its own part rather than dropped as incomplete; its trace says so.
    """

    def grade(trace: RunTrace) -> RunGrade:
        try:
            return grade_run(sample, trace, cfg, judge=judge, extractor_trusted=extractor_trusted)
        except Exception as e:  # a grading failure is a record with its reason, never a crash
            return RunGrade(cfg.fallback, f"grader_error: {type(e).__name__}: {e}")

    runs = []
    begin = getattr(agent, "begin_run", None)  # agents that keep per-run state are told which run
    for i in range(cfg.runs):
        if begin is not None:
            begin(sample.sample_id, i)
        with metered() as calls:  # the agent's, the extractor's and the judge's model calls, by role
            trace = replay_once(
                sample, agent, tools_factory(sample), extractor=extractor, prior_messages=prior_messages
            )
            if forced_prefix and stopped_in_prefix(sample, trace):
                rest = replace(sample, turn_index=tuple(t for t in sample.turn_index if t >= (sample.graded_from or 0)))
                msgs = [*prior_messages, *forced_prefix]
                trace = replace(
                    replay_once(rest, agent, tools_factory(sample), extractor=extractor, prior_messages=msgs),
                    teacher_forced=True,
                )
            graded = grade(trace)
        runs.append((replace(trace, usage=tuple(usage_entries(calls))), graded))
    verdict, reason, cause = combine_runs(sample, runs, cfg, regrade=grade)
    return SampleResult(sample, getattr(agent, "name", type(agent).__name__), verdict, reason, tuple(runs), cfg, cause)


def _replay_priors(
    priors: Sequence[Sample], agent: Agent, tools_factory: Callable[[Sample], ToolSource], *, chained: bool
) -> tuple[list[RunTrace], str]:
    """The earlier sessions replayed once each, in order (each continuing the previous conversation
    when ``chained``), up to the first that does not finish; and ``"done"`` or why it stopped."""
    traces: list[RunTrace] = []
    begin = getattr(agent, "begin_run", None)
    for p in priors:
        if begin is not None:
            begin(p.sample_id, 0)
        prior = list(traces[-1].messages) if chained and traces else []
        traces.append(replay_once(p, agent, tools_factory(p), prior_messages=prior))
        if traces[-1].status != "done":
            return traces, f"incomplete: {traces[-1].reason}"
    return traces, "done"


def run_user_topic(
    sample: Sample,
    priors: Sequence[Sample],
    agent: Agent,
    tools_factory: Callable[[Sample], ToolSource],
    cfg: GraderConfig = DEFAULT_CONFIG,
    **kw,
) -> CrossSessionResult:
    """``priors``: the earlier sessions' samples, in order (each replayed once, outputs regenerated)."""
    traces, status = _replay_priors(priors, agent, tools_factory, chained=True)
    msgs = list(traces[-1].messages) if traces else []
    with_ = run_sample(sample, agent, tools_factory, cfg, prior_messages=msgs, **kw)
    without = run_sample(sample, agent, tools_factory, cfg, **kw)
    outcome = memory_outcome(with_.verdict, without.verdict) if status == "done" else "undetermined"
    extra = {
        "memory": outcome,
        "without_prior": without.verdict,
        "prior_status": status,
        "prior_sessions": list(sample.prior_sessions),
    }
    return CrossSessionResult(replace(with_, extra=extra), without, outcome, status)


def run_user_topic_memory(
    sample: Sample,
    priors: Sequence[Sample],
    agent: Agent,
    tools_factory: Callable[[Sample], ToolSource],
    memory: MemorySystem,
    cfg: GraderConfig = DEFAULT_CONFIG,
    **kw,
) -> CrossSessionResult:
    """The earlier session(s) are replayed (outputs regenerated), ingested into ``memory`` (reset
    first), and the later session's agent starts from what ``memory`` returns for its first user
    turn -- never from the pasted transcript. Remembered vs guessed right is decided by whether the
    sample's ``memory_needs`` were among the returned memories."""
    name = getattr(memory, "name", type(memory).__name__)
    try:
        memory.reset()
    except SystemCallError as e:
        raise MemoryUnavailable(f"memory system {name}: {e}") from None
    traces, status = _replay_priors(priors, agent, tools_factory, chained=False)
    next_id = 0
    for p, tr in zip(priors, traces):
        if tr.status != "done":
            break
        sess = session_from_messages(tr.messages, p.session_ref, next_id)
        next_id += len(sess.turns)
        try:
            memory.ingest(sess)
        except SystemCallError as e:
            raise MemoryUnavailable(f"memory system {name}: {e}") from None
    first = sample.user_text[sample.turn_index[0]]
    try:
        recall = memory.query(first, None) if status == "done" else Recall()
    except Exception as e:  # a memory failure is a record with its reason
        status, recall = f"memory_error: {type(e).__name__}: {e}", Recall()
    msg = memory_message(recall, name)
    with_ = run_sample(sample, agent, tools_factory, cfg, prior_messages=[msg] if msg else [], **kw)
    without = run_sample(sample, agent, tools_factory, cfg, **kw)
    retrieved = retrieved_needs(sample.memory_needs, recall.memories)
    outcome = (
        retrieval_outcome(with_.verdict, retrieved) if status == "done" and sample.memory_needs else "undetermined"
    )
    extra = {
        "memory": outcome,
        "memory_system": name,
        "retrieved": retrieved,
        "recalled": list(recall.memories),
        "without_prior": without.verdict,
        "prior_status": status,
        "prior_sessions": list(sample.prior_sessions),
    }
    return CrossSessionResult(replace(with_, extra=extra), without, outcome, status)


def iter_results(
    suite: Suite,
    agent: Agent,
    tools_factory,
    cfg: GraderConfig = DEFAULT_CONFIG,
    *,
    judge: JudgeProtocol | None = None,
    extractor: StateExtractor | None = None,
    extractor_trusted: bool = True,
    sample_ids: Iterable[str] | None = None,
    memory: MemorySystem | None = None,
) -> Iterator:
    """Results per sample; user x topic units go through ``memory`` when one is given (the earlier
    session ingested, the later one fed what it returns), else the earlier session is replayed
    into the same conversation."""
    wanted = set(sample_ids) if sample_ids is not None else None
    by_session: dict[str, list[Sample]] = {}
    for s in suite.samples:
        by_session.setdefault(s.session_ref, []).append(s)
    kw = _GradeKw(judge=judge, extractor=extractor, extractor_trusted=extractor_trusted)
    sessions = {str(x.get("session_id")): x for x in suite.sessions}
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
            forced = None
            if s.graded_from is not None and s.session_ref in sessions:
                forced = teacher_forced_prefix(s, sessions[s.session_ref], suite.fixtures.get(s.replay.tool_fixture))
            yield run_sample(s, agent, tools_factory, cfg, forced_prefix=forced, **kw)


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
    records: list[dict] = []
    lock = _lock(Path(out_path)) if out_path else None
    try:
        return _run_suite(suite, agent, out_path, cfg, tools_factory, run_id, records, **kw)
    finally:
        if lock is not None:
            lock.release()


def _lock(out: Path) -> WriterLock:
    """The one-writer lock of a records file (``.NAME.lock`` beside it), or one line naming the holder."""
    lock = WriterLock(out.parent / f".{out.name}.lock")
    try:
        return lock.acquire()
    except LinkRefused as e:
        raise MemevalError(str(e)) from None
    except BlockingIOError:
        raise MemevalError(
            f"{out}: another memeval process (pid {lock.held_by}) is writing these records; wait for it or "
            "use another -o"
        ) from None
    except OSError as e:
        raise MemevalError(f"{out}: cannot write records here ({e.strerror or e})") from None


def _run_suite(suite, agent, out_path, cfg, tools_factory, run_id, records, **kw) -> list[dict]:
    try:
        writer = JsonlAppender(out_path) if out_path else None
    except LinkRefused as e:
        raise MemevalError(str(e)) from None
    name = getattr(agent, "name", type(agent).__name__)  # as result records name it
    done: dict[tuple, dict] = {}
    if writer and writer.path.stat().st_size:
        for r in read_sample_records(writer.path):
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
        kept = new.get(s.sample_id) or done.get((s.sample_id, name, cfg.config_id))
        if kept is not None:
            records.append(kept)
    return records
