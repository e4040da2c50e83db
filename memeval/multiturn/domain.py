"""The built-in suite's task world: editing a customer quote (and, after a goal change, grouping
orders) through tool calls.

It holds the user-text templates and their parser, the tool registry, a seeded :class:`World` whose
functions are the "live" tools, and :class:`Desk`, the state machine that turns user requests plus
tool returns into the state snapshot a correct assistant would report after each turn.
"""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

__all__ = [
    "TEMPLATES",
    "TOOLS",
    "WRITE_TOOLS",
    "LOOKUP_TOOLS",
    "CURRENCY_WORDS",
    "TAX_RATE",
    "EXPORT_FORMATS",
    "World",
    "Desk",
    "parse_request",
    "render_request",
    "columns_for",
    "STATE_KEYS",
    "STATE_SCHEMA",
]

TAX_RATE = 0.13
EXPORT_FORMATS = ("PDF", "XLSX", "CSV")
CURRENCY_WORDS = {"CNY": "yuan", "USD": "dollars", "EUR": "euros"}
_WORD_TO_CUR = {v: k for k, v in CURRENCY_WORDS.items()}
# The reportable state: JSON types, allowed values, money keys compared within half a cent.
STATE_SCHEMA: dict[str, dict] = {
    "customer": {"type": "string"},
    "currency": {"type": "string", "enum": ["CNY", "USD", "EUR"]},
    "tax_mode": {"type": "string", "enum": ["inclusive", "exclusive"]},
    "lines": {"type": "integer"},
    "total": {"type": "number", "money": True},
    "form": {"type": "string", "enum": ["text", "table"]},
    "extra_tax_line": {"type": "boolean"},
    "saved": {"type": "boolean"},
    "group_by": {"type": "string", "enum": ["customer", "region"]},
}
STATE_KEYS = ("customer", "currency", "tax_mode", "lines", "total", "form", "extra_tax_line", "saved", "group_by")

# kind -> user-text variants; {fields} are parsed back by parse_request.
TEMPLATES: dict[str, tuple[str, ...]] = {
    "start": (
        "Please draft a quote for {customer}, prices in {currency}.",
        "I need a quote for {customer} in {currency}.",
    ),
    "start_nocust": ("Please draft a quote, prices in {currency}.",),
    "start_same": ("Draft a new quote for {customer}, same terms as last time.",),
    "name_customer": ("It's for {customer}.",),
    "add": ("Add {qty} x {item}.", "Put {qty} units of {item} on it."),
    "tax_inclusive": ("From now on all prices must include tax.", "Keep every price tax-inclusive from here on."),
    "correct_currency": ("Sorry, I meant {currency}, not {old}.",),
    "as_table": ("Too long, give it to me as a table.",),
    "tax_line": ("Also add a separate tax line at the bottom.",),
    "ask_formats": ("By the way, which export formats do you support?",),
    "ask_second_item": ("Wait, what was the second item again?",),
    "confirm_save": ("Looks good, please save it.",),
    "group_orders": ("Never mind the quote, split last month's orders for these customers by customer instead.",),
    "regroup": ("Actually, by region or by customer, whichever reads clearer.",),
}

TOOLS: dict[str, dict] = {
    "get_price_list": {
        "description": "Unit prices (CNY, before tax) agreed with a customer.",
        "parameters": {"customer": "string"},
        "lookup": True,
    },
    "get_fx_rate": {
        "description": "Exchange rate from base to target currency.",
        "parameters": {"base": "string", "target": "string"},
        "lookup": True,
    },
    "render_sheet": {
        "description": "Render the quote as a sheet with the given columns and rows.",
        "parameters": {"columns": "array", "rows": "array", "currency": "string"},
    },
    "save_quote": {
        "description": "Save the quote (a write: only after the user confirms).",
        "parameters": {"customer": "string", "currency": "string", "total": "number"},
        "write": True,
    },
    "get_orders": {
        "description": "Last month's orders for the given customers.",
        "parameters": {"customers": "array"},
        "lookup": True,
    },
}
WRITE_TOOLS = frozenset(k for k, v in TOOLS.items() if v.get("write"))
LOOKUP_TOOLS = frozenset(k for k, v in TOOLS.items() if v.get("lookup"))


def _pattern(template: str) -> re.Pattern:
    parts = re.split(r"(\{\w+\})", template)
    rx = "".join(f"(?P<{p[1:-1]}>.+?)" if p.startswith("{") else re.escape(p) for p in parts)
    return re.compile(rx + r"\s*$")


_PATTERNS = [(kind, _pattern(t)) for kind, ts in TEMPLATES.items() for t in ts]


def render_request(kind: str, variant: int = 0, **fields) -> str:
    ts = TEMPLATES[kind]
    f = dict(fields)
    for k in ("currency", "old"):
        if k in f:
            f[k] = CURRENCY_WORDS[f[k]]
    return ts[variant % len(ts)].format(**f)


def parse_request(text: str) -> dict | None:
    """The request behind a user text, e.g. ``{"kind": "add", "qty": 3, "item": "bolts"}``."""
    ev = _parse_cached(text.strip())
    return dict(ev) if ev is not None else None


@lru_cache(maxsize=4096)
def _parse_cached(text: str) -> dict | None:
    for kind, rx in _PATTERNS:
        m = rx.match(text)
        if not m:
            continue
        ev = {"kind": kind, **m.groupdict()}
        for k in ("currency", "old"):
            if k in ev:
                if ev[k] not in _WORD_TO_CUR:
                    break
                ev[k] = _WORD_TO_CUR[ev[k]]
        else:
            if "qty" in ev:
                if not ev["qty"].isdigit():
                    continue
                ev["qty"] = int(ev["qty"])
            return ev
    return None


def columns_for(tax_mode: str) -> list[str]:
    tag = "incl. tax" if tax_mode == "inclusive" else "excl. tax"
    return ["Item", "Qty", f"Unit price ({tag})", f"Line total ({tag})"]


@dataclass(frozen=True)
class World:
    """Seeded customers, price lists, exchange rates and orders; its methods are the live tools."""

    customers: tuple[str, ...]
    items: tuple[str, ...]
    prices: dict[str, dict[str, float]]
    fx: dict[str, float]
    regions: dict[str, str]

    @classmethod
    def make(cls, seed: int) -> "World":
        rng = random.Random(seed)
        names = [
            "Acme Trading",
            "Borealis Foods",
            "Cobalt Tools",
            "Delta Marine",
            "Evergreen Labs",
            "Fjord Textiles",
            "Granite Works",
            "Harbor Optics",
        ]
        items = ("bolts", "brackets", "cable ties", "hinges", "rivets", "washers", "gaskets", "pulleys")
        prices = {c: {i: round(rng.uniform(0.5, 40.0), 2) for i in items} for c in names}
        fx = {"CNY": 1.0, "USD": round(rng.uniform(0.13, 0.15), 4), "EUR": round(rng.uniform(0.12, 0.14), 4)}
        regions = {c: rng.choice(["North", "South", "East", "West"]) for c in names}
        return cls(tuple(names), items, prices, fx, regions)

    def call(self, name: str, args: dict) -> Any:
        """Run a tool; unknown tools or arguments give an ``{"error": ...}`` return like a real API."""
        try:
            if name == "get_price_list":
                c = args["customer"]
                if c not in self.prices:
                    return {"error": f"unknown customer {c}"}
                return {"customer": c, "currency": "CNY", "prices": dict(self.prices[c])}
            if name == "get_fx_rate":
                b, t = args["base"], args["target"]
                return {"base": b, "target": t, "rate": round(self.fx[t] / self.fx[b], 4)}
            if name == "render_sheet":
                digest = hashlib.sha256(repr(args.get("columns", [])).encode()).hexdigest()[:6]
                return {
                    "sheet_id": f"sh_{digest}",
                    "columns": list(args.get("columns", [])),
                    "rows": len(args.get("rows", [])),
                }
            if name == "save_quote":
                return {"status": "saved", "quote_id": f"q_{args['customer'][:3].lower()}_{args['currency']}"}
            if name == "get_orders":
                cs = list(args.get("customers") or [])
                return {
                    "orders": [
                        {
                            "customer": c,
                            "region": self.regions.get(c, "?"),
                            "amount": round(sum(self.prices.get(c, {}).values()), 2),
                        }
                        for c in cs
                    ]
                }
        except (KeyError, TypeError) as e:
            return {"error": f"bad arguments: {e}"}
        return {"error": f"unknown tool {name}"}


@dataclass
class Desk:
    """What a correct assistant knows after each turn; ``snapshot()`` is the reportable state."""

    customer: str | None = None
    currency: str = "CNY"
    tax_mode: str = "exclusive"
    form: str = "text"
    extra_tax_line: bool = False
    saved: bool = False
    group_by: str | None = None
    items: list = field(default_factory=list)
    prices: dict = field(default_factory=dict)
    rate: float = 1.0
    customers_seen: list = field(default_factory=list)

    def apply(self, ev: dict | None) -> None:
        """Update on a user request (before tools run)."""
        if ev is None:
            return
        k = ev["kind"]
        if k in ("start", "start_nocust", "start_same"):
            self.items, self.saved, self.extra_tax_line, self.form = [], False, False, "text"
            self.customer = ev.get("customer")
            if "currency" in ev:
                self.currency = ev["currency"]
            if k != "start_same":
                self.tax_mode = "exclusive"
        elif k == "name_customer":
            self.customer = ev["customer"]
        elif k == "add":
            self.items.append((ev["item"], ev["qty"]))
            self.saved = False
        elif k == "tax_inclusive":
            self.tax_mode = "inclusive"
        elif k == "correct_currency":
            self.currency = ev["currency"]
        elif k == "as_table":
            self.form = "table"
        elif k == "tax_line":
            # contradicts a tax-inclusive constraint: flag it and do not add the line
            if self.tax_mode != "inclusive":
                self.extra_tax_line = True
        elif k == "confirm_save":
            self.saved = True
        elif k == "group_orders":
            self.group_by = "customer"
        elif k == "regroup":
            self.group_by = "region"
        if self.customer and self.customer not in self.customers_seen:
            self.customers_seen.append(self.customer)

    def needs(self, ev: dict | None) -> list[tuple[str, dict]]:
        """Tool calls a correct assistant makes for this request, in order."""
        if ev is None:
            return []
        k = ev["kind"]
        calls: list[tuple[str, dict[str, Any]]] = []
        if k in ("start", "name_customer", "start_same") and self.customer:
            calls.append(("get_price_list", {"customer": self.customer}))
            if self.currency != "CNY":
                calls.append(("get_fx_rate", {"base": "CNY", "target": self.currency}))
        elif k == "correct_currency" and self.currency != "CNY":
            calls.append(("get_fx_rate", {"base": "CNY", "target": self.currency}))
        elif k == "as_table":
            calls.append(("render_sheet", self.sheet_args()))
        elif k == "confirm_save":
            calls.append(("save_quote", {"customer": self.customer, "currency": self.currency, "total": self.total()}))
        elif k == "group_orders":
            calls.append(("get_orders", {"customers": list(self.customers_seen)}))
        if self.form == "table" and k in ("add", "tax_inclusive", "correct_currency"):
            calls.append(("render_sheet", self.sheet_args()))
        return calls

    def learn(self, name: str, ret: Any) -> None:
        """Take in a tool return."""
        if not isinstance(ret, dict):
            return
        if name == "get_price_list" and isinstance(ret.get("prices"), dict):
            self.prices = dict(ret["prices"])
            if self.currency == "CNY":
                self.rate = 1.0
        elif name == "get_fx_rate" and isinstance(ret.get("rate"), (int, float)):
            self.rate = float(ret["rate"])

    def unit_price(self, item: str) -> float:
        p = float(self.prices.get(item, 0.0)) * (self.rate if self.currency != "CNY" else 1.0)
        return p * (1 + TAX_RATE) if self.tax_mode == "inclusive" else p

    def total(self) -> float:
        return round(sum(self.unit_price(i) * q for i, q in self.items), 2)

    def sheet_args(self) -> dict:
        rows = [[i, q, round(self.unit_price(i), 2), round(self.unit_price(i) * q, 2)] for i, q in self.items]
        return {"columns": columns_for(self.tax_mode), "rows": rows, "currency": self.currency}

    def snapshot(self) -> dict:
        s = {
            "customer": self.customer,
            "currency": self.currency,
            "tax_mode": self.tax_mode,
            "lines": len(self.items),
            "total": self.total(),
            "form": self.form,
            "extra_tax_line": self.extra_tax_line,
            "saved": self.saved,
        }
        if self.group_by is not None:
            s["group_by"] = self.group_by
        return s
