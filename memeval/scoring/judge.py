"""The judge and the reader for ``memory`` and ``answer`` modes, over an OpenAI-compatible endpoint.

Both are fixed per bench version: model, prompt text (versioned files in ``prompts/``), temperature 0.
Their identity and the prompt hash go into every record's ``grader``. A judge call that fails after
retries, or a verdict that cites no evidence, leaves the question ungraded (``score=None``) with a
reason — never 0.

The verdict is asked for as a JSON object matching :data:`VERDICT_SCHEMA` where the endpoint offers
structured output (``ChatClient.chat(schema=...)``), the prompt's prose request otherwise; the reply
is read tolerantly (``llm.parse_json_object``). A reply with no readable verdict is ungraded with
:data:`UNPARSEABLE` as its reason (a run reports their share).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from typing import Protocol, TypeVar, runtime_checkable

from ..bench.model import Question
from ..bench.oracle import LOCOMO_ABSTENTION, official_abstention
from ..llm import ChatClient, ChatError, parse_json_object, prompt_hash, user_message
from . import lme_v2
from .reader_images import ReaderImages

__all__ = [
    "JudgeProtocol",
    "Verdict",
    "Judge",
    "Reader",
    "JUDGE_PROMPT",
    "READER_PROMPT",
    "READER_PROMPT_FOR_BENCH",
    "NOT_GRADABLE_IN_MEMORY_MODE",
    "VERDICT_SCHEMA",
    "UNPARSEABLE",
    "NOT_GRADABLE",
]

JUDGE_PROMPT = "judge_v1"
READER_PROMPT = "reader_v1"
#: The default reader's prompt for a bench whose official metric wants set abstention words
#: (``bench.oracle.official_abstention``): the same prompt, asking for those words.
READER_PROMPT_FOR_BENCH = {LOCOMO_ABSTENTION.bench: "reader_locomo_v1"}
NOT_GRADABLE_IN_MEMORY_MODE = frozenset({"ABSTAIN", "FALSE_MEMORY"})
_SCORES = {"correct": 1.0, "partial": 0.5, "wrong": 0.0}
UNPARSEABLE = "judge reply has no valid verdict"
NOT_GRADABLE = "not gradable in memory mode"
#: The verdict object; ``evidence`` is bounded so a reply cut at ``max_tokens`` is rare.
VERDICT_SCHEMA = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": list(_SCORES)},
        "evidence": {"type": "string", "minLength": 1, "maxLength": 300},
    },
    "required": ["verdict", "evidence"],
    "additionalProperties": False,
}

_AXIS_RULES = {
    "STALE": "Rule: the current value is correct; serving the old value ({stale}) as current is wrong; saying it is not known is partial.",
    "UPDATE": 'Rule: the new value is correct ("it was X, now Y" is correct); saying it is not known is partial.',
    "CONTRADICT": "Rule: correct only if it gives both values ({clash_a} / {clash_b}) or says the records disagree; saying it is unknown is partial; picking one value is wrong.",
    "RECONCILE": "Rule: both conditions ({side_a} / {side_b}) correct; one of them partial; 'I don't know' is wrong.",
    "CONFLICT": "Rule: the question carries an outdated value; correct only if it corrects it and gives the current value; the current value without a correction is partial.",
    "GATHER": "Rule: the answer has parts {parts}; all parts correct, some parts partial.",
    "ABSTAIN": "Rule: this was never stated; correct only if the text says so; any invented answer is wrong.",
    "FALSE_MEMORY": "Rule: the question asserts something never said; correct only if the text declines the premise; going along is wrong.",
}


def _prompt(name: str) -> str:
    return resources.files("memeval.scoring").joinpath(f"prompts/{name}.md").read_text(encoding="utf-8")


Subject = TypeVar("Subject", contravariant=True)
Graded = TypeVar("Graded", contravariant=True)
Result = TypeVar("Result", covariant=True)


@runtime_checkable
class JudgeProtocol(Protocol[Subject, Graded, Result]):
    """Every model-backed grader memeval has: who it is (model, prompt, prompt hash; never a key) and
    its verdict on one response to one subject.

    - :class:`Judge`: ``JudgeProtocol[Question, str, Verdict]`` (memory and answer modes);
    - ``scoring.rubric.RubricJudge``: ``JudgeProtocol[BookCase, str, RubricResult]`` (the book suite);
    - ``multiturn.judge.ChatJudge``: ``JudgeProtocol[Sample, RunTrace, JudgeVerdict]`` (multi-turn runs).
    """

    def identity(self) -> dict: ...

    def grade(self, subject: Subject, graded: Graded, /) -> Result: ...


@dataclass(frozen=True)
class Verdict:
    score: float | None
    verdict: str | None
    evidence: str | None = None
    ungraded_reason: str | None = None


class Judge:
    def __init__(self, client: ChatClient, prompt: str = JUDGE_PROMPT):
        self.client, self.prompt_name, self.template = client, prompt, _prompt(prompt)

    def identity(self) -> dict:
        return {
            "role": "judge",
            **self.client.identity(),
            "prompt": self.prompt_name,
            "prompt_hash": prompt_hash(self.template),
        }

    def grade(self, q: Question, text: str, kind: str = "answer") -> Verdict:
        axis = q.scored_as  # the one place that says which rule grades a question
        if kind == "memory" and axis in NOT_GRADABLE_IN_MEMORY_MODE:
            return Verdict(None, None, None, NOT_GRADABLE)
        rule = _AXIS_RULES.get(axis, "").format(
            stale=q.stale_answer,
            clash_a=q.clash_a,
            clash_b=q.clash_b,
            side_a=q.side_a,
            side_b=q.side_b,
            parts=list(q.gold_parts),
        )
        msg = self.template.format(
            axis=axis,
            question=q.text_to_ask,
            gold=q.gold_answer,
            alts=", ".join(q.gold_alts) or "none",
            axis_rule=rule,
            kind=kind,
            text=text,
        )
        try:
            reply = self.client.chat([{"role": "user", "content": msg}], schema=VERDICT_SCHEMA, schema_name="verdict")
        except ChatError as e:
            return Verdict(None, None, None, f"judge failed: {e}")
        obj = parse_json_object(reply.text) or {}
        verdict = str(obj.get("verdict", "")).strip().lower()
        evidence = obj.get("evidence")
        if verdict not in _SCORES:
            return Verdict(None, None, None, UNPARSEABLE)
        if not isinstance(evidence, str) or not evidence.strip():
            return Verdict(None, verdict, None, "verdict without evidence discarded")
        return Verdict(_SCORES[verdict], verdict, evidence.strip())


class Reader:
    """Writes an answer from the returned memories. ``images=True`` marks the reader model as accepting
    images: the memories' images are then sent as OpenAI image content parts (``reader_images``).

    With the default prompt, a question of a bench whose official metric wants set abstention words
    (LoCoMo) is put with that bench's prompt (``READER_PROMPT_FOR_BENCH``), which asks for them; the
    identity names those prompts and their hashes too; so is a LongMemEval-V2 question, with its
    leaderboard's prompt and message layout (``answer``). A prompt of one's own is used for every bench."""

    def __init__(self, client: ChatClient, prompt: str = READER_PROMPT, images: bool = False):
        self.client, self.prompt_name, self.template = client, prompt, _prompt(prompt)
        self.images = bool(images)
        names = READER_PROMPT_FOR_BENCH if prompt == READER_PROMPT else {}
        self.for_bench = {bench: (name, _prompt(name)) for bench, name in names.items()}
        #: LongMemEval-V2 questions are put as its leaderboard's harness puts them (default prompt only)
        self.lme_v2 = prompt == READER_PROMPT
        if self.lme_v2:
            both = lme_v2.reader_prompt("web") + "\n" + lme_v2.reader_prompt("enterprise")
            self.for_bench["LongMemEval-V2"] = ("lme_v2_reader_v1", both)  # named in the identity only

    def identity(self) -> dict:
        return {
            "role": "reader",
            **self.client.identity(),
            "prompt": self.prompt_name,
            "prompt_hash": prompt_hash(self.template),
            **(
                {
                    "bench_prompts": {
                        b: {"prompt": n, "prompt_hash": prompt_hash(t)} for b, (n, t) in self.for_bench.items()
                    }
                }
                if self.for_bench
                else {}
            ),
            **({"images": True} if self.images else {}),
        }

    def template_for(self, q: Question) -> str:
        """The prompt ``q`` is put with: its bench's where it has one, else the reader's own."""
        official = official_abstention(q)
        if official is not None and official.bench in self.for_bench:
            return self.for_bench[official.bench][1]
        return self.template

    def answer(
        self, q: Question, memories: tuple[str, ...], images: ReaderImages | None = None, question_image=None
    ) -> str:
        """Raises ``ChatError`` when the endpoint fails after retries. ``images``: what
        ``reader_images`` prepared (each memory with an image sent is marked ``[image N]``).

        A LongMemEval-V2 question is put as its leaderboard reader puts it (``lme_v2.reader_messages``:
        the domain's system prompt, memories and images as content parts, ``question_image`` last,
        at most ``lme_v2.READER_MAX_TOKENS`` completion tokens); the full reply is the answer."""
        if self.lme_v2 and lme_v2.is_lme_v2(q):
            urls = images.urls if images is not None else ()
            marks_ = images.marks if images is not None and images.urls else None
            msgs = lme_v2.reader_messages(q, memories, urls, marks_, question_image)
            return self.client.chat(msgs, max_tokens=lme_v2.READER_MAX_TOKENS).text.strip()
        marks = images.marks if images is not None and images.urls else (None,) * len(memories)
        msg = self.template_for(q).format(
            asked_at=q.asked_at or "unknown",
            question=q.text_to_ask,
            memories="\n".join(f"- {m}" + (f" {k}" if k else "") for m, k in zip(memories, marks)) or "(none)",
        )
        urls = images.urls if images is not None else ()
        return self.client.chat([user_message(msg, urls)]).text.strip()
