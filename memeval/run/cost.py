"""Tokens and cost per question: the usage of a question's model calls by role, priced by a table.

A price table (``--prices prices.yaml``) maps each model name, as the run's clients ask for it, to
US dollars per million tokens in and out::

    gpt-4o-mini: {input: 0.15, output: 0.60}
    qwen2.5-7b-instruct: {input: 0, output: 0}   # a local model: free

A question's cost is ``sum(prompt_tokens * input + completion_tokens * output) / 1e6`` over its calls;
it is unknown (``None``), never 0, when a call's model is not in the table or its endpoint reported
no token counts.

>>> p = Prices({"m": Price(2.0, 8.0)})
>>> p.cost([{"role": "reader", "model": "m", "calls": 1, "prompt_tokens": 1000, "completion_tokens": 50}])
0.0024
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping

from ..bench.files import read_yaml
from ..errors import InputError

__all__ = ["Price", "Prices", "load_prices", "usage_fields", "usage_entry_ok"]


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens: ``input`` (prompt) and ``output`` (completion)."""

    input: float
    output: float


@dataclass(frozen=True)
class Prices:
    models: Mapping[str, Price] = field(default_factory=dict)
    source: str | None = None

    def cost(self, usage: Iterable[Mapping] | None) -> float | None:
        """Dollars for a record's ``usage`` entries; None when any entry cannot be priced; 0.0 for no calls."""
        total = 0.0
        for u in usage or ():
            price = self.models.get(u["model"])
            if price is None or u.get("prompt_tokens") is None or u.get("completion_tokens") is None:
                return None
            total += u["prompt_tokens"] * price.input + u["completion_tokens"] * price.output
        return round(total / 1e6, 12)

    def to_json(self) -> dict:
        """What the manifest keeps: the file and its rates."""
        return {
            "source": self.source,
            "usd_per_million_tokens": {m: {"input": p.input, "output": p.output} for m, p in self.models.items()},
        }


def _rate(v, path, field_name: str) -> float:
    ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 0
    if not ok:
        raise InputError(path, None, field_name, f"expected a non-negative number (USD per million tokens), got {v!r}")
    return float(v)


def load_prices(path) -> Prices:
    """A price table from YAML: ``{model: {input: USD per 1M prompt tokens, output: USD per 1M completion
    tokens}}``; anything else is :class:`InputError` naming the file and the field."""
    path = Path(path)
    obj = read_yaml(path)
    if not isinstance(obj, dict) or not obj:
        raise InputError(path, None, None, "expected a mapping {model: {input: USD, output: USD}} per million tokens")
    models = {}
    for name, rates in obj.items():
        if not isinstance(name, str) or not name.strip():
            raise InputError(path, None, str(name), "a model name must be a non-empty string")
        if not isinstance(rates, dict):
            raise InputError(path, None, name, "expected {input: USD, output: USD} per million tokens")
        extra = sorted(set(map(str, rates)) - {"input", "output"})
        if extra:
            raise InputError(path, None, f"{name}.{extra[0]}", "unknown field (expected input and output)")
        models[name] = Price(*(_rate(rates.get(k), path, f"{name}.{k}") for k in ("input", "output")))
    return Prices(models, str(path))


def usage_fields(entries: list[dict], prices: Prices | None) -> dict:
    """The record's ``usage``, token totals and ``cost_usd`` (None without a price table).

    >>> usage_fields([], None)
    {'usage': [], 'prompt_tokens': 0, 'completion_tokens': 0, 'cost_usd': None}
    """

    def total(k):
        vals = [e[k] for e in entries]
        return None if any(v is None for v in vals) else sum(vals)

    return {
        "usage": entries,
        "prompt_tokens": total("prompt_tokens"),
        "completion_tokens": total("completion_tokens"),
        "cost_usd": None if prices is None else prices.cost(entries),
    }


def _count(x, none_ok: bool = True) -> bool:
    return (x is None and none_ok) or (isinstance(x, int) and not isinstance(x, bool) and 0 <= x < 2**62)


def usage_entry_ok(u) -> bool:
    """Whether ``u`` is a record's usage entry ``{role, model, calls, prompt_tokens, completion_tokens}``.

    >>> usage_entry_ok({"role": "judge", "model": "m", "calls": 1, "prompt_tokens": None, "completion_tokens": 3})
    True
    >>> usage_entry_ok({"role": "judge", "model": "m", "calls": -1})
    False
    """
    return (
        isinstance(u, dict)
        and isinstance(u.get("role"), str)
        and isinstance(u.get("model"), str)
        and _count(u.get("calls"), False)
        and _count(u.get("prompt_tokens"))
        and _count(u.get("completion_tokens"))
    )
