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

from dataclasses import dataclass
from typing import Sequence

from ..errors import ArgumentError
from ..bench.loaders.booksuite_model import Fact, facts_as_json, facts_from_json, gold_from_mapping, read_gold_facts
from ..text.fold import fold_case_space

__all__ = [
    "PASS_THRESHOLD",
    "METRIC",
    "Fact",
    "RecallResult",
    "normalize",
    "keyword_recall",
    "facts_from_json",
    "facts_as_json",
    "read_gold_facts",
    "gold_from_mapping",
]

METRIC = "keyword-recall"
PASS_THRESHOLD = 0.8

#: Lower-case, collapse white space, strip (the text layer's ``fold_case_space``).
normalize = fold_case_space


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
        raise ArgumentError("keyword recall needs at least one required fact")
    text = normalize(answer or "")
    matched: list[str] = []
    missing: list[str] = []
    for variants in facts:
        hit = any(normalize(v) and normalize(v) in text for v in variants)
        (matched if hit else missing).append(variants[0])
    reward = len(matched) / len(facts)
    return RecallResult(tuple(matched), tuple(missing), reward, reward >= threshold)
