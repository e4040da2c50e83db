"""What a perfect memory answers, within what a mode can grade: the ``oracle`` ceiling.

* A question whose right answer is that nothing was said (``expects_abstention``: ABSTAIN,
  FALSE_MEMORY, ``expect == "no_memory"`` -- which is how LoCoMo's adversarial category 5 and
  LongMemEval's ``_abs`` questions are imported) gets an explicit abstention, in the question's
  language (:func:`abstention_answer`), and no memories.
* Every other question gets its evidence turns, verbatim (the text a system receives).

The ``oracle`` system (``memeval.systems.baselines.Oracle``) and the audit's bounds check
(``memeval.audit.bounds``) both read these two functions, so the ceiling a run shows is the
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

from typing import Mapping

from .axes import ABSTENTION_AXES
from .model import Question

__all__ = ["IDK_ANSWERS", "expects_abstention", "abstention_answer"]

#: The "I don't know" answer put to every question, by query language (English for others);
#: the oracle's abstention and the audit's IDK floor both use it.
IDK_ANSWERS: Mapping[str, str] = {
    "en": "I don't know; that was never mentioned in our conversations.",
    "es": "No lo sé; eso nunca se mencionó en nuestras conversaciones.",
    "fr": "Je ne sais pas ; cela n'a jamais été mentionné dans nos conversations.",
    "de": "Ich weiß es nicht; das wurde in unseren Gesprächen nie erwähnt.",
    "pt": "Não sei; isso nunca foi mencionado nas nossas conversas.",
    "it": "Non lo so; non è mai stato menzionato nelle nostre conversazioni.",
    "zh": "我不知道，我们的对话中从未提到过这件事。",
    "ja": "わかりません。その話は私たちの会話で一度も出てきませんでした。",
    "ko": "모르겠습니다. 우리 대화에서 한 번도 언급된 적이 없습니다.",
    "ru": "Не знаю: об этом в наших разговорах никогда не упоминалось.",
    "ar": "لا أعرف، لم يُذكر ذلك أبدًا في محادثاتنا.",
}


def expects_abstention(q: Question) -> bool:
    """True when the right answer is "it was never said" (no evidence to return): the question is
    scored by an abstention rule (``Question.scored_as``, the one place that says which rule grades)."""
    return q.scored_as in ABSTENTION_AXES


def abstention_answer(q: Question) -> str:
    """The oracle's abstention: the audit's "I don't know" phrase in the question's language
    (English where memeval has none)."""
    return IDK_ANSWERS.get(q.lang, IDK_ANSWERS["en"])
