"""``normalize_lines`` (a memory-only answer normalised memory by memory) equals ``normalize`` of the
joined text: on the lines where a step spans the newline (it then normalises the joined text) and on
every other line, including adversarial edges (clock times, fractions, number words, articles,
pronouns, currency, CJK numerals, accents)."""

from __future__ import annotations

import random

import pytest

from memeval.text import normal_form as nf

EDGES = [
    "I", "it", "a", "an", "the", "5", "7", "7:00", "a.", "p.", "m", "pm", "am", "percent", "%", "$", "5$",
    "€", "twenty", "five", "and", "half", "a half", "1/2", "2", "/", "per", "cent", "me.", "Mike", "Paul",
    "I'm", "it's", "colour", "grey", "centre", "José", "三", "只", "三只", "ё", "Σ", "(x)", '"q"', " ", "-",
    "2026-01-01", "1,000", ",000", "a.m.", "twenty-five", "first", "dollars", "euro", "m.", "M", "Am", "PM",
    "a.m", "p. m.", "7 ", "at 7:00", "a. m.", "m5", "m1/2", "am5", "_m", "m_", "my", "amazing", "a.b", "3/",
    "/4", "hundred", "a dozen", "percentage", "point", "quarter", "second", "\u00a0", "\t", "٣", "ﬁ", "ß",
    "plan a", "myself", "'", "o'clock", ".", ",", "。", "x.", "y!", "z?", "\n",
]  # fmt: skip
SENTENCES = [
    "I moved to Lisbon in March.",
    "My dentist is Dr. Lee, at 7:00 p.m. on Fridays.",
    "We paid $150 for two and a half days.",
    "Pm me later!",
    "Am I late? The bus left at 9.",
    "Maybe a quarter of it was gone.",
    "It costs five dollars a month",
    "三只猫和两只狗",
    "José's neighbour painted it grey",
    "m is a letter",
    "a.m. is early",
]


def _joins(n: int, seed: int):
    rnd = random.Random(seed)
    for _ in range(n):
        lines = []
        for _ in range(rnd.randrange(2, 6)):
            c = rnd.random()
            if c < 0.3:
                lines.append(rnd.choice(SENTENCES))
            elif c < 0.75:
                lines.append(rnd.choice(["", " "]).join(rnd.choice(EDGES) for _ in range(rnd.randrange(1, 4))))
            else:
                lines.append(rnd.choice(EDGES) + rnd.choice(["", " "]) + rnd.choice(SENTENCES) + rnd.choice(EDGES))
        yield lines


@pytest.mark.parametrize("seed", [1, 2])
def test_normalize_lines_equals_normalize_of_the_joined_text(seed):
    quiet = 0
    for lines in _joins(8000, seed):
        assert nf.normalize_lines(lines) == nf._normalize("\n".join(lines)), lines
        parts = [nf._line(t) for t in lines]
        quiet += all(p is not None for p in parts) and all(
            a.closes_quietly and b.opens_quietly for a, b in zip(parts, parts[1:])
        )
    assert quiet > 1000  # the line-by-line path is exercised, not only the fallback


@pytest.mark.parametrize(
    "lines",
    [
        ["at 7:00", "pm"],  # a clock time across the newline
        ["plan a.", "m."],  # a.m. across the newline
        ["it is 7:00", "a.m."],
        ["2", "1/2 cups"],  # a mixed number
        ["twenty", "five"],  # number words
        ["it was 5", "percent"],  # percent after a number
        ["it was 5", "it percent"],  # ... after a dropped pronoun
        ["a", "dozen eggs"],
        ["plan a", "and b"],
        ["$", "5"],
        [],
        ["", "x"],
    ],
)
def test_lines_that_read_together_are_normalised_whole(lines):
    assert nf.normalize_lines(lines) == nf.normalize("\n".join(lines))
