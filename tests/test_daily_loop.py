"""Issue 14: one project root, stable run names, NAME=RUN_DIR labels, summary widths and formats."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from memeval.workbench import ensure_bench, load_runs, parse_run_labels, project_root, run_served, run_systems
from memeval.cli import main


# one xdist worker runs this module: the tiny project, built by a module fixture, is built once
pytestmark = pytest.mark.xdist_group("daily_loop")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("proj")
    (root / "memeval.toml").write_text("")
    bench = ensure_bench(None, "tiny", 1, data_root=root / "data")
    runs = run_systems(bench, ["bm25", "no_memory", "oracle"], runs_root=root / "runs")
    return root, bench, runs


def test_notebook_folder_writes_to_the_project_root(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("[project]\nname='x'\n")
    nb = tmp_path / "notebooks"
    nb.mkdir()
    monkeypatch.chdir(nb)  # JupyterLab starts kernels in the notebook's folder
    assert project_root() == tmp_path
    bench = ensure_bench(None, "tiny", 1)
    assert bench.resolve() == tmp_path / "data" / "lifelog-tiny-s1"
    [run] = run_systems(bench, ["no_memory"], tiers=["core"])
    assert Path(run).resolve().parent == tmp_path / "runs"
    assert list(nb.iterdir()) == []  # nothing under notebooks/


def test_without_a_marker_the_current_folder_is_the_root(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert project_root() == tmp_path.resolve()


def test_generate_defaults_to_seed_1_under_data(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["generate", "--preset", "tiny"]) == 0
    assert "seed=1" in capsys.readouterr().out
    assert (tmp_path / "data" / "lifelog-tiny-s1" / "bench.yaml").is_file()


def test_served_runs_are_named_by_the_system_and_resume(tiny):
    root, bench, _ = tiny
    first = run_served(bench, ["no_memory"], tiers=["core"], runs_root=root / "runs")
    second = run_served(bench, ["no_memory"], tiers=["core"], runs_root=root / "runs")  # a new random port
    [d1], [d2] = first.values(), second.values()
    assert d1 == d2 and "no_memory-http" in d1.name and "127.0.0.1" not in d1.name
    man = json.loads((d1 / "manifest.json").read_text())
    assert len(man.get("resumed_at", [])) == 1


def test_two_runs_of_one_system_by_label(tiny, tmp_path):
    root, bench, runs = tiny
    other = run_systems(bench, ["bm25:k=3"], tiers=["core"], runs_root=tmp_path)[0]
    dirs, labels = parse_run_labels([f"a={runs[0]}", f"b={other}"])
    assert dirs == [runs[0], other] and set(labels) == {"a", "b"}
    df = load_runs([f"a={runs[0]}", f"b={other}"])
    assert sorted(df["system"].unique().to_list()) == ["a", "b"]


def _summary(capsys, *argv):
    assert main(["summary", *map(str, argv)]) == 0
    return capsys.readouterr().out


def test_summary_is_narrow_and_finds_floor_and_ceiling(tiny, capsys):
    _, _, (bm25, floor, ceiling) = tiny
    out = _summary(capsys, bm25)
    assert max(len(line) for line in out.splitlines()) <= 100
    assert "Float64" not in out and "f64" not in out
    assert floor.name in out and ceiling.name in out  # found beside, not passed
    wide = _summary(capsys, bm25, "--wide")
    assert max(len(line) for line in wide.splitlines()) > 100 and "median_chars" in wide
    assert "question set: main" in out


def test_summary_formats(tiny, capsys):
    _, _, (bm25, _, _) = tiny
    doc = json.loads(_summary(capsys, bm25, "--format", "json"))
    rows = [r for r in doc["overall"] if r["system"] == "bm25"]
    assert rows and all(r["floor_weighted"] == 0.0 and r["ceiling_weighted"] is not None for r in rows)
    assert all(r["weighted"] <= r["ceiling_weighted"] for r in rows)
    table = list(csv.DictReader(io.StringIO(_summary(capsys, bm25, "--format", "csv"))))
    assert {r["system"] for r in table} == {"bm25", "no_memory", "oracle"} and "weighted" in table[0]
    md = _summary(capsys, bm25, "--format", "md")
    assert "## Per tier × axis" in md and "| system" in md and "|---" in md
    assert sum(line.startswith("run ") for line in _summary(capsys, bm25, "--no-bounds").splitlines()) == 1


def test_summary_names_the_probes_question_set(tiny, capsys):
    root, bench, _ = tiny
    assert (
        main(
            [
                "run",
                "--bench",
                str(bench),
                "--system",
                "bm25",
                "--question-set",
                "probes",
                "--no-progress",
                "--out",
                str(root / "probes"),
            ]
        )
        == 0
    )
    cap = capsys.readouterr()
    assert "question set probes" in cap.err and "retries=" in cap.err and cap.out.strip() == str(root / "probes")
    assert "question set: probes" in _summary(capsys, root / "probes")


def test_compare_runs_of_one_system_by_name(tmp_path, capsys):
    from memeval.bench.loaders.booksuite import import_booksuite
    from memeval.run import run_system
    from tests.booksuite_paths import SUITE

    import_booksuite(SUITE, tmp_path / "bench")
    a = run_system(tmp_path / "bench", "bm25", out=tmp_path / "a", progress=False)
    b = run_system(tmp_path / "bench", "bm25:k=3", out=tmp_path / "b", progress=False)
    assert main(["compare", "--suite", str(SUITE), "--run", f"bm25={a}", "--run", f"bm25={b}"]) == 2
    assert "already taken" in capsys.readouterr().err
    assert main(["compare", "--suite", str(SUITE), "--run", f"plain={a}", "--run", f"k3={b}"]) == 0
    header = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("Layer "))
    assert header.split()[-2:] == ["plain", "k3"] and len(header.split()) > 3  # canned sets kept


def test_booksuite_audit_explains_cases_without_gold(tmp_path, capsys):
    from memeval.audit import audit
    from memeval.bench.loaders.booksuite import import_booksuite
    from tests.booksuite_paths import SUITE

    import_booksuite(SUITE, tmp_path / "full")
    rep = audit(tmp_path / "full")
    check = rep.check("evidence-resolves")
    assert check.passed and check.numbers["no_gold_expected"] == 52 and "expected for this suite" in check.note
    assert not [f for f in rep.findings if f.check == "evidence-resolves"]
    (tmp_path / "nogold.json").write_text("{}")  # every case without gold facts: nothing else to find
    import_booksuite(SUITE, tmp_path / "bare", tmp_path / "nogold.json")
    assert main(["audit", str(tmp_path / "bare")]) == 0
    out = capsys.readouterr().out
    assert "60 cases without gold facts" in out and "audit PASS" in out


def test_pad_and_import_show_progress(tiny, tmp_path, capsys):

    _, bench, _ = tiny
    assert main(["pad", str(bench), "--sizes", "300,600", "--source", "lifelog", "--out", str(tmp_path / "p")]) == 0
    err = capsys.readouterr().err
    assert "reading tier core" in err and "writing tier" in err and err.count("s] ") >= 4
    assert (
        main(
            ["pad", str(bench), "--sizes", "300", "--source", "lifelog", "--out", str(tmp_path / "q"), "--no-progress"]
        )
        == 0
    )
    assert capsys.readouterr().err == ""


def test_heartbeat_beats_while_work_runs():
    import io
    import time

    from memeval.commands._progress import Heartbeat

    buf = io.StringIO()
    with Heartbeat("quick", every=5, stream=buf):
        pass
    assert buf.getvalue() == ""  # quick work (or a quick failure) prints nothing
    with Heartbeat("working", every=0.05, stream=buf):
        time.sleep(0.4)
    lines = buf.getvalue().splitlines()
    assert lines[0] == "working ..." and lines[-1].startswith("working: done in")
    assert any(line.startswith("  ... working:") for line in lines[1:-1])


@pytest.mark.timeout(600)
def test_notebook_run_from_its_folder_writes_nothing_there(tmp_path_factory):
    """A kernel started in notebooks/ (JupyterLab's default) puts data/ and runs/ at the project root."""
    from notebook_project import NOTEBOOKS
    from rendered import TINY, shipped_report

    root, out = shipped_report(tmp_path_factory, "traces", TINY)  # the render test_notebooks.py reads too
    assert out.is_file()
    nb = root / "notebooks"  # the project's copies of the shipped notebooks, and nothing else
    assert sorted(p.name for p in nb.iterdir()) == sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))
    assert (root / "data" / "lifelog-tiny-s1" / "bench.yaml").is_file()
    assert any((root / "runs").glob("*/manifest.json"))
