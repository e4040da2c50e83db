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

import json
from pathlib import Path
from typing import Callable, Iterable

from ..atomic import write_text
from ..bench.io import load_bench
from ..errors import MemevalError
from . import audit
from .loading import TierData

__all__ = ["VALID_MIN", "CACHE_FILE", "dry_validity", "gate_line", "is_invalid"]

VALID_MIN = 0.90
#: the gate's results beside the bench, keyed on its content hash and tiers (``_cache_key``)
CACHE_FILE = Path(".memeval") / "dry_validity.json"
_CACHE_VERSION = 1  # bump when the gate's grading changes: older entries are then not read


def _cache_key(content_hash: str, tiers: Iterable[str] | None) -> str:
    return f"v{_CACHE_VERSION}|{VALID_MIN}|{content_hash}|{','.join(tiers) if tiers is not None else '*'}"


def _cache_read(root: Path) -> dict:
    path = root / CACHE_FILE
    try:
        if path.is_symlink() or path.parent.is_symlink():
            return {}
        obj = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return obj if isinstance(obj, dict) else {}


def _cache_write(root: Path, key: str, gate: dict) -> None:
    """Best effort: a read-only bench folder (or a link where the cache should be) just is not cached."""
    path = root / CACHE_FILE
    try:
        if path.parent.is_symlink():
            return
        path.parent.mkdir(exist_ok=True)
        entries = _cache_read(root)
        entries[key] = gate
        write_text(path, json.dumps(entries, sort_keys=True, indent=1) + "\n")
    except (OSError, MemevalError):
        pass


def dry_validity(
    bench_dir,
    tiers: Iterable[str] | None = None,
    on_tier: Callable[[TierData], None] | None = None,
    *,
    cache: bool = False,
) -> dict:
    """``{"valid": bool | None, "evidence_ceiling": {tier: min(weighted, unweighted)}, "threshold",
    "reason"}`` from ``memeval audit`` of ``bench_dir`` (the given tiers); ``valid`` is None when
    the audit could not measure it. ``on_tier``: as :func:`memeval.audit.audit`'s (not called when
    the result comes from the cache).

    ``cache`` (for a caller that has checked the manifest's ``content_hash`` against the files, as
    ``memeval run`` does unless ``--no-verify``): a bench with a hash is graded once; the result is
    kept in ``CACHE_FILE`` under the bench folder, keyed on the hash and tiers, and read back."""
    tiers = None if tiers is None else list(tiers)
    key, content_hash = None, ""
    if cache:
        try:
            content_hash = load_bench(bench_dir).content_hash
        except MemevalError:
            pass
    if cache and content_hash:
        key = _cache_key(content_hash, tiers)
        cached = _cache_read(Path(bench_dir)).get(key)
        if isinstance(cached, dict) and "valid" in cached:
            return cached
    gate = _grade(bench_dir, tiers, on_tier)
    if key is not None and not gate["reason"].startswith("audit failed"):
        _cache_write(Path(bench_dir), key, gate)
    return gate


def _grade(bench_dir, tiers: list[str] | None, on_tier: Callable[[TierData], None] | None) -> dict:
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
