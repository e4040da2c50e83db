"""Cross-session memory: a user x topic unit spanning sessions, with the same assertions.

The unit is run twice: with the earlier session(s) replayed first (the agent's own regenerated
outputs, in the same conversation) and without. Passing only with the earlier session is
``remembered``; passing both ways is ``guessed_right`` (the answer did not need the memory);
failing with it is ``not_remembered``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Sequence

from .agents import Agent
from .config import DEFAULT_CONFIG, GraderConfig
from .grade import SampleResult, run_sample
from .replay import replay_once
from .sample import Sample
from .tools import ToolSource

__all__ = ["CrossSessionResult", "run_user_topic", "memory_outcome"]


@dataclass(frozen=True)
class CrossSessionResult:
    with_prior: SampleResult
    without_prior: SampleResult
    outcome: str                 # remembered | guessed_right | not_remembered | undetermined
    prior_status: str


def memory_outcome(with_verdict: str, without_verdict: str) -> str:
    if with_verdict == "pass":
        return {"pass": "guessed_right", "fail": "remembered"}.get(without_verdict, "undetermined")
    if with_verdict == "fail":
        return "not_remembered"
    return "undetermined"


def run_user_topic(sample: Sample, priors: Sequence[Sample], agent: Agent,
                   tools_factory: Callable[[Sample], ToolSource], cfg: GraderConfig = DEFAULT_CONFIG,
                   **kw) -> CrossSessionResult:
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
    extra = {"memory": outcome, "without_prior": without.verdict, "prior_status": status,
             "prior_sessions": list(sample.prior_sessions)}
    return CrossSessionResult(replace(with_, extra=extra), without, outcome, status)
