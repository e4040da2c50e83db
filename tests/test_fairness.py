"""Like-for-like comparisons (issue 22): systems side by side only over the questions every one of
them graded, each run's own n beside, and a fairness line naming the settings and what differs."""

import json

import pytest

from memeval.analysis.aggregate import load_records
from memeval.analysis.fairness import compare_runs
from memeval.bench.loaders.locomo import load_locomo
from memeval.cli import main
from memeval.run import read_records, run_system
from test_loaders_locomo import _conv, _write


@pytest.fixture(scope="module")
def locomo_runs(tmp_path_factory):
    """A LoCoMo-format bench (two conversations, category 5 included) run by bm25 (memory-only: the
    category-5 abstention questions stay ungraded) and oracle (answers: graded on them too)."""
    root = tmp_path_factory.mktemp("locomo")
    load_locomo([_write(root, [_conv("conv-26"), _conv("conv-30", "Jon", "Gina")])], root / "bench")
    runs = {}
    for spec in ("bm25:k=1", "bm25:k=2", "oracle", "recent:tokens=100000"):
        out = root / "runs" / spec.replace(":", "_").replace("=", "_")
        runs[spec] = run_system(root / "bench", spec, out=out, progress=False)
    return root, runs


def _weighted(records, qids):
    rs = [r for r in records if r["qid"] in qids and r["score"] is not None]
    return sum(r["score"] * r["weight"] for r in rs) / sum(r["weight"] for r in rs)


def test_summary_rows_compare_over_equal_question_sets(locomo_runs, capsys):
    _, runs = locomo_runs
    bm25, oracle = runs["bm25:k=2"], runs["oracle"]
    assert main(["summary", str(bm25), str(oracle), "--format", "json", "--no-bounds"]) == 0
    out = json.loads(capsys.readouterr().out)
    rows = {r["system"]: r for r in out["overall"]}
    bm25_recs, oracle_recs = read_records(bm25), read_records(oracle)
    graded_by_bm25 = {r["qid"] for r in bm25_recs if r["score"] is not None}
    graded_by_oracle = {r["qid"] for r in oracle_recs if r["score"] is not None}
    assert graded_by_bm25 < graded_by_oracle  # the category-5 questions: only the oracle graded them
    common = graded_by_bm25 & graded_by_oracle
    assert rows["bm25:k=2"]["n"] == rows["oracle"]["n"] == len(common)
    assert rows["oracle"]["graded_own"] == len(graded_by_oracle) > rows["oracle"]["n"]
    assert rows["oracle"]["weighted"] == pytest.approx(_weighted(oracle_recs, common))
    assert rows["bm25:k=2"]["ceiling_weighted"] == pytest.approx(_weighted(oracle_recs, common))
    lines = out["fairness"]
    assert any("side by side over the" in line and f"oracle {len(graded_by_oracle)}" in line for line in lines)
    left = next(line for line in lines if line.strip().startswith("oracle:"))
    assert f"{len(graded_by_oracle - common)} graded question" in left and "not graded by bm25:k=2" in left


def test_fairness_line_flags_what_differs_and_the_whole_haystack(locomo_runs):
    _, runs = locomo_runs
    dirs = [runs["bm25:k=1"], runs["bm25:k=2"], runs["recent:tokens=100000"]]
    c = compare_runs(load_records(dirs), dirs)
    lines = c.lines()
    assert lines[0].startswith("fairness: ") and "judge dry rules" in lines[0] and "reader none" in lines[0]
    assert "k" in c.differ and any(
        line.startswith("  DIFFERS between runs: k (bm25:k=1: 1; bm25:k=2: 2") for line in lines
    )
    assert "judge" not in c.differ and "bench" not in c.differ
    # recent with a budget larger than the haystack returns all of it; bm25 with k 2 does not
    assert set(c.whole_haystack) == {"recent:tokens=100000"} and c.whole_haystack["recent:tokens=100000"] == 1.0
    assert any(line.startswith("  WARNING recent:tokens=100000 returns (nearly) the whole haystack") for line in lines)


def test_haystack_share_is_said_unchecked_without_the_bench(locomo_runs):
    _, runs = locomo_runs
    d = runs["recent:tokens=100000"]
    df = load_records([d])
    manifest = json.loads((d / "manifest.json").read_text())
    manifest["config"]["bench"]["root"] = str(d / "no-such-bench")
    c = compare_runs(df, manifests={manifest["run_id"]: manifest})
    assert not c.whole_haystack and c.unchecked_haystack == ("recent:tokens=100000",)
    assert any("not checked for recent:tokens=100000" in line for line in c.lines())


def test_diff_prints_the_fairness_line(locomo_runs, capsys):
    _, runs = locomo_runs
    assert main(["diff", str(runs["bm25:k=1"]), str(runs["oracle"]), "--resamples", "50", "--flips", "0"]) == 0
    out = capsys.readouterr().out
    assert "fairness: " in out and "side by side over the" in out


def test_compare_puts_answer_sets_side_by_side_over_the_cases_all_scored(tmp_path, capsys):
    """The book-suite table compares over the cases every answer set has; the one missing a case
    has it said, and the others' means are over the same cases."""
    from pathlib import Path

    suite = Path(__file__).parent / "data" / "booksuite"
    full = json.loads((suite / "fixtures" / "system_responses.example.json").read_text())["full_context"]
    short = dict(full)
    short.pop("layer1_01_bank_account")
    # "partial" answers the dropped case wrongly: over its own cases it would score below 1
    partial = dict(full) | {"layer1_01_bank_account": "no idea"}
    (tmp_path / "r.json").write_text(json.dumps({"short": short, "partial": partial}))
    assert main(["compare", "--suite", str(suite), "--responses", str(tmp_path / "r.json")]) == 0
    out = capsys.readouterr().out
    assert "side by side over the 7 questions every run graded" in out
    assert "partial: 1 graded question left out" in out and "not graded by short" in out
    overall = next(line for line in out.splitlines() if line.startswith("Overall"))
    assert overall.split()[1:] == ["1.000", "1.000"]  # both over the 7 shared cases
