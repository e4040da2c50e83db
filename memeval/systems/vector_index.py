"""Nearest-neighbour indexes over unit vectors (cosine similarity): an exact one in numpy (the default)
and an approximate one through ``usearch`` (``pip install memeval[ann]``) for large tiers.

Both take rows in insertion order (a row's position is its id) and return positions best first.

>>> ix = ExactIndex()
>>> ix.add(np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]], np.float32))
>>> ix.search(np.array([0.0, 1.0], np.float32), 2).tolist()
[1, 2]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import numpy as np

from ..errors import MemevalError, UsageError

if TYPE_CHECKING:
    from usearch.index import Index

__all__ = ["VectorIndex", "ExactIndex", "UsearchIndex", "make_index", "unit_rows", "top_k"]


def unit_rows(x: np.ndarray) -> np.ndarray:
    """Rows scaled to length 1 (a zero row stays zero).

    >>> unit_rows(np.array([[3.0, 4.0], [0.0, 0.0]])).astype(float).round(3).tolist()
    [[0.6, 0.8], [0.0, 0.0]]
    """
    x = np.asarray(x, np.float32)
    norms = np.linalg.norm(x, axis=-1, keepdims=True)
    return np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Positions of the ``k`` highest scores, best first; ties go to the earlier position.

    >>> top_k(np.array([0.1, 0.9, 0.5, 0.9]), 3).tolist()
    [1, 3, 2]
    """
    n = scores.shape[0]
    if k <= 0 or n == 0:
        return np.zeros(0, np.int64)
    if n > k:
        kth = np.partition(scores, n - k)[n - k]
        above = np.flatnonzero(scores > kth)
        tied = np.flatnonzero(scores == kth)[: k - above.size]
        idx = np.concatenate([above, tied])
    else:
        idx = np.arange(n)
    return idx[np.lexsort((idx, -scores[idx]))]


class VectorIndex(Protocol):
    def add(self, vectors: np.ndarray) -> None: ...

    def search(self, query: np.ndarray, k: int) -> np.ndarray: ...

    def __len__(self) -> int: ...


class ExactIndex:
    """Every row scored against the query (one matrix-vector product): exact, fine to ~10^5 rows."""

    def __init__(self) -> None:
        self._parts: list[np.ndarray] = []
        self._matrix: np.ndarray | None = None
        self._n = 0

    def add(self, vectors: np.ndarray) -> None:
        if len(vectors):
            self._parts.append(unit_rows(vectors))
            self._n += len(vectors)
            self._matrix = None

    def build(self) -> None:
        """Join the added rows into one matrix (done by the first search otherwise)."""
        if self._matrix is None and self._parts:
            self._matrix = np.concatenate(self._parts) if len(self._parts) > 1 else self._parts[0]
            self._parts = [self._matrix]

    def search(self, query: np.ndarray, k: int) -> np.ndarray:
        self.build()
        if self._matrix is None:
            return np.zeros(0, np.int64)
        if self._matrix.shape[1] != query.shape[-1]:
            raise MemevalError(f"query has {query.shape[-1]} dimensions, the index {self._matrix.shape[1]}")
        return top_k(self._matrix @ unit_rows(query[None, :])[0], k)

    def __len__(self) -> int:
        return self._n


class UsearchIndex:
    """HNSW graph search through ``usearch`` (cosine metric): approximate, for large tiers."""

    def __init__(self, connectivity: int = 16, expansion_search: int = 64):
        try:
            from usearch.index import Index  # on use: an optional extra (memeval[ann])
        except ImportError:
            raise UsageError("index=usearch needs the ann extra: pip install 'memeval[ann]'") from None
        self._cls, self._connectivity, self._expansion_search = Index, connectivity, expansion_search
        self._index: Index | None = None
        self._n = 0

    def add(self, vectors: np.ndarray) -> None:
        if not len(vectors):
            return
        vectors = unit_rows(vectors)
        if self._index is None:
            self._index = self._cls(
                ndim=vectors.shape[1],
                metric="cos",
                dtype="f32",
                connectivity=self._connectivity,
                expansion_search=self._expansion_search,
            )
        self._index.add(np.arange(self._n, self._n + len(vectors), dtype=np.uint64), vectors, threads=1)
        self._n += len(vectors)

    def search(self, query: np.ndarray, k: int) -> np.ndarray:
        if self._index is None or k <= 0:
            return np.zeros(0, np.int64)
        found = self._index.search(unit_rows(query[None, :])[0], min(k, self._n))
        return np.asarray(found.keys, dtype=np.int64)

    def __len__(self) -> int:
        return self._n


def make_index(kind: str) -> VectorIndex:
    """``"exact"`` (numpy) or ``"usearch"`` (the ann extra)."""
    if kind == "exact":
        return ExactIndex()
    if kind == "usearch":
        return UsearchIndex()
    raise UsageError(f"index must be 'exact' or 'usearch', got {kind!r}")
