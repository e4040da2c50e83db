"""Cross-session memory: what a user x topic unit spanning sessions is told and how its outcome is
named (the runner, :mod:`.runner`, replays it with the same assertions).

Through a memory system (``runner.run_user_topic_memory``, the default when one is given): the earlier
session is ingested into a :class:`~memeval.systems.base.MemorySystem` (the memory benchmark's
protocol: in-process or HTTP) and the later session's agent receives only what it returns.

Without one (``runner.run_user_topic``) the unit is run twice: with the earlier session(s) replayed
first (the agent's own regenerated outputs, in the same conversation) and without. Passing only with the earlier session is
``remembered``; passing both ways is ``guessed_right`` (the answer did not need the memory);
failing with it is ``not_remembered``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from ..bench.model import Session, Turn
from ..systems.base import Recall
from .agents import MEMORY_HEADER
from .grade import SampleResult
from .sample import MemoryNeed

__all__ = [
    "CrossSessionResult",
    "memory_outcome",
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


def session_from_messages(messages: Sequence[dict], session_id: str, first_turn_id: int = 0, date: str = "") -> Session:
    """The user and assistant texts of a replayed conversation as a bench session (tool traffic and
    system messages are not part of what a memory system is given)."""
    turns: list[Turn] = []
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
