"""LoCoMo's QA metric, as its evaluation script (snap-research/locomo ``task_eval/evaluation.py``)
computes it, reimplemented for ``answer`` mode so figures compare with published tables.

* normalisation: commas removed, lower case, ASCII punctuation removed, the words a/an/the/and
  removed, whitespace collapsed; tokens are Porter-stemmed (NLTK's ``PorterStemmer``, as there);
* token F1: overlap of stemmed token multisets (0 when nothing overlaps);
* per category (``locomo_category`` in the imported question):
  1 multi-hop -- gold and answer split on commas; the mean over gold parts of the best F1 against any
  answer part; 2 temporal, 4 single-hop -- F1 against the gold; 3 open-domain -- F1 against the gold
  up to its first ";"; 5 adversarial -- 1 when the answer says "no information available" or "not
  mentioned" (case-insensitive), else 0.

>>> round(token_f1("The photos of Paris", "photo Paris"), 3)  # photo of pari / photo pari: P 2/3, R 1
0.8
>>> round(token_f1("in May 2023", "7 May 2023"), 3)
0.667
>>> locomo_score(1, "hiking, painting", "painting, swimming, hiking")
0.6666666666666666
>>> locomo_score(5, "That was not mentioned.", "anything")
1.0
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache

from ..errors import ArgumentError
from ..bench.model import Question
from ..bench.oracle import LOCOMO_ABSTENTION
from ..text.fold import drop_punct_articles

__all__ = ["METRIC", "normalize_answer", "token_f1", "multi_f1", "locomo_score", "score_question"]

METRIC = "locomo-f1"
_ABSTAINS = LOCOMO_ABSTENTION.phrases  # ("no information available", "not mentioned")


@lru_cache(maxsize=1)
def _stemmer():
    from nltk.stem import PorterStemmer  # no data download: the stemmer is code only

    return PorterStemmer()


def normalize_answer(s: str) -> str:
    """LoCoMo's normalisation (before stemming).

    >>> normalize_answer("The cat, and a Dog!")
    'cat dog'
    """
    return drop_punct_articles(s)


def _tokens(s: str) -> list[str]:
    stem = _stemmer().stem
    return [stem(w) for w in normalize_answer(s).split()]


def token_f1(prediction: str, gold: str) -> float:
    p, g = _tokens(prediction), _tokens(gold)
    same = sum((Counter(p) & Counter(g)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(p), same / len(g)
    return 2 * precision * recall / (precision + recall)


def multi_f1(prediction: str, gold: str) -> float:
    """Category 1: mean over comma-separated gold parts of the best F1 against any answer part."""
    preds = [p.strip() for p in prediction.split(",")]
    golds = [g.strip() for g in gold.split(",")]
    return sum(max(token_f1(p, g) for p in preds) for g in golds) / len(golds)


def locomo_score(category: int, prediction: str, gold: str) -> float:
    """The score LoCoMo's script gives ``prediction`` for a question of ``category`` (1-5)."""
    if category == 5:
        low = prediction.lower()
        return 1.0 if any(p in low for p in _ABSTAINS) else 0.0
    if category == 1:
        return float(multi_f1(prediction, gold))
    if category == 3:
        gold = gold.split(";")[0].strip()
    if category in (2, 3, 4):
        return token_f1(prediction, gold)
    raise ArgumentError(f"LoCoMo category must be 1..5, got {category!r}")


def score_question(q: Question, answer: str) -> float | None:
    """LoCoMo's score for an imported LoCoMo question (None for any other question)."""
    cat = q.extra.get("locomo_category")
    if cat is None:
        return None
    return locomo_score(int(cat), answer or "", q.gold_answer)
