"""Where it breaks: bad-turn histograms, process error directions, correction kinds, and the
summary command printing them with uncut headers. Expected figures are counted by hand here."""

from memeval.cli import main
from memeval.multiturn.agents import DropsConstraint, KeepsOldValue
from memeval.multiturn.breakdown import bad_turn_histogram, correction_breakdown, latest, process_directions
from memeval.multiturn.runner import run_suite
from memeval.multiturn.suite import generate_suite


def rec(
    sid,
    verdict,
    turn_index,
    bad=None,
    checks=(),
    ps=None,
    corr=(),
    obs=None,
    graded_from=None,
    stratum="4-8",
    agent="a",
    gv="r5",
):
    return {
        "sample_id": sid,
        "agent": agent,
        "grader_version": gv,
        "verdict": verdict,
        "turn_index": turn_index,
        "graded_from": graded_from,
        "bad_turn": bad,
        "stratum": stratum,
        "turns": len(turn_index),
        "process_score": ps,
        "correction_events": [{"turn": t, "kind": k, "key": key} for t, k, key in corr],
        "observed": obs,
        "runs": [{"verdict": verdict, "failed_checks": [{"mode": m, "name": "x", "turn": t} for m, t in checks]}],
    }


RECS = [
    rec(
        "s1#g1",
        "fail",
        [0, 1, 2, 3],
        bad=2,
        checks=[("persist", 2), ("eq", 3)],
        ps=1.0,
        corr=[(1, "fact", "currency")],
        obs={"response_lag": {"currency": None}, "stale_residue": {"currency": []}},
    ),
    rec(
        "s2#g1",
        "fail",
        [3, 5, 7, 9, 11],
        bad=5,
        checks=[("veto", 5)],
        ps=0.7,
        stratum="4-8",
        corr=[(5, "form", "form")],
        obs={"response_lag": {"form": 1}, "stale_residue": {"form": [9]}},
    ),
    rec(
        "s3#g2",
        "fail",
        list(range(10)),
        bad=9,
        checks=[("one_of", 9)],
        graded_from=8,
        stratum="9+",
        corr=[(8, "goal", None)],
        obs={"response_lag": {}, "stale_residue": {}},
    ),
    rec(
        "s4#g1",
        "pass",
        [0, 1, 2, 3],
        ps=0.5,
        corr=[(2, "fact", "currency")],
        obs={"response_lag": {"currency": 2}, "stale_residue": {"currency": []}},
    ),
    rec("s5#g1", "pass", [0, 1], stratum="1-3"),
    rec(
        "s6#g1",
        "undetermined",
        [0, 1, 2, 3],
        ps=1.0,
        corr=[(1, "fact", "currency")],
        obs={"response_lag": {"currency": 0}, "stale_residue": {"currency": [3]}},
    ),
]


def test_bad_turn_histogram_counts_positions_among_graded_turns():
    h = bad_turn_histogram(RECS, "stratum")
    # s1: turn 2 is the 3rd turn; s2: turn 5 is the 2nd; s3 graded from 8: turn 9 is the 2nd graded turn
    assert sorted(h.iter_rows()) == [("4-8", 2, 1), ("4-8", 3, 1), ("9+", 2, 1)]
    m = bad_turn_histogram(RECS, "mode")
    assert sorted(m.iter_rows()) == [("eq", 4, 1), ("one_of", 2, 1), ("persist", 3, 1), ("veto", 2, 1)]
    assert bad_turn_histogram([RECS[4]], "mode").height == 0


def test_process_score_and_the_two_error_directions():
    d = process_directions(RECS)
    # judged with a process score: s1 (fail, 1.0), s2 (fail, 0.7), s4 (pass, 0.5); s6 is undetermined
    assert d["n"] == 3 and abs(d["mean_process"] - (1.0 + 0.7 + 0.5) / 3) < 1e-9
    assert d["final_right_process_wrong"] == 1 and d["final_wrong_process_right"] == 1


def test_correction_breakdown_by_kind_with_lag_and_residue():
    rows = {r["kind"]: r for r in correction_breakdown(RECS).iter_rows(named=True)}
    assert (rows["fact"]["tasks"], rows["fact"]["pass"], rows["fact"]["fail"]) == (3, 1, 1)
    assert rows["fact"]["rate"] == 0.5
    assert (rows["fact"]["lag_n"], rows["fact"]["mean_lag"], rows["fact"]["never_changed"]) == (2, 1.0, 1)
    assert rows["fact"]["stale_residue"] == 1  # s6's old currency came back at turn 3
    assert (rows["form"]["tasks"], rows["form"]["mean_lag"], rows["form"]["stale_residue"]) == (1, 1.0, 1)
    assert (rows["goal"]["tasks"], rows["goal"]["fail"], rows["goal"]["lag_n"]) == (1, 1, 0)


def test_latest_keeps_the_last_record_of_a_rerun():
    again = {**RECS[0], "verdict": "pass"}
    got = latest(RECS + [again, {**RECS[1], "grader_version": "r6"}], "r5", "a")
    assert len(got) == 6 and next(r for r in got if r["sample_id"] == "s1#g1")["verdict"] == "pass"


def test_histogram_of_a_scripted_fault_points_at_the_turn_it_was_injected():
    suite = generate_suite(seed=20261018, sessions=12, cross_session=0)
    recs = run_suite(suite, DropsConstraint(after=2))
    want = {}
    for r in recs:
        if r["verdict"] != "fail":
            continue
        sess = next(s for s in suite.sessions if s["session_id"] == r["session_ref"])
        kinds = [sess["turns"][t]["kind"] for t in r["turn_index"]]
        pos = kinds.index("tax_inclusive") + 2 + 1  # dropped two user turns later; 1-based
        want[(r["stratum"], pos)] = want.get((r["stratum"], pos), 0) + 1
    h = bad_turn_histogram(recs, "stratum")
    assert want and {(g, p): c for g, p, c in h.iter_rows()} == want


def test_summary_prints_uncut_headers_and_the_breakdowns(tmp_path, capsys):
    suite = generate_suite(seed=7, sessions=6, cross_session=0)
    out = tmp_path / "r.jsonl"
    run_suite(suite, KeepsOldValue(), out)
    assert main(["multiturn", "summary", str(out)]) == 0
    text = capsys.readouterr().out
    head = next(line for line in text.splitlines() if line.startswith("stratum"))
    assert head.split()[-7:] == ["undetermined", "flaky", "incomplete", "env_drift", "rate", "[95%", "CI]"]
    assert "bad turn by stratum" in text and "bad turn by mode" in text
    assert "final right / process wrong" in text and "final wrong / process right" in text
    fact = next(line for line in text.splitlines() if line.strip().startswith("fact"))
    assert fact.split()[0] == "fact" and int(fact.split()[1]) == sum(
        1 for s in suite.samples if any(c.kind == "fact" for c in s.process.corrections) and s.graded_from is None
    )
