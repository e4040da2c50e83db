"""`memeval import` dispatch: the book suite (real data copied into tests/data) and errors."""

from memeval.bench import load_bench
from memeval.cli import main

from booksuite_paths import SUITE as BOOK


def test_import_booksuite_dispatches_to_its_loader(tmp_path, capsys):
    assert main(["import", "booksuite", str(BOOK), "--out", str(tmp_path / "b")]) == 0
    bench = load_bench(tmp_path / "b")
    assert bench.name == "booksuite" and bench.tiers[0].n_questions == 60
    assert [p.name for p in tmp_path.iterdir()] == ["b"]  # no staging folder left behind


def test_import_errors(tmp_path, capsys):
    assert main(["import", "locomo", str(tmp_path / "nope.json"), "--out", str(tmp_path / "b")]) == 2
    assert "nope.json: no such file" in capsys.readouterr().err
    assert main(["import", "locomo", "a.json", "b.json", "--out", str(tmp_path / "b")]) == 1
    assert "exactly one file" in capsys.readouterr().err
    assert main(["import", "locomo", "a.json", "--pair", "q.jsonl=small", "--out", str(tmp_path / "b")]) == 1
    assert "glasshouse only" in capsys.readouterr().err
    assert not (tmp_path / "b").exists()
