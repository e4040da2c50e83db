"""bm25 after the speed work gives what it gave before.

``tests/data/bm25_pinned_records.json`` was written by bm25 as it was at commit 4c648f5 (before the
token cache and the bulk index: ``bm25s.BM25().index`` on every turn's tokens), on the bench of
``tests/bm25_bench.py``: for every record its returned turns, score and verdict, and the BM25 score
(float32) of each returned turn. The bulk index is also compared with ``bm25s``'s own, array for array.
The pin was written with bm25's first tokeniser (bm25s's English stop words, every token kept); the
pinned tests put it back (``pinned_tokens``), so they check the index and selection, not the tokens.
"""

import json
import random
from pathlib import Path

import bm25s
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from bm25_bench import make_bm25_bench
from memeval.bench import haystacks_of, load_bench, read_questions, read_turns
from memeval.run import read_records, run_system
from memeval.systems.baselines import BM25, bm25_tokens, top_k_positive
from memeval.systems.bm25_index import EMPTY_TOKEN, TokenCache, build_index

PINNED = Path(__file__).parent / "data" / "bm25_pinned_records.json"


@pytest.fixture
def pinned_tokens(monkeypatch):
    """bm25 tokenising as when the pin was written (bm25 version 1)."""
    from memeval.systems import baselines
    from memeval.text.tokens import word_tokens

    stop = frozenset(bm25s.stopwords.STOPWORDS_EN)
    monkeypatch.setattr(baselines, "bm25_tokens", lambda text: word_tokens(text, stop))


def test_records_equal_those_written_before_the_speed_work(tmp_path, pinned_tokens):
    pinned = json.loads(PINNED.read_text())
    (tmp_path / "b").mkdir()
    bench = make_bm25_bench(tmp_path / "b")
    run_system(bench, "bm25", out=tmp_path / "r", progress=False)
    got = {f"{r['tier']}/{r['qid']}": r for r in read_records(tmp_path / "r")}
    assert got.keys() == pinned.keys() and len(got) == 215
    for key, want in pinned.items():
        for field in ("retrieved_turns", "score", "verdict"):
            assert got[key][field] == want[field], (key, field)


def test_bm25_scores_of_returned_turns_equal_the_pinned_ones(tmp_path, pinned_tokens):
    pinned = json.loads(PINNED.read_text())
    (tmp_path / "b").mkdir()
    b = load_bench(make_bm25_bench(tmp_path / "b"))
    system = BM25(k=10)  # one system through every tier and haystack, as a run uses it
    checked = 0
    for tier in b.tiers:
        qs = read_questions(Path(b.root) / tier.questions_file)
        for hay, sessions in haystacks_of(read_turns(Path(b.root) / tier.turns_file)).items():
            system.reset()
            for s in sessions:
                system.ingest(s)
            pos = {t.turn_id: i for i, t in enumerate(t for s in sessions for t in s.turns)}
            for q in (q for q in qs if q.haystack == hay):
                want = pinned[f"{tier.name}/{q.id}"]
                scores = system.scores(q.text_to_ask)
                got = [] if scores is None else [float(scores[pos[t]]) for t in want["retrieved_turns"]]
                assert got == want["bm25"], q.id  # exact float32 values
                checked += bool(got)
    assert checked > 150


def _bm25s_arrays(docs: list[list[str]]):
    """bm25s's own index, as {token: {document: score}}."""
    index = bm25s.BM25()
    index.index(docs, show_progress=False)
    s, inv = index.scores, {i: t for t, i in index.vocab_dict.items()}
    out = {}
    for col in range(len(s["indptr"]) - 1):
        a, z = s["indptr"][col], s["indptr"][col + 1]
        out[inv[col]] = dict(zip(s["indices"][a:z].tolist(), s["data"][a:z].tolist()))
    return out, index


def _ours(cache: TokenCache, texts: list[str]):
    index = build_index(cache, [cache.add(t) for t in texts])
    s, inv = index.scores, {i: t for t, i in cache.vocab.items()}
    out = {}
    for col in range(len(s["indptr"]) - 1):
        a, z = s["indptr"][col], s["indptr"][col + 1]
        if z > a:
            out[inv[col]] = dict(zip(s["indices"][a:z].tolist(), s["data"][a:z].tolist()))
        assert (np.diff(s["indices"][a:z]) > 0).all()  # documents in order within a column
    return out, index


WORD = st.sampled_from("cat dog red blue the of 42 7 東京 北京タワー zebra apple".split())


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(WORD, max_size=12).map(" ".join), min_size=1, max_size=40))
def test_bulk_index_equals_bm25s_index_exactly(texts):
    cache = TokenCache(bm25_tokens)
    ours, index = _ours(cache, texts)
    theirs, ref = _bm25s_arrays([bm25_tokens(t) or [EMPTY_TOKEN] for t in texts])
    assert ours == theirs  # every (token, document) score, bit for bit
    for q in (["cat"], ["cat", "dog", "cat"], ["zebra", "unknown"], ["東京", "red"]):
        assert index.get_scores(q).tolist() == ref.get_scores(q).tolist()


def test_cache_kept_across_tiers_gives_the_scores_of_a_fresh_index():
    rng = random.Random(3)
    words = [f"w{i}" for i in range(300)] + ["the", "a"]
    texts = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 30))) for _ in range(2000)]
    cache = TokenCache(bm25_tokens)
    for part in (texts[:300], texts[150:1200], texts, texts[1900:]):  # the cache grows, vocab ids differ from fresh
        ours, _ = _ours(cache, part)
        fresh, _ = _ours(TokenCache(bm25_tokens), part)
        theirs, _ = _bm25s_arrays([bm25_tokens(t) or [EMPTY_TOKEN] for t in part])
        assert ours == fresh == theirs


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from([0.0, 0.0, 0.0, 0.1, 0.24, 0.25, 0.26, 0.49, 0.5, 0.51, 1.0, 1.0, 2.0]), max_size=60),
    st.integers(0, 70),
)
def test_top_k_equals_a_full_sort_around_the_thresholds(values, k):
    scores = np.array(values, dtype=np.float32)
    ranked = sorted(range(len(values)), key=lambda i: (-scores[i], i))  # independent: a plain sort
    assert top_k_positive(scores, k).tolist() == [i for i in ranked if scores[i] > 0][:k]


def test_token_cache_is_dropped_over_a_reset_only_when_its_texts_do_not_come_back():
    from memeval.systems.bm25_index import TokenCache

    cache = TokenCache(str.split)
    for t in ("a b", "c d", "e f"):  # three new texts, none found cached
        cache.add(t)
    assert cache.worth_keeping(min_texts=10)  # small: kept whatever the hits
    for t in ("g", "h"):
        cache.add(t)
    assert not cache.worth_keeping(min_texts=3)  # large and nothing came back: dropped
    for t in ("a b", "c d", "x"):  # two of three found cached
        cache.add(t)
    assert cache.worth_keeping(min_texts=3, min_found=0.5)
