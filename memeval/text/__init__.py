"""The text layer: normal forms, folds, containment and tokenisers, with no memeval imports.

Bench, systems and scoring all use it; it is the lowest layer (see ``tests/test_layers.py``).
``normal_form.normalize`` + ``containment.contains`` are the dry rules (benchmark.md §4); ``fold``
holds the lighter folds (keyword recall, LoCoMo, IDK phrases, the audit's look-up), ``tokens`` the
BM25 and guard tokenisers.
"""

from .containment import contains, contains_normalized, matches_any
from .fold import casefold_space, drop_punct_articles, fold_case_space, fold_for_phrases, fold_marks
from .normal_form import normalize
from .tokens import letter_words, word_tokens

__all__ = [
    "normalize",
    "contains",
    "contains_normalized",
    "matches_any",
    "fold_case_space",
    "casefold_space",
    "drop_punct_articles",
    "fold_for_phrases",
    "fold_marks",
    "word_tokens",
    "letter_words",
]
