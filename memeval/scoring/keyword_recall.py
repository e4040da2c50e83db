"""Keyword recall: the book suite's offline metric (``external-formats.md``, its ``SOURCE.md``).

A case's gold is a list of required facts; a fact is one string or a list of acceptable variants.
Text is normalised by lower-casing, collapsing white space and stripping -- nothing more (this is
deliberately *not* the dry matching of ``benchmark.md`` §4, so that the book's reference numbers
reproduce exactly). A fact counts when any of its variants is a substring of the answer;
``reward = matched / total``; a case passes at ``reward >= 0.8``.

>>> r = keyword_recall("Account  4429853327, routing 123006800", [["4429853327"], ["123006800", "x"]])
>>> (r.reward, r.passed)
(1.0, True)
>>> keyword_recall("CLM-2024-894327 only", [["clm-2024-894327"], ["Patricia Wong"]]).missing
('Patricia Wong',)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from ..errors import InputError

__all__ = ["PASS_THRESHOLD", "METRIC", "Fact", "RecallResult", "normalize", "keyword_recall",
           "facts_from_json", "facts_as_json", "read_gold_facts", "gold_from_mapping"]

METRIC = "keyword-recall"
PASS_THRESHOLD = 0.8

#: One required fact: its acceptable surface forms, the first being how it is shown.
Fact = tuple[str, ...]

_WS = re.compile(r"\s+")


def normalize(text: str) -> str:
    """Lower-case, collapse runs of white space to one space, strip."""
    return _WS.sub(" ", text.lower()).strip()


@dataclass(frozen=True)
class RecallResult:
    matched: tuple[str, ...]  # each fact shown by its first variant
    missing: tuple[str, ...]
    reward: float
    passed: bool

    @property
    def total(self) -> int:
        return len(self.matched) + len(self.missing)


def keyword_recall(answer: str | None, facts: Sequence[Fact], threshold: float = PASS_THRESHOLD) -> RecallResult:
    """Score ``answer`` against ``facts`` (each a tuple of variants); an empty fact list is an error."""
    if not facts:
        raise ValueError("keyword recall needs at least one required fact")
    text = normalize(answer or "")
    matched, missing = [], []
    for variants in facts:
        hit = any(normalize(v) and normalize(v) in text for v in variants)
        (matched if hit else missing).append(variants[0])
    reward = len(matched) / len(facts)
    return RecallResult(tuple(matched), tuple(missing), reward, reward >= threshold)


def facts_from_json(value: Any, path="<gold>", record: str | None = None) -> tuple[Fact, ...]:
    """Validate one ``required_facts`` list (``[str | [str, ...]]``) into a tuple of variant tuples."""
    if not isinstance(value, list) or not value:
        raise InputError(path, record, "required_facts", "expected a non-empty list of strings or lists of strings")
    out: list[Fact] = []
    for i, item in enumerate(value):
        variants = [item] if isinstance(item, str) else item
        if (not isinstance(variants, list) or not variants
                or any(not isinstance(v, str) or not v.strip() for v in variants)):
            raise InputError(path, record, f"required_facts[{i}]",
                             "expected a non-empty string or a non-empty list of non-empty strings")
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
    from ..bench.io import read_json

    return _gold_from(read_json(path), Path(path))


def facts_as_json(facts: Iterable[Fact]) -> list[str | list[str]]:
    """The JSON shape back again (a one-variant fact is a plain string)."""
    return [f[0] if len(f) == 1 else list(f) for f in facts]


def gold_from_mapping(obj: Mapping[str, Any], path="<gold>") -> dict[str, tuple[Fact, ...]]:
    return _gold_from(dict(obj), path)
