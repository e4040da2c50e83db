"""Replay one sample: fixed user inputs and tool returns, regenerated model outputs fed back.

Every assistant message appended to the conversation is the one the agent just produced (never the
recorded one). A missing fixture or more than ``max_steps`` steps in a turn stops the sample as
``incomplete``; there is no fallback to live calls (pass :class:`LiveTools` explicitly for a health
check against the real tools).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol, Sequence

from .agents import Agent
from .sample import Sample
from .statechannel import STATE_TOOL, validate_state
from .tools import MissingFixture, ToolCall, ToolSource, UnknownTool

__all__ = [
    "TurnRecord",
    "RunTrace",
    "StateExtractor",
    "replay_once",
    "transcript_messages",
    "teacher_forced_prefix",
    "stopped_in_prefix",
]


class StateExtractor(Protocol):
    name: str

    def extract(self, text: str, turn: int) -> dict | None: ...


@dataclass(frozen=True)
class TurnRecord:
    turn: int
    user_text: str
    text: str
    tool_calls: tuple[dict, ...]  # {"key", "name", "args"}
    tool_returns: Mapping[str, Any]  # key -> return the agent saw
    state: Mapping[str, Any] | None
    state_source: str  # agent | report_state | state_block | state_report | extractor | none
    steps: int
    drifted: tuple[str, ...] = ()
    state_errors: tuple[str, ...] = ()  # reported values the state schema rejected


@dataclass(frozen=True)
class RunTrace:
    status: str  # done | incomplete | failed (the agent's fault)
    reason: str | None
    turns: tuple[TurnRecord, ...]
    messages: tuple[dict, ...] = field(default=(), repr=False)
    teacher_forced: bool = False  # the shared prefix was the recording, not the agent's (it did not replay)
    usage: tuple[dict, ...] = ()  # model calls of this run per role and model (``llm.usage_entries``)

    @property
    def drifted(self) -> tuple[str, ...]:
        return tuple(k for t in self.turns for k in t.drifted)


def _assistant_tool_message(step_text: str, calls: Sequence[tuple[str, ToolCall]]) -> dict:
    return {
        "role": "assistant",
        "content": step_text or "",  # never null: llama-cpp-python's server refuses it (HTTP 500)
        "tool_calls": [
            {
                "id": c.id or f"call_{key.replace(':', '_')}",
                "type": "function",
                "function": {"name": c.name, "arguments": json.dumps(dict(c.args), ensure_ascii=False)},
            }
            for key, c in calls
        ],
    }


def replay_once(
    sample: Sample,
    agent: Agent,
    tools: ToolSource,
    *,
    extractor: StateExtractor | None = None,
    prior_messages: Sequence[dict] = (),
    max_steps: int | None = None,
) -> RunTrace:
    """One replay of ``sample``; ``prior_messages`` prepends an earlier session (cross-session runs)."""
    msgs: list[dict] = [dict(m) for m in prior_messages]
    done: list[TurnRecord] = []
    limit = max_steps or sample.max_steps
    seed = sample.replay.seed

    def stop(reason: str, turn_part: TurnRecord | None = None, status: str = "incomplete") -> RunTrace:
        turns = tuple(done) + ((turn_part,) if turn_part else ())
        return RunTrace(status, reason, turns, tuple(msgs))

    for turn in sample.turn_index:
        user = sample.user_text[turn]
        msgs.append({"role": "user", "content": user})
        calls_made: list[dict] = []
        returns: dict[str, Any] = {}
        drifted: list[str] = []
        call_index = 0
        reported: dict | None = None
        errors: tuple[str, ...] = ()
        for step in range(limit):
            try:
                out = agent.gen(tuple(msgs), seed, turn, step)
            except Exception as e:  # an agent failure is a record with a reason, never a crash
                return stop(
                    f"agent_error at turn {turn}: {type(e).__name__}: {e}",
                    TurnRecord(turn, user, "", tuple(calls_made), returns, None, "none", step, tuple(drifted)),
                )
            if out.tool_calls:
                keyed = []
                for i, c in enumerate(out.tool_calls):
                    if c.name == STATE_TOOL:
                        keyed.append((f"state_{turn}_{step}_{i}", c))
                        continue
                    key = f"{turn}:{call_index}"
                    call_index += 1
                    keyed.append((key, c))
                msgs.append(_assistant_tool_message(out.text, keyed))
                for (key, c), wire in zip(keyed, msgs[-1]["tool_calls"]):
                    if c.name == STATE_TOOL:
                        reported, errors = validate_state(dict(c.args), sample.state_schema)
                        ack = {"ok": not errors, **({"errors": list(errors)} if errors else {})}
                        msgs.append({"role": "tool", "tool_call_id": wire["id"], "content": json.dumps(ack)})
                        continue
                    calls_made.append({"key": key, "name": c.name, "args": dict(c.args)})
                    partial = TurnRecord(
                        turn, user, out.text, tuple(calls_made), returns, None, "none", step + 1, tuple(drifted)
                    )
                    try:
                        ret = tools.call(key, c)
                    except UnknownTool as e:
                        return stop(f"unknown tool '{e.name}' called at turn {turn} ({e.key})", partial, "failed")
                    except MissingFixture as e:
                        return stop(f"missing fixture {e.key}: {e.reason}", partial)
                    returns[key] = ret.content
                    if ret.differs:
                        drifted.append(key)
                    msgs.append(
                        {
                            "role": "tool",
                            "tool_call_id": wire["id"],
                            "content": json.dumps(ret.content, ensure_ascii=False),
                        }
                    )
                continue
            msgs.append({"role": "assistant", "content": out.text})
            state, source = (dict(out.state), out.state_source) if out.state is not None else (None, "none")
            if state is not None and source != "agent":  # an agent's own channel: check it
                state, errors = validate_state(state, sample.state_schema)
            if state is None and reported is not None:
                state, source = dict(reported), STATE_TOOL
            if state is None and extractor is not None:
                got = extractor.extract(out.text, turn)
                if got is None:  # the reply states no state: carry the last one forward
                    prev = next((t.state for t in reversed(done) if t.state is not None), None)
                    got = dict(prev) if prev is not None else {}
                state, source = dict(got), "extractor"
            done.append(
                TurnRecord(
                    turn, user, out.text, tuple(calls_made), returns, state, source, step + 1, tuple(drifted), errors
                )
            )
            break
        else:
            return stop(
                f"max_steps ({limit}) exceeded at turn {turn} (a tool-call loop)",
                TurnRecord(turn, user, "", tuple(calls_made), returns, None, "none", limit, tuple(drifted)),
                "failed",
            )
    return RunTrace("done", None, tuple(done), tuple(msgs))


def stopped_in_prefix(sample: Sample, run: RunTrace) -> bool:
    """Whether ``run`` stopped before the sample's graded part began (in the shared prefix)."""
    return (
        run.status != "done"
        and sample.graded_from is not None
        and (not run.turns or run.turns[-1].turn < sample.graded_from)
    )


def teacher_forced_prefix(sample: Sample, session: Mapping[str, Any], fixture: Any = None) -> list[dict]:
    """The recorded conversation before ``sample.graded_from`` as messages (teacher forcing): each
    turn's user text, its recorded tool calls with their recorded returns (from ``fixture``, a
    :class:`~.tools.Fixture`) and its recorded reply. Empty for a sample without a shared prefix."""
    g = sample.graded_from
    if g is None:
        return []
    calls = getattr(fixture, "calls", {}) or {}
    msgs: list[dict] = []
    for t in session.get("turns") or ():
        if t.get("index") not in sample.turn_index or t["index"] >= g:
            continue
        msgs.append({"role": "user", "content": t.get("user_text") or ""})
        made = [c for c in t.get("tool_calls") or () if isinstance(c, dict) and c.get("name")]
        if made:
            keyed = [
                (str(c.get("key") or f"{t['index']}:{i}"), ToolCall(c["name"], c.get("args") or {}))
                for i, c in enumerate(made)
            ]
            msgs.append(_assistant_tool_message("", keyed))
            for (key, _), wire in zip(keyed, msgs[-1]["tool_calls"]):
                rec = calls.get(key)
                content = json.dumps(rec.result if rec is not None else None, ensure_ascii=False)
                msgs.append({"role": "tool", "tool_call_id": wire["id"], "content": content})
        msgs.append({"role": "assistant", "content": t.get("assistant_text") or ""})
    return msgs


def transcript_messages(trace: RunTrace) -> list[dict]:
    """The conversation a run produced (used to ingest an earlier session)."""
    return [dict(m) for m in trace.messages]
