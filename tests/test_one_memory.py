"""Dry grading of a memory-only response reads one memory at a time: a value, a number with its unit,
a CONFLICT correction with its latest value, a named disagreement must each come from one memory,
never from the join; and a day of a named month matches however it is written."""

from __future__ import annotations

import pytest

from memeval.bench.model import Question
from memeval.scoring.dry import score_answer
from memeval.scoring.retrieval import retrieval_hit
from memeval.systems.base import Memory

TWO_WEEKS = Question("Q1", "BASIC", "How long was the trip?", "two weeks", evidence_turns=(1,))
CONFLICT = Question(
    "Q2", "CONFLICT", "Since the pipes are wood, ...?", "No, they're metal pipe now.", evidence_turns=(1,)
)


def test_a_number_and_its_unit_come_from_one_memory():
    joined_only = ["The two of them came along.", "It took a week to plan."]
    assert score_answer(TWO_WEEKS, joined_only).rule == "basic:miss"
    assert score_answer(TWO_WEEKS, "\n".join(joined_only)).score == 1.0  # a written answer is one text
    assert score_answer(TWO_WEEKS, ["We were away for two weeks.", "unrelated"]).rule == "basic:gold"


def test_a_multi_word_value_is_not_built_across_two_memories():
    q = Question("Q3", "BASIC", "What did they buy?", "blue car", evidence_turns=(1,))
    assert score_answer(q, ["Everything was blue", "car parks were full"]).score == 0.0
    assert score_answer(q, [Memory("We bought a blue car.", "2026-01-01", "Ann")]).score == 1.0


def test_conflict_correction_and_latest_value_in_one_memory():
    assert score_answer(CONFLICT, ["We replaced them with metal pipe last spring."]).rule == "conflict:corrected"
    # the correction word sits in another memory than the value: half credit (rule 10, value alone)
    split = ["They are metal pipe.", "I'm not going to the market."]
    assert score_answer(CONFLICT, split).rule == "conflict:value-only"
    assert score_answer(CONFLICT, "\n".join(split)).rule == "conflict:corrected"  # one written answer
    assert score_answer(CONFLICT, ["No idea."]).rule == "conflict:miss"


def test_a_disagreement_is_named_within_one_memory():
    q = Question("Q4", "CONTRADICT", "How many seeds?", "conflict", clash_a="200 seeds", clash_b="300 seeds")
    split = ["At one point we planted tulips", "later the beds were dug"]
    assert score_answer(q, split).rule == "contradict:miss"
    assert score_answer(q, [" ".join(split)]).rule == "contradict:names-disagreement"
    assert score_answer(q, ["I sowed 200 seeds.", "I sowed 300 seeds."]).rule == "contradict:both-values"


def test_retrieval_hit_needs_the_target_within_one_memory():
    assert retrieval_hit(TWO_WEEKS, None, ["The two of them came.", "It took a week."]) is False
    assert retrieval_hit(TWO_WEEKS, None, ["noise", "It took two weeks."]) is True


@pytest.mark.parametrize(
    "answer, gold",
    [
        ("It was the 12th of April.", "April 12"),
        ("on April 12th", "12th of April"),
        ("12 April 2026", "April 12, 2026"),
        ("the twelfth of April", "April 12"),
        ("On 7 May 2023", "May 7, 2023"),
    ],
)
def test_a_day_of_a_named_month_matches_however_written(answer, gold):
    q = Question("Q5", "TEMPORAL", "When?", gold, evidence_turns=(1,))
    assert score_answer(q, answer).score == 1.0
    assert score_answer(q, [answer]).score == 1.0


@pytest.mark.parametrize("answer", ["April 13", "the 12th of May", "on the 13th of April"])
def test_a_different_day_or_month_does_not(answer):
    q = Question("Q6", "TEMPORAL", "When?", "April 12", evidence_turns=(1,))
    assert score_answer(q, answer).score == 0.0
