"""Offline baselines: ``no_memory`` (floor), ``oracle`` (ceiling, a scorer check), ``recent`` (the last
N tokens of the history) and ``bm25`` (top-k turns by BM25, via the ``bm25s`` library)."""

from __future__ import annotations

import threading
from collections import deque
from typing import Any

import bm25s
import numpy as np

from ..bench.model import Question, Session, Turn
from ..bench.oracle import abstention_answer, expects_abstention
from ..bench.tokens import count_tokens
from ..text.tokens import bm25_tokens
from .base import BaseMemorySystem, Capabilities, Recall, _sees_question, memory_text
from .bm25_index import TokenCache, build_index

__all__ = ["NoMemory", "Oracle", "Recent", "BM25", "bm25_tokens", "top_k_positive"]


class NoMemory(BaseMemorySystem):
    """Remembers nothing: the floor every other system is read against."""

    name, version = "no_memory", "1"
    capabilities = Capabilities()

    def __init__(self) -> None:
        self.params: dict[str, Any] = {}

    def reset(self) -> None:
        pass

    def ingest(self, session: Session) -> None:
        pass

    def query(self, question: str, asked_at: str | None) -> Recall:
        return Recall()

    def memories(self, haystack: str) -> tuple[str, ...]:
        """Nothing is stored."""
        return ()


@_sees_question  # the one system that sees the bench question (a ceiling, never ranked)
class Oracle(BaseMemorySystem):
    """A perfect memory (``memeval.bench.oracle``): the question's evidence turns verbatim, or, where
    the question expects none (ABSTAIN, FALSE_MEMORY, ``expect: no_memory``), no memories and an
    explicit "I don't know" answer. The ceiling, and a check of the scorer itself."""

    name, version = "oracle", "3"  # 3: abstains in a bench's official words (LoCoMo: "not mentioned")
    capabilities = Capabilities()  # prepare-then-query: one question at a time

    def __init__(self) -> None:
        self.params: dict[str, Any] = {}
        self._turns: dict[int, Turn] = {}
        self._wanted: tuple[int, ...] = ()
        self._abstain: str | None = None

    def reset(self) -> None:
        self._turns.clear()

    def ingest(self, session: Session) -> None:
        for t in session.turns:
            self._turns[t.turn_id] = t

    def prepare(self, question: Question) -> None:
        self._wanted = question.evidence_turns
        self._abstain = abstention_answer(question) if expects_abstention(question) else None

    def query(self, question: str, asked_at: str | None) -> Recall:
        if self._abstain is not None:
            return Recall((), (), answer=self._abstain)
        hits = [self._turns[i] for i in self._wanted if i in self._turns]
        return Recall(tuple(memory_text(t) for t in hits), tuple(t.turn_id for t in hits))

    def memories(self, haystack: str) -> tuple[str, ...]:
        """Every turn ingested since the last reset (the oracle keeps them all to pick the evidence from)."""
        return tuple(memory_text(t) for t in self._turns.values())


class Recent(BaseMemorySystem):
    """The last ``tokens`` tokens of the history (whole turns, oldest first): "paste the history" cut to a budget."""

    name, version = "recent", "1"
    capabilities = Capabilities()

    def __init__(self, tokens: int = 2000) -> None:
        self.params = {"tokens": int(tokens)}
        self._turns: deque[tuple[Turn, int]] = deque()
        self._total = 0

    def reset(self) -> None:
        self._turns.clear()
        self._total = 0

    def ingest(self, session: Session) -> None:
        budget = self.params["tokens"]
        for t in session.turns:
            n = count_tokens(memory_text(t))
            self._turns.append((t, n))
            self._total += n
            while self._total > budget and self._turns:
                _, old = self._turns.popleft()
                self._total -= old

    def query(self, question: str, asked_at: str | None) -> Recall:
        turns = [t for t, _ in self._turns]
        return Recall(tuple(memory_text(t) for t in turns), tuple(t.turn_id for t in turns))

    def memories(self, haystack: str) -> tuple[str, ...]:
        """The turns still held: the older ones past the budget were dropped at ingest (a write loss)."""
        return tuple(memory_text(t) for t, _ in self._turns)


class BM25(BaseMemorySystem):
    """Top-``k`` turns by BM25 over the turns ingested so far (index rebuilt lazily after ingest).

    Each distinct text is tokenised once per system (kept across resets: a bench's tiers share most
    of their turns) and the index is built in bulk (``bm25_index``); the scores are bm25s's.
    """

    name, version = "bm25", "2"  # 2: one tokeniser with the audit probe (bm25_tokens, issue 22)
    capabilities = Capabilities()

    def __init__(self, k: int = 10) -> None:
        self.params = {"k": int(k)}
        self._turns: list[Turn] = []
        self._docs: list[int] = []  # each turn's text number in the token cache
        self._cache = TokenCache(bm25_tokens)
        self._index: bm25s.BM25 | None = None
        self._lock = threading.Lock()

    def reset(self) -> None:
        with self._lock:
            self._turns, self._docs, self._index = [], [], None
            if len(self._cache) >= self._cache.limit:
                self._cache.clear()

    def ingest(self, session: Session) -> None:
        with self._lock:
            add = self._cache.add
            for t in session.turns:
                self._turns.append(t)
                self._docs.append(add(t.text))
            self._index = None

    def _ensure_index(self) -> bm25s.BM25 | None:
        with self._lock:
            if self._index is None and self._turns:
                self._index = build_index(self._cache, self._docs)
            return self._index

    def scores(self, question: str) -> np.ndarray | None:
        """The BM25 score of every ingested turn for ``question`` (None: nothing ingested, or no
        word to search for)."""
        index = self._ensure_index()
        q = self._cache.query_tokens(question)
        if index is None or not q:
            return None
        return index.get_scores(q)

    def query(self, question: str, asked_at: str | None) -> Recall:
        scores = self.scores(question)
        if scores is None:
            return Recall(turn_ids=())
        hits = [self._turns[int(d)] for d in top_k_positive(scores, self.params["k"])]
        return Recall(tuple(memory_text(t) for t in hits), tuple(t.turn_id for t in hits))

    def memories(self, haystack: str) -> tuple[str, ...]:
        """Every turn ingested since the last reset (all of them are indexed)."""
        with self._lock:
            return tuple(memory_text(t) for t in self._turns)


def top_k_positive(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` highest positive scores, best first; ties go to the earlier index.

    BM25 score vectors are mostly zeros and full of exact ties, and a selection over the whole
    vector is slow on such input; so only the scores at or above a threshold are ranked: half the
    maximum (then a quarter, then every positive score) once at least ``k`` scores reach it -- the
    ``k`` best are then all among them. Exact and deterministic (the k-th value is found by
    ``np.partition``, then ties are cut by position).

    >>> top_k_positive(np.array([0.0, 2.0, 0.5, 2.0, 0.0, 1.0]), 3).tolist()
    [1, 3, 5]
    >>> top_k_positive(np.zeros(4), 2).tolist()
    []
    """
    top = float(scores.max()) if scores.size else 0.0
    if k <= 0 or not top > 0:
        return np.flatnonzero(scores)[:0]
    for frac in (0.5, 0.25):
        keep = scores >= top * frac
        if np.count_nonzero(keep) >= k:
            break
    else:
        keep = scores > 0
    idx = np.flatnonzero(keep)
    vals = scores[idx]
    if idx.size > k:
        kth = np.partition(vals, idx.size - k)[idx.size - k]  # the k-th largest value
        above = vals > kth
        tied = np.flatnonzero(vals == kth)[: k - int(above.sum())]
        keep = np.concatenate([np.flatnonzero(above), tied])
        idx, vals = idx[keep], vals[keep]
    order = np.lexsort((idx, -vals))  # score descending, then position ascending
    return idx[order]
