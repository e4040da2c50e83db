"""``memeval diff``: paired comparison of two runs on the same bench, refusing different benches."""

import pytest

from memeval.bench import lifelog
from memeval.cli import main
from memeval.run import read_records, run_system


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("diff")
    bench = lifelog.generate("tiny", 1, root / "bench")
    other = lifelog.generate("tiny", 2, root / "other")
    return {
        "bm25": run_system(bench, "bm25", tiers=["core", "full"], out=root / "bm25", progress=False),
        "recent": run_system(bench, "recent", tiers=["core", "full"], out=root / "recent", progress=False),
        "other": run_system(other, "bm25", tiers=["core"], out=root / "other-run", progress=False),
    }


def test_diff_prints_the_paired_table_and_the_flipped_questions(runs, capsys):
    assert main(["diff", str(runs["bm25"]), str(runs["recent"]), "--flips", "1000"]) == 0
    out = capsys.readouterr().out
    a = {(r["tier"], r["qid"]): r["score"] for r in read_records(runs["bm25"])}
    b = {(r["tier"], r["qid"]): r["score"] for r in read_records(runs["recent"])}
    shared = [k for k in a if k in b and a[k] is not None and b[k] is not None]
    flipped = [k for k in shared if (a[k] >= 1) != (b[k] >= 1)]
    assert flipped and f"Flipped questions: {len(flipped)}" in out
    a_only = sum(1 for k in shared if k[0] == "core" and a[k] >= 1 > b[k])
    b_only = sum(1 for k in shared if k[0] == "core" and b[k] >= 1 > a[k])
    core = next(line for line in out.splitlines() if line.startswith("│ core"))
    cells = [c.strip() for c in core.strip("│").split("┆")]
    n_core = sum(1 for k in shared if k[0] == "core")
    assert cells[1] == str(n_core) and cells[7] == str(a_only) and cells[8] == str(b_only)
    assert "A = bm25 (dry), B = recent" in out and "McNemar" in out


def test_diff_refuses_runs_on_different_benches(runs, capsys):
    assert main(["diff", str(runs["bm25"]), str(runs["other"])]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "content hash" in err and "refusing" in err
