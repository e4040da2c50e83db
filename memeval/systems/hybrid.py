"""``hybrid:k=N``: BM25 and embedding retrieval fused by reciprocal rank (Cormack, Clarke & Buettcher,
SIGIR 2009): a turn's score is the sum over the two rankings of ``1 / (rrf_k + rank)`` (rank from 1),
each ranking cut at ``depth`` turns; the top ``k`` by that score are returned, ties to the earlier turn.

The embedding half takes the same parameters as ``vector`` (``model``, ``base_url``, ``index``,
``key_env``, ``cache``, ``batch``); BM25 is the ``bm25`` baseline's.

>>> rrf([[3, 1, 2], [1, 4]], rrf_k=60)
[1, 3, 4, 2]
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from ..bench.model import Session, Turn
from .base import BaseMemorySystem, Capabilities, Recall, memory_text
from .baselines import BM25
from .vector import Vector

__all__ = ["Hybrid", "rrf"]


def rrf(rankings: Iterable[Sequence[int]], rrf_k: int = 60) -> list[int]:
    """Ids by fused reciprocal-rank score, best first; ties go to the id first seen."""
    score: dict[int, float] = {}
    for ranking in rankings:
        for rank, tid in enumerate(ranking, 1):
            score[tid] = score.get(tid, 0.0) + 1.0 / (rrf_k + rank)
    order = {tid: i for i, tid in enumerate(score)}
    return sorted(score, key=lambda t: (-score[t], order[t]))


class Hybrid(BaseMemorySystem):
    """BM25 + vector retrieval, reciprocal-rank fusion (see the module docstring)."""

    name, version = "hybrid", "1"
    capabilities = Capabilities()

    def __init__(self, k: int = 10, rrf_k: int = 60, depth: int = 50, **vector_options: Any) -> None:
        k, depth = int(k), int(depth)
        self.vector = Vector(k=max(k, depth), **vector_options)
        self.bm25 = BM25(k=max(k, depth))
        self.params: dict[str, Any] = {
            "k": k,
            "rrf_k": int(rrf_k),
            "depth": max(k, depth),
            **{n: v for n, v in self.vector.params.items() if n != "k"},
        }
        self._turns: dict[int, Turn] = {}

    def usage(self) -> dict[str, int]:
        return self.vector.usage()

    def reset(self) -> None:
        self.vector.reset()
        self.bm25.reset()
        self._turns = {}

    def ingest(self, session: Session) -> None:
        self.vector.ingest(session)  # first: an embedding failure leaves BM25 untouched for the retry
        self.bm25.ingest(session)
        self._turns.update((t.turn_id, t) for t in session.turns)

    def query(self, question: str, asked_at: str | None) -> Recall:
        depth = self.params["depth"]
        dense = [t.turn_id for t in self.vector.ranked(question, depth)]
        sparse = list(self.bm25.query(question, asked_at).turn_ids or ())
        hits = [self._turns[i] for i in rrf([sparse, dense], self.params["rrf_k"])[: self.params["k"]]]
        return Recall(tuple(memory_text(t) for t in hits), tuple(t.turn_id for t in hits))

    def memories(self, haystack: str) -> tuple[str, ...]:
        """Every turn ingested since the last reset (both halves index them all)."""
        return tuple(memory_text(t) for t in self._turns.values())

    def close(self) -> None:
        self.vector.close()
