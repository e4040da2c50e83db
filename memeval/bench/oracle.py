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

Where a bench's official metric credits an abstention only in set words (LoCoMo's category 5: "not
mentioned" or "no information available"), the abstention says them (:func:`official_abstention`):

>>> abstention_answer(Question("q4", "ABSTAIN", "?", expect="no_memory", extra={"locomo_category": 5}))
"I don't know; that was not mentioned in our conversations (no information available)."
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from .axes import ABSTENTION_AXES
from .model import Question

__all__ = [
    "IDK_ANSWERS",
    "expects_abstention",
    "abstention_answer",
    "OfficialAbstention",
    "LOCOMO_ABSTENTION",
    "OFFICIAL_ABSTENTIONS",
    "official_abstention",
]


@dataclass(frozen=True)
class OfficialAbstention:
    """A bench whose official metric credits an abstention only when it holds set words.

    ``marker``: the ``Question.extra`` key the bench's imported questions carry; ``phrases``: what the
    metric looks for (any of them, case-insensitive); ``answer``: memeval's abstention in those words
    (the oracle's, the always-IDK probe's); ``reader_words``: what the bench's reader prompt asks the
    reader to answer when the memories lack the answer."""

    bench: str
    marker: str
    phrases: tuple[str, ...]
    answer: str
    reader_words: str

    def passes(self, text: str) -> bool:
        """Whether ``text`` holds one of the phrases, as the official metric checks it."""
        low = text.lower()
        return any(p in low for p in self.phrases)


#: LoCoMo (``task_eval/evaluation.py``): a category-5 answer scores 1 only when it says "no information
#: available" or "not mentioned".
LOCOMO_ABSTENTION = OfficialAbstention(
    "LoCoMo",
    "locomo_category",
    ("no information available", "not mentioned"),
    "I don't know; that was not mentioned in our conversations (no information available).",
    "Not mentioned in the conversation.",
)
OFFICIAL_ABSTENTIONS: tuple[OfficialAbstention, ...] = (LOCOMO_ABSTENTION,)


def official_abstention(q: Question) -> OfficialAbstention | None:
    """The official abstention wording of ``q``'s bench, if its metric demands one (None otherwise)."""
    return next((o for o in OFFICIAL_ABSTENTIONS if o.marker in q.extra), None)


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
    (English where memeval has none), in the words the bench's official metric demands where it
    demands some (:func:`official_abstention`)."""
    official = official_abstention(q)
    if official is not None:
        return official.answer
    return IDK_ANSWERS.get(q.lang, IDK_ANSWERS["en"])
