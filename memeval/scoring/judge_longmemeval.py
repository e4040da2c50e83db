"""LongMemEval's answer check in ``answer`` mode: one yes/no judge prompt per question type, as its
``src/evaluation/evaluate_qa.py`` defines them, so figures compare with published tables.

The rules per type carry over (memeval's own wording; prompts versioned in ``prompts/lme_*_v1.md``
and hashed into every record like the other prompts):

* single-session-user / single-session-assistant / multi-session: the response contains the answer,
  an equivalent, or all intermediate steps; a subset is wrong;
* temporal-reasoning: the same, and an off-by-one count of days/weeks/months is still correct;
* knowledge-update: earlier information alongside the updated answer is still correct;
* single-session-preference: the gold is a rubric; the response need not cover it all but must use
  the user's information correctly;
* abstention (question id ending ``_abs``): the response recognises the question as unanswerable.

A reply counts as correct when it contains "yes" (case-insensitive), as LongMemEval reads it.
"""

from __future__ import annotations

from importlib import resources

from ..bench.model import Question
from ..llm import ChatClient, ChatError, prompt_hash
from .judge import Verdict

__all__ = ["METRIC", "PROMPT_BY_TYPE", "ABSTENTION_PROMPT", "LongMemEvalJudge", "prompt_name"]

METRIC = "longmemeval-judge"
PROMPT_BY_TYPE: dict[str, str] = {
    "single-session-user": "lme_factual_v1",
    "single-session-assistant": "lme_factual_v1",
    "multi-session": "lme_factual_v1",
    "temporal-reasoning": "lme_temporal_v1",
    "knowledge-update": "lme_update_v1",
    "single-session-preference": "lme_preference_v1",
}
ABSTENTION_PROMPT = "lme_abstention_v1"


def _text(name: str) -> str:
    return resources.files("memeval.scoring").joinpath(f"prompts/{name}.md").read_text(encoding="utf-8")


def prompt_name(q: Question) -> str | None:
    """The prompt for an imported LongMemEval question (None for any other question).

    >>> prompt_name(Question("7161e7e2_abs", "ABSTAIN", "?", extra={"question_type": "temporal-reasoning"}))
    'lme_abstention_v1'
    >>> prompt_name(Question("q", "UPDATE", "?", extra={"question_type": "knowledge-update"}))
    'lme_update_v1'
    >>> prompt_name(Question("q", "BASIC", "?")) is None
    True
    """
    qtype = q.extra.get("question_type")
    if qtype is None:
        return None
    if q.id.endswith("_abs"):
        return ABSTENTION_PROMPT
    return PROMPT_BY_TYPE.get(qtype)


class LongMemEvalJudge:
    """Grades an answer with the prompt of its question's type (see the module docstring)."""

    def __init__(self, client: ChatClient):
        self.client = client
        names = sorted(set(PROMPT_BY_TYPE.values()) | {ABSTENTION_PROMPT})
        self.templates = {n: _text(n) for n in names}

    def identity(self, name: str) -> str:
        """``longmemeval-judge:<prompt>:<hash>@<model>``: what graded a record."""
        return f"{METRIC}:{name}:{prompt_hash(self.templates[name])}@{self.client.model}"

    def grade(self, q: Question, answer: str) -> tuple[Verdict, str] | None:
        """(verdict, identity) for a LongMemEval question, None for any other question."""
        name = prompt_name(q)
        if name is None:
            return None
        msg = self.templates[name].format(question=q.text_to_ask, answer=q.gold_answer, response=answer)
        try:
            reply = self.client.chat([{"role": "user", "content": msg}]).text.strip()
        except ChatError as e:
            return Verdict(None, None, None, f"judge failed: {e}"), self.identity(name)
        ok = "yes" in reply.lower()
        return Verdict(1.0 if ok else 0.0, "correct" if ok else "wrong", reply), self.identity(name)
