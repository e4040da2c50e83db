"""Killed writers: a SIGKILLed import leaves a staging folder that the next import removes; multi-turn
records repair a torn tail and resume like ``run`` (no duplicates on rerun); ``multiturn run`` exits 1
when no sample completes."""

import json
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass

from test_loaders_longmemeval import _sample

from memeval.atomic import repair_tail
from memeval.bench.loaders import import_bench
from memeval.bench.loaders._common import clean_stale
from memeval.cli import main
from memeval.multiturn import agents
from memeval.multiturn.records import read_sample_records
from memeval.multiturn.suite import generate_suite, save_suite


def test_sigkilled_import_leaves_a_staging_folder_the_next_import_removes(tmp_path):
    src = tmp_path / "longmemeval_s.json"
    src.write_text(json.dumps(_sample()[:3]))
    out = tmp_path / "bench"
    killed = textwrap.dedent(f"""
        import os, signal
        from memeval.bench.loaders._common import staged_output
        with staged_output({str(out)!r}) as tmp:
            (tmp / "turns_s.jsonl").write_text("half")
            os.kill(os.getpid(), signal.SIGKILL)
    """)
    r = subprocess.run([sys.executable, "-c", killed], capture_output=True, timeout=60)
    assert r.returncode == -9
    left = [p.name for p in tmp_path.iterdir() if p.name.startswith(".bench.")]
    assert len(left) == 1 and left[0].endswith(".partial")  # what SIGKILL leaves
    legacy = tmp_path / ".bench.abc123xy.partial"  # written before staging folders carried the pid
    legacy.mkdir()
    live = tmp_path / f".bench.{os.getpid()}.livexyz1.partial"  # a writer still running: kept
    live.mkdir()
    unrelated = tmp_path / ".benchmark.1.abc.partial"
    unrelated.mkdir()
    import_bench("longmemeval", [src], out)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == sorted([live.name, unrelated.name])
    assert (out / "bench.yaml").is_file()
    assert clean_stale(out) == []


def test_repair_tail_drops_only_a_partial_last_line(tmp_path):
    p = tmp_path / "r.jsonl"
    p.write_bytes(b'{"a": 1}\n{"a": 2}\n{"a": 3')
    assert repair_tail(p) == len(b'{"a": 3')
    assert p.read_bytes() == b'{"a": 1}\n{"a": 2}\n'
    assert repair_tail(p) == 0 and repair_tail(tmp_path / "absent.jsonl") == 0


def _suite(tmp_path):
    suite = generate_suite(5, 3, 1, "r5")
    save_suite(suite, tmp_path / "suite")
    return suite


def test_multiturn_rerun_resumes_after_a_torn_tail(tmp_path, capsys):
    suite = _suite(tmp_path)
    out = tmp_path / "records.jsonl"
    assert main(["multiturn", "run", str(tmp_path / "suite"), "-o", str(out)]) == 0
    full = out.read_bytes()
    lines = full.splitlines(keepends=True)
    n = len(suite.samples)
    assert len(lines) == n
    # a run killed while writing its third record: two whole lines and half of the third
    out.write_bytes(b"".join(lines[:2]) + lines[2][:40])
    assert [r["sample_id"] for r in read_sample_records(out)] == [json.loads(x)["sample_id"] for x in lines[:2]]
    assert main(["multiturn", "run", str(tmp_path / "suite"), "-o", str(out)]) == 0
    again = [json.loads(x) for x in out.read_bytes().splitlines()]
    assert len(again) == n and sorted(r["sample_id"] for r in again) == sorted(s.sample_id for s in suite.samples)
    assert out.read_bytes() == full  # the same records, each once, in the same order
    # a third run asks nothing again and appends nothing
    assert main(["multiturn", "run", str(tmp_path / "suite"), "-o", str(out)]) == 0
    assert out.read_bytes() == full
    assert f"correct: {n} samples" in capsys.readouterr().out
    assert main(["multiturn", "summary", str(out)]) == 0


def test_multiturn_run_where_no_sample_completes_exits_1(tmp_path, capsys, monkeypatch):
    @dataclass
    class Broken(agents.ScriptedAgent):
        name: str = "broken"

        def gen(self, messages, seed, turn, step):
            raise ConnectionError("endpoint down")

    monkeypatch.setitem(agents.SCRIPTED_AGENTS, "broken", Broken)
    _suite(tmp_path)
    out = tmp_path / "records.jsonl"
    assert main(["multiturn", "run", str(tmp_path / "suite"), "-o", str(out), "--agent", "broken"]) == 1
    err = capsys.readouterr().err
    assert "no sample completed for broken" in err
    recs = read_sample_records(out)
    assert recs and all(r["verdict"] == "incomplete" and "endpoint down" in r["reason"] for r in recs)
    # with one working agent beside it, the broken one still fails the command
    assert (
        main(
            [
                "multiturn",
                "run",
                str(tmp_path / "suite"),
                "-o",
                str(tmp_path / "two.jsonl"),
                "--agent",
                "correct",
                "--agent",
                "broken",
            ]
        )
        == 1
    )
    assert main(["multiturn", "run", str(tmp_path / "suite"), "-o", str(tmp_path / "ok.jsonl")]) == 0


def test_generate_cleans_what_a_killed_generation_left(tmp_path):
    out = tmp_path / "gen"
    stale = tmp_path / ".gen.999999999.abcdefgh.partial"
    stale.mkdir()
    assert main(["generate", "--preset", "tiny", "--seed", "1", "--out", str(out)]) == 0
    assert not stale.exists() and (out / "bench.yaml").is_file()
    assert oct(out.stat().st_mode & 0o777) == oct(0o777 & ~_umask())


def _umask() -> int:
    m = os.umask(0o022)
    os.umask(m)
    return m
