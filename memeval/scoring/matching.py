"""Answer matching for dry mode (benchmark.md §4), from the text layer: ``normalize`` puts an answer
and a gold into one comparable form (``memeval.text.normal_form``), ``contains`` looks for the gold in
it (``memeval.text.containment``); both docstrings list every rule.

>>> contains("It costs five dollars a month", "$5")
True
"""

from __future__ import annotations

from ..text import containment, normal_form
from ..text.containment import (
    HEDGE_WORDS,
    contains,
    contains_normal_forms,
    contains_normalized,
    matches_any,
    numbers_in,
)
from ..text.normal_form import CACHE_MAX_CHARS, normalize

__all__ = [
    "normalize",
    "contains",
    "contains_normalized",
    "contains_normal_forms",
    "matches_any",
    "numbers_in",
    "HEDGE_WORDS",
    "CACHE_MAX_CHARS",
    "clear_caches",
]


def clear_caches() -> None:
    """Forget memoised normal forms, gold shapes and fallbacks (for benchmarks)."""
    normal_form.clear_caches()
    containment.clear_caches()
