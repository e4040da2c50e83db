"""Session units (open to close): built for sessions holding several goals, judged across the
tasks, counted per session outside the task denominator."""

import pytest

from memeval.multiturn.agents import CorrectAgent, DropsConstraint, DropsEarlierTask
from memeval.multiturn.rates import format_pass_rates, pass_rates, results_frame
from memeval.multiturn.runner import run_suite
from memeval.multiturn.sample_io import sample_from_dict, sample_to_dict
from memeval.multiturn.suite import generate_suite


@pytest.fixture(scope="module")
def suite():
    return generate_suite(seed=20261018, sessions=24, cross_session=0, session_units=True)


def test_a_session_unit_per_multi_goal_session(suite):
    units = {s.session_ref: s for s in suite.samples if s.unit_type == "session"}
    for sess in suite.sessions:
        goals = {t["goal"] for t in sess["turns"]}
        if len(goals) < 2:
            assert sess["session_id"] not in units
            continue
        u = units[sess["session_id"]]
        assert u.sample_id == sess["session_id"] + "#g0" and u.turn_index == tuple(range(len(sess["turns"])))
        assert u.labels.cross_task and u.labels.turns == len(sess["turns"])
        assert sample_from_dict(sample_to_dict(u)) == u
    assert len(units) >= 5
    plain = generate_suite(seed=20261018, sessions=24, cross_session=0)
    assert not any(s.unit_type == "session" for s in plain.samples)
    assert [s for s in suite.samples if s.unit_type != "session"] == list(plain.samples)


def test_session_unit_catches_what_the_task_units_miss(suite):
    recs = run_suite(suite, DropsEarlierTask())
    with_orders = {s["session_id"] for s in suite.sessions if any(t["kind"] == "group_orders" for t in s["turns"])}
    assert with_orders
    for r in recs:
        if r["unit_type"] != "session":
            assert r["verdict"] == "pass", (r["sample_id"], r["reason"])
        elif r["session_ref"] in with_orders:
            lines = next(c for c in r["runs"][0]["state_checks"] if c["key"] == "lines")
            assert r["verdict"] == "fail" and lines["status"] == "fail" and lines["got_last"] == 0
        else:
            assert r["verdict"] == "pass"
    assert all(r["verdict"] == "pass" for r in run_suite(suite, CorrectAgent()) if r["unit_type"] == "session")


def test_a_constraint_dropped_in_a_later_task_fails_the_session_unit(suite):
    recs = {r["sample_id"]: r for r in run_suite(suite, DropsConstraint(after=2))}
    checked = 0
    for s in suite.samples:
        if s.unit_type != "session":
            continue
        sess = next(x for x in suite.sessions if x["session_id"] == s.session_ref)
        kinds = [t["kind"] for t in sess["turns"]]
        if "tax_inclusive" not in kinds:
            continue
        dropped_at = kinds.index("tax_inclusive") + 2
        r = recs[s.sample_id]
        if dropped_at < len(kinds):
            tm = next(c for c in r["runs"][0]["state_checks"] if c["key"] == "tax_mode")
            assert r["verdict"] == "fail" and tm["bad_turn"] == dropped_at
            checked += 1
    assert checked >= 2


def test_session_units_are_counted_apart_from_the_task_rate(suite):
    recs = run_suite(suite, DropsEarlierTask())
    pr = pass_rates(results_frame(recs))
    n_sessions = sum(1 for r in recs if r["unit_type"] == "session")
    n_turn = sum(1 for r in recs if r["unit_type"] == "turn")
    assert pr.tasks == len(recs) - n_sessions - n_turn and pr.total == 1.0
    fails = sum(1 for r in recs if r["unit_type"] == "session" and r["verdict"] == "fail")
    assert pr.session_units == {
        "samples": n_sessions,
        "pass": n_sessions - fails,
        "fail": fails,
        "rate": (n_sessions - fails) / n_sessions,
    }
    assert f"session units (per session, not in the task rate): {n_sessions}" in format_pass_rates(pr)
