"""The faster steps of the dry normal form do what the plain ones did (the plain patterns are
written out here as the reference)."""

import re

from hypothesis import given, settings, strategies as st

from memeval.text import normal_form as nf, number_words as nw

ISO_DATE = re.compile(r"(?<![\d.,:/-])(\d{4})-(\d{2})-(\d{2})(?![\d-])")
AM_PM = re.compile(r"\b([ap])\.\s?m\b\.?")
CLOCK = re.compile(r"(\d)(?::00)?\s*([ap]m)\b")

TEXT = st.text(alphabet="0123456789-./:, apm\nxé_", max_size=40)


@settings(max_examples=400, deadline=None)
@given(TEXT)
def test_iso_date_pattern_matches_as_the_plain_one(s):
    assert nf._ISO_DATE.sub(r"\1.\2.\3", s) == ISO_DATE.sub(r"\1.\2.\3", s)


@settings(max_examples=400, deadline=None)
@given(TEXT)
def test_am_pm_and_clock_steps_run_wherever_they_can_match(s):
    assert nf._AM_PM.sub(r"\1m", s) == AM_PM.sub(r"\1m", s)
    if AM_PM.search(s):
        assert "." in s and nf._AM_PM_HINT.search(s)  # the guard never skips a match
    if CLOCK.search(s):
        assert "am" in s or "pm" in s


def test_dropped_words_take_part_in_no_other_rule():
    other = (
        set(nw.TENS)
        | set(nw.UNITS)
        | set(nw.SCALES)
        | set(nw.NUMWORDS)
        | set(nw.ORDINALS_WORDS)
        | set(nw.FOREIGN_NUMBERS)
        | set(nw.FRACTION_SINGLE)
        | {w for pair in nw.FRACTION_PAIRS for w in pair}
        | set(nf._REFLEXIVES)
        | set(nf._USD_WORDS)
        | set(nf._EUR_WORDS)
        | {"a", "an", "and", "per", "cent", "percent", "percentage", "half", "second"}
    )
    assert nf._DROPPED == set(nf._PRONOUNS) | {"the"}
    assert not nf._DROPPED & other
    assert not any(w[-1] in nf._CURRENCY_SIGNS for w in nf._DROPPED)


def test_normal_forms_of_sample_sentences():
    # written by hand from the rules in the module docstring
    assert nf._normalize("I'm meeting her at 7:00 p.m. on 2026-09-06.") == "meeting at 7 pm on 2026.09.06"
    assert nf._normalize("The a.m. train, twenty five dollars") == "am train $25"
    assert nf._normalize("My neighbour's cat") == "neighbor s cat"
