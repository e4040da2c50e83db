"""``memeval compare`` / ``score-answers`` on the book suite reproduce the chapter's reference table."""

import json
import re

import pytest

from memeval.bench.loaders.booksuite import load_booksuite, read_responses
from memeval.cli import main
from memeval.scoring.booksuite_scores import keyword_scores, layer_table

from booksuite_paths import SUITE

# SOURCE.md: keyword recall over the 8 annotated cases, per layer and overall.
REFERENCE = {
    "layer1": {"full_context": 1.000, "json_cards": 1.000, "simple_notes": 0.417, "no_memory": 0.000},
    "layer2": {"full_context": 1.000, "json_cards": 1.000, "simple_notes": 0.333, "no_memory": 0.000},
    "layer3": {"full_context": 1.000, "json_cards": 1.000, "simple_notes": 0.125, "no_memory": 0.000},
    "overall": {"full_context": 1.000, "json_cards": 1.000, "simple_notes": 0.323, "no_memory": 0.000},
}
SYSTEMS = ["full_context", "json_cards", "simple_notes", "no_memory"]

ROOTS = [pytest.param(SUITE, id="repo-copy")]  # the unchanged data files, copied with LICENSE and SOURCE.md


@pytest.mark.parametrize("root", ROOTS)
def test_layer_table_reproduces_reference_to_three_decimals(root):
    suite = load_booksuite(root)
    responses = read_responses(root / "fixtures" / "system_responses.example.json")
    assert list(responses) == SYSTEMS
    scores = [s for name, ans in responses.items() for s in keyword_scores(suite, ans, name)]
    rows = {r.key: r for r in layer_table(scores)}
    assert list(rows) == ["layer1", "layer2", "layer3", "overall"]
    for key, want in REFERENCE.items():
        for system, value in want.items():
            assert round(rows[key].means[system], 3) == value, (key, system)
    assert rows["overall"].counts == {s: 8 for s in SYSTEMS}
    assert (rows["layer1"].counts["simple_notes"], rows["layer2"].counts["simple_notes"]) == (4, 2)


def _table(out: str) -> dict[str, list[str]]:
    rows = {}
    for line in out.splitlines():
        m = re.match(r"^(Layer \d|Overall)\S*.*?((?:\s+[\d.—]+)+)$", line)
        if m:
            rows[m.group(1)] = m.group(2).split()
    return rows


@pytest.mark.parametrize("root", ROOTS)
def test_compare_command_prints_the_reference_table(root, capsys, tmp_path):
    assert main(["compare", "--suite", str(root), "--out", str(tmp_path / "o.jsonl")]) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith("Layer "))
    assert header.split()[1:] == SYSTEMS
    t = _table(out)
    expect = {"Layer 1": "layer1", "Layer 2": "layer2", "Layer 3": "layer3", "Overall": "overall"}
    for label, key in expect.items():
        assert t[label] == [f"{REFERENCE[key][s]:.3f}" for s in SYSTEMS]
    recs = [json.loads(x) for x in (tmp_path / "o.jsonl").read_text().splitlines()]
    assert len(recs) == 32
    r = next(x for x in recs if x["system"] == "simple_notes" and x["test_id"] == "layer1_02_insurance_claim")
    assert r["matched"] == ["CLM-2024-894327"] and r["missing_facts"] == ["Patricia Wong", "24-48"]
    assert r["reward"] == pytest.approx(1 / 3) and r["passed"] is False


def test_compare_one_layer_and_system_subset(capsys):
    assert main(["compare", "--suite", str(SUITE), "--category", "layer3", "--systems", "simple_notes"]) == 0
    t = _table(capsys.readouterr().out)
    assert t == {"Layer 3": ["0.125"], "Overall": ["0.125"]}


def test_missing_answers_are_counted_not_zeroed(tmp_path, capsys):
    p = tmp_path / "r.json"
    p.write_text(
        json.dumps(
            {
                "partial": {
                    "layer1_01_bank_account": "4429853327 and 123006800",
                    "layer2_02_multiple_properties": "no gold for this one",
                }
            }
        )
    )
    assert main(["compare", "--suite", str(SUITE), "--responses", str(p)]) == 0
    out = capsys.readouterr().out
    assert _table(out) == {"Layer 1": ["1.000"], "Layer 2": ["—"], "Layer 3": ["—"], "Overall": ["1.000"]}
    assert re.search(r"^n scored\s+1$", out, re.M) and re.search(r"^n missing\s+7$", out, re.M)


def test_score_answers_per_case_table(tmp_path, capsys):
    sn = json.loads((SUITE / "fixtures" / "system_responses.example.json").read_text())["simple_notes"]
    p = tmp_path / "a.json"
    p.write_text(json.dumps(sn | {"layer1_05_internet_service": "VEL-89923476"}))
    assert main(["score-answers", "--suite", str(SUITE), "--answers", str(p), "--name", "sn"]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("layer1_02_insurance_claim"))
    assert line.split()[1:4] == ["layer1", "0.333", "no"]
    assert line.endswith("1/3 facts; missing: Patricia Wong, 24-48")
    assert _table(out)["Overall"] == ["0.323"]
    assert "not scored (no gold facts for keyword-recall): 1 answered case(s)" in out


def test_bad_responses_file_is_one_line_and_exit_2(tmp_path, capsys):
    p = tmp_path / "r.json"
    p.write_text(json.dumps({"s": {"layer1_01_bank_account": ["not", "a", "string"]}}))
    assert main(["compare", "--suite", str(SUITE), "--responses", str(p)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "r.json record s.layer1_01_bank_account: answer must be a string" in err


def test_judge_metric_needs_an_endpoint(capsys):
    assert main(["compare", "--suite", str(SUITE), "--metric", "judge"]) == 2
    assert "--judge-url/--judge-model" in capsys.readouterr().err


def test_compare_reads_memeval_runs(tmp_path, capsys):
    from memeval.bench.loaders.booksuite import import_booksuite
    from memeval.run import run_system

    import_booksuite(SUITE, tmp_path / "bench")
    run = run_system(tmp_path / "bench", "no_memory", out=tmp_path / "run", progress=False)
    fake = tmp_path / "fake"  # a hand-written run: one complete answer, one error record
    fake.mkdir()
    (fake / "records.jsonl").write_text(
        json.dumps({"qid": "layer1_01_bank_account", "epoch": 0, "answer": "4429853327 / 123006800"})
        + "\n"
        + json.dumps({"qid": "layer1_02_insurance_claim", "epoch": 0, "error": "boom"})
        + "\n"
    )
    assert main(["compare", "--suite", str(SUITE), "--run", str(run), "--run", str(fake)]) == 2
    assert "'no_memory' is already taken (name this run: --run NAME=" in capsys.readouterr().err  # canned set
    assert (
        main(
            [
                "compare",
                "--suite",
                str(SUITE),
                "--run",
                f"no_memory={run}",
                "--run",
                str(fake),
                "--systems",
                "no_memory",
                "fake",
            ]
        )
        == 2
    )  # the canned no_memory set holds that name
    capsys.readouterr()
    assert main(["compare", "--suite", str(SUITE), "--run", f"mine={run}", "--run", str(fake)]) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith("Layer "))
    assert header.split()[-2:] == ["mine", "fake"] and len(header.split()) > 3  # added to the canned sets
    assert _table(out)["Overall"][-2:] == ["0.000", "1.000"]
    assert re.search(r"^n missing.*\s0\s+7$", out, re.M)
    (fake / "records.jsonl").write_text(json.dumps({"qid": "Q1", "epoch": 0, "answer": "x"}) + "\n")
    assert main(["compare", "--suite", str(SUITE), "--run", str(fake)]) == 2
    assert "records.jsonl:1: field 'qid': 'Q1' is not a book-suite test_id" in capsys.readouterr().err


def test_compare_accepts_the_books_single_system_batch_file(capsys, tmp_path):
    example = json.loads((SUITE / "fixtures" / "system_responses.example.json").read_text())
    batch = tmp_path / "my_agent.json"  # {test_id: answer}: one system, named by the file
    batch.write_text(json.dumps(example["simple_notes"]))
    assert read_responses(batch) == {"my_agent": example["simple_notes"]}
    assert main(["compare", "--suite", str(SUITE), "--responses", str(batch)]) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith("Layer "))
    assert header.split()[1:] == ["my_agent"]
    t = _table(out)
    assert t["Overall"] == [f"{REFERENCE['overall']['simple_notes']:.3f}"]
    assert t["Layer 3"] == [f"{REFERENCE['layer3']['simple_notes']:.3f}"]
    batch.write_text(json.dumps({"layer1_01_no_such_case": "x"}))
    assert main(["compare", "--suite", str(SUITE), "--responses", str(batch)]) == 2
    assert "unknown test_id" in capsys.readouterr().err


def test_compare_reads_the_scores_a_dry_run_already_holds(tmp_path, capsys):
    """A memeval run's records carry keyword recall (the dry scorer wrote it): compare reads it, never
    re-scores the answers. Proved by editing one stored score: the table follows the record."""
    from memeval.bench.loaders.booksuite import import_booksuite
    from memeval.run import read_records, run_system

    import_booksuite(SUITE, tmp_path / "bench")
    run = run_system(tmp_path / "bench", "oracle", out=tmp_path / "run", progress=False)
    recs = read_records(run)
    graded = [r for r in recs if r["rule"] == "keyword-recall"]
    assert len(graded) == 8
    stored = [r["score"] for r in graded]
    assert main(["compare", "--suite", str(SUITE), "--run", str(run)]) == 0
    assert _table(capsys.readouterr().out)["Overall"][-1:] == [f"{sum(stored) / 8:.3f}"]
    graded[0]["score"] = 1.0 - stored[0] / 2  # as if the run had graded this case otherwise
    assert graded[0]["score"] != stored[0]
    (run / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    assert main(["compare", "--suite", str(SUITE), "--run", str(run)]) == 0
    assert _table(capsys.readouterr().out)["Overall"][-1:] == [f"{(sum(stored[1:]) + 1.0 - stored[0] / 2) / 8:.3f}"]


def test_builtin_runs_scores_are_the_records_scores(tmp_path):
    from memeval.analysis.booksuite import builtin_runs, stored_scores
    from memeval.run import read_records

    suite = load_booksuite(SUITE)
    runs = builtin_runs(suite, ["bm25:k=3"], tmp_path)
    recs = {r["qid"]: r for r in read_records(runs["bm25:k=3"])}
    recs["layer1_01_bank_account"]["score"] = 0.25  # edited: the table must follow the record
    (runs["bm25:k=3"] / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs.values()))
    scores = stored_scores(suite, runs)
    assert len(scores) == len(suite.gold) == 8 and all(s.status == "scored" for s in scores)
    assert {s.test_id: s.reward for s in scores} == {t: recs[t]["score"] for t in suite.gold}
    assert next(s for s in scores if s.test_id == "layer1_01_bank_account").passed is False
