"""Pass rates: task denominator, excluded shares, fixed stratum weights with renormalisation,
breakdowns, and the grader version always in the filter. Expected numbers are worked out by hand."""

import pytest

from memeval.cli import main
from memeval.atomic import write_jsonl
from memeval.multiturn.rates import (
    MixedVersionsError,
    format_pass_rates,
    pass_rates,
    pass_rates_by_version,
    results_frame,
)


def rec(i, turns, verdict, corrections=0, gv="r5", cross=False, agent="a"):
    return {
        "sample_id": f"s{i}#g1",
        "agent": agent,
        "grader_version": gv,
        "verdict": verdict,
        "turns": turns,
        "corrections": corrections,
        "cross_task": cross,
    }


def test_weighted_total_shares_and_breakdowns():
    rows = [
        rec(1, 2, "pass"),
        rec(2, 3, "fail"),  # 1-3: 1/2
        rec(3, 5, "pass", 1),
        rec(4, 6, "pass"),
        rec(5, 8, "fail", 2),
        rec(6, 4, "undetermined"),  # 4-8: 2/3
        rec(7, 9, "pass", 1, cross=True),
        rec(8, 12, "flaky"),
        rec(9, 10, "incomplete"),
        rec(10, 11, "env_drift"),
    ]  # 9+: 1/1
    pr = pass_rates(results_frame(rows))
    assert pr.tasks == 10
    assert pr.total == pytest.approx(0.2 * 0.5 + 0.5 * (2 / 3) + 0.3 * 1.0)
    strata = {r["stratum"]: r for r in pr.strata.iter_rows(named=True)}
    assert strata["4-8"]["rate"] == pytest.approx(2 / 3) and strata["4-8"]["undetermined"] == 1
    assert pr.shares == {"undetermined": 0.1, "flaky": 0.1, "incomplete": 0.1, "env_drift": 0.1}
    byc = {r["corrections_group"]: r for r in pr.by_corrections.iter_rows(named=True)}
    assert byc["0"]["rate"] == pytest.approx(2 / 3) and byc[">0"]["rate"] == pytest.approx(2 / 3)
    byx = {r["cross_task"]: r["rate"] for r in pr.by_cross_task.iter_rows(named=True)}
    assert byx == {False: pytest.approx(3 / 5), True: 1.0}
    text = format_pass_rates(pr)
    assert "1-3" in text and "4-8" in text and "9+" in text and "total (weighted): 0.733" in text


def test_all_undetermined_stratum_is_skipped_and_weights_renormalised():
    rows = [
        rec(1, 2, "pass"),
        rec(2, 2, "fail"),
        rec(3, 5, "pass"),
        rec(4, 10, "undetermined"),
        rec(5, 13, "undetermined"),
    ]
    pr = pass_rates(results_frame(rows))
    assert pr.total == pytest.approx((0.2 * 0.5 + 0.5 * 1.0) / 0.7)
    used = {r["stratum"]: r["weight_used"] for r in pr.strata.iter_rows(named=True)}
    assert used == {"1-3": pytest.approx(0.2 / 0.7), "4-8": pytest.approx(0.5 / 0.7), "9+": 0.0}
    assert "9+" in format_pass_rates(pr)  # still printed, with its counts
    assert pass_rates(results_frame([rec(1, 3, "undetermined")])).total is None


def test_grader_versions_are_never_mixed(tmp_path, capsys):
    rows = [rec(1, 2, "pass", gv="r4"), rec(2, 2, "fail", gv="r5"), rec(3, 2, "fail", gv="r5")]
    df = results_frame(rows)
    with pytest.raises(MixedVersionsError, match="r4.*r5"):
        pass_rates(df)
    assert pass_rates(df, "r4").total == 1.0 and pass_rates(df, "r5").total == 0.0
    split = pass_rates_by_version(df)
    assert sorted(split) == ["r4", "r5"] and split["r5"].tasks == 2
    p = tmp_path / "r.jsonl"
    write_jsonl(p, rows)
    assert main(["multiturn", "summary", str(p)]) == 2
    assert "grader_version" in capsys.readouterr().err
    assert main(["multiturn", "summary", str(p), "--grader-version", "r5"]) == 0
    assert "total (weighted): 0.000" in capsys.readouterr().out


def test_a_rerun_appended_to_the_same_file_replaces_the_earlier_record():
    rows = [rec(1, 2, "fail"), rec(2, 2, "pass"), rec(1, 2, "pass")]
    pr = pass_rates(results_frame(rows))
    assert pr.tasks == 2 and pr.total == 1.0
