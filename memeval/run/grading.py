"""Whether a judge-graded run graded enough to mean anything.

In ``memory`` and ``answer`` modes a question is graded only when the judge returned a readable
verdict with evidence. A run whose judge graded under :data:`MIN_GRADED_SHARE` of the questions it was
asked to grade is ``failed`` with the reason (the command exits 1), never a headline over a handful of
verdicts. Questions a system failed on (``error``) and those not gradable in the mode are not the
judge's to grade and are left out of the share. The share of replies the judge wrote but memeval could
not read (``judge.UNPARSEABLE``) is reported too.

>>> recs = [{"mode": "answer", "score": 1.0}, {"mode": "answer", "score": None,
...          "ungraded_reason": "judge reply has no valid verdict"}, {"mode": "answer", "score": None,
...          "ungraded_reason": "judge failed: timed out"}]
>>> g = grading_summary(recs)
>>> g["asked"], g["graded"], g["unparseable"], g["graded_share"]
(3, 1, 1, 0.333)
>>> failure_reason(g)
'the judge graded 1 of 3 questions (33.3%, under 50%): 1 replies unparseable, 1 model calls failed'
>>> grading_summary([{"mode": "dry", "score": 1.0}]) is None
True
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from ..scoring.judge import NOT_GRADABLE, UNPARSEABLE

__all__ = ["MIN_GRADED_SHARE", "grading_summary", "failure_reason"]

MIN_GRADED_SHARE = 0.5


def grading_summary(records: Iterable[Mapping[str, Any]]) -> dict | None:
    """Counts over a judge-graded run's records (None for a dry run or no records)."""
    asked = graded = unparseable = failed = 0
    for r in records:
        if r.get("mode") not in ("memory", "answer") or r.get("error"):
            continue
        reason = r.get("ungraded_reason") or ""
        if reason == NOT_GRADABLE:
            continue
        asked += 1
        if r.get("score") is not None:
            graded += 1
        elif reason == UNPARSEABLE:
            unparseable += 1
        elif reason.startswith(("judge failed", "reader failed")):
            failed += 1
    if not asked:
        return None
    return {
        "asked": asked,
        "graded": graded,
        "unparseable": unparseable,
        "call_failures": failed,
        "graded_share": round(graded / asked, 3),
        "unparseable_share": round(unparseable / asked, 3),
    }


def failure_reason(summary: Mapping[str, Any] | None) -> str | None:
    """Why a run with this grading summary failed, or None when it graded enough."""
    if summary is None or summary["graded"] >= MIN_GRADED_SHARE * summary["asked"]:
        return None
    return (
        f"the judge graded {summary['graded']} of {summary['asked']} questions "
        f"({100 * summary['graded'] / summary['asked']:.1f}%, under {MIN_GRADED_SHARE:.0%}): "
        f"{summary['unparseable']} replies unparseable, {summary['call_failures']} model calls failed"
    )
