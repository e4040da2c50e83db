"""Issue 24, item 7: resume says what it did; ``memeval view`` takes a run folder and lists a run whose
manifest cannot be read, with the reason; a sweep's question set is checked before any shard."""

import subprocess
import sys

import pytest

from memeval.cli import main
from memeval.run import read_records, run_system
from minibench import make_minibench


@pytest.fixture
def bench(tmp_path):
    return make_minibench(tmp_path / "bench")


def test_resume_after_a_kill_says_how_many_were_recorded_and_whose_lock_was_stale(bench, tmp_path, capsys):
    """The kill is staged (records cut short, a dead pid in the lock file); the runs call ``memeval.cli.main``
    in process (tests/incli.py: what they print is the subject, not the process boundary)."""
    from incli import memeval_cli

    def _cli(*args):
        return memeval_cli(capsys, *args)

    out = tmp_path / "r"
    run_system(bench, "bm25:k=3", out=out, progress=False, epochs=2)
    lines = (out / "records.jsonl").read_text().splitlines()
    (out / "records.jsonl").write_text("\n".join(lines[:5]) + "\n")  # killed after 5 records ...
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    (out / ".lock").write_text(dead.stdout)  # ... holding the lock (the kernel released it; the pid stayed)
    p = _cli("run", "--bench", bench, "--system", "bm25:k=3", "--epochs", "2", "--out", str(out), "--no-progress")
    assert p.returncode == 0, p.stderr
    want = f"resumed: 5 of 16 already recorded; stale lock of pid {dead.stdout.strip()} removed"
    assert want in p.stderr
    assert len(read_records(out)) == 16 and (out / ".lock").read_text() == ""  # a clean exit leaves no pid
    again = _cli("run", "--bench", bench, "--system", "bm25:k=3", "--epochs", "2", "--out", str(out), "--no-progress")
    assert "resumed: 16 of 16 already recorded" in again.stderr and "stale lock" not in again.stderr
    first = _cli("run", "--bench", bench, "--system", "bm25:k=3", "--out", str(tmp_path / "new"), "--no-progress")
    assert "resumed" not in first.stderr  # a new run says nothing of the kind


def test_view_takes_a_run_folder_and_lists_an_unreadable_manifest_with_its_reason(bench, tmp_path, capsys):
    runs = tmp_path / "runs"
    good = run_system(bench, "bm25:k=3", out=runs / "good", progress=False)
    assert main(["view", str(good), "--out", str(tmp_path / "one"), "--no-progress"]) == 0
    assert capsys.readouterr().out.startswith("1 runs")
    bad = run_system(bench, "no_memory", out=runs / "bad", progress=False)
    (bad / "manifest.json").write_text('{"run_id": "bad", "status": 3}')
    assert main(["view", str(runs), "--out", str(tmp_path / "site"), "--no-progress"]) == 0
    cap = capsys.readouterr()
    assert cap.out.startswith("1 runs")
    assert f"skipped {bad}: unreadable manifest (" in cap.err and "field 'status'" in cap.err
    assert "unreadable manifest" in (tmp_path / "site" / "index.html").read_text()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["view", str(empty), "--out", str(tmp_path / "s2"), "--no-progress"]) == 2
    assert "no run folders here" in capsys.readouterr().err


@pytest.fixture(scope="module")
def probed(tmp_path_factory):
    """The mini bench with a ``probes`` question set on its ``core`` tier only."""
    from dataclasses import replace

    from memeval.bench import load_bench, save_bench

    root = make_minibench(tmp_path_factory.mktemp("sw") / "probed")
    b = load_bench(root)
    tiers = tuple(replace(t, question_sets={"probes": t.questions_file}) if t.name == "core" else t for t in b.tiers)
    save_bench(replace(b, tiers=tiers))
    return root


@pytest.mark.parametrize(
    "extra, message",
    [
        ("question_set: nosuch\n", "no tier of bench probed has question set 'nosuch'"),
        ("question_set: probes\ntiers: [core, big]\n", "tier 'big' of bench probed has no question set 'probes'"),
    ],
)
def test_a_sweeps_question_set_is_checked_before_any_shard(probed, tmp_path, capsys, extra, message):
    spec = tmp_path / "SWEEP.yaml"
    spec.write_text(f"systems: [bm25]\nbenches: [{probed}]\n{extra}")
    out = tmp_path / "sw"
    rc = main(["sweep", str(spec), "--out", str(out), "--dashboard-address", "none", "--no-progress"])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1 and "field 'question_set'" in err and message in err, err
    assert not out.exists()


def test_a_sweep_asks_only_the_tiers_that_have_its_question_set(probed, tmp_path):
    from memeval.run.sweep.plan import plan_shards, resolve_benches
    from memeval.run.sweep.spec import load_spec

    spec = tmp_path / "SWEEP.yaml"
    spec.write_text(f"systems: [bm25]\nbenches: [{probed}]\nquestion_set: probes\n")
    shards = plan_shards(load_spec(spec), resolve_benches(load_spec(spec)), tmp_path / "sw")
    assert [(s.tier, s.tier_index) for s in shards] == [("core", 0)]
