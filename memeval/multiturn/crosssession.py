"""Cross-session memory: a user x topic unit spanning sessions, with the same assertions.

Through a memory system (:func:`run_user_topic_memory`, the default when one is given): the earlier
session is ingested into a :class:`~memeval.systems.base.MemorySystem` (the memory benchmark's
protocol: in-process or HTTP) and the later session's agent receives only what it returns.

Without one (:func:`run_user_topic`) the unit is run twice: with the earlier session(s) replayed first (the agent's own regenerated
outputs, in the same conversation) and without. Passing only with the earlier session is
``remembered``; passing both ways is ``guessed_right`` (the answer did not need the memory);
failing with it is ``not_remembered``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Mapping, Sequence

from ..bench.model import Session, Turn
from ..systems.base import MemorySystem, Recall
from .agents import MEMORY_HEADER, Agent
from .config import DEFAULT_CONFIG, GraderConfig
from .grade import SampleResult, run_sample
from .replay import replay_once
from .sample import MemoryNeed, Sample
from .tools import ToolSource

__all__ = [
    "CrossSessionResult",
    "run_user_topic",
    "memory_outcome",
    "run_user_topic_memory",
    "session_from_messages",
    "memory_message",
    "retrieved_needs",
    "retrieval_outcome",
]


@dataclass(frozen=True)
class CrossSessionResult:
    with_prior: SampleResult
    without_prior: SampleResult
    outcome: str  # remembered | guessed_right | not_remembered | undetermined
    prior_status: str


def memory_outcome(with_verdict: str, without_verdict: str) -> str:
    if with_verdict == "pass":
        return {"pass": "guessed_right", "fail": "remembered"}.get(without_verdict, "undetermined")
    if with_verdict == "fail":
        return "not_remembered"
    return "undetermined"


def run_user_topic(
    sample: Sample,
    priors: Sequence[Sample],
    agent: Agent,
    tools_factory: Callable[[Sample], ToolSource],
    cfg: GraderConfig = DEFAULT_CONFIG,
    **kw,
) -> CrossSessionResult:
    """``priors``: the earlier sessions' samples, in order (each replayed once, outputs regenerated)."""
    msgs: list[dict] = []
    status = "done"
    begin = getattr(agent, "begin_run", None)
    for p in priors:
        if begin is not None:
            begin(p.sample_id, 0)
        tr = replay_once(p, agent, tools_factory(p), prior_messages=msgs)
        msgs = list(tr.messages)
        if tr.status != "done":
            status = f"incomplete: {tr.reason}"
            break
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


# --- through a memory system ----------------------------------------------------------------------


def session_from_messages(messages: Sequence[dict], session_id: str, first_turn_id: int = 0, date: str = "") -> Session:
    """The user and assistant texts of a replayed conversation as a bench session (tool traffic and
    system messages are not part of what a memory system is given)."""
    turns = []
    for m in messages:
        if m.get("role") in ("user", "assistant") and (m.get("content") or "").strip():
            turns.append(Turn(first_turn_id + len(turns), session_id, m["role"], m["content"], date))
    return Session(session_id, date, tuple(turns))


def memory_message(recall: Recall, system_name: str) -> dict | None:
    """What the later session's agent receives: the returned memories, oldest first."""
    mems = list(recall.memories)
    if not mems:
        return None
    if recall.turn_ids is not None and len(recall.turn_ids) == len(mems):
        mems = [m for _, m in sorted(zip(recall.turn_ids, mems), key=lambda x: x[0])]
    return {"role": "system", "content": f"{MEMORY_HEADER} (returned by {system_name}):\n" + "\n".join(mems)}


def retrieved_needs(needs: Sequence[MemoryNeed], memories: Sequence[str]) -> dict[str, bool]:
    """Per needed fact: did any returned memory state it (one of its phrasings, case-insensitive)?

    >>> retrieved_needs([MemoryNeed("currency", "USD", ("dollars",))], ["[d] user: in Dollars please"])
    {'currency': True}
    """
    text = "\n".join(memories).casefold()
    return {n.key: any(p.casefold() in text for p in n.said_as) for n in needs}


def retrieval_outcome(verdict: str, retrieved: Mapping[str, bool]) -> str:
    """``remembered`` (pass, every needed fact retrieved), ``guessed_right`` (pass without them),
    ``retrieved_not_used`` (fail although retrieved), ``not_remembered`` (fail, not retrieved),
    else ``undetermined``."""
    have = bool(retrieved) and all(retrieved.values())
    if verdict == "pass":
        return "remembered" if have else "guessed_right"
    if verdict == "fail":
        return "retrieved_not_used" if have else "not_remembered"
    return "undetermined"


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
    status = "done"
    begin = getattr(agent, "begin_run", None)
    memory.reset()
    next_id = 0
    for p in priors:
        if begin is not None:
            begin(p.sample_id, 0)
        tr = replay_once(p, agent, tools_factory(p))
        if tr.status != "done":
            status = f"incomplete: {tr.reason}"
            break
        sess = session_from_messages(tr.messages, p.session_ref, next_id)
        next_id += len(sess.turns)
        memory.ingest(sess)
    first = sample.user_text[sample.turn_index[0]]
    try:
        recall = memory.query(first, None) if status == "done" else Recall()
    except Exception as e:  # a memory failure is a record with its reason
        status, recall = f"memory_error: {type(e).__name__}: {e}", Recall()
    name = getattr(memory, "name", type(memory).__name__)
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
