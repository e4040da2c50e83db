"""Bulk token counting gives count_tokens's numbers (the one-text regex count is the reference)."""

import random

from hypothesis import given, settings, strategies as st

import memeval.bench.tokens as tokens
from memeval.bench.tokens import TokenMemo, count_tokens, count_tokens_many

# every ASCII character (controls, \x1c-\x1f separators, underscore), plus accents, CJK, emoji
TEXT = st.text(alphabet=st.sampled_from([chr(i) for i in range(128)] + list("éß東京タワー😀\u00a0\u2028")), max_size=80)


@settings(max_examples=300, deadline=None)
@given(st.lists(TEXT, max_size=30))
def test_bulk_counts_equal_one_by_one(texts):
    assert count_tokens_many(texts) == [count_tokens(t) for t in texts]


def test_bulk_counts_across_batch_boundaries(monkeypatch):
    monkeypatch.setattr(tokens, "_BULK_CHARS", 50)  # many small numpy passes
    rng = random.Random(5)
    words = ["a", "abcd", "abcde", "under_score", "x9", "!!", "--", " ", "\t", "\n"]
    texts = ["".join(rng.choice(words) for _ in range(rng.randint(0, 30))) for _ in range(300)]
    assert count_tokens_many(texts) == [count_tokens(t) for t in texts]


def test_memo_counts_repeats_once_and_forgets_past_its_limit(monkeypatch):
    seen = []
    real = tokens.count_tokens_many
    monkeypatch.setattr(tokens, "count_tokens_many", lambda ts: seen.extend(ts) or real(ts))
    memo = TokenMemo(limit=3)
    texts = ["one two", "one two", "three", "one two"]
    assert memo.counts(texts) == [count_tokens(t) for t in texts]
    assert seen == ["one two", "three"]  # each distinct text counted once
    assert memo.counts(["three", "four five six"]) == [2, 3]  # thre+e; four, five, six
    assert seen == ["one two", "three", "four five six"]
    memo.counts(["x", "y"])  # past the limit: forgotten, then counted again
    assert memo.counts(["one two"]) == [2] and seen[-1] == "one two"
