"""An agent under test behind an OpenAI-compatible endpoint (tools as function calls).

The agent reports no state itself (``state=None``): a state extractor reads it from the reply.
Endpoint failures raise, and the replayer records the sample as ``incomplete`` with the reason.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Sequence

from ..llm import ChatClient
from .agents import AgentStep
from .domain import TOOLS
from .tools import ToolCall

__all__ = ["ChatAgent", "openai_tools", "SYSTEM_PROMPT"]

SYSTEM_PROMPT = ("You help a sales clerk edit customer quotes. Use the tools to look up prices and exchange "
                 "rates; never save without the user's confirmation; keep every constraint the user set until "
                 "they withdraw it; if a request contradicts a standing constraint, ask before acting. After each "
                 "change, restate the quote as: 'Quote for <customer>: <n> lines, total <amount> <CUR> "
                 "(incl./excl. tax).'")

_JSON_TYPES = {"string": {"type": "string"}, "number": {"type": "number"}, "array": {"type": "array", "items": {}}}


def openai_tools(registry: dict = TOOLS) -> list[dict]:
    """The tool registry in OpenAI ``tools`` form."""
    return [{"type": "function", "function": {
        "name": name, "description": spec["description"],
        "parameters": {"type": "object", "properties": {k: _JSON_TYPES[v] for k, v in spec["parameters"].items()},
                       "required": list(spec["parameters"])}}} for name, spec in registry.items()]


@dataclass
class ChatAgent:
    client: ChatClient
    name: str = "chat-agent"
    system_prompt: str = SYSTEM_PROMPT
    tools: list = field(default_factory=openai_tools)

    def gen(self, messages: Sequence[dict], seed: int, turn: int, step: int) -> AgentStep:
        res = self.client.chat([{"role": "system", "content": self.system_prompt}, *messages],
                               tools=self.tools, seed=seed)
        calls = []
        for i, c in enumerate(res.tool_calls):
            fn = c.get("function") or {}
            try:
                args = json.loads(fn.get("arguments") or "{}")
            except json.JSONDecodeError:
                args = {"_unparsed": fn.get("arguments")}
            calls.append(ToolCall(fn.get("name", ""), args if isinstance(args, dict) else {"_value": args},
                                  c.get("id") or f"call_{turn}_{step}_{i}"))
        return AgentStep(text=res.text, tool_calls=tuple(calls), state=None)
