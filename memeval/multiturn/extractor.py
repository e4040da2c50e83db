"""State extractors: read the state an assistant reply states, and measure them against hand labels.

``RuleExtractor`` parses the reference phrasing; ``ChatExtractor`` asks an OpenAI-compatible
endpoint for a JSON object. ``extractor_accuracy`` is key-level accuracy against hand labels
(a label of ``None`` means the reply states nothing, and the extractor should say so); below the
config's threshold the extractor's traces are not trusted and samples become ``undetermined``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from ..llm import ChatClient, ChatError, parse_json_object
from .agents import Agent, AgentStep

__all__ = ["RuleExtractor", "ChatExtractor", "ExtractorScore", "extractor_accuracy", "StateFromText", "KEY_SPEC"]

KEY_SPEC = {
    "customer": "customer name (string)",
    "currency": "CNY, USD or EUR",
    "tax_mode": "inclusive or exclusive",
    "lines": "number of quote lines (integer)",
    "total": "quote total (number)",
    "form": "text or table",
    "extra_tax_line": "whether a separate tax line was added (boolean)",
    "saved": "whether the quote was saved (boolean)",
    "group_by": "customer or region (only when orders were grouped)",
}

_A = re.compile(
    r"Quote for (?P<customer>.+?): (?P<lines>\d+) lines, total (?P<total>-?[\d.]+) (?P<currency>[A-Z]{3}) "
    r"\((?P<tax>incl|excl)\. tax\)"
)
_B = re.compile(
    r"The quote for (?P<customer>.+?) now has (?P<lines>\d+) lines and totals (?P<currency>[A-Z]{3}) "
    r"(?P<total>-?[\d.]+), tax (?P<tax>included|excluded)"
)
_G = re.compile(r"Grouped last month's orders by (?P<g>customer|region)")


@dataclass
class RuleExtractor:
    name: str = "rules-v1"

    def extract(self, text: str, turn: int) -> dict | None:
        g = _G.search(text)
        if g:
            return {"group_by": g["g"]}
        m = _A.search(text) or _B.search(text)
        if not m:
            return None
        return {
            "customer": m["customer"],
            "currency": m["currency"],
            "tax_mode": "inclusive" if m["tax"].startswith("incl") else "exclusive",
            "lines": int(m["lines"]),
            "total": float(m["total"]),
            "form": "table" if "as a table" in text else "text",
            "extra_tax_line": "Added a separate tax line" in text,
            "saved": "Saved it" in text,
        }


EXTRACT_PROMPT = """Read the assistant reply below and report the quote state it states.
Keys: {keys}
Use only values the reply states; leave a key out when the reply does not state it.
If the reply states no quote or order state at all, answer {{}}.
Reply with one JSON object only.

Reply:
{text}"""


@dataclass
class ChatExtractor:
    """LLM-based extractor over an OpenAI-compatible endpoint."""

    client: ChatClient
    name: str = "chat-extractor-v1"
    seed: int | None = 0

    def extract(self, text: str, turn: int) -> dict | None:
        keys = "; ".join(f"{k}: {v}" for k, v in KEY_SPEC.items())
        try:
            res = self.client.chat(
                [{"role": "user", "content": EXTRACT_PROMPT.format(keys=keys, text=text)}],
                response_format={"type": "json_object"},
                seed=self.seed,
            )
        except ChatError:
            return {}  # nothing known: keys missing -> undetermined downstream
        obj = parse_json_object(res.text)
        if not obj:
            return None
        return {k: v for k, v in obj.items() if k in KEY_SPEC and v is not None}


@dataclass(frozen=True)
class ExtractorScore:
    accuracy: float
    units: int
    per_key: dict = field(default_factory=dict)  # key -> (correct, total)

    def trusted(self, threshold: float) -> bool:
        return self.units > 0 and self.accuracy >= threshold


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return abs(float(a) - float(b)) <= 0.005
    return a == b


def extractor_accuracy(extractor, labels: Iterable[Mapping]) -> ExtractorScore:
    """Key-level accuracy over hand labels ``{"text", "turn", "state": {...} | None}``."""
    per: dict[str, list[int]] = {}
    for lab in labels:
        got = extractor.extract(lab["text"], int(lab.get("turn", 0)))
        want = lab.get("state")
        if want is None:
            c = per.setdefault("(nothing stated)", [0, 0])
            c[0] += int(not got)
            c[1] += 1
            continue
        got = got or {}
        for k, v in want.items():
            c = per.setdefault(k, [0, 0])
            c[0] += int(k in got and _same(got[k], v))
            c[1] += 1
    ok = sum(c for c, _ in per.values())
    n = sum(t for _, t in per.values())
    return ExtractorScore(ok / n if n else 0.0, n, {k: tuple(v) for k, v in per.items()})


@dataclass
class StateFromText:
    """Wrap an agent so its reported state is dropped and the extractor reads the text instead."""

    inner: Agent

    @property
    def name(self) -> str:
        return getattr(self.inner, "name", "agent") + "+text-state"

    def gen(self, messages: Sequence[dict], seed: int, turn: int, step: int) -> AgentStep:
        out = self.inner.gen(messages, seed, turn, step)
        return AgentStep(out.text, out.tool_calls, None)
