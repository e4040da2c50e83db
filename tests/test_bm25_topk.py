"""The BM25 top-k selection: exact, deterministic, and the same turns bm25s itself ranks first."""

import random

import bm25s
import numpy as np
import pytest

from memeval.systems.baselines import BM25, bm25_tokens, top_k_positive


def _reference(scores: list[float], k: int) -> list[int]:
    ranked = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    return [i for i in ranked if scores[i] > 0][:k]


@pytest.mark.parametrize("seed", range(40))
def test_top_k_equals_a_full_sort_on_tie_heavy_vectors(seed):
    rng = random.Random(seed)
    n = rng.randint(0, 300)
    levels = [0.0] * 8 + [0.5, 1.0, 1.5, 2.0, rng.random()]  # mostly zeros, many exact ties
    scores = [rng.choice(levels) for _ in range(n)]
    k = rng.choice([1, 3, 10, 50, 400])
    assert top_k_positive(np.array(scores, dtype=float), k).tolist() == _reference(scores, k)


def test_all_zero_and_empty_vectors_give_nothing():
    assert top_k_positive(np.zeros(1000), 10).tolist() == []
    assert top_k_positive(np.array([], dtype=float), 10).tolist() == []
    assert top_k_positive(np.array([0.0, 3.0]), 0).tolist() == []


def test_ties_at_the_cut_go_to_the_earlier_turns():
    scores = np.array([1.0, 2.0, 1.0, 1.0, 0.0, 1.0])
    assert top_k_positive(scores, 3).tolist() == [1, 0, 2]


def test_same_turns_and_scores_as_bm25s_retrieve_on_distinct_scores():
    rng = random.Random(7)
    words = ["q" + "".join("bcdfghjklm"[int(c)] for c in f"{i:02d}") for i in range(60)]  # one token each
    # every document a different length: at equal term counts BM25 falls strictly with length, so the
    # positive scores of a query are all distinct and bm25s's own order is the one answer (no tie to cut)
    corpus = [" ".join(rng.choice(words) for _ in range(n)) for n in rng.sample(range(3, 153), 150)]
    index = bm25s.BM25()
    index.index([bm25_tokens(t) or ["\u2205"] for t in corpus], show_progress=False)
    for _ in range(50):
        q = bm25_tokens(" ".join(rng.choice(words) for _ in range(3)))
        scores = index.get_scores(q)
        positive = scores[scores > 0]
        assert len(set(positive.tolist())) == positive.size >= 10, q  # the premise: no tie anywhere
        docs, vals = index.retrieve([q], k=10, show_progress=False, n_threads=0)
        ours = top_k_positive(scores, 10)
        assert ours.tolist() == [int(d) for d, v in zip(docs[0], vals[0]) if v > 0]
        assert np.array_equal(scores[ours], vals[0])


def test_bm25_system_returns_ranked_positive_turns_only():
    from memeval.bench.model import Session, Turn

    turns = (
        Turn(1, 1, "user", "my cat is called Miso", "2026-01-01"),
        Turn(2, 1, "user", "the weather was grey", "2026-01-01"),
        Turn(3, 1, "user", "Miso the cat sleeps a lot, the cat", "2026-01-01"),
    )
    system = BM25(k=5)
    system.ingest(Session(1, "2026-01-01", turns))
    assert system.query("how much does Miso sleeps", None).turn_ids == (3, 1)  # sleeps + Miso, then Miso
    assert system.query("grey weather", None).turn_ids == (2,)
    assert system.query("zebra", None).turn_ids == ()


def _retrieve_query(self, question, asked_at):
    """bm25 as it was before ``top_k_positive``: ``bm25s.retrieve`` over every score (the reference)."""
    from memeval.systems.base import Recall, memory_text

    index = self._ensure_index()
    q = bm25_tokens(question)
    if index is None or not q:
        return Recall(turn_ids=())
    docs, scores = index.retrieve([q], k=min(self.params["k"], len(self._turns)), show_progress=False, n_threads=0)
    hits = [self._turns[int(d)] for d, s in zip(docs[0], scores[0]) if s > 0]
    return Recall(tuple(memory_text(t) for t in hits), tuple(t.turn_id for t in hits))


def test_scores_on_a_generated_bench_equal_those_of_bm25s_retrieve(tmp_path, monkeypatch):
    from memeval.bench import lifelog
    from memeval.run import read_records, run_system

    bench = lifelog.generate("tiny", 1, tmp_path / "bench")
    run_system(bench, "bm25", out=tmp_path / "new", progress=False)
    monkeypatch.setattr(BM25, "query", _retrieve_query)
    run_system(bench, "bm25", out=tmp_path / "old", progress=False)
    new = {(r["tier"], r["qid"]): r for r in read_records(tmp_path / "new")}
    old = {(r["tier"], r["qid"]): r for r in read_records(tmp_path / "old")}
    assert new.keys() == old.keys() and len(new) > 100
    assert [new[k]["score"] for k in sorted(new)] == [old[k]["score"] for k in sorted(old)]
    same_hits = sum(set(new[k]["retrieved_turns"]) == set(old[k]["retrieved_turns"]) for k in new)
    assert same_hits >= len(new) // 2  # the rest differ only in which of equally scored turns made the cut
