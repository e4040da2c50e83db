"""The audit's ``bounds`` check: per tier (and per named question set), the floor (``no_memory``),
always-IDK and ceiling (``oracle``) as a dry run grades them must be ordered floor <= always-IDK <=
ceiling, weighted and unweighted; a tier where they are not fails loudly. The figures, and what the
ceiling cannot reach (``ceiling_cannot_reach``), are reported under the tier's name.

The grading lives in ``memeval.scoring.bounds``; this module only feeds it a tier's questions and evidence.
"""

from __future__ import annotations

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
    run.qset = "main"
