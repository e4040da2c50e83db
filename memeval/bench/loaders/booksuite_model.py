"""The book suite's model: layers, cases as read from its YAML, and gold facts (``gold_facts.json``).

A case's gold is a list of required facts; a fact is one string or a list of acceptable variants.

>>> facts_from_json(["Paris", ["4429", "four four two nine"]])
(('Paris',), ('4429', 'four four two nine'))
>>> facts_as_json((('Paris',), ('4429', 'x')))
['Paris', ['4429', 'x']]
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from ...errors import InputError
from ..io import read_json

__all__ = [
    "LAYERS",
    "LAYER_AXES",
    "LAYER_TITLES",
    "Message",
    "History",
    "BookCase",
    "Fact",
    "facts_from_json",
    "facts_as_json",
    "read_gold_facts",
    "gold_from_mapping",
]

#: One required fact: its acceptable surface forms, the first being how it is shown.
Fact = tuple[str, ...]

LAYERS = ("layer1", "layer2", "layer3")
#: Which memeval axis a layer is scored as (benchmark.md §3). layer2 asks about one of several similar
#: entities held in separate conversations (combine and disambiguate across sessions: MULTI); layer3
#: wants connections nobody asked for, across sessions (passport expiry vs. a booked trip: IMPLICIT).
LAYER_AXES: dict[str, str] = {"layer1": "BASIC", "layer2": "MULTI", "layer3": "IMPLICIT"}
LAYER_TITLES: dict[str, str] = {
    "layer1": "Layer 1 · Basic Recall",
    "layer2": "Layer 2 · Disambiguation",
    "layer3": "Layer 3 · Proactive Synthesis",
}

BENCH_NAME = "booksuite"
SOURCE = (
    "bojieli/ai-agent-book@4a8df464a59fe65198c9a50a2ea848772dfc9698 "
    "chapter3/user-memory-evaluation (test_cases, fixtures/gold_facts.json)"
)
LICENSE = "Apache-2.0"
TIER = "all"
TURNS_FILE = "booksuite_turns.jsonl"
QUESTIONS_FILE = "booksuite_questions.jsonl"


@dataclass(frozen=True)
class Message:
    role: str
    content: str


@dataclass(frozen=True)
class History:
    conversation_id: str
    timestamp: str  # 'YYYY-MM-DD HH:MM:SS' or 'YYYY-MM-DD', as written
    messages: tuple[Message, ...]
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @property
    def date(self) -> str:
        return self.timestamp[:10]


@dataclass(frozen=True)
class BookCase:
    test_id: str
    layer: str
    title: str
    description: str
    histories: tuple[History, ...]  # as written in the file
    user_question: str
    evaluation_criteria: str
    expected_behavior: str | None = None
    source_file: str = ""

    @property
    def sessions(self) -> tuple[History, ...]:
        """Histories in ingestion order: by timestamp, ties in file order."""
        return tuple(sorted(self.histories, key=lambda h: h.timestamp))

    @property
    def asked_at(self) -> str:
        last = max(dt.date.fromisoformat(h.date) for h in self.histories)
        return (last + dt.timedelta(days=1)).isoformat()


def facts_from_json(value: Any, path="<gold>", record: str | None = None) -> tuple[Fact, ...]:
    """Validate one ``required_facts`` list (``[str | [str, ...]]``) into a tuple of variant tuples."""
    if not isinstance(value, list) or not value:
        raise InputError(path, record, "required_facts", "expected a non-empty list of strings or lists of strings")
    out: list[Fact] = []
    for i, item in enumerate(value):
        variants = [item] if isinstance(item, str) else item
        if (
            not isinstance(variants, list)
            or not variants
            or any(not isinstance(v, str) or not v.strip() for v in variants)
        ):
            raise InputError(
                path,
                record,
                f"required_facts[{i}]",
                "expected a non-empty string or a non-empty list of non-empty strings",
            )
        out.append(tuple(variants))
    return tuple(out)


def _gold_from(obj: Any, path) -> dict[str, tuple[Fact, ...]]:
    if not isinstance(obj, dict):
        raise InputError(path, None, None, "expected a JSON object {test_id: {required_facts: [...]}}")
    gold: dict[str, tuple[Fact, ...]] = {}
    for test_id, entry in obj.items():
        if test_id.startswith("_"):  # "_comment" and the like
            continue
        if not isinstance(entry, dict) or "required_facts" not in entry:
            raise InputError(path, test_id, "required_facts", "missing")
        gold[test_id] = facts_from_json(entry["required_facts"], path, test_id)
    return gold


def read_gold_facts(path) -> dict[str, tuple[Fact, ...]]:
    """Read ``gold_facts.json``: ``{test_id: {"required_facts": [str | [variants...]]}}``."""
    return _gold_from(read_json(path), Path(path))


def facts_as_json(facts: Iterable[Fact]) -> list[str | list[str]]:
    """The JSON shape back again (a one-variant fact is a plain string)."""
    return [f[0] if len(f) == 1 else list(f) for f in facts]


def gold_from_mapping(obj: Mapping[str, Any], path="<gold>") -> dict[str, tuple[Fact, ...]]:
    return _gold_from(dict(obj), path)
