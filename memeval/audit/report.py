"""The audit's report: the checks in report order, their bars, findings and results.

>>> Finding("ids-unique", "core", "q1", "repeats", "probes").line()
'FAIL ids-unique tier=core set=probes q1: repeats'
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping
from ..errors import UnknownName

__all__ = ["CHECKS", "REPORTS", "IDK_FLOOR_MAX", "CEILING_MIN", "Finding", "CheckResult", "AuditReport", "short"]

CHECKS: tuple[str, ...] = (
    "manifest-hash",
    "manifest-consistent",
    "ids-unique",
    "dates-chronological",
    "evidence-resolves",
    "images-resolve",
    "evidence-contains-gold",
    "tiers-nested",
    "story-identical",
    "reconcile-not-in-one-turn",
    "contradict-unresolved",
    "idk-floor",
    "evidence-ceiling",
    "bounds",
    "difficulty",
)
#: entries that measure and never fail: shown as REPORT, never counted as a passed check
REPORTS: frozenset[str] = frozenset({"difficulty"})
IDK_FLOOR_MAX = 0.20
CEILING_MIN = 0.90
LINE_WIDTH = 100  #: a check's line without --verbose is cut to this many characters
#: the one figure that stands for a tier's mapping of figures on a short line, first found wins
_HEADLINES = ("weighted", "ceiling", "bm25_top10", "mean", "score")


@dataclass(frozen=True)
class Finding:
    """One failure: which check, in which tier, for which question, and why."""

    check: str
    tier: str | None
    qid: str | None
    reason: str
    qset: str | None = None  # a named question set (None: the tier's main questions file)

    def line(self) -> str:
        where = self.check
        if self.tier is not None:
            where += f" tier={self.tier}"
        if self.qset is not None:
            where += f" set={self.qset}"
        if self.qid is not None:
            where += f" {self.qid}"
        return f"FAIL {where}: {self.reason}"


@dataclass(frozen=True)
class CheckResult:
    """A check's outcome: ``status`` is ``pass``, ``fail``, ``skip`` or ``report`` (an entry that
    measures and cannot fail); ``failures`` counts all findings, including any left out of the report
    by the per-tier cap."""

    name: str
    status: str
    failures: int = 0
    numbers: Mapping[str, Any] = field(default_factory=dict)
    note: str = ""

    @property
    def passed(self) -> bool:
        return self.status != "fail"


@dataclass(frozen=True)
class AuditReport:
    bench: str
    root: str
    tiers: tuple[str, ...]
    checks: tuple[CheckResult, ...]
    findings: tuple[Finding, ...]
    elapsed_s: float = 0.0

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    @property
    def failed_checks(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.checks if not c.passed)

    def check(self, name: str) -> CheckResult:
        for c in self.checks:
            if c.name == name:
                return c
        raise UnknownName(name)

    def lines(self, verbose: bool = True, width: int = LINE_WIDTH) -> list[str]:
        """The readable summary: one line per check, one per finding, then the verdict. Not
        ``verbose``: each check's line is cut to ``width`` characters, a tier's figures shown by their
        headline (``weighted``, ``ceiling`` ...), the rest behind ``--verbose`` / ``--format json``."""
        out = [f"audit {self.bench} ({self.root}) tiers: {', '.join(self.tiers)}"]
        for c in self.checks:
            detail = _fmt_numbers(c.numbers) if verbose else _short_numbers(c.numbers)
            tail = f"  {detail}" if detail else ""
            if c.note:
                tail += f"  ({c.note})"
            line = f"  {c.status.upper():4} {c.name}{tail}"  # REPORT: measured, cannot fail
            out.append(line if verbose or len(line) <= width else line[: width - 1] + "…")
        shown = Counter(f.check for f in self.findings)
        out.extend(f.line() for f in self.findings)
        for c in self.checks:
            if c.failures > shown[c.name]:
                out.append(f"FAIL {c.name}: ... and {c.failures - shown[c.name]} more not shown")
        checks = [c for c in self.checks if c.status != "report"]
        n_ok = sum(c.passed for c in checks)
        verdict = "PASS" if self.passed else "FAIL"
        n_rep = len(self.checks) - len(checks)
        reports = f" (and {n_rep} report{'s' * (n_rep != 1)})" if n_rep else ""
        out.append(f"audit {verdict}: {n_ok}/{len(checks)} checks passed{reports} in {self.elapsed_s:.2f} s")
        return out

    def summary(self) -> str:
        return "\n".join(self.lines())

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["passed"] = self.passed
        return d


def _fmt_numbers(numbers: Mapping[str, Any]) -> str:
    return " ".join(f"{k}={_fmt_value(v)}" for k, v in numbers.items())


def _short_numbers(numbers: Mapping[str, Any]) -> str:
    """Each figure on a short line: a scalar as itself, a mapping (a tier's figures) by its headline
    (:data:`_HEADLINES`), a long list by its length.

    >>> _short_numbers({"n": 3, "core": {"weighted": 0.19, "n": 63}, "pairs": ["a", "b", "c", "d"]})
    'n=3 core=0.190 pairs=4 items'
    """
    parts = []
    for k, v in numbers.items():
        if isinstance(v, Mapping):
            head = next((v[h] for h in _HEADLINES if isinstance(v.get(h), (int, float))), None)
            if head is not None:
                parts.append(f"{k}={_fmt_value(head)}")
        elif isinstance(v, (list, tuple)) and len(v) > 3:
            parts.append(f"{k}={len(v)} items")
        else:
            parts.append(f"{k}={_fmt_value(v)}")
    return " ".join(parts)


def _fmt_value(v) -> str:
    if isinstance(v, float):
        return f"{v:.3f}"
    if isinstance(v, Mapping):
        return "{" + ", ".join(f"{k}: {_fmt_value(x)}" for k, x in v.items()) + "}"
    return str(v)


def short(s: str, n: int = 60) -> str:
    return repr(s if len(s) <= n else s[: n - 1] + "…")
