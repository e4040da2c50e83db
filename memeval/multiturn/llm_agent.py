"""An agent under test behind an OpenAI-compatible endpoint (tools as function calls).

The model reports its working state through a structured channel: the ``report_state`` tool (its
arguments checked against the sample's state schema by the replayer) or, for endpoints without
tool calling, a fenced ``state`` block at the end of the reply. When a reply reports neither (a small
model, or a server that ignores ``tools``), the agent is asked once more, right after its reply, for
the state as a JSON object matching the sample's schema (structured output where the server offers
it: ``ChatClient.chat(schema=...)``; every key required, ``null`` for "not set"): ``state_source``
``state_report``. Only when that fails too does a state extractor read the state from the reply text.
Endpoint failures raise, and the replayer records the sample as ``incomplete`` with the reason.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Sequence

from ..llm import ChatClient, ChatError, parse_json_object
from .agents import AgentStep
from .domain import STATE_SCHEMA, TOOLS
from .statechannel import STATE_PROMPT, STATE_TOOL, parse_state_block, report_state_tool
from .tools import ToolCall

__all__ = [
    "ChatAgent",
    "openai_tools",
    "state_report_schema",
    "SYSTEM_PROMPT",
    "STATE_BLOCK_PROMPT",
    "STATE_REPORT_PROMPT",
]

SYSTEM_PROMPT = (
    "You help a sales clerk edit customer quotes. Use the tools to look up prices and exchange "
    "rates; never save without the user's confirmation; keep every constraint the user set until "
    "they withdraw it; if a request contradicts a standing constraint, ask before acting. After each "
    "change, restate the quote as: 'Quote for <customer>: <n> lines, total <amount> <CUR> "
    "(incl./excl. tax).'"
)

STATE_BLOCK_PROMPT = (
    "Without a report_state tool, end each reply with the full working state as a fenced block: "
    '```state\n{"key": value, ...}\n```.'
)

STATE_REPORT_PROMPT = (
    "Report the working state after your last reply as one JSON object with exactly these keys: {keys}. "
    "Use null for a key that is not set yet. Reply with the JSON object only."
)

_STATE_TYPES = {"string": "string", "integer": "integer", "number": "number", "boolean": "boolean"}


def state_report_schema(schema: dict) -> dict:
    """The JSON schema of a state report: every key of the state schema, required, its type or null.

    >>> s = state_report_schema({"currency": {"type": "string", "enum": ["USD", "EUR"]}, "lines": {"type": "integer"}})
    >>> s["required"], s["properties"]["lines"]
    (['currency', 'lines'], {'anyOf': [{'type': 'integer'}, {'type': 'null'}]})
    """
    props = {}
    for k, spec in schema.items():
        t: dict = {"type": _STATE_TYPES.get(spec.get("type"), "string")}
        if "enum" in spec:
            t["enum"] = list(spec["enum"])
        props[k] = {"anyOf": [t, {"type": "null"}]}
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


_JSON_TYPES = {"string": {"type": "string"}, "number": {"type": "number"}, "array": {"type": "array", "items": {}}}


def openai_tools(registry: dict = TOOLS) -> list[dict]:
    """The tool registry in OpenAI ``tools`` form."""
    out = []
    for name, spec in registry.items():
        params = spec.get("parameters")
        schema = (
            {
                "type": "object",
                "properties": {k: _JSON_TYPES.get(v, {}) for k, v in params.items()},
                "required": list(params),
            }
            if isinstance(params, dict)
            else {"type": "object"}
        )
        out.append(
            {
                "type": "function",
                "function": {"name": name, "description": spec.get("description", name), "parameters": schema},
            }
        )
    return out  # a registry entry without a spec (an imported transcript's tool) takes any object


@dataclass
class ChatAgent:
    client: ChatClient
    name: str = "chat-agent"
    system_prompt: str = SYSTEM_PROMPT
    tools: list = field(default_factory=openai_tools)
    state_schema: dict = field(default_factory=lambda: dict(STATE_SCHEMA))
    report_state: bool = True  # offer the report_state tool and ask for it
    state_report: bool = True  # no state in the reply: ask for it once more as a JSON object (schema)
    state_max_tokens: int = 256  # the report's own cap: a whole state object must fit, whatever the turn's cap

    def __post_init__(self):
        if self.report_state:
            if not any(t.get("function", {}).get("name") == STATE_TOOL for t in self.tools):
                self.tools = [*self.tools, report_state_tool(self.state_schema)]
            self.system_prompt = f"{self.system_prompt} {STATE_PROMPT} {STATE_BLOCK_PROMPT}"

    def gen(self, messages: Sequence[dict], seed: int, turn: int, step: int) -> AgentStep:
        res = self.client.chat(
            [{"role": "system", "content": self.system_prompt}, *messages], tools=self.tools, seed=seed
        )
        calls = []
        for i, c in enumerate(res.tool_calls):
            fn = c.get("function") or {}
            try:
                args = json.loads(fn.get("arguments") or "{}")
            except json.JSONDecodeError:
                args = {"_unparsed": fn.get("arguments")}
            calls.append(
                ToolCall(
                    fn.get("name", ""),
                    args if isinstance(args, dict) else {"_value": args},
                    c.get("id") or f"call_{turn}_{step}_{i}",
                )
            )
        text, block = parse_state_block(res.text) if not calls else (res.text, None)
        if block is not None:
            return AgentStep(text=text, tool_calls=(), state=block, state_source="state_block")
        if not calls and self.state_report and self.state_schema:
            state = self._report(messages, res.text, seed)
            if state is not None:
                return AgentStep(text=res.text, state=state, state_source="state_report")
        return AgentStep(text=res.text, tool_calls=tuple(calls), state=None)

    def _report(self, messages: Sequence[dict], reply: str, seed: int) -> dict | None:
        """The state asked for after the reply (None when the endpoint fails or the reply holds no object)."""
        ask = STATE_REPORT_PROMPT.format(keys=", ".join(self.state_schema))
        convo = [
            {"role": "system", "content": self.system_prompt},
            *messages,
            {"role": "assistant", "content": reply},
            {"role": "user", "content": ask},
        ]
        try:
            res = self.client.chat(
                convo,
                seed=seed,
                schema=state_report_schema(self.state_schema),
                schema_name="state",
                max_tokens=max(self.state_max_tokens, self.client.max_tokens),
            )
        except ChatError:
            return None
        return parse_json_object(res.text)
