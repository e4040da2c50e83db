"""Retrieval hit (benchmark.md §4), scored separately from answering.

* Turn ids returned: a hit when they intersect the question's ``evidence_turns``.
* Text only: a hit when the joined text contains the gold, any alternative, any gold part, either
  CONTRADICT value (their gold names the clash, which no turn says), or a CONFLICT gold's latest
  value (its gold reads "No, X now"). RECONCILE sides are conditions ("on weekdays"), too generic
  to show that the evidence came back, so they are not targets.
* Nothing returned for a question that has evidence: a miss (False), never None.
* None when the question has no evidence to retrieve (ABSTAIN, FALSE_MEMORY, ``expect ==
  "no_memory"``), or ids were returned but the question lists no evidence turns.
"""

from __future__ import annotations

from typing import Iterable

from memeval.bench.axes import ABSTENTION_AXES
from memeval.bench.model import Question
from memeval.scoring.dry import latest_value
from memeval.scoring.matching import matches_any  # normalises the joined text once
from memeval.systems.base import memory_content

__all__ = ["retrieval_hit", "retrieval_targets", "has_evidence"]


def has_evidence(q: Question) -> bool:
    """False for questions whose right answer is that nothing was ever said."""
    return q.expect != "no_memory" and (q.axis or "").upper() not in ABSTENTION_AXES


def retrieval_targets(q: Question) -> list[str]:
    """Texts whose presence in returned memories counts as retrieving the evidence."""
    golds = [g for g in (q.gold_answer, *q.gold_alts) if g]
    out = list(golds)
    out += [p for p in q.gold_parts if p]
    out += [s for s in (q.clash_a, q.clash_b) if s]
    if (q.axis or "").upper() == "CONFLICT":
        out += [latest_value(g) for g in golds]
    return list(dict.fromkeys(out))


def _id_key(x) -> int | str:
    try:
        return int(x)
    except (TypeError, ValueError):
        return str(x)


def retrieval_hit(q: Question, retrieved_turns: Iterable[int] | None, memories: Iterable[str] | None) -> bool | None:
    """Did the system bring back the evidence? (see the module docstring)."""
    if not has_evidence(q):
        return None
    ids = [t for t in (retrieved_turns or ()) if t is not None]
    if ids:
        if not q.evidence_turns:
            return None
        wanted = {_id_key(t) for t in q.evidence_turns}
        return any(_id_key(t) in wanted for t in ids)
    text = "\n".join(memory_content(m) for m in (memories or ()) if m)  # content, not date stamps
    if not text.strip():
        return False
    return matches_any(text, retrieval_targets(q))
