"""Your own sessions as samples: chat transcripts in the OpenAI messages format become a suite.

One transcript per JSONL line: ``{"id": "...", "messages": [...]}`` (the id is optional),
with ``system``, ``user``, ``assistant`` (``content`` and/or ``tool_calls``) and ``tool`` messages.
Each transcript becomes one task sample ``<id>#g1`` over its user turns; every tool call is keyed
``"{turn}:{call_index}"`` and its tool result becomes the recorded fixture, so the sample replays
offline. ``state_expect`` starts empty and each reply gets a hand-label line to fill in
(``state_labels.jsonl``, ``state: null``); until assertions are written the sample is
``undetermined``. Bad input names the file, line and field; nothing is written unless every line
is valid. :class:`TranscriptAgent` plays the recorded assistant steps back, to check that every
sample replays with no missing fixture.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from ..bench.io import iter_jsonl
from ..errors import InputError
from .agents import AgentStep
from .sample import FinalExpect, Labels, ProcessExpect, ReplaySpec, Sample
from .suite import Suite
from .tools import Fixture, RecordedCall, ToolCall
from .replay import replay_once
from .toolsets import fixture_tools

__all__ = ["import_transcripts", "TranscriptAgent", "replay_check"]

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")


def _content(m: dict, path, n, i) -> str:
    c = m.get("content")
    if c is None:
        return ""
    if isinstance(c, str):
        return c
    if isinstance(c, list):  # content parts: keep the text parts
        return "".join(p.get("text", "") for p in c if isinstance(p, dict) and p.get("type") == "text")
    raise InputError(path, n, f"messages[{i}].content", "expected a string or a list of content parts")


def _transcript(obj: Any, path, n: int, default_id: str):
    if not isinstance(obj, dict) or not isinstance(obj.get("messages"), list):
        raise InputError(path, n, "messages", "expected a list of chat messages")
    tid = obj.get("id", obj.get("session_id", default_id))
    if not isinstance(tid, str) or not _ID.match(tid):
        raise InputError(path, n, "id", f"{tid!r} is not a safe id (letters, digits, '_', '.', '-')")
    system: str | None = None
    turns: list[dict[str, Any]] = []
    calls: dict[str, dict[str, Any]] = {}
    pending: dict[str, str] = {}
    for i, m in enumerate(obj["messages"]):
        if not isinstance(m, dict) or m.get("role") not in ("system", "developer", "user", "assistant", "tool"):
            raise InputError(path, n, f"messages[{i}].role", "expected system, user, assistant or tool")
        role = m["role"]
        if role in ("system", "developer"):
            system = _content(m, path, n, i)
            continue
        if role == "user":
            if pending:
                raise InputError(path, n, f"messages[{i}]", f"tool call {sorted(pending)[0]} has no tool result")
            turns.append({"index": len(turns), "user_text": _content(m, path, n, i), "steps": [], "assistant_text": ""})
            continue
        if not turns:
            raise InputError(path, n, f"messages[{i}]", f"{role} message before the first user turn")
        t = turns[-1]
        if role == "assistant":
            tcs = m.get("tool_calls") or []
            if not isinstance(tcs, list):
                raise InputError(path, n, f"messages[{i}].tool_calls", "expected a list")
            step: list[dict[str, Any]] = []
            for j, c in enumerate(tcs):
                fn = c.get("function") if isinstance(c, dict) else None
                where = f"messages[{i}].tool_calls[{j}]"
                if not isinstance(fn, dict) or not isinstance(fn.get("name"), str) or not fn["name"]:
                    raise InputError(path, n, where + ".function.name", "missing")
                try:
                    args = json.loads(fn.get("arguments") or "{}")
                except (json.JSONDecodeError, TypeError):
                    raise InputError(path, n, where + ".function.arguments", "not valid JSON") from None
                if not isinstance(args, dict):
                    raise InputError(path, n, where + ".function.arguments", "expected a JSON object")
                cid = c.get("id")
                if not isinstance(cid, str) or not cid:
                    raise InputError(path, n, where + ".id", "missing (a tool result must point at it)")
                key = f"{t['index']}:{sum(len(s.get('tool_calls', [])) for s in t['steps']) + len(step)}"
                pending[cid] = key
                calls[key] = {"tool": fn["name"], "args": args}
                step.append({"name": fn["name"], "args": args})
            text = _content(m, path, n, i)
            if step:
                t["steps"].append({"tool_calls": step, "text": text})
            else:
                t["steps"].append({"text": text})
                t["assistant_text"] = text
            continue
        cid = m.get("tool_call_id")  # role == "tool"
        if cid not in pending:
            raise InputError(path, n, f"messages[{i}].tool_call_id", f"{cid!r} answers no open tool call")
        raw = _content(m, path, n, i)
        try:
            result = json.loads(raw)
        except json.JSONDecodeError:
            result = raw
        calls[pending.pop(cid)]["result"] = result
    if pending:
        raise InputError(path, n, "messages", f"tool call {sorted(pending)[0]} has no tool result")
    if not turns:
        raise InputError(path, n, "messages", "no user turn")
    for t in turns:
        if not t["steps"] or "tool_calls" in t["steps"][-1]:
            raise InputError(path, n, f"turn {t['index']}", "ends without an assistant reply")
    return tid, system, turns, calls


def import_transcripts(path, grader_version: str = "r5", seed: int = 0) -> Suite:
    """Read every transcript (all validated before anything is returned) into a :class:`Suite`."""
    samples, sessions, fixtures, configs, labels = [], [], {}, {}, []
    seen: dict[str, int] = {}  # id -> line
    for n, obj in iter_jsonl(path):
        tid, system, turns, calls = _transcript(obj, path, n, f"tx_{n:04d}")
        if tid in seen:
            raise InputError(path, n, "id", f"duplicate of line {seen[tid]}")
        seen[tid] = n
        names = sorted({c["tool"] for c in calls.values()})
        body = {"prompt_version": "imported", "system_prompt": system, "tools": {k: {} for k in names}}
        cid = "cfg_" + hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:8]
        configs[cid] = {"config_id": cid, **body}  # one per distinct system prompt + registry
        fx = Fixture(f"fx_{tid}", {k: RecordedCall(c["tool"], c["args"], c["result"]) for k, c in calls.items()})
        fixtures[fx.fixture_id] = fx
        steps = max(len(t["steps"]) for t in turns)
        samples.append(
            Sample(
                sample_id=f"{tid}#g1",
                session_ref=tid,
                unit_type="task",
                turn_index=tuple(t["index"] for t in turns),
                goal="(imported: describe the goal)",
                user_text={t["index"]: t["user_text"] for t in turns},
                state_expect=(),
                final_expect=FinalExpect(),
                replay=ReplaySpec(fx.fixture_id, cid, seed, grader_version),
                labels=Labels(turns=len(turns), goal_changes=0, corrections=0, has_artifact=False),
                process=ProcessExpect(
                    tools={
                        t["index"]: tuple(dict.fromkeys(c["name"] for s in t["steps"] for c in s.get("tool_calls", [])))
                        for t in turns
                        if any("tool_calls" in s for s in t["steps"])
                    }
                ),
                max_steps=max(4, steps),
            )
        )
        sessions.append({"session_id": tid, "source": "import", "turns": turns})
        labels += [
            {
                "session_id": tid,
                "turn": t["index"],
                "source": "import",
                "text": t["assistant_text"],
                "state": None,
                "todo": "fill in the state this reply states",
            }
            for t in turns
        ]
    if not samples:
        raise InputError(path, None, None, "no transcripts")
    return Suite(seed, tuple(sessions), tuple(samples), fixtures, configs, tuple(labels), 0)


@dataclass
class TranscriptAgent:
    """Plays each session's recorded assistant steps back (tool calls, then the reply): a check
    that the recording is complete, not an agent under test."""

    sessions: Sequence[dict]
    name: str = "transcript"
    _current: dict = field(default_factory=dict)

    def begin_run(self, sample_id: str, run: int) -> None:
        sid = sample_id.rsplit("#g", 1)[0]
        self._current = next(s for s in self.sessions if s["session_id"] == sid)

    def gen(self, messages, seed, turn, step) -> AgentStep:
        steps = self._current["turns"][turn]["steps"]
        s = steps[min(step, len(steps) - 1)]
        calls = tuple(
            ToolCall(c["name"], c["args"], f"call_{turn}_{step}_{i}") for i, c in enumerate(s.get("tool_calls", []))
        )
        return AgentStep(text=s.get("text", ""), tool_calls=calls)


def replay_check(suite: Suite) -> list[tuple[str, str, str | None]]:
    """(sample_id, replay status, reason) for every sample replayed with its own recording."""
    agent, tools = TranscriptAgent(suite.sessions), fixture_tools(suite)
    out = []
    for s in suite.samples:
        agent.begin_run(s.sample_id, 0)
        tr = replay_once(s, agent, tools(s))
        out.append((s.sample_id, tr.status, tr.reason))
    return out
