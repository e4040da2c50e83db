"""A new goal judged on its own turns (B1), the flaky agent's phase per sample and run (B3), numeric
tolerances declared in the state schema. Expectations come from the session data, not the grader."""

from dataclasses import replace

import pytest

from memeval.errors import InputError
from memeval.multiturn.agents import CorrectAgent, FlakyAgent, KeepsOldValue, ScriptedAgent, UnconfirmedWrite
from memeval.multiturn.assertions import Snapshot, check_state
from memeval.multiturn.config import DEFAULT_CONFIG
from memeval.multiturn.runner import run_user_topic
from memeval.multiturn.runner import run_sample
from memeval.multiturn.runner import iter_results
from memeval.multiturn.toolsets import fixture_tools
from memeval.multiturn.sample import StateExpect
from memeval.multiturn.sample_io import sample_from_dict, sample_to_dict
from memeval.multiturn.suite import generate_suite
from memeval.multiturn.tools import ToolCall


@pytest.fixture(scope="module")
def suite():
    return generate_suite(seed=20261018, sessions=24, cross_session=2)


def kinds(suite, sid):
    sess = next(s for s in suite.sessions if s["session_id"] == sid)
    return [t["kind"] for t in sess["turns"]]


def run(suite, s, agent):
    return run_sample(s, agent, fixture_tools(suite), DEFAULT_CONFIG)


# --- B1 -----------------------------------------------------------------------------------------


def test_new_goal_sample_is_graded_from_its_own_goal(suite):
    s = suite.sample("ss_20261018_0005#g2")
    k = kinds(suite, s.session_ref)
    new_goal = k.index("group_orders")
    assert s.turn_index[0] == 0 and s.graded_from == new_goal  # the prefix is replayed, not graded
    assert k.index("confirm_save") < new_goal and k.index("correct_currency") < new_goal
    # agents that break only in the prefix: the old goal's sample fails, the new goal's does not
    for agent in (UnconfirmedWrite(), KeepsOldValue()):
        g1 = run(suite, suite.sample("ss_20261018_0005#g1"), agent)
        assert g1.verdict == "fail", (agent.name, g1.reason)
    assert run(suite, s, KeepsOldValue()).verdict == "pass"  # was "veto: stale_state_used at turn 8"
    # the unrecorded write stops the replay inside the prefix: the new goal was never observed
    r = run(suite, s, UnconfirmedWrite())  # was "veto: unconfirmed_write at turn 1"
    assert r.verdict == "incomplete" and r.reason.startswith("the shared prefix (context) did not replay")
    assert run(suite, s, CorrectAgent()).verdict == "pass"
    assert s.labels.corrections == 0  # the prefix's currency correction is not this sample's


def test_new_goal_sample_still_fails_on_its_own_turns(suite):
    s = suite.sample("ss_20261018_0005#g2")
    k = kinds(suite, s.session_ref)
    regroup = k.index("regroup")

    class GroupsByProduct(ScriptedAgent):
        def report(self, desk, ev, ctx):
            st = desk.snapshot()
            if ev and ev["kind"] == "regroup":
                st["group_by"] = "product"
            return st

    r = run(suite, s, GroupsByProduct(name="by_product"))
    assert r.verdict == "fail" and r.bad_turn == regroup

    class SavesOnGrouping(ScriptedAgent):
        def plan_calls(self, desk, ev, done, ctx):
            calls = super().plan_calls(desk, ev, done, ctx)
            if ev and ev["kind"] == "group_orders" and not done:
                calls.append(
                    ToolCall(
                        "save_quote", {"customer": desk.customer, "currency": desk.currency, "total": desk.total()}
                    )
                )
            return calls

    r = run(suite, s, SavesOnGrouping(name="saves"))
    assert r.verdict == "fail" and r.reason == f"veto: unconfirmed_write at turn {k.index('group_orders')}"


def test_graded_from_round_trips_and_is_validated(suite):
    s = suite.sample("ss_20261018_0005#g2")
    d = sample_to_dict(s)
    assert sample_from_dict(d) == s
    with pytest.raises(InputError, match="graded_from"):
        sample_from_dict({**d, "graded_from": 99}, "x.jsonl", 3)


# --- B3 -----------------------------------------------------------------------------------------


def test_flaky_agent_keeps_its_phase_after_an_earlier_session_is_replayed(suite):
    uts = [s for s in suite.samples if s.unit_type == "user_topic"]
    assert len(uts) == 2
    for ut in uts:
        priors = [p for p in suite.samples if p.session_ref in ut.prior_sessions and p.unit_type != "turn"]
        res = run_user_topic(ut, priors, FlakyAgent(), fixture_tools(suite), DEFAULT_CONFIG)
        r = res.with_prior
        assert [g.verdict for _, g in r.runs] == ["pass", "fail", "fail"], ut.sample_id
        assert r.verdict == "flaky"
    # one agent object over the whole suite: every task sample is flaky, whatever ran before it
    agent = FlakyAgent()
    verdicts = {
        r.sample.sample_id: r.verdict
        for r in iter_results(suite, agent, fixture_tools(suite))
        if any(e.key == "total" for e in r.sample.state_expect)
    }
    assert len(verdicts) > 10 and set(verdicts.values()) == {"flaky"}


# --- tolerances ---------------------------------------------------------------------------------


class RoundsDifferently(CorrectAgent):
    """Reports totals off by ``delta`` (another rounding of the same sum)."""

    def __init__(self, delta):
        super().__init__(name=f"rounds{delta}")
        self.delta = delta

    def report(self, desk, ev, ctx):
        st = desk.snapshot()
        st["total"] = st["total"] + self.delta
        return st


def test_money_within_half_a_cent_passes_beyond_it_fails(suite):
    s = next(
        s
        for s in suite.samples
        if s.unit_type == "task"
        and any(e.key == "total" for e in s.state_expect)
        and s.graded_from is None
        and not s.final_expect.total
    )
    assert s.state_schema["total"] == {"type": "number", "money": True}
    assert run(suite, s, RoundsDifferently(0.004)).verdict == "pass"
    r = run(suite, s, RoundsDifferently(0.02))
    assert r.verdict == "fail" and "total eq" in r.reason
    exact = replace(s, state_schema={**s.state_schema, "total": {"type": "number", "tol": 0.0}})
    assert run(suite, exact, RoundsDifferently(0.004)).verdict == "fail"
    loose = replace(s, state_schema={**s.state_schema, "total": {"type": "number", "tol": 0.05}})
    assert run(suite, loose, RoundsDifferently(0.02)).verdict == "pass"


def test_tolerance_applies_to_every_mode_and_never_to_booleans():
    schema = {"x": {"type": "number", "tol": 0.1}, "b": {"type": "boolean"}}
    tr = [Snapshot(0, {"x": 1.05, "b": 1}), Snapshot(1, {"x": 0.95, "b": True})]
    eq, per, ab, b = check_state(
        tr,
        [
            StateExpect("x", "eq", 1.0),
            StateExpect("x", "persist", 1.0),
            StateExpect("x", "absent", 1.0),
            StateExpect("b", "persist", True),
        ],
        schema,
    )
    assert (eq.status, per.status, ab.status, ab.bad_turn) == ("pass", "pass", "fail", 0)
    assert (b.status, b.bad_turn) == ("fail", 0)  # 1 is not True
    assert check_state(tr, [StateExpect("x", "eq", 1.0)])[0].status == "fail"  # no schema: exact


def test_bad_state_schema_names_the_field(suite):
    d = sample_to_dict(suite.samples[0])
    for bad, field in (
        ({"total": {"type": "money"}}, "state_schema.total.type"),
        ({"lines": {"type": "string", "tol": 1}}, "state_schema.lines.tol"),
        ({"c": {"type": "string", "enum": "CNY"}}, "state_schema.c.enum"),
    ):
        with pytest.raises(InputError, match=field.replace(".", r"\.")):
            sample_from_dict({**d, "state_schema": bad}, "s.jsonl", 2)


def test_eq_with_a_money_tolerance_is_exactly_the_half_cent_band():
    schema = {"total": {"type": "number", "money": True}}
    for want in (0.0, 12.33, -7.5, 123456.78):
        for cents in range(-20, 21):  # deltas of a tenth of a cent, both sides of the band
            delta = cents / 1000
            c = check_state([Snapshot(0, {"total": want + delta})], [StateExpect("total", "eq", want)], schema)[0]
            assert c.status == ("pass" if abs(cents) <= 5 else "fail"), (want, delta)


def test_a_prefix_that_does_not_replay_is_teacher_forced_and_the_goal_graded(suite):
    """Issue 26: the same sample as above, through the suite runner: the unrecorded write stops the
    agent's own prefix, so the prefix is the recording and the new goal's turns are graded."""
    from memeval.multiturn.records import result_record
    from memeval.multiturn.replay import teacher_forced_prefix

    s = suite.sample("ss_20261018_0005#g2")
    sess = next(x for x in suite.sessions if x["session_id"] == s.session_ref)
    forced = teacher_forced_prefix(s, sess, suite.fixtures[s.replay.tool_fixture])
    users = [m["content"] for m in forced if m["role"] == "user"]
    assert users == [t["user_text"] for t in sess["turns"] if t["index"] < s.graded_from]
    assert all(m["content"] == "" for m in forced if m.get("tool_calls"))
    (res,) = iter_results(suite, UnconfirmedWrite(), fixture_tools(suite), DEFAULT_CONFIG, sample_ids=[s.sample_id])
    assert res.verdict != "incomplete", res.reason
    assert all(t.teacher_forced and t.turns and t.turns[0].turn == s.graded_from for t, _ in res.runs)
    assert all(r["teacher_forced"] for r in result_record(res, "x")["runs"])
    (ok,) = iter_results(suite, CorrectAgent(), fixture_tools(suite), DEFAULT_CONFIG, sample_ids=[s.sample_id])
    assert ok.verdict == "pass" and not any(t.teacher_forced for t, _ in ok.runs)  # forcing only when needed
