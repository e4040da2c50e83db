"""Dry rules for every glasshouse ``expect`` value, on published rows, and the matching / IDK fixes of
issue 9 (no date stamps as numbers, no false IDK or denial, content not metadata)."""

import json

import pytest

from memeval.bench import read_questions
from memeval.bench.model import Question
from memeval.errors import ProtocolError
from memeval.scoring.dry import score_answer, ungraded_without_answer
from memeval.scoring.idk import denies_premise, gold_is_idk, is_idk
from memeval.scoring.matching import contains
from memeval.systems.base import Memory, memory_content, memory_from_json, memory_to_json

from shared_data import require_glasshouse  # noqa: E402


@pytest.fixture(scope="module")
def published():
    return {q.id: q for q in read_questions(require_glasshouse() / "questions_core.jsonl")}


def grade(q, answer):
    s = score_answer(q, answer)
    return s.score, s.rule


# -- every expect value ------------------------------------------------------------------------


def test_expect_answer(published):
    q = published["Q001"]  # BASIC, gold "a quarter acre"
    assert q.expect == "answer"
    assert grade(q, "The plot is 1/4 acre.") == (1.0, "basic:gold")
    assert grade(q, "About half an acre.") == (0.0, "basic:miss")
    assert grade(q, "I don't know.") == (0.0, "idk-net")


def test_expect_no_memory_only_idk_counts(published):
    q = published["Q321"]  # ABSTAIN; near: "only the 200 tomato plants are stated"
    assert q.expect == "no_memory" and q.extra["never"] == "N1" and "200 tomato" in q.extra["near"]
    assert grade(q, "That was never mentioned.") == (1.0, "abstain:idk")
    # the near miss given as the answer goes along with the question
    assert grade(q, "They put in 200 plants.") == (0.0, "abstain:went-along")
    # a denial earns nothing on plain ABSTAIN (glasshouse's README: only "I don't know")
    assert grade(q, "That's not right.") == (0.0, "abstain:went-along")


def test_expect_no_memory_denial_counts_on_false_memory():
    q = Question("P1", "FALSE_MEMORY", "Why did you give Miso away?", "Never happened", expect="no_memory")
    assert grade(q, "That's not right: Miso is still with you.") == (1.0, "false_memory:denial")


def test_expect_answer_or_abstain_is_the_three_way_stale_rule(published):
    q = published["Q602"]  # gold "metal pipe", stale_answer "wood"
    assert (q.expect, q.stale_answer) == ("answer_or_abstain", "wood")
    assert grade(q, "It's metal pipe now (it used to be wood).") == (1.0, "stale:new-value")
    assert grade(q, "It's wood.") == (0.0, "stale:old-value")
    assert grade(q, "I don't know what it is now.") == (0.5, "stale:idk")
    assert grade(q, "A trellis.") == (0.0, "stale:miss")


def test_expect_flag_conflict_is_the_contradict_rule(published):
    q = published["Q627"]  # clash_a "200 seeds", clash_b "300 seeds"
    assert (q.expect, q.clash_a, q.clash_b) == ("flag_conflict", "200 seeds", "300 seeds")
    assert grade(q, "First 200 seeds, later 300 seeds.") == (1.0, "contradict:both-values")
    assert grade(q, "The two accounts contradict each other.") == (1.0, "contradict:names-disagreement")
    assert grade(q, "I don't know.") == (0.5, "contradict:idk")
    assert grade(q, "They sowed 300 seeds.") == (0.0, "contradict:miss")


def test_expect_decides_over_the_axis_name():
    # a cross-language row keeps its original's expect under another axis (glasshouse xling)
    stale = Question("X1", "XLING_QUERY", "?", "metal pipe", expect="answer_or_abstain", stale_answer="wood")
    assert grade(stale, "wood") == (0.0, "stale:old-value")
    assert grade(stale, "I don't know.") == (0.5, "stale:idk")
    clash = Question("X2", "XLING_QUERY", "?", "two answers", expect="flag_conflict", clash_a="200", clash_b="300")
    assert grade(clash, "200 or 300") == (1.0, "contradict:both-values")
    abstain = Question("X3", "XLING_QUERY", "?", "Never stated", expect="no_memory")
    assert grade(abstain, "No lo sé.") == (1.0, "abstain:idk")


# -- numbers -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer, gold",
    [
        ("[2022-04-15] Joanna: I love hiking.", "Four"),
        ("[2022-04-15] Joanna: I love hiking.", "fifteen"),
        ("[2027-02-01] We met again.", "twice"),
        ("It was on 2026-09-06.", "six"),
        ("It was on 2026-09-06.", "nine"),
        ("It was the first time.", "one"),
        ("We met on 09/06.", "six"),
    ],
)
def test_numbers_never_match_dates_or_ordinals(answer, gold):
    assert contains(answer, gold) is False


@pytest.mark.parametrize(
    "answer, gold",
    [
        ("We went four times.", "Four"),
        ("They met twice in May.", "twice"),
        ("It was on 2026-09-06.", "2026-09-06"),
        ("on May 21st", "May 21"),
    ],
)
def test_numbers_still_match_numbers(answer, gold):
    assert contains(answer, gold) is True


# -- IDK and denials ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "They couldn't find anything.",
        "He left with no idea what it took",
        "says nothing about the search",
        "the size of a fix says nothing about the search",
    ],
)
def test_not_idk(text):
    assert is_idk(text) is False


@pytest.mark.parametrize(
    "text",
    [
        "I don't know.",
        "No idea.",
        "I have no idea.",
        "I couldn't find anything about that.",
        "There is nothing about that in my notes.",
    ],
)
def test_still_idk(text):
    assert is_idk(text) is True


def test_not_a_denial():
    assert denies_premise("Actually it was the correct call, not just the lazy one.") is False
    assert denies_premise("Actually, it was Lyon, not Paris.") is True


def test_statement_golds_are_not_idk_phrases(published):
    q = published["Q579"]  # IMPLICIT, gold "the size of a fix says nothing about the search"
    assert not gold_is_idk(q.gold_answer)
    assert grade(q, "I don't know.") == (0.0, "idk-net")  # the IDK net applies as on any question
    assert grade(q, "The size of a fix says nothing about the search.")[0] == 1.0


# -- content, not metadata ---------------------------------------------------------------------


def test_memories_are_graded_on_content():
    m = Memory("I love hiking.", "2022-04-15", "Joanna")
    assert str(m) == "[2022-04-15] Joanna: I love hiking." and memory_content(m) == "I love hiking."
    q = Question("Q1", "BASIC", "How many hikes?", "Four")
    assert grade(q, [m]) == (0.0, "basic:miss")  # the date stamp is not an answer
    q2 = Question("Q2", "BASIC", "Who loves hiking?", "Joanna")
    assert grade(q2, [m]) == (0.0, "basic:miss")  # nor is the speaker field
    assert grade(q2, ["Joanna loves hiking"]) == (1.0, "basic:gold")  # a plain string is all content


def test_a_memory_saying_dont_know_earns_no_abstention_credit():
    mem = [Memory("Don't know what I'd do without them", "2026-03-02", "user")]
    abstain = Question("Q1", "ABSTAIN", "What is their sister's name?", "Never stated", expect="no_memory")
    assert grade(abstain, mem)[0] == 0.0
    assert ungraded_without_answer(abstain)  # and a retrieval-only run is not graded there at all
    # nor is an answerable question zeroed by the IDK net for a quoted "don't know"
    q = Question("Q2", "BASIC", "Who do they rely on?", "their sisters")
    assert ungraded_without_answer(q) is None
    said = [Memory("Don't know what I'd do without my sisters", "2026-03-02", "user")]
    assert grade(q, said) == (1.0, "basic:gold")
    assert grade(q, "\n".join(said)) == (0.0, "idk-net")  # the same text as the system's own answer
    # the system's own answer is still read for IDK
    assert grade(abstain, "I don't know.") == (1.0, "abstain:idk")


def test_memory_objects_over_http_round_trip():
    m = Memory("I love hiking.", "2022-04-15", "Joanna")
    wire = json.loads(json.dumps(memory_to_json(m)))
    assert wire == {"text": "I love hiking.", "timestamp": "2022-04-15", "speaker": "Joanna"}
    back = memory_from_json(wire)
    assert (back.content, back.timestamp, back.speaker, str(back)) == (m.content, m.timestamp, m.speaker, str(m))
    assert memory_from_json("plain text") == "plain text" and memory_content("plain text") == "plain text"
    with pytest.raises(ProtocolError, match="needs a string 'text'"):
        memory_from_json({"timestamp": "2022-04-15"})


def test_a_stray_nt_is_not_a_correction():
    q = Question(
        "Q1",
        "CONFLICT",
        "They grow tomatoes, right?",
        "no, they switched from tomatoes to green beans",
        gold_alts=("green beans",),
    )
    assert grade(q, "Ah right, green beans don't all ripen together.") == (0.5, "conflict:value-only")
    assert grade(q, "That isn't right, it's green beans now.") == (1.0, "conflict:corrected")
    assert grade(q, "Nope, green beans.") == (1.0, "conflict:corrected")


def test_memory_fields_survive_the_reference_server_and_plain_strings_still_work():
    import httpx

    from memeval.bench.model import Session, Turn
    from memeval.systems import BM25
    from memeval.systems.http import HttpSystem
    from memeval.systems.server import ReferenceServer

    with ReferenceServer(BM25(k=2)) as srv:
        h = HttpSystem(srv.url)
        h.reset()
        h.ingest(
            Session(7, "2026-02-01", (Turn(1, 7, "user", "The spare key is under the blue flowerpot", "2026-02-01"),))
        )
        raw = httpx.post(srv.url + "/query", json={"question": "where is the spare key"}).json()
        assert raw["memories"] == [
            {"text": "The spare key is under the blue flowerpot", "timestamp": "2026-02-01", "speaker": "user"}
        ]
        m = h.query("where is the spare key", None).memories[0]
        assert (m.content, m.timestamp, m.speaker) == (
            "The spare key is under the blue flowerpot",
            "2026-02-01",
            "user",
        )
        h.close()

    def handler(request):  # an older server: plain strings
        return httpx.Response(200, json={"memories": ["[2022-04-15] Joanna: I love hiking."]})

    h = HttpSystem("http://memory.test", transport=httpx.MockTransport(handler), backoff=0.0)
    assert h.query("q", None).memories == ("[2022-04-15] Joanna: I love hiking.",)


def test_retrieval_by_text_reads_content_not_date_stamps():
    from memeval.scoring.retrieval import retrieval_hit

    q = Question("Q1", "BASIC", "How many hikes?", "Four", evidence_turns=(3,))
    assert retrieval_hit(q, None, [Memory("I love hiking.", "2022-04-15", "Joanna")]) is False
    assert retrieval_hit(q, None, [Memory("We did four hikes.", "2022-04-15", "Joanna")]) is True


def test_a_reflexive_gold_keeps_its_reflexive():
    assert contains("I counted them myself.", "he counted them himself") is True
    assert contains("We counted the boxes.", "I counted them myself") is False


def test_a_third_person_never_told_is_a_statement_not_idk():
    assert is_idk("he never told them") is False
    assert is_idk("You never told me that.") is True
