"""``normalize_each`` (a memory-only answer normalised memory by memory, as dry rules read it) gives
each text's own normal form, the one ``normalize`` gives, on adversarial texts (clock times, fractions,
number words, articles, pronouns, currency, CJK numerals, accents, dates)."""

from __future__ import annotations

import random

import pytest

from memeval.text import normal_form as nf

EDGES = [
    "I", "it", "a", "an", "the", "5", "7", "7:00", "a.", "p.", "m", "pm", "am", "percent", "%", "$", "5$",
    "€", "twenty", "five", "and", "half", "a half", "1/2", "2", "/", "per", "cent", "me.", "Mike", "Paul",
    "I'm", "it's", "colour", "grey", "centre", "José", "三", "只", "三只", "ё", "Σ", "(x)", '"q"', " ", "-",
    "2026-01-01", "1,000", ",000", "a.m.", "twenty-five", "first", "dollars", "euro", "m.", "M", "Am", "PM",
    "12th", "of", "April", "may", "twelfth", "3rd", "March",
    "\u00a0", "\t", "٣", "ﬁ", "ß", "plan a", "myself", "'", "o'clock", ".", ",", "。", "x.", "y!", "z?", "\n",
]  # fmt: skip
SENTENCES = [
    "I moved to Lisbon in March.",
    "My dentist is Dr. Lee, at 7:00 p.m. on Fridays.",
    "We paid $150 for two and a half days.",
    "三只猫和两只狗",
    "José's neighbour painted it grey",
    "We met on the 12th of April.",
]


@pytest.mark.parametrize("seed", [1, 2])
def test_normalize_each_is_each_texts_normal_form(seed):
    rnd = random.Random(seed)
    for _ in range(2000):
        lines = [
            rnd.choice(["", " "]).join(rnd.choice(EDGES + SENTENCES) for _ in range(rnd.randrange(1, 5)))
            for _ in range(rnd.randrange(0, 5))
        ]
        assert nf.normalize_each(lines) == [nf._normalize(t) for t in lines], lines


def test_a_long_text_is_normalised_without_the_per_memory_cache():
    long = "I have two cats. " * 200
    assert len(long) > nf.LINE_MAX_CHARS and nf.normalize_each([long]) == [nf._normalize(long)]
