"""The structured rubric judge for the book suite (``external-formats.md``).

Four 1-4 grades -- precision, recall, reasoning, proactivity (1 fail, 2 pass, 3 good, 4 excellent) --
each with cited evidence, plus a hallucination veto that zeroes the reward.
``reward = mean((grade - 1) / 3)``; ``success`` = precision, recall and reasoning all >= 3 and no veto
(proactivity is diagnostic). The prompt text is a versioned data file in this package; the judge runs
at temperature 0 and every result carries the judge identity and the prompt hash.

A verdict that lacks evidence for any grade (or for a veto) is discarded: the case is *ungraded*.
A judge call that fails after retries, or never returns a readable verdict, is ungraded too:
``reward is None``, with ``ungraded_reason`` set -- never a 0.

>>> reward_of({"precision": 4, "recall": 3, "reasoning": 3, "proactivity": 2}, veto=False)
0.6666666666666666
>>> reward_of({"precision": 4, "recall": 4, "reasoning": 4, "proactivity": 4}, veto=True)
0.0
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Mapping, Sequence

from ..errors import ArgumentError, EndpointError
from ..llm import ChatClient, ChatError, parse_json_object, prompt_hash
from .judge import JudgeProtocol

__all__ = [
    "DIMENSIONS",
    "LABELS",
    "PROMPT_VERSION",
    "Grade",
    "RubricVerdict",
    "RubricResult",
    "VerdictError",
    "Judge",
    "RubricJudge",
    "load_prompt",
    "render_messages",
    "parse_verdict",
    "reward_of",
    "success_of",
]

DIMENSIONS = ("precision", "recall", "reasoning", "proactivity")
GATING = ("precision", "recall", "reasoning")
LABELS = {1: "fail", 2: "pass", 3: "good", 4: "excellent"}
PROMPT_VERSION = "booksuite-rubric-v1"
_PROMPT_FILE = "rubric_prompt_v1.txt"
_SPLIT = "=== USER ==="


def load_prompt() -> str:
    """The versioned prompt template shipped with the package."""
    return resources.files(__package__).joinpath(_PROMPT_FILE).read_text(encoding="utf-8")


@dataclass(frozen=True)
class Grade:
    dimension: str
    grade: int
    evidence: str
    boundary: str = ""

    @property
    def label(self) -> str:
        return LABELS[self.grade]


def reward_of(grades: Mapping[str, int], veto: bool) -> float:
    return 0.0 if veto else sum((grades[d] - 1) / 3 for d in DIMENSIONS) / len(DIMENSIONS)


def success_of(grades: Mapping[str, int], veto: bool) -> bool:
    return not veto and all(grades[d] >= 3 for d in GATING)


@dataclass(frozen=True)
class RubricVerdict:
    grades: tuple[Grade, ...]
    veto: bool
    veto_evidence: str = ""

    def grade(self, dimension: str) -> Grade:
        return next(g for g in self.grades if g.dimension == dimension)

    @property
    def grade_map(self) -> dict[str, int]:
        return {g.dimension: g.grade for g in self.grades}

    @property
    def reward(self) -> float:
        return reward_of(self.grade_map, self.veto)

    @property
    def success(self) -> bool:
        return success_of(self.grade_map, self.veto)


class VerdictError(EndpointError, ValueError):
    """The judge's reply is not an acceptable verdict (the reason becomes ``ungraded_reason``)."""


def _grade_value(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v if v in LABELS else None
    if isinstance(v, str):
        s = v.strip().lower()
        if s.isdigit() and int(s) in LABELS:
            return int(s)
        return next((k for k, lab in LABELS.items() if lab == s), None)
    return None


def parse_verdict(obj: Any) -> RubricVerdict:
    """Validate a judge reply (already parsed JSON); a missing grade or evidence raises VerdictError."""
    if not isinstance(obj, dict):
        raise VerdictError("reply is not a JSON object")
    grades = []
    for d in DIMENSIONS:
        item = obj.get(d)
        if not isinstance(item, dict):
            raise VerdictError(f"no {d} verdict")
        g = _grade_value(item.get("grade"))
        if g is None:
            raise VerdictError(f"{d}: grade must be 1-4 (or fail/pass/good/excellent), got {item.get('grade')!r}")
        ev = item.get("evidence")
        if not isinstance(ev, str) or not ev.strip():
            raise VerdictError(f"{d}: verdict without evidence")
        boundary = item.get("boundary", item.get("boundary_case", ""))
        grades.append(Grade(d, g, ev.strip(), boundary.strip() if isinstance(boundary, str) else ""))
    hall = obj.get("hallucination")
    if not isinstance(hall, dict) or not isinstance(hall.get("veto"), bool):
        raise VerdictError("hallucination: 'veto' must be true or false")
    hev = hall["evidence"] if isinstance(hall.get("evidence"), str) else ""
    if hall["veto"] and not hev.strip():
        raise VerdictError("hallucination: veto without evidence")
    return RubricVerdict(tuple(grades), hall["veto"], hev.strip())


@dataclass(frozen=True)
class RubricResult:
    """One graded (or ungraded) answer, with what produced the grade."""

    test_id: str
    verdict: RubricVerdict | None
    judge: Mapping[str, Any]
    prompt_version: str
    prompt_hash: str
    ungraded_reason: str | None = None
    attempts: int = 1
    raw_reply: str = field(default="", repr=False)

    @property
    def reward(self) -> float | None:
        return None if self.verdict is None else self.verdict.reward

    @property
    def success(self) -> bool | None:
        return None if self.verdict is None else self.verdict.success

    @property
    def graded(self) -> bool:
        return self.verdict is not None

    def to_dict(self) -> dict[str, Any]:
        v = self.verdict
        return {
            "test_id": self.test_id,
            "reward": self.reward,
            "success": self.success,
            "grades": None
            if v is None
            else {
                g.dimension: {"grade": g.grade, "label": g.label, "evidence": g.evidence, "boundary": g.boundary}
                for g in v.grades
            },
            "hallucination": None if v is None else {"veto": v.veto, "evidence": v.veto_evidence},
            "ungraded_reason": self.ungraded_reason,
            "judge": dict(self.judge),
            "prompt_version": self.prompt_version,
            "prompt_hash": self.prompt_hash,
            "attempts": self.attempts,
        }


#: anything that grades one book-suite answer (the one judge protocol of ``scoring.judge``)
Judge = JudgeProtocol


def _conversations(case) -> str:
    blocks = []
    for h in case.sessions:
        lines = [f"### Conversation {h.conversation_id} ({h.timestamp})"]
        lines += [f"{m.role}: {m.content}" for m in h.messages]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def render_messages(template: str, case, answer: str, facts: Sequence[Sequence[str]] | None = None) -> list[dict]:
    """The chat messages for one case (``case`` is a :class:`~memeval.bench.loaders.booksuite.BookCase`)."""
    system, _, user = template.partition(_SPLIT)
    fields = {
        "{{CONVERSATIONS}}": _conversations(case),
        "{{ASKED_AT}}": case.asked_at,
        "{{QUESTION}}": case.user_question,
        "{{CRITERIA}}": case.evaluation_criteria.strip(),
        "{{EXPECTED}}": (case.expected_behavior or "(not given)").strip(),
        "{{FACTS}}": "\n".join("- " + " | ".join(f) for f in facts) if facts else "(none listed)",
        "{{ANSWER}}": answer if answer.strip() else "(empty answer)",
    }
    for k, v in fields.items():  # one pass per marker; a value is never re-expanded
        user = user.replace(k, v.replace("{{", "{ {"))
    return [{"role": "system", "content": system.strip()}, {"role": "user", "content": user.strip()}]


class RubricJudge:
    """``RubricJudge(ChatClient(url, model, temperature=0)).grade(case, answer) -> RubricResult``.

    A reply that is not a JSON object is asked again up to ``parse_attempts`` times in all (the client
    already retries transport errors and 429/5xx); a verdict lacking evidence is discarded, not retried.
    """

    def __init__(self, client: ChatClient, prompt: str | None = None, parse_attempts: int = 2, json_mode: bool = True):
        if client.temperature != 0:
            raise ArgumentError("the judge runs at temperature 0")
        self.client, self.prompt = client, prompt if prompt is not None else load_prompt()
        self.parse_attempts, self.json_mode = max(1, parse_attempts), json_mode
        self.prompt_hash = prompt_hash(self.prompt)
        self.prompt_version = PROMPT_VERSION if prompt is None else "custom"

    def identity(self) -> dict[str, Any]:
        return {**self.client.identity(), "prompt_version": self.prompt_version, "prompt_hash": self.prompt_hash}

    def _result(self, case, verdict, reason, attempts, raw="") -> RubricResult:
        return RubricResult(
            case.test_id, verdict, self.client.identity(), self.prompt_version, self.prompt_hash, reason, attempts, raw
        )

    def grade(self, case, answer: str, facts: Sequence[Sequence[str]] | None = None) -> RubricResult:
        messages = render_messages(self.prompt, case, answer, facts)
        fmt = {"type": "json_object"} if self.json_mode else None
        text = ""
        for attempt in range(1, self.parse_attempts + 1):
            try:
                text = self.client.chat(messages, response_format=fmt).text
            except ChatError as e:
                return self._result(case, None, f"judge call failed: {e}", attempt)
            obj = parse_json_object(text)
            if obj is None:
                continue
            try:
                return self._result(case, parse_verdict(obj), None, attempt, text)
            except VerdictError as e:
                return self._result(case, None, f"verdict discarded: {e}", attempt, text)
        return self._result(case, None, "no JSON verdict in the judge's reply", self.parse_attempts, text)
