"""BM25 built in bulk: every distinct text tokenised once, an index built with a few numpy operations.

The index is the one ``bm25s.BM25().index(tokens)`` builds (method ``lucene``, k1 1.5, b 0.75, float32
scores in a column-compressed matrix, one column per token), value for value: the same formulas in the
same floating-point order, computed for all (document, token) pairs at once instead of one document
at a time (tests/test_bm25_index.py compares the two). Queries are scored by ``bm25s`` itself
(``BM25.get_scores``) on that matrix.

>>> cache = TokenCache(str.split)
>>> docs = [cache.add(t) for t in ("red cat", "blue cat cat", "red cat")]
>>> docs, len(cache)  # the repeated text is one entry
([0, 1, 0], 2)
>>> index = build_index(cache, docs)
>>> [round(float(s), 4) for s in index.get_scores(["cat", "red", "green"])]
[0.258, 0.0699, 0.258]
"""

from __future__ import annotations

import math
from array import array
from typing import Callable, Sequence

import bm25s
import numpy as np

__all__ = ["TokenCache", "build_index", "EMPTY_TOKEN"]

#: the token standing for a text with no tokens (so that every turn is a document)
EMPTY_TOKEN = "\u2205"


class TokenCache:
    """Distinct texts, each tokenised once, as distinct token ids and their counts (flat arrays), plus
    the vocabulary (token -> id). Kept across a system's resets (the same turns come back in every
    tier of a bench) up to ``limit`` texts."""

    def __init__(self, tokenize: Callable[[str], list[str]], limit: int = 500_000):
        self.tokenize, self.limit = tokenize, limit
        self.clear()

    def clear(self) -> None:
        self.vocab: dict[str, int] = {}
        self._texts: dict[str, int] = {}
        self._start = array("q", [0])  # text i's tokens are _ids[_start[i]:_start[i + 1]]
        self._ids = array("i")
        self._tf = array("f")
        self._len = array("q")  # tokens in the text (with repeats): the document length
        self._queries: dict[str, list[str]] = {}
        self.looked_up = self.found = 0  # add() calls, and those that found the text cached

    def __len__(self) -> int:
        return len(self._texts)

    def add(self, text: str) -> int:
        """The text's number (tokenised on first sight)."""
        n = self._texts.get(text)
        self.looked_up += 1
        if n is not None:
            self.found += 1
        else:
            toks = self.tokenize(text) or [EMPTY_TOKEN]
            counts: dict[int, int] = {}
            vocab = self.vocab
            for t in toks:
                i = vocab.get(t)
                if i is None:
                    i = vocab[t] = len(vocab)
                counts[i] = counts.get(i, 0) + 1
            self._ids.extend(counts)
            self._tf.extend(counts.values())
            self._start.append(len(self._ids))
            self._len.append(len(toks))
            n = self._texts[text] = len(self._texts)
        return n

    def worth_keeping(self, min_texts: int = 100_000, min_found: float = 0.1) -> bool:
        """Whether to keep the cache over a reset: under ``limit`` texts, and below ``min_texts`` or
        with at least ``min_found`` of the texts added since the last call found already cached (a
        bench whose haystacks share no turns, as LongMemEval's, gains nothing from keeping them).
        Counts restart at each call."""
        found = self.found >= min_found * self.looked_up
        self.looked_up = self.found = 0
        return len(self._texts) < self.limit and (len(self._texts) < min_texts or found)

    def query_tokens(self, question: str) -> list[str]:
        """The question's tokens (memoised: a bench asks the same questions in every tier)."""
        toks = self._queries.get(question)
        if toks is None:
            if len(self._queries) >= self.limit:
                self._queries.clear()
            toks = self._queries[question] = self.tokenize(question)
        return toks

    def arrays(self):
        """(starts, token ids, counts, lengths) as numpy views."""
        return (
            np.frombuffer(self._start, dtype=np.int64),
            np.frombuffer(self._ids, dtype=np.int32),
            np.frombuffer(self._tf, dtype=np.float32),
            np.frombuffer(self._len, dtype=np.int64),
        )


def _idf(df: np.ndarray, n_docs: int) -> np.ndarray:
    """bm25s's lucene idf, ``log(1 + (N - df + 0.5) / (df + 0.5))`` with ``math.log`` on each distinct
    df (as bm25s computes it, in float64, then stored as float32); 0 where df is 0."""
    values, inverse = np.unique(df, return_inverse=True)
    idf = np.array([math.log(1 + (n_docs - int(d) + 0.5) / (int(d) + 0.5)) if d else 0.0 for d in values])
    return idf.astype(np.float32)[inverse]


def build_index(cache: TokenCache, docs: Sequence[int], k1: float = 1.5, b: float = 0.75) -> bm25s.BM25:
    """A ``bm25s.BM25`` over the documents ``docs`` (text numbers from ``cache``, one per document)."""
    starts, flat_ids, flat_tf, lengths = cache.arrays()
    tn = np.asarray(docs, dtype=np.int64)
    n_docs, n_vocab = len(tn), len(cache.vocab)
    first, n_uniq = starts[tn], starts[tn + 1] - starts[tn]
    dl = lengths[tn]
    avg_doc_len = dl.mean()
    # every (document, distinct token) pair, document by document
    doc_of = np.repeat(np.arange(n_docs, dtype=np.int32), n_uniq)
    ends = np.cumsum(n_uniq)
    pos = np.arange(ends[-1] if n_docs else 0, dtype=np.int64) + np.repeat(first - (ends - n_uniq), n_uniq)
    voc, tf = flat_ids[pos], flat_tf[pos].astype(np.float64)
    df = np.bincount(voc, minlength=n_vocab)
    idf = _idf(df, n_docs)
    # bm25s (per document): tf / (k1 * ((1 - b) + b * l_d / l_avg) + tf) * idf, stored as float32
    norm = k1 * ((1 - b) + b * dl.astype(np.float64) / avg_doc_len)
    scores = (idf[voc].astype(np.float64) * (tf / (norm[doc_of] + tf))).astype(np.float32)
    order = np.argsort(voc, kind="stable")  # column by column, documents in order within a column
    indptr = np.zeros(n_vocab + 1, dtype=np.int64)
    np.cumsum(df, out=indptr[1:])
    index = bm25s.BM25(k1=k1, b=b)
    index.scores = {"data": scores[order], "indices": doc_of[order], "indptr": indptr, "num_docs": n_docs}
    index.vocab_dict = dict(cache.vocab)  # a snapshot: ids added later have no column here
    index.nonoccurrence_array = None
    index.unique_token_ids_set = set(index.vocab_dict.values())
    return index
