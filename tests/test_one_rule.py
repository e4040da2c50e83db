"""One rule per question: ``Question.scored_as`` alone says which rule grades a question, and every path
that grades (dry rules, the judge in memory and answer modes, the bounds and the oracle, retrieval,
regrade's scorers, the leniency probes) asks it. Every axis x expect x mode is enumerated."""

from __future__ import annotations

import json
import re

import pytest

from memeval.bench.axes import ABSTENTION_AXES, AXES
from memeval.bench.model import EXPECT_VALUES, Question, Session, Turn
from memeval.bench.oracle import expects_abstention
from memeval.llm import ChatResult
from memeval.scoring import bounds, dry, leniency, retrieval, scorers
from memeval.scoring.judge import _AXIS_RULES, Judge
from memeval.systems.baselines import Oracle

MODES = ("dry", "memory", "answer")


def _question(axis: str, expect: str) -> Question:
    """A question carrying every field any rule reads, so that each rule can be reached."""
    return Question(
        f"{axis}-{expect}",
        axis,
        "Which colour is the user's bike?",
        "teal",
        gold_alts=("dark teal",),
        expect=expect,
        evidence_turns=(1,),
        stale_answer="crimson",
        clash_a="teal",
        clash_b="mauve",
        side_a="on weekdays",
        side_b="at weekends",
        gold_parts=("teal", "chrome"),
        false_claim_en="the user sold the bike",
    )


CASES = [(a, e, m) for a in AXES for e in EXPECT_VALUES for m in MODES]


class _RecordingClient:
    """A judge client in process: records each prompt, answers "correct" with evidence."""

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def identity(self) -> dict:
        return {"base_url": "stub", "model": "stub"}

    def chat(self, messages, **kw) -> ChatResult:
        self.prompts.append(messages[0]["content"])
        return ChatResult(json.dumps({"verdict": "correct", "evidence": "teal"}))


class _Reader:
    def identity(self) -> dict:
        return {"role": "reader", "model": "stub"}

    def answer(self, q, memories, images=None) -> str:
        return "zzz"


def _judged_axis(prompt: str) -> str:
    m = re.search(r"^Axis: (\S+)$", prompt, re.M)
    assert m, prompt
    return m.group(1)


@pytest.mark.parametrize("axis,expect,mode", CASES)
def test_every_path_asks_scored_as(axis, expect, mode):
    q = _question(axis, expect)
    rule = q.scored_as
    abstains = rule in ABSTENTION_AXES
    # the bench layer's view, and retrieval's, follow it
    assert expects_abstention(q) is abstains
    assert retrieval.has_evidence(q) is (not abstains)
    # the oracle (the ceiling) abstains exactly where the rule wants an abstention
    oracle = Oracle()
    oracle.ingest(Session(1, "2026-01-01", (Turn(1, 1, "user", "My bike is teal.", "2026-01-01"),)))
    oracle.prepare(q)
    recall = oracle.query(q.text_to_ask, None)
    assert (recall.answer is not None) is abstains
    assert isinstance(bounds.oracle_text(q, []), str) is abstains
    # a memory-only response is ungraded exactly on abstention rules
    assert (dry.ungraded_without_answer(q) is not None) is abstains

    if mode == "dry":
        # a non-empty, non-IDK answer reaches the rule itself: the rule's name starts with its axis
        s = dry.score_answer(q, "zzz")
        assert s.rule.split(":")[0] == rule.lower(), (s.rule, rule)
        # the dry scorer the runner and regrade use grades the same way
        out = scorers.run_scorers(scorers.scorers_for("dry"), q, scorers.Response(answer="zzz"))
        assert out["rule"] == s.rule
        return
    client = _RecordingClient()
    judge = Judge(client)  # type: ignore[arg-type]
    out = scorers.run_scorers(
        scorers.scorers_for(mode, judge, _Reader()), q, scorers.Response(answer=None, memories=("My bike is teal.",))
    )
    if mode == "memory" and abstains:
        assert out["score"] is None and out["ungraded_reason"] == "not gradable in memory mode"
        assert client.prompts == []
        return
    assert len(client.prompts) == 1
    prompt = client.prompts[0]
    assert _judged_axis(prompt) == rule
    wanted = _AXIS_RULES.get(rule)
    if wanted:  # the rule text of that axis, and no other axis' rule text
        assert wanted.split("{")[0].strip() in prompt
    for other, text in _AXIS_RULES.items():
        if other != rule:
            assert text.split("{")[0].strip() not in prompt, (other, rule)


def test_answer_mode_false_memory_probe_gets_the_false_memory_judge_rule():
    """The defect: a FALSE_MEMORY probe (``expect: no_memory``) was judged by the ABSTAIN rule."""
    q = Question("P1", "FALSE_MEMORY", "Why did I sell my bike?", "", expect="no_memory", false_claim_en="x")
    client = _RecordingClient()
    Judge(client).grade(q, "I never sold it.", kind="answer")  # type: ignore[arg-type]
    assert _judged_axis(client.prompts[0]) == "FALSE_MEMORY"
    assert "declines the premise" in client.prompts[0]


@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("expect", EXPECT_VALUES)
def test_leniency_traps_follow_the_rule(axis, expect):
    q = _question(axis, expect)
    other = Question("B2", "BASIC", "Which colour is the user's car?", "olive", evidence_turns=(2,))
    groups: dict[str, list[Question]] = {}
    for x in (q, other):
        groups.setdefault(leniency.question_shape(x.question_en), []).append(x)
    traps = {t for t, _ in leniency._traps(q, groups)}
    rule = q.scored_as
    assert ("false_premise" in traps) is (rule == "FALSE_MEMORY")
    assert ("invented" in traps) is (rule == "ABSTAIN")
    assert ("one_side" in traps) is (rule == "CONTRADICT")
    assert ("stale" in traps) is (rule in ("STALE", "UPDATE"))
    assert not (traps & {"near_miss", "hedge"}) or rule not in ABSTENTION_AXES


def test_weights_come_from_one_function():
    q = Question("X1", "XLING_QUERY", "?", "Never stated", expect="no_memory")
    assert bounds.run_weight(q) == 3  # weighed as the abstention it is graded as
    assert bounds.run_weight(Question("B1", "BASIC", "?", "x")) == 1
