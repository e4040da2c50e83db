import json

import pytest

from memeval.errors import InputError
from memeval.scoring.keyword_recall import PASS_THRESHOLD, facts_from_json, keyword_recall, normalize, read_gold_facts

from booksuite_paths import SUITE


def test_normalize_lowercases_collapses_and_strips_only():
    assert normalize("  Patricia \n\t WONG  ") == "patricia wong"
    # nothing else: punctuation, articles and number words are kept as written
    assert normalize("The $600-800, five.") == "the $600-800, five."


def test_fact_counts_when_any_variant_is_a_substring():
    facts = (("November 21", "Nov 21", "Nov. 21"), ("2:30",), ("Robert Chen",))
    r = keyword_recall("See Dr. ROBERT  CHEN on nov. 21st at 2:30 PM", facts)
    assert r.matched == ("November 21", "2:30", "Robert Chen") and r.missing == ()
    assert r.reward == 1.0 and r.passed


def test_reward_is_matched_over_total_and_pass_threshold_is_point_eight():
    facts = tuple((x,) for x in ("a1", "b2", "c3", "d4", "e5"))
    four = keyword_recall("a1 b2 c3 d4", facts)
    assert four.reward == 4 / 5 and four.passed and PASS_THRESHOLD == 0.8
    three = keyword_recall("a1 b2 c3", facts[:4])
    assert three.reward == 0.75 and not three.passed
    assert three.missing == ("d4",) and three.total == 4


def test_not_the_dry_matching():
    # no number-word conversion, no white-space insertion, plain substrings (so "12C" hides in "112C")
    assert keyword_recall("five hundred", (("500",),)).reward == 0.0
    assert keyword_recall("seat 12 C", (("12C",),)).reward == 0.0
    assert keyword_recall("seat 112C", (("12C",),)).reward == 1.0


def test_empty_or_missing_answer_scores_zero():
    assert keyword_recall("", (("x",),)).reward == 0.0
    assert keyword_recall(None, (("x",),)).reward == 0.0
    with pytest.raises(ValueError):
        keyword_recall("x", ())


def test_facts_from_json_validates_with_field_names():
    assert facts_from_json(["a", ["b", "c"]]) == (("a",), ("b", "c"))
    with pytest.raises(InputError, match=r"record t1: field 'required_facts\[1\]'"):
        facts_from_json(["a", []], "g.json", "t1")
    with pytest.raises(InputError, match="required_facts"):
        facts_from_json([], "g.json", "t1")
    with pytest.raises(InputError, match=r"required_facts\[0\]"):
        facts_from_json([3], "g.json", "t1")


def test_read_shipped_gold_facts():
    gold = read_gold_facts(SUITE / "fixtures" / "gold_facts.json")
    assert len(gold) == 8 and "_comment" not in gold
    assert gold["layer1_03_medical_appointment"][0] == ("November 21", "Nov 21", "Nov. 21")
    assert gold["layer1_01_bank_account"] == (("4429853327",), ("123006800",))


def test_bad_gold_file_names_line_and_record(tmp_path):
    p = tmp_path / "g.json"
    p.write_text('{\n"a": {"required_facts": ["x"]},\n')
    with pytest.raises(InputError, match=r"g.json:3: not valid JSON"):
        read_gold_facts(p)
    p.write_text(json.dumps({"t9": {"facts": ["x"]}}))
    with pytest.raises(InputError, match=r"record t9: field 'required_facts': missing"):
        read_gold_facts(p)


def test_docstring_examples():
    import doctest

    from memeval.scoring import keyword_recall as mod

    assert doctest.testmod(mod).failed == 0
