"""What a perfect memory answers, within what a mode can grade: the ``oracle`` ceiling.

* A question whose right answer is that nothing was said (``expects_abstention``: ABSTAIN,
  FALSE_MEMORY, ``expect == "no_memory"`` -- which is how LoCoMo's adversarial category 5 and
  LongMemEval's ``_abs`` questions are imported) gets an explicit abstention, in the question's
  language (:func:`abstention_answer`), and no memories.
* Every other question gets its evidence turns, verbatim (the text a system receives).

The ``oracle`` system (``memeval.systems.baselines.Oracle``) and the audit's bounds check
(``memeval.bench.audit_bounds``) both read these two functions, so the ceiling a run shows is the
ceiling the audit checks.

>>> from memeval.bench.model import Question
>>> expects_abstention(Question("q1", "ABSTAIN", "Where did I park?"))
True
>>> expects_abstention(Question("q2", "BASIC", "Who won?", expect="no_memory"))
True
>>> abstention_answer(Question("q3", "FALSE_MEMORY", "Why did I sell the car?"))
"I don't know; that was never mentioned in our conversations."
"""

from __future__ import annotations

from .axes import ABSTENTION_AXES
from .model import Question

__all__ = ["expects_abstention", "abstention_answer"]


def expects_abstention(q: Question) -> bool:
    """True when the right answer is "it was never said" (no evidence to return)."""
    return q.expect == "no_memory" or (q.axis or "").upper() in ABSTENTION_AXES


def abstention_answer(q: Question) -> str:
    """The oracle's abstention: the audit's "I don't know" phrase in the question's language
    (English where memeval has none)."""
    from .audit import IDK_ANSWERS  # the one table of IDK phrases (audit imports nothing from here)

    return IDK_ANSWERS.get(q.lang, IDK_ANSWERS["en"])
