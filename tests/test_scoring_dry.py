"""Dry-mode rules 1-11 of benchmark.md §4, in order, with hand-written expected scores."""

import pytest

from memeval.bench.model import Question
from memeval.scoring.dry import GRADER_VERSION, DryScore, latest_value, score_answer, score_many


def Q(axis, gold="", **kw):
    return Question(id="Q1", axis=axis, question_en="?", gold_answer=gold, **kw)


def check(q, answer, score, rule):
    got = score_answer(q, answer)
    assert (got.score, got.rule) == (score, rule)
    assert got.verdict == ("correct" if score == 1 else "wrong" if score == 0 else "partial")


def test_grader_version_and_frozen_result():
    assert GRADER_VERSION == "dry-v2"
    s = DryScore.of(0.5, "x")
    assert (s.score, s.verdict, s.rule) == (0.5, "partial", "x")
    with pytest.raises(AttributeError):
        s.score = 1.0


# Rule 1: expect == no_memory is scored as ABSTAIN whatever its axis
def test_no_memory_expectation_scored_as_abstain():
    q = Q("XLING_QUERY", gold="Never stated", expect="no_memory", query_lang="es", question="¿...?")
    check(q, "No lo sé", 1.0, "abstain:idk")
    check(q, "Dr Lee", 0.0, "abstain:went-along")


# Rule 2: empty answers
@pytest.mark.parametrize("answer", ["", "   \n", None])
@pytest.mark.parametrize("axis", ["BASIC", "ABSTAIN", "STALE", "GATHER", "CONTRADICT"])
def test_empty_answer_is_zero(axis, answer):
    check(Q(axis, gold="x", gold_parts=("a", "b")), answer, 0.0, "empty")


# Rule 3: the IDK net
@pytest.mark.parametrize(
    "axis", ["BASIC", "PARAPHRASE", "TEMPORAL", "MULTI", "CONFLICT", "GATHER", "RECONCILE", "XLING_QUERY"]
)
def test_idk_net_zeroes_idk_answers(axis):
    # the gold "never" is inside "never mentioned": without the net this would score 1
    q = Q(axis, gold="never", side_a="never", side_b="x", gold_parts=("never",))
    check(q, "You never mentioned that.", 0.0, "idk-net")


def test_idk_net_in_other_languages():
    check(
        Q("XLING_QUERY", gold="Lyon", query_lang="fr", question="?"), "Je ne sais pas, peut-être Lyon", 0.0, "idk-net"
    )
    check(Q("BASIC", gold="東京"), "不知道，也许是东京", 0.0, "idk-net")


def test_idk_looking_gold_is_exempt_from_the_net():
    q = Q("BASIC", gold="for months and never said anything")
    check(q, "For months, and never said anything about it", 1.0, "basic:gold")
    q_alt = Q("BASIC", gold="stayed silent", gold_alts=("never said anything",))
    check(q_alt, "They never said anything.", 1.0, "basic:gold")


# Rule 4: ABSTAIN / FALSE_MEMORY
@pytest.mark.parametrize(
    "answer, score, rule",
    [
        ("I don't know.", 1.0, "abstain:idk"),
        ("That was never mentioned.", 1.0, "abstain:idk"),
        ("모르겠습니다", 1.0, "abstain:idk"),
        # a denial answers a planted premise; plain ABSTAIN plants none, so only IDK counts there
        ("That didn't happen.", 0.0, "abstain:went-along"),
        ("Your sister's name is Ana.", 0.0, "abstain:went-along"),
    ],
)
def test_abstain(answer, score, rule):
    check(Q("ABSTAIN", gold="Never stated"), answer, score, rule)


@pytest.mark.parametrize(
    "answer, score, rule",
    [
        ("I have no record of you going skydiving.", 1.0, "false_memory:idk"),
        ("You never went skydiving.", 1.0, "false_memory:denial"),
        ("Actually, your dentist is Dr Lee, not Dr Kim.", 1.0, "false_memory:denial"),
        ("It was sunny that day.", 0.0, "false_memory:went-along"),
        ("No, it was sunny.", 0.0, "false_memory:went-along"),
    ],
)
def test_false_memory(answer, score, rule):
    check(Q("FALSE_MEMORY", gold="Never happened", kind="ghost"), answer, score, rule)


# Rule 5: GATHER proportional
@pytest.mark.parametrize(
    "answer, score, rule",
    [
        ("Salad for lunch and soup for dinner.", 1.0, "gather:parts"),
        ("They have salad for lunch.", 0.5, "gather:parts"),
        ("Pizza.", 0.0, "gather:miss"),
    ],
)
def test_gather_two_parts(answer, score, rule):
    check(Q("GATHER", gold="salad and soup", gold_parts=("salad", "soup")), answer, score, rule)


def test_gather_three_parts_and_without_parts():
    got = score_answer(Q("GATHER", gold="x", gold_parts=("red", "green", "blue")), "red and blue")
    assert got.score == pytest.approx(2 / 3) and got.verdict == "partial"
    check(Q("GATHER", gold="salad and soup"), "salad and soup", 1.0, "gather:gold")
    check(Q("GATHER", gold="salad and soup"), "salad", 0.0, "gather:miss")


# Rule 6: UPDATE, new value first
@pytest.mark.parametrize(
    "answer, score, rule",
    [
        ("Daily.", 1.0, "update:new-value"),
        ("It was every other day, now it's daily.", 1.0, "update:new-value"),
        ("I don't know.", 0.5, "update:idk"),
        ("Every other day.", 0.0, "update:miss"),
    ],
)
def test_update(answer, score, rule):
    check(Q("UPDATE", gold="daily", stale_answer="every other day"), answer, score, rule)


# Rule 7: STALE, new value, then the old value as current, then IDK
@pytest.mark.parametrize(
    "answer, score, rule",
    [
        ("Oat milk.", 1.0, "stale:new-value"),
        ("It was whole milk, now oat milk.", 1.0, "stale:new-value"),
        ("Whole milk.", 0.0, "stale:old-value"),
        ("Whole milk, I think, but I'm not certain that was never changed.", 0.0, "stale:old-value"),
        ("That was never stated.", 0.5, "stale:idk"),
        ("Soy milk.", 0.0, "stale:miss"),
    ],
)
def test_stale(answer, score, rule):
    check(Q("STALE", gold="oat milk", stale_answer="whole milk"), answer, score, rule)


# Rule 8: RECONCILE, both sides; IDK earns 0
@pytest.mark.parametrize(
    "answer, score, rule",
    [
        ("Tea on weekdays, coffee on weekends.", 1.0, "reconcile:both-sides"),
        ("Tea on weekdays.", 0.5, "reconcile:one-side"),
        ("They drink both, depending on the day.", 1.0, "reconcile:gold"),
        ("Only coffee.", 0.0, "reconcile:miss"),
        ("I don't know.", 0.0, "idk-net"),
    ],
)
def test_reconcile(answer, score, rule):
    q = Q("RECONCILE", gold="both, depending on the day", side_a="weekdays", side_b="weekends")
    check(q, answer, score, rule)


# Rule 9: CONTRADICT
@pytest.mark.parametrize(
    "answer, score, rule",
    [
        ("First you said March 13, later March 20.", 1.0, "contradict:both-values"),
        ("The two statements conflict.", 1.0, "contradict:names-disagreement"),
        ("Those dates are inconsistent.", 1.0, "contradict:names-disagreement"),
        ("They do not match.", 1.0, "contradict:names-disagreement"),
        ("You gave two different dates.", 1.0, "contradict:names-disagreement"),
        ("At one point you said the 13th, and later you said something else.", 1.0, "contradict:names-disagreement"),
        ("Both.", 0.0, "contradict:miss"),  # "both" alone never names a disagreement
        ("It was a different day.", 0.0, "contradict:miss"),  # nor does "different" alone
        ("I'm not sure; I can't determine that.", 0.5, "contradict:idk"),
        ("March 13.", 0.0, "contradict:miss"),  # one value stated as fact
        ("There is no conflict: it was March 13.", 0.0, "contradict:miss"),  # a negated disagreement word
        ("That doesn't contradict anything; March 13.", 0.0, "contradict:miss"),
        ("No contradiction, but the dates are inconsistent.", 1.0, "contradict:names-disagreement"),
    ],
)
def test_contradict(answer, score, rule):
    check(
        Q("CONTRADICT", gold="unclear: March 13 or March 20", clash_a="March 13", clash_b="March 20"),
        answer,
        score,
        rule,
    )


def test_contradict_both_values_checked_before_idk():
    q = Q("CONTRADICT", gold="unclear", clash_a="200", clash_b="300")
    check(q, "I don't know, 200 and 300 both come up.", 1.0, "contradict:both-values")


# Rule 10: CONFLICT
@pytest.mark.parametrize(
    "answer, score, rule",
    [
        ("No, they're metal pipe now.", 1.0, "conflict:corrected"),
        ("Actually, it's metal pipe.", 1.0, "conflict:corrected"),
        ("They changed to metal pipes.", 1.0, "conflict:corrected"),
        ("Metal pipe.", 0.5, "conflict:value-only"),
        ("No, that's wrong.", 0.0, "conflict:miss"),
        ("Copper.", 0.0, "conflict:miss"),
    ],
)
def test_conflict(answer, score, rule):
    check(Q("CONFLICT", gold="No, they're metal pipe now."), answer, score, rule)


@pytest.mark.parametrize(
    "gold, expected",
    [
        ("No, they're metal pipe now.", "metal pipe"),
        ("no, it's daily now", "daily"),
        ("No — she moved to Lyon", "moved to Lyon"),  # a leading subject pronoun goes too
        ("Actually, it's 7 pm", "7 pm"),
        ("Lyon", "Lyon"),
    ],
)
def test_latest_value(gold, expected):
    assert latest_value(gold) == expected


# Rule 11: every other axis
@pytest.mark.parametrize(
    "axis", ["BASIC", "PARAPHRASE", "IMAGE", "XLING_STORE", "TEMPORAL", "MULTI", "IMPLICIT", "CROSS"]
)
def test_gold_or_alt(axis):
    q = Q(axis, gold="Dr Lee", gold_alts=("Doctor Lee",))
    check(q, "Her dentist is Dr. Lee.", 1.0, f"{axis.lower()}:gold")
    check(q, "It's Doctor Lee", 1.0, f"{axis.lower()}:gold")
    check(q, "Dr Kim", 0.0, f"{axis.lower()}:miss")


def test_pronoun_dropping_on_a_full_sentence_gold():
    check(Q("BASIC", gold="her dentist is Dr Lee"), "my dentist is Dr Lee", 1.0, "basic:gold")


def test_memories_joined_as_one_text():
    memories = "\n".join(["user: we went hiking on Saturday", "user: my dentist is Dr. Lee on Elm Street"])
    check(Q("BASIC", gold="Dr Lee"), memories, 1.0, "basic:gold")


def test_unicode_answers():
    check(
        Q("XLING_QUERY", gold="東京", query_lang="ja", question="?"),
        "彼は東京に住んでいます。",
        1.0,
        "xling_query:gold",
    )
    check(Q("XLING_STORE", gold="Zurich", store_lang="de"), "Sie wohnt in Zürich.", 1.0, "xling_store:gold")
    check(Q("XLING_QUERY", gold="Lyon", query_lang="ar", question="?"), "لا أعرف", 0.0, "idk-net")


def test_score_many_keeps_order():
    q = Q("BASIC", gold="Lyon")
    assert [s.score for s in score_many([(q, "Lyon"), (q, ""), (q, "Paris")])] == [1.0, 0.0, 0.0]


def test_memories_as_a_list_are_joined():
    q = Q("BASIC", gold="Dr Lee")
    check(q, ["user: we went hiking", "user: my dentist is Dr. Lee"], 1.0, "basic:gold")
    check(q, [], 0.0, "empty")
    check(Q("MULTI", gold="2022"), 2022, 1.0, "multi:gold")  # a bare number from a JSON answer file
