"""Agents under test: the :class:`Agent` protocol and scripted reference agents with known faults.

An agent sees the OpenAI-style message list (user turns, its own earlier outputs, tool returns) and
returns an :class:`AgentStep`: reply text, tool calls, and optionally the state it holds (``None``
lets a state extractor read the state from the text). Scripted agents rebuild their state from the
messages alone, so replay feeds them their own regenerated outputs exactly as it would a model.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol, Sequence, runtime_checkable

from ..errors import UnknownName
from .domain import EXPORT_FORMATS, LOOKUP_TOOLS, Desk, parse_request
from .tools import ToolCall

__all__ = [
    "Agent",
    "AgentStep",
    "ScriptedAgent",
    "CorrectAgent",
    "DropsConstraint",
    "KeepsOldValue",
    "LoopsOnTool",
    "RepeatsCall",
    "FlakyAgent",
    "WrongTool",
    "UnconfirmedWrite",
    "AddsTaxLine",
    "OmitsKey",
    "Guesser",
    "DropsEarlierTask",
    "SCRIPTED_AGENTS",
    "make_agent",
    "reply_text",
]


@dataclass(frozen=True)
class AgentStep:
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    state: Mapping[str, Any] | None = None
    state_source: str = "agent"  # agent (scripted) | state_block (read from the reply's state block)


@runtime_checkable
class Agent(Protocol):
    name: str

    def gen(self, messages: Sequence[dict], seed: int, turn: int, step: int) -> AgentStep: ...


def reply_text(desk: Desk, ev: dict | None, seed: int, turn: int, extra: str = "") -> str:
    """The scripted assistant's reply; two phrasings so an extractor must read, not match."""
    kind = ev["kind"] if ev else None
    if kind == "start_nocust" and not desk.customer:
        return "Which customer is this quote for?"
    if kind == "ask_formats":
        return "We can export to " + ", ".join(EXPORT_FORMATS[:-1]) + f" and {EXPORT_FORMATS[-1]}."
    if kind == "ask_second_item":
        return f"The second item is {desk.items[1][0]}." if len(desk.items) > 1 else "There is no second item yet."
    if kind in ("group_orders", "regroup") and desk.group_by:
        return f"Grouped last month's orders by {desk.group_by}."
    parts = []
    if kind == "tax_line" and desk.tax_mode == "inclusive" and not desk.extra_tax_line:
        parts.append("Prices already include tax as you asked earlier. Do you still want a separate tax line?")
    if not desk.customer:
        return " ".join(parts) or "Which customer is this quote for?"
    tax = "incl." if desk.tax_mode == "inclusive" else "excl."
    if (seed + turn) % 2 == 0:
        parts.append(
            f"Quote for {desk.customer}: {len(desk.items)} lines, total {desk.total():.2f} {desk.currency} ({tax} tax)."
        )
    else:
        parts.append(
            f"The quote for {desk.customer} now has {len(desk.items)} lines and totals "
            f"{desk.currency} {desk.total():.2f}, tax {'included' if tax == 'incl.' else 'excluded'}."
        )
    if desk.form == "table":
        parts.append("Shown as a table.")
    if desk.extra_tax_line:
        parts.append("Added a separate tax line.")
    if desk.saved:
        parts.append("Saved it.")
    if extra:
        parts.append(extra)
    return " ".join(parts)


MEMORY_HEADER = "Memory from earlier sessions"
_MEMORY_LINE = re.compile(r"^(?:\[[^\]]*\] )?(?P<speaker>\w+): (?P<text>.*)$")  # "[date] " only when dated


def recall_terms(desk: Desk, memory: str) -> None:
    """Take the quote terms (currency, tax mode) from retrieved memory lines, oldest first: user
    requests as parsed, assistant replies by the currency code and tax wording they state."""
    for line in memory.splitlines()[1:]:
        m = _MEMORY_LINE.match(line.strip())
        if not m:
            continue
        if m["speaker"] == "user":
            ev = parse_request(m["text"]) or {}
            if ev.get("kind") in ("start", "start_nocust", "correct_currency"):
                desk.currency = ev["currency"]
            if ev.get("kind") in ("start", "start_nocust"):
                desk.tax_mode = "exclusive"
            if ev.get("kind") == "tax_inclusive":
                desk.tax_mode = "inclusive"
        else:
            cur = re.search(r"\b(CNY|USD|EUR)\b", m["text"])
            if cur:
                desk.currency = cur.group(1)
            if re.search(r"incl\. tax|tax included", m["text"]):
                desk.tax_mode = "inclusive"
            elif re.search(r"excl\. tax|tax excluded", m["text"]):
                desk.tax_mode = "exclusive"


@dataclass
class ScriptedAgent:
    """The correct reference behaviour; subclasses override the hooks to inject one known fault."""

    name: str = "correct"

    # hooks ------------------------------------------------------------------------------------
    def on_request(self, desk: Desk, ev: dict | None, n_user: int, ctx: dict) -> None:
        desk.apply(ev)

    def plan_calls(self, desk: Desk, ev: dict | None, done: list[ToolCall], ctx: dict) -> list[ToolCall]:
        if done:
            return []
        return [ToolCall(n, a) for n, a in desk.needs(ev)]

    def report(self, desk: Desk, ev: dict | None, ctx: dict) -> dict:
        return desk.snapshot()

    # machinery --------------------------------------------------------------------------------
    def _replay_messages(self, messages: Sequence[dict]) -> tuple[Desk, dict | None, list[ToolCall], dict]:
        desk, ev = Desk(), None
        ctx: dict[str, Any] = {}
        names: dict[str, str] = {}
        done: list[ToolCall] = []
        n_user = 0
        for m in messages:
            role = m.get("role")
            if role == "system" and (m.get("content") or "").startswith(MEMORY_HEADER):
                recall_terms(desk, m["content"])
            elif role == "user":
                ev = parse_request(m.get("content") or "")
                done = []
                self.on_request(desk, ev, n_user, ctx)
                n_user += 1
            elif role == "assistant":
                for c in m.get("tool_calls") or ():
                    fn = c.get("function", {})
                    names[c.get("id", "")] = fn.get("name", "")
                    try:
                        args = json.loads(fn.get("arguments") or "{}")
                    except json.JSONDecodeError:
                        args = {}
                    done.append(ToolCall(fn.get("name", ""), args, c.get("id", "")))
            elif role == "tool":
                try:
                    ret = json.loads(m.get("content") or "null")
                except json.JSONDecodeError:
                    ret = None
                desk.learn(names.get(m.get("tool_call_id", ""), ""), ret)
        ctx["n_user"] = n_user
        return desk, ev, done, ctx

    def gen(self, messages: Sequence[dict], seed: int, turn: int, step: int) -> AgentStep:
        desk, ev, done, ctx = self._replay_messages(messages)
        ctx.update(seed=seed, turn=turn, step=step)
        calls = self.plan_calls(desk, ev, done, ctx)
        if calls:
            return AgentStep(
                tool_calls=tuple(ToolCall(c.name, c.args, f"call_{turn}_{step}_{i}") for i, c in enumerate(calls))
            )
        state = self.report(desk, ev, ctx)
        return AgentStep(text=self.text(desk, ev, ctx), state=state)

    def text(self, desk: Desk, ev: dict | None, ctx: dict) -> str:
        return reply_text(desk, ev, ctx["seed"], ctx["turn"])


class CorrectAgent(ScriptedAgent):
    pass


@dataclass
class DropsConstraint(ScriptedAgent):
    """Forgets the tax-inclusive constraint ``after`` user turns after it was given."""

    name: str = "drops_constraint"
    after: int = 2

    def on_request(self, desk, ev, n_user, ctx):
        desk.apply(ev)
        if ev and ev["kind"] == "tax_inclusive":
            ctx["constraint_at"] = n_user
        if "constraint_at" in ctx and n_user - ctx["constraint_at"] >= self.after:
            desk.tax_mode = "exclusive"


@dataclass
class KeepsOldValue(ScriptedAgent):
    """Acknowledges a currency correction but keeps computing with the pre-correction value."""

    name: str = "keeps_old_value"

    def on_request(self, desk, ev, n_user, ctx):
        if ev and ev["kind"] == "correct_currency":
            return
        desk.apply(ev)


@dataclass
class LoopsOnTool(ScriptedAgent):
    """Calls its first needed tool again on every step and never answers."""

    name: str = "loops_on_tool"

    def plan_calls(self, desk, ev, done, ctx):
        if done:
            return [ToolCall(done[0].name, done[0].args)]
        return [ToolCall(n, a) for n, a in desk.needs(ev)[:1]]


@dataclass
class RepeatsCall(ScriptedAgent):
    """Makes the needed calls, then repeats the last lookup once (same tool, same arguments)."""

    name: str = "repeats_call"

    def plan_calls(self, desk, ev, done, ctx):
        needed = desk.needs(ev)
        if not done:
            return [ToolCall(n, a) for n, a in needed]
        if len(done) == len(needed) and done[-1].name in LOOKUP_TOOLS:
            return [ToolCall(done[-1].name, done[-1].args)]
        return []


@dataclass
class FlakyAgent(ScriptedAgent):
    """Nondeterministic: on runs whose index (mod 3) is in ``bad_runs`` the total is off by one.

    The run index comes from :meth:`begin_run` (the runner names the sample and the run), so
    replaying an earlier session first (cross-session units) does not shift its phase; without it
    (a bare ``replay_once``) every conversation that starts afresh counts as a new run.
    """

    name: str = "flaky"
    bad_runs: tuple[int, ...] = (1, 2)
    runs_started: int = field(default=0)
    run_key: tuple | None = field(default=None)

    def begin_run(self, sample_id: str, run: int) -> None:
        self.run_key = (sample_id, run)

    def gen(self, messages, seed, turn, step):
        if step == 0 and sum(1 for m in messages if m.get("role") == "user") == 1:
            self.runs_started += 1
        return super().gen(messages, seed, turn, step)

    def _bad(self) -> bool:
        run = self.run_key[1] if self.run_key is not None else self.runs_started - 1
        return run % 3 in self.bad_runs

    def report(self, desk, ev, ctx):
        s = desk.snapshot()
        if self._bad():
            s["total"] = round(s["total"] + 1.0, 2)
        return s

    def text(self, desk, ev, ctx):
        t = super().text(desk, ev, ctx)
        return t.replace("PDF", "paper") if self._bad() else t


@dataclass
class WrongTool(ScriptedAgent):
    """Looks prices up through a tool the recording never saw (so replay cannot serve it)."""

    name: str = "wrong_tool"

    def plan_calls(self, desk, ev, done, ctx):
        calls = super().plan_calls(desk, ev, done, ctx)
        return [ToolCall("lookup_prices", c.args) if c.name == "get_price_list" else c for c in calls]


@dataclass
class UnconfirmedWrite(ScriptedAgent):
    """Saves the quote whenever a line is added, without the user confirming."""

    name: str = "unconfirmed_write"

    def plan_calls(self, desk, ev, done, ctx):
        calls = super().plan_calls(desk, ev, done, ctx)
        if ev and ev["kind"] == "add" and not done:
            calls.append(
                ToolCall("save_quote", {"customer": desk.customer, "currency": desk.currency, "total": desk.total()})
            )
        return calls


@dataclass
class AddsTaxLine(ScriptedAgent):
    """Adds the separate tax line even though prices must include tax (no conflict flagged)."""

    name: str = "adds_tax_line"

    def on_request(self, desk, ev, n_user, ctx):
        desk.apply(ev)
        if ev and ev["kind"] == "tax_line":
            desk.extra_tax_line = True


@dataclass
class OmitsKey(ScriptedAgent):
    """Never reports ``key`` (one name or several): like a state extractor that misses it."""

    name: str = "omits_key"
    key: str | tuple[str, ...] = "tax_mode"
    from_turn_count: int = 0  # only once the conversation has this many user turns

    def report(self, desk, ev, ctx):
        s = desk.snapshot()
        if ctx.get("n_user", 0) >= self.from_turn_count:
            for k in (self.key,) if isinstance(self.key, str) else self.key:
                s.pop(k, None)
        return s


@dataclass
class Guesser(ScriptedAgent):
    """Guesses the usual terms (dollars, tax included) when told 'same terms as last time'."""

    name: str = "guesser"

    def on_request(self, desk, ev, n_user, ctx):
        desk.apply(ev)
        if ev and ev["kind"] == "start_same" and n_user == 0:
            desk.currency, desk.tax_mode = "USD", "inclusive"


@dataclass
class DropsEarlierTask(ScriptedAgent):
    """Starting a new task throws the earlier task's result away (the quote is emptied when the user
    turns to the orders): each task on its own is fine, the session is not."""

    name: str = "drops_earlier_task"

    def on_request(self, desk, ev, n_user, ctx):
        desk.apply(ev)
        if ev and ev["kind"] == "group_orders":
            desk.items = []


SCRIPTED_AGENTS = {
    cls().name: cls
    for cls in (
        CorrectAgent,
        DropsConstraint,
        KeepsOldValue,
        LoopsOnTool,
        RepeatsCall,
        FlakyAgent,
        WrongTool,
        UnconfirmedWrite,
        AddsTaxLine,
        OmitsKey,
        Guesser,
        DropsEarlierTask,
    )
}


def make_agent(name: str) -> ScriptedAgent:
    """A new scripted agent by name (``SCRIPTED_AGENTS``); an unknown name is an :class:`UnknownName`."""
    if name not in SCRIPTED_AGENTS:
        raise UnknownName(f"unknown scripted agent '{name}' (known: {', '.join(sorted(SCRIPTED_AGENTS))})")
    return SCRIPTED_AGENTS[name]()
