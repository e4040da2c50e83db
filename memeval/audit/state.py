"""The audit's bookkeeping: findings (capped per check and tier), failure counts and numbers.

The check mixins (``loading.Loading``, ``structural.Structure``) derive from ``AuditState``, so what
they read and write on ``self`` is declared in one place.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from ..bench.model import SESSION_FIELD_KEY, Bench
from ..scoring.dry import latest_value
from ..text.containment import contains
from .report import CHECKS, Finding

__all__ = ["AuditState"]


class AuditState:
    """What one audit run knows: its bench, its findings and numbers, and the question set in hand."""

    def __init__(self, bench: Bench, max_findings: int):
        self.bench = bench
        self.root = Path(bench.root)
        self.max_findings = max_findings
        self.findings: list[Finding] = []
        self.failures: Counter = Counter()
        self._shown: Counter = Counter()
        self.numbers: dict[str, dict[str, Any]] = {c: {} for c in CHECKS}
        self.qset = "main"  # the question set being checked (findings name it)
        self.skipped: dict[str, str] = {}
        self.notes: dict[str, str] = {}
        self.first_seen: dict[str, tuple[str, tuple[str, ...] | None, str, str]] = {}
        self.contains, self.latest_value = contains, latest_value
        #: the turn field evidence_sessions refer to (glasshouse: core_session), as bench.yaml declares
        self.session_field = str(bench.extra.get(SESSION_FIELD_KEY) or "session_id")

    # -- bookkeeping
    def fail(self, check: str, tier: str | None, qid: str | None, reason: str) -> None:
        self.failures[check] += 1
        key = (check, tier)
        self._shown[key] += 1
        if self._shown[key] <= self.max_findings:
            qset = None if self.qset == "main" else self.qset
            self.findings.append(Finding(check, tier, qid, reason, qset))

    def add(self, check: str, key: str, n: int | float = 1) -> None:
        nums = self.numbers[check]
        nums[key] = nums.get(key, 0) + n
