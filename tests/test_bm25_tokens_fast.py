"""``bm25_tokens``'s ASCII fast path (issue 31) gives the tokens the regex definition gives."""

from __future__ import annotations

import random
import string

import pytest

from memeval.text.tokens import BM25_STOPWORDS, bm25_tokens, word_tokens


def regex_definition(text: str) -> list[str]:
    """bm25_tokens as defined before the fast path: word_tokens less the stop words and 1-char ASCII."""
    return [w for w in word_tokens(text, BM25_STOPWORDS) if len(w) > 1 or not w.isascii()]


@pytest.mark.parametrize(
    "text",
    [
        "What is my neighbour called? By the way, my cousin is called Zorblax12.",
        "snake_case and CamelCase, e-mail: a.b@c.de; don't (it's) \"quoted\" [x] {y} <z>",
        "I   went\tto\nthe\rGYM ~ again!!! A I O u",
        "tabs\x0b\x0cand\x1fcontrol\x7fchars",
        "",
        "   ",
        "a b c d e",
        "Café in Zürich, 東京タワー, naïve",
        "room 101, 5 km, 2024-01-01",
    ],
)
def test_fast_path_keeps_the_tokens(text):
    assert bm25_tokens(text) == regex_definition(text)


def test_fast_path_keeps_the_tokens_on_random_ascii():
    rng = random.Random(7)
    alphabet = string.ascii_letters + string.punctuation + " \t\n" + "_" * 3
    words = sorted(BM25_STOPWORDS) + ["a", "i", "x", "word", "Memory", "BM25s"]
    for _ in range(3000):
        parts = [rng.choice(words) if rng.random() < 0.5 else "" for _ in range(8)]
        noise = "".join(rng.choice(alphabet) for _ in range(rng.randrange(40)))
        text = rng.choice([" ", "_", ",", "-"]).join(parts) + noise
        assert bm25_tokens(text) == regex_definition(text), text
