"""retrieval_hit (benchmark.md §4): ids when returned, else the gold in the joined text."""

from memeval.bench.model import Question
from memeval.scoring.retrieval import retrieval_hit


def Q(axis="BASIC", gold="Dr Lee", **kw):
    return Question(id="Q1", axis=axis, question_en="?", gold_answer=gold, evidence_turns=kw.pop("ev", (12, 40)), **kw)


def test_ids_intersect_evidence():
    assert retrieval_hit(Q(), [3, 40, 77], []) is True
    assert retrieval_hit(Q(), [3, 41], ["Dr Lee"]) is False  # ids win over text
    assert retrieval_hit(Q(), ["12"], []) is True  # string ids from JSON still compare


def test_text_without_ids_contains_gold_alt_or_part():
    assert retrieval_hit(Q(), None, ["user: my dentist is Dr. Lee"]) is True
    assert retrieval_hit(Q(), [], ["user: my dentist is Dr. Kim"]) is False
    assert retrieval_hit(Q(gold="x", gold_alts=("Lyon",)), None, ["moved to Lyon"]) is True
    assert (
        retrieval_hit(Q("GATHER", gold="salad and soup", gold_parts=("salad", "soup")), None, ["soup at night"]) is True
    )
    assert retrieval_hit(Q("CONFLICT", gold="No, they're metal pipe now."), None, ["replaced with metal pipe"]) is True
    assert (
        retrieval_hit(Q("CONTRADICT", gold="unclear", clash_a="March 13", clash_b="March 20"), None, ["on March 20"])
        is True
    )


def test_nothing_returned_is_a_miss_not_none():
    assert retrieval_hit(Q(), None, None) is False
    assert retrieval_hit(Q(), [], []) is False
    assert retrieval_hit(Q(), [], ["", "  "]) is False


def test_no_evidence_questions_are_none():
    assert retrieval_hit(Q("ABSTAIN", gold="Never stated", ev=()), [1], ["x"]) is None
    assert retrieval_hit(Q("FALSE_MEMORY", gold="Never happened", ev=()), None, None) is None
    assert retrieval_hit(Q("XLING_QUERY", expect="no_memory", ev=()), None, None) is None
    assert retrieval_hit(Q(ev=()), [5], []) is None  # ids returned but nothing to intersect


def test_stale_old_value_is_not_a_hit():
    q = Q("STALE", gold="oat milk", stale_answer="whole milk")
    assert retrieval_hit(q, None, ["I always buy whole milk"]) is False
