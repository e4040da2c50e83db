"""The audit's ``bounds`` check: per tier (and per named question set), the floor (``no_memory``),
always-IDK and ceiling (``oracle``) as a dry run grades them must be ordered floor <= always-IDK <=
ceiling, weighted and unweighted; a tier where they are not fails loudly. The figures, and what the
ceiling cannot reach (``ceiling_cannot_reach``), are reported under the tier's name.

Where a bench's official metric credits an abstention only in set words (LoCoMo category 5), the
check also grades the oracle's abstention by that metric (``official_abstention``: n and how many
pass); an abstention it does not credit is a failure naming the question.

The grading lives in ``memeval.scoring.bounds``; this module only feeds it a tier's questions and evidence.
"""

from __future__ import annotations

from ..bench.oracle import abstention_answer, expects_abstention, official_abstention
from ..scoring import locomo_f1
from ..scoring.bounds import order_problems, tier_bounds

CHECK = "bounds"

__all__ = ["CHECK", "check_bounds"]


def check_bounds(run, data) -> None:
    """Add the bounds of every question set of one loaded tier (``loading.TierData``) to ``run``."""
    name = data.tier.name
    for qset, questions in (("main", data.questions), *data.sets.items()):
        run.qset = qset

        def evidence(q):
            h = run.haystack_of(data, q)
            return None if h is None else h.evidence(q.evidence_turns)

        b = tier_bounds(questions, evidence)
        if b is None:
            continue
        label = name if qset == "main" else f"{name}/{qset}"
        run.numbers[CHECK][label] = b.as_numbers()
        for problem in order_problems(b):
            run.fail(CHECK, name, None, f"floor <= always-IDK <= ceiling does not hold: {problem} over {b.n} questions")
        official = _official_abstentions(run, name, questions)
        if official:
            run.numbers[CHECK][label]["official_abstention"] = official
    run.qset = "main"


def _official_abstentions(run, tier: str, questions) -> dict:
    """The oracle's abstentions graded by the bench's official metric, where it checks set words."""
    n = passed = 0
    for q in questions:
        official = official_abstention(q)
        if official is None or not expects_abstention(q):
            continue
        answer = abstention_answer(q)
        score = locomo_f1.score_question(q, answer)  # the official metric itself, where memeval has it
        ok = official.passes(answer) if score is None else score >= 1.0
        n += 1
        passed += ok
        if not ok:
            run.fail(CHECK, tier, q.id, f"the oracle's abstention {answer!r} fails {official.bench}'s official metric")
    return {"n": n, "passed": passed} if n else {}
