"""Is dry answer-scoring valid on a bench? The validity gate, read from the bench's audit.

Dry rules grade by string containment, so they can only grade a bench whose golds are written in
the words of the conversation. The audit measures exactly that: its ``bounds`` check answers each
answerable question with its evidence turns' text, as a text-only system sees them, graded as a dry
run grades it (``answerable_ceiling``; IMAGE questions about uncaptioned photos and questions graded
by the book suite's own keyword recall are left out: those are not a property of the dry rules).
Dry answer scores are *valid* for a run's tiers when that ceiling is at least ``VALID_MIN`` (the
audit's own ``CEILING_MIN``, 0.9), weighted and unweighted, on every tier the run covers. Below it (abstractive golds, as in LoCoMo's "7 May 2023" for
a turn saying "yesterday", or LongMemEval), a dry "accuracy" measures the gold's wording, not memory:
``run``, ``summary`` and the reports say so in one line (:func:`gate_line`) and lead with retrieval
metrics instead.
"""

from __future__ import annotations

from typing import Callable, Iterable

from ..errors import MemevalError
from . import audit
from .loading import TierData

__all__ = ["VALID_MIN", "dry_validity", "gate_line", "is_invalid"]

VALID_MIN = 0.90


def dry_validity(
    bench_dir, tiers: Iterable[str] | None = None, on_tier: Callable[[TierData], None] | None = None
) -> dict:
    """``{"valid": bool | None, "evidence_ceiling": {tier: min(weighted, unweighted)}, "threshold",
    "reason"}`` from ``memeval audit`` of ``bench_dir`` (the given tiers); ``valid`` is None when
    the audit could not measure it. ``on_tier``: as :func:`memeval.audit.audit`'s."""
    try:
        rep = audit(bench_dir, tiers, bounds_only=True, on_tier=on_tier)  # the one check the gate reads
    except MemevalError as e:  # an audit that cannot read the bench leaves validity unknown, never blocks a run
        return {
            "valid": None,
            "evidence_ceiling": {},
            "threshold": VALID_MIN,
            "reason": f"audit failed: {type(e).__name__}: {e}",
        }
    nums = rep.check("bounds").numbers
    ceil = {
        t: round(min(v["answerable_ceiling"]["weighted"], v["answerable_ceiling"]["unweighted"]), 4)
        for t, v in nums.items()
        if "/" not in t and "answerable_ceiling" in v
    }
    if not ceil:
        return {
            "valid": None,
            "evidence_ceiling": {},
            "threshold": VALID_MIN,
            "reason": "no answerable question graded by the dry rules with evidence turns",
        }
    low = {t: v for t, v in ceil.items() if v < VALID_MIN}
    reason = (
        "evidence ceiling " + ", ".join(f"{t} {v:.3f}" for t, v in low.items()) + f" < {VALID_MIN}"
        if low
        else f"evidence ceiling >= {VALID_MIN} on every tier"
    )
    return {"valid": not low, "evidence_ceiling": ceil, "threshold": VALID_MIN, "reason": reason}


def is_invalid(validity: dict | None) -> bool:
    return validity is not None and validity.get("valid") is False


def gate_line(bench: str, validity: dict | None) -> str | None:
    """The one line every output shows where dry answer scores are not valid (else None)."""
    if validity is None or not is_invalid(validity):
        return None
    return (
        f"NOT VALID: dry answer scores on {bench} are not a measure of memory (its golds are not in the "
        f"conversation's words: {validity['reason']}); read the evidence-retrieval metrics instead."
    )
