"""A finished run's status, its error budget (``--max-errors``) and its errors grouped by reason.

A run that asked every question ends ``complete`` (no error records), ``complete_with_errors`` (some,
within the budget) or ``failed`` (more errors than the budget allows, or any other reason fed in by
the caller, e.g. a judge that graded too few answers). A run stopped before its end keeps the status
the runner gave it (``cancelled``, ``error``). The anchor is inspect's ``--fail-on-error``: by default
no error is tolerated.

>>> run_status(63, 63).status, run_status(63, 0).status
('failed', 'complete')
>>> s = run_status(63, 2, MaxErrors.parse("5%"))
>>> s.status, s.reasons
('complete_with_errors', ())
>>> run_status(63, 0, failed_because=["the judge graded 20 of 63 answers (< 50%)"]).reasons
('the judge graded 20 of 63 answers (< 50%)',)
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from ..errors import UsageError

__all__ = [
    "MaxErrors",
    "RunStatus",
    "run_status",
    "ErrorReason",
    "error_reason",
    "errors_by_reason",
    "reasons_line",
    "FINISHED",
    "OK_STATUSES",
]

#: the statuses of a run that asked every question
FINISHED = ("complete", "complete_with_errors", "failed")
#: the statuses whose scores stand without a warning colour (``complete_with_errors`` is amber)
OK_STATUSES = ("complete",)


@dataclass(frozen=True)
class MaxErrors:
    """How many error records a run tolerates: a count (``"5"``) or a fraction of its records
    (``"0.1"``, ``"10%"``). A whole number is a count; a number with a point or a ``%`` is a fraction.

    >>> MaxErrors.parse("3").allows(3, 100), MaxErrors.parse("3").allows(4, 100)
    (True, False)
    >>> MaxErrors.parse("10%").allows(10, 100), MaxErrors.parse("0.1").allows(11, 100)
    (True, False)
    >>> str(MaxErrors.parse("10%")), str(MaxErrors())
    ('10%', '0')
    """

    count: int | None = 0
    fraction: float | None = None

    @classmethod
    def parse(cls, text: str) -> "MaxErrors":
        t = str(text).strip()
        try:
            if t.endswith("%"):
                frac = float(t[:-1]) / 100
            elif t.isdigit():
                return cls(int(t), None)
            else:
                frac = float(t)
        except ValueError:
            frac = -1.0
        if not 0 <= frac <= 1:
            raise UsageError(
                f"--max-errors {text!r}: expected a count of errors (e.g. 5) or a fraction of the "
                "questions (e.g. 0.1 or 10%)"
            )
        return cls(None, frac)

    def allows(self, errors: int, total: int) -> bool:
        if self.fraction is not None:
            return errors <= self.fraction * total
        return errors <= (self.count or 0)

    def __str__(self) -> str:
        if self.fraction is not None:
            return f"{self.fraction * 100:g}%"
        return str(self.count)


@dataclass(frozen=True)
class RunStatus:
    """``status`` (one of :data:`FINISHED`) and, for ``failed``, the reasons in plain words."""

    status: str
    reasons: tuple[str, ...] = ()

    @property
    def failed(self) -> bool:
        return self.status == "failed"


def run_status(
    total: int, errors: int, max_errors: MaxErrors | None = None, failed_because: Iterable[str] = ()
) -> RunStatus:
    """The status of a run that asked all ``total`` questions, ``errors`` of them error records.

    ``failed_because``: other reasons the run failed, from the caller (each makes it ``failed``).
    """
    budget = max_errors or MaxErrors()
    reasons = list(failed_because)
    if not budget.allows(errors, total):
        reasons.insert(0, f"{errors} of {total} questions are errors (--max-errors {budget})")
    if reasons:
        return RunStatus("failed", tuple(reasons))
    return RunStatus("complete_with_errors" if errors else "complete")


@dataclass(frozen=True)
class ErrorReason:
    """One reason records failed: how many, the first question ids (``tier/qid``) and one full text."""

    reason: str
    count: int
    first: tuple[str, ...]
    example: str


def error_reason(error: str) -> str:
    """The reason an error record is counted under: its first line, at most 160 characters.

    >>> error_reason("ValueError: boom\\nmore")
    'ValueError: boom'
    """
    line = str(error).strip().splitlines()[0] if str(error).strip() else "(empty error)"
    return line if len(line) <= 160 else line[:159] + "…"


def errors_by_reason(records: Iterable[Mapping[str, Any]], n_first: int = 5) -> list[ErrorReason]:
    """The error records grouped by :func:`error_reason`, most common first (ties: first seen first).

    >>> recs = [{"tier": "t", "qid": f"q{i}", "error": "E: x" if i % 2 else "F: y"} for i in range(5)]
    >>> [(r.reason, r.count, r.first[:2]) for r in errors_by_reason(recs)]
    [('F: y', 3, ('t/q0', 't/q2')), ('E: x', 2, ('t/q1', 't/q3'))]
    """
    counts: Counter[str] = Counter()
    first: dict[str, list[str]] = {}
    example: dict[str, str] = {}
    for r in records:
        err = r.get("error")
        if err is None:
            continue
        key = error_reason(err)
        counts[key] += 1
        ids = first.setdefault(key, [])
        if len(ids) < n_first:
            ids.append(f"{r.get('tier')}/{r.get('qid')}")
        example.setdefault(key, str(err))
    order = {k: i for i, k in enumerate(first)}
    return [
        ErrorReason(k, n, tuple(first[k]), example[k])
        for k, n in sorted(counts.items(), key=lambda kv: (-kv[1], order[kv[0]]))
    ]


def reasons_line(reasons: list[ErrorReason], top: int = 3) -> str:
    """The most common reasons on one line: ``"ValueError: boom" ×63; ...``.

    >>> reasons_line([ErrorReason("E: x", 4, (), ""), ErrorReason("F", 1, (), "")])
    'E: x (4); F (1)'
    """
    shown = "; ".join(f"{r.reason} ({r.count})" for r in reasons[:top])
    more = len(reasons) - top
    return shown + (f"; and {more} other reason{'s' if more > 1 else ''}" if more > 0 else "")
