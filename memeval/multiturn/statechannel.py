"""The structured state channel: a real agent reports its working state itself, validated against
the sample's state schema, instead of a text extractor guessing it from the reply.

Two forms are read: a ``report_state`` tool call (its arguments are the state) and a fenced block
in the reply, ```` ```state {...}``` ```` (or ```` ```json ```` holding ``{"state": {...}}``). Values
that break the schema are dropped and named; a key the agent leaves out stays missing (so the
assertion is undetermined, never a pass). ``null`` means "not set yet" and is kept.

>>> schema = {"currency": {"type": "string", "enum": ["CNY", "USD"]}, "lines": {"type": "integer"}}
>>> validate_state({"currency": "USD", "lines": "3", "colour": "red"}, schema)
({'currency': 'USD'}, ('lines: expected integer', 'colour: not in the state schema'))
>>> parse_state_block('Done.\\n```state\\n{"lines": 2}\\n```')
('Done.', {'lines': 2})
"""

from __future__ import annotations

import json
import re
from typing import Any, Mapping

__all__ = ["STATE_TOOL", "report_state_tool", "validate_state", "parse_state_block", "STATE_PROMPT"]

STATE_TOOL = "report_state"
STATE_PROMPT = (
    f"After every change, call the {STATE_TOOL} tool once with the full working state (every key you "
    "know), then answer the user."
)

_JSON = {"string": "string", "integer": "integer", "number": "number", "boolean": "boolean"}
_BLOCK = re.compile(r"```(state|json)\s*\n(?P<body>\{.*?\})\s*\n?```", re.S)


def report_state_tool(schema: Mapping[str, Mapping[str, Any]]) -> dict:
    """The ``report_state`` function in OpenAI ``tools`` form, its parameters from the schema."""
    props = {}
    for k, spec in schema.items():
        p: dict = {"type": [_JSON[spec["type"]], "null"]}
        if "enum" in spec:
            p["enum"] = list(spec["enum"]) + [None]
        props[k] = p
    return {
        "type": "function",
        "function": {
            "name": STATE_TOOL,
            "description": "Report the working state after this turn (not shown to the user).",
            "parameters": {"type": "object", "properties": props, "additionalProperties": False},
        },
    }


def _fits(v: Any, spec: Mapping[str, Any]) -> bool:
    t = spec["type"]
    if v is None:
        return True
    if t == "boolean":
        ok = isinstance(v, bool)
    elif t == "integer":
        ok = isinstance(v, int) and not isinstance(v, bool)
    elif t == "number":
        ok = isinstance(v, (int, float)) and not isinstance(v, bool)
    else:
        ok = isinstance(v, str)
    return ok and ("enum" not in spec or v in spec["enum"])


def validate_state(obj: Any, schema: Mapping[str, Mapping[str, Any]]) -> tuple[dict, tuple[str, ...]]:
    """(the valid part of ``obj``, one message per dropped key). An empty schema accepts any keys."""
    if not isinstance(obj, Mapping):
        return {}, (f"state must be an object, got {type(obj).__name__}",)
    out, errors = {}, []
    for k, v in obj.items():
        spec = schema.get(k) if schema else {"type": "any"}
        if spec is None:
            errors.append(f"{k}: not in the state schema")
        elif spec["type"] == "any" or _fits(v, spec):
            out[k] = v
        else:
            errors.append(f"{k}: expected {spec['type']}" + (f" in {spec['enum']}" if "enum" in spec else ""))
    return out, tuple(errors)


def parse_state_block(text: str) -> tuple[str, dict | None]:
    """(reply without the state block, the block's object or None)."""
    found = None
    for m in _BLOCK.finditer(text or ""):
        try:
            obj = json.loads(m["body"])
        except json.JSONDecodeError:
            continue
        if m.group(1) == "json":
            if not (isinstance(obj, dict) and isinstance(obj.get("state"), dict)):
                continue
            obj = obj["state"]
        found = (m, obj)
    if found is None:
        return text, None
    m, obj = found
    return (text[: m.start()] + text[m.end() :]).strip(), obj
