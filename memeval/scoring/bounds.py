"""Floor, always-IDK and ceiling of a question set, graded as a dry run grades them.

* floor: the ``no_memory`` system, which returns nothing (the empty answer);
* always-IDK: "I don't know" in the question's language to every question;
* ceiling: the ``oracle`` (``memeval.bench.oracle``): the evidence turns' text, or an explicit
  abstention where the question expects none.

Weights are the run's (``expect: no_memory`` weighs as ABSTAIN). The three must be ordered
floor <= always-IDK <= ceiling, weighted and unweighted; :func:`order_problems` says where not.
``unreachable`` names what a text-only ceiling cannot reach: IMAGE questions whose evidence is a
photo without text, answerable questions that list no evidence turns.

>>> from memeval.bench.model import Question, Turn
>>> qs = [Question("a", "BASIC", "Colour?", "blue", evidence_turns=(1,)),
...       Question("b", "ABSTAIN", "Dog's name?", expect="no_memory")]
>>> turns = {1: Turn(1, 1, "me", "My car is blue.", "2026-01-01")}
>>> b = tier_bounds(qs, lambda q: [turns[i] for i in q.evidence_turns])
>>> (b.floor.weighted, b.idk.weighted, b.ceiling.weighted, b.n)
(0.0, 0.75, 1.0, 2)
>>> order_problems(b)
[]
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

from ..bench.axes import ANSWERABLE_AXES, AXIS_WEIGHTS
from ..bench.model import Question, Turn
from ..bench.oracle import abstention_answer, expects_abstention
from ..systems.base import memory_content
from . import dry
from .keyword_recall import facts_from_json, keyword_recall

__all__ = [
    "DryGrade",
    "dry_grade",
    "run_weight",
    "Mean",
    "TierBounds",
    "tier_bounds",
    "order_problems",
    "oracle_text",
    "has_dry_gold",
]


@dataclass(frozen=True)
class DryGrade:
    score: float | None
    verdict: str | None
    rule: str | None
    ungraded_reason: str | None = None


def has_dry_gold(q: Question) -> bool:
    """Dry rules need a gold (or parts, clash values, sides); an abstention's gold is the absence itself."""
    if expects_abstention(q):
        return True
    return any(v for v in (q.gold_answer, *q.gold_alts, *q.gold_parts, q.clash_a, q.clash_b, q.side_a, q.side_b))


def dry_grade(q: Question, answer: str | Sequence[str] | None) -> DryGrade:
    """How a dry run grades a response to ``q``: ``answer`` is the system's own answer (a string), or,
    for a system that answers nothing itself, its returned memories (a sequence: their content is
    graded, never read for "I don't know", and abstention questions stay ungraded, as glasshouse's
    score.py leaves them). The book suite's keyword recall grades where the question carries
    ``required_facts``; ungraded when there is no gold to grade against."""
    memories_only = not isinstance(answer, str) and answer is not None
    if "required_facts" in q.extra:  # the book suite's own offline metric (external-formats.md)
        text = answer if isinstance(answer, str) else "\n".join(memory_content(m) for m in answer or ())
        r = keyword_recall(text, facts_from_json(q.extra["required_facts"], "question", q.id))
        verdict = "correct" if r.reward == 1 else "partial" if r.reward > 0 else "wrong"
        return DryGrade(r.reward, verdict, "keyword-recall")
    if not has_dry_gold(q):
        return DryGrade(None, None, None, "no gold answer: not gradable in dry mode")
    if memories_only and (why := dry.ungraded_without_answer(q)):
        return DryGrade(None, None, None, why)
    s = dry.score_answer(q, list(answer) if memories_only and answer is not None else answer)
    return DryGrade(s.score, s.verdict, s.rule)


def run_weight(q: Question) -> int:
    """The weight a run gives ``q`` (``expect: no_memory`` weighs as ABSTAIN); the runner, the audit and
    the bounds all ask this one function."""
    return AXIS_WEIGHTS["ABSTAIN" if q.expect == "no_memory" else q.axis]


def oracle_text(q: Question, evidence: Sequence[Turn]) -> str | list[str]:
    """What the oracle is graded on in a dry run: its abstention (an answer), or its evidence turns'
    text (memories, graded as a memory-only system's are)."""
    if expects_abstention(q):
        return abstention_answer(q)
    return [t.text for t in evidence]


@dataclass(frozen=True)
class Mean:
    weighted: float
    unweighted: float


@dataclass(frozen=True)
class TierBounds:
    """Floor, always-IDK and ceiling over the ``n`` graded questions of one question set."""

    floor: Mean
    idk: Mean
    ceiling: Mean
    n: int
    ceiling_by_axis: Mapping[str, float] = field(default_factory=dict)
    unreachable: Mapping[str, int] = field(default_factory=dict)
    #: The ceiling on the answerable questions graded by memeval's dry rules (evidence given and
    #: visible to a text system; not the book suite's keyword recall): what the validity gate reads.
    answerable: Mean | None = None
    n_answerable: int = 0

    def as_numbers(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "floor": self.floor.weighted,
            "idk": self.idk.weighted,
            "ceiling": self.ceiling.weighted,
            "n": self.n,
        }
        if self.answerable is not None:
            out["answerable_ceiling"] = {
                "weighted": self.answerable.weighted,
                "unweighted": self.answerable.unweighted,
                "n": self.n_answerable,
            }
        if self.unreachable:
            out["ceiling_cannot_reach"] = dict(self.unreachable)
        return out


def _image_only(q: Question, ev: Sequence[Turn]) -> bool:
    """An IMAGE question whose evidence is a photo: a text-only system never sees what it shows."""
    return q.axis == "IMAGE" and any(t.image for t in ev)


def tier_bounds(
    questions: Iterable[Question],
    evidence: Callable[[Question], Sequence[Turn] | None],
    idk_answer: Callable[[Question], str] = abstention_answer,
) -> TierBounds | None:
    """The three bounds over ``questions`` (``evidence(q)``: its evidence turns, None if unresolved);
    None when no question is gradable."""
    sums = {k: [0.0, 0.0] for k in ("floor", "idk", "ceiling")}  # weighted sum, plain sum
    wsum = n = 0
    by_axis: dict[str, list[float]] = {}
    unreachable: Counter = Counter()
    ans = [0.0, 0.0, 0.0, 0.0]  # weighted sum, weight, plain sum, n
    for q in questions:
        ev = list(evidence(q) or ())
        answers = {"floor": "", "idk": idk_answer(q), "ceiling": oracle_text(q, ev)}
        scored = {k: dry_grade(q, a).score for k, a in answers.items()}
        if scored["ceiling"] is None:
            continue
        grades = {k: s or 0.0 for k, s in scored.items()}  # floor and IDK are graded where the ceiling is
        w = run_weight(q)
        for k, s in grades.items():
            sums[k][0] += w * s
            sums[k][1] += s
        wsum += w
        n += 1
        by_axis.setdefault(q.axis, []).append(grades["ceiling"])
        if not expects_abstention(q):
            if not ev:
                unreachable["no evidence turns"] += 1
            elif _image_only(q, ev) and grades["ceiling"] < 1:
                unreachable["IMAGE (photo only)"] += 1
            elif q.scored_as in ANSWERABLE_AXES and "required_facts" not in q.extra:
                c = grades["ceiling"]
                ans[0] += w * c
                ans[1] += w
                ans[2] += c
                ans[3] += 1
    if not n:
        return None

    def mean(k):
        return Mean(sums[k][0] / wsum if wsum else 0.0, sums[k][1] / n)

    answerable = Mean(ans[0] / ans[1], ans[2] / ans[3]) if ans[3] else None
    return TierBounds(
        mean("floor"),
        mean("idk"),
        mean("ceiling"),
        n,
        {a: sum(v) / len(v) for a, v in sorted(by_axis.items())},
        dict(unreachable),
        answerable,
        int(ans[3]),
    )


def order_problems(b: TierBounds, tol: float = 1e-9) -> list[str]:
    """Where floor <= always-IDK <= ceiling fails (weighted or unweighted); empty when ordered."""
    out = []
    for kind in ("weighted", "unweighted"):
        f, i, c = (getattr(getattr(b, k), kind) for k in ("floor", "idk", "ceiling"))
        if f > i + tol:
            out.append(f"floor {f:.3f} > always-IDK {i:.3f} ({kind})")
        if i > c + tol:
            out.append(f"always-IDK {i:.3f} > ceiling {c:.3f} ({kind})")
    return out
