import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memeval.analysis.aggregate import latency_table, load_records, overall_table, tier_axis_table
from memeval.errors import MemevalError
from memeval.run import read_manifest, read_records, run_system
from memeval.systems import BM25, NoMemory
from memeval.systems.server import Faults, ReferenceServer
from minibench import make_minibench


@pytest.fixture
def bench(tmp_path):
    return make_minibench(tmp_path / "bench")


def _scores(run_dir):
    return {(r["tier"], r["qid"], r["epoch"]): r["score"] for r in read_records(run_dir)}


def test_every_tier_question_recorded_and_baselines_bracket(bench, tmp_path):
    runs = {s: run_system(bench, s, out=tmp_path / s, progress=False) for s in ("no_memory", "oracle", "bm25:k=2")}
    for rd in runs.values():
        recs = read_records(rd)
        assert sorted((r["tier"], r["qid"]) for r in recs) == sorted(
            (t, q) for t in ("core", "big") for q in ("Q1", "Q2", "Q3", "Q4")
        )
        assert read_manifest(rd)["status"] == "complete"
        assert all(isinstance(r["chars_returned"], int) for r in recs)
    oracle = {(r["tier"], r["qid"]): r for r in read_records(runs["oracle"])}
    floor = {(r["tier"], r["qid"]): r for r in read_records(runs["no_memory"])}
    for tier in ("core", "big"):
        for q in ("Q1", "Q2", "Q3"):
            assert oracle[tier, q]["score"] == 1.0 and oracle[tier, q]["retrieval_hit"] is True
            assert floor[tier, q]["score"] == 0.0 and floor[tier, q]["retrieval_hit"] is False
            assert floor[tier, q]["chars_returned"] == 0 and floor[tier, q]["rule"] == "empty"
        assert oracle[tier, "Q3"]["rule"] == "update:new-value"
        assert oracle[tier, "Q4"]["retrieval_hit"] is None  # nothing to retrieve for an abstention
    assert oracle["core", "Q3"]["speed_status"] == "in_process"
    df = load_records(list(runs.values()))
    ov = overall_table(df)
    bm = ov.filter(ov["system"] == "bm25:k=2").row(0, named=True)
    assert bm["floor_unweighted"] == 0.0 and bm["ceiling_unweighted"] == 1.0  # oracle: 4 of 4 (Q4: it abstains)
    assert oracle["core", "Q4"]["rule"] == "abstain:idk" and oracle["core", "Q4"]["memories_returned"] == []
    ta = tier_axis_table(df)
    assert set(ta["axis"]) == {"BASIC", "UPDATE", "ABSTAIN"}


def test_weighted_and_unweighted_side_by_side(bench, tmp_path):
    rd = run_system(bench, "oracle", tiers=["core"], out=tmp_path / "o", progress=False)
    import polars as pl

    df = load_records(rd)  # the oracle abstains on Q4 (1.0); zero it to see the weights at work
    df = df.with_columns(pl.when(pl.col("qid") == "Q4").then(0.0).otherwise(pl.col("score")).alias("score"))
    row = overall_table(df).row(0, named=True)
    # Q1, Q2 BASIC (w1) = 1, Q3 UPDATE (w2) = 1, Q4 ABSTAIN (w3) = 0: 4/7 weighted, 3/4 unweighted
    assert row["weighted"] == pytest.approx(4 / 7) and row["unweighted"] == pytest.approx(0.75)


def test_resume_asks_only_missing_and_refuses_other_config(bench, tmp_path):
    rd = run_system(bench, "bm25", tiers=["core"], out=tmp_path / "r", progress=False)
    lines = (rd / "records.jsonl").read_text().splitlines()
    (rd / "records.jsonl").write_text("\n".join(lines[:2]) + "\n" + lines[2][:15])  # killed mid-write
    run_system(bench, "bm25", tiers=["core"], out=tmp_path / "r", progress=False)
    recs = read_records(rd)
    assert len(recs) == 4 and len({(r["tier"], r["qid"], r["epoch"]) for r in recs}) == 4
    assert len(read_manifest(rd)["resumed_at"]) == 1
    with pytest.raises(MemevalError, match="holds a different run"):
        run_system(bench, "bm25:k=3", tiers=["core"], out=tmp_path / "r", progress=False)


def test_http_run_gives_identical_scores_and_key_never_written(bench, tmp_path, monkeypatch):
    secret = "sk-live-DO-NOT-LEAK-4242"
    monkeypatch.setenv("MEMEVAL_API_KEY", secret)
    local = run_system(bench, "bm25:k=3", out=tmp_path / "local", progress=False)
    with ReferenceServer(BM25(k=3)) as srv:
        remote = run_system(bench, srv.url, out=tmp_path / "remote", progress=False)
    assert _scores(local) == _scores(remote)
    recs = read_records(remote)
    assert all(r["speed_status"] in ("measured", "unmeasurable") and r["response_bytes"] > 0 for r in recs)
    floor = read_manifest(remote)["network_floor_ms"]
    assert floor["before"] > 0 and floor["after"] > 0
    for f in Path(remote).rglob("*"):
        assert secret not in f.read_text(), f


def test_latency_minus_rtt_recovers_a_40ms_service_delay(bench, tmp_path):
    """Behaviour, not a figure (benchmarks/ has those): a 40 ms service delay reads as ~40 ms over a 0 ms
    baseline measured in the same test, with a band that holds on a loaded 2-core machine."""
    with ReferenceServer(NoMemory()) as srv:
        base_rd = run_system(bench, srv.url, epochs=5, out=tmp_path / "zero", progress=False)
    with ReferenceServer(NoMemory(), faults=Faults(delay_ms=40)) as srv:
        rd = run_system(bench, srv.url, epochs=5, out=tmp_path / "d", progress=False)
    base = statistics.median(r["latency_minus_rtt_ms"] for r in read_records(base_rd))
    recs = read_records(rd)
    lmr = [r["latency_minus_rtt_ms"] for r in recs]
    med = statistics.median(lmr)
    assert len(lmr) == 40 and 36 <= med and 30 <= med - base <= 60, (med, base)
    assert all(r["speed_status"] == "measured" and r["speed_points"] == 1.0 for r in recs)  # 40 ms ≪ 0.5 × 500
    lt = latency_table(load_records(rd)).row(0, named=True)
    assert lt["n"] == 40 and lt["p50"] == pytest.approx(med, abs=0.01)  # the table shows the records' median


def test_faults_every_question_scored_or_error_with_reason(bench, tmp_path):
    faults = Faults(error_rate=0.10, drop_rate=0.05, stall_rate=0.05, stall_ms=400, seed=11)
    with ReferenceServer(BM25(k=3), faults=faults) as srv:
        rd = run_system(
            bench,
            srv.url,
            epochs=10,
            concurrency=4,
            out=tmp_path / "f",
            progress=False,
            http_options={"timeout": 0.2, "max_attempts": 2, "backoff": 0.001},
        )
        counts = dict(srv.counts)
    recs = read_records(rd)
    assert len(recs) == 80 and len({(r["tier"], r["qid"], r["epoch"]) for r in recs}) == 80
    errors = [r for r in recs if r["error"]]
    scored = [r for r in recs if r["score"] is not None]
    ungraded = [r for r in recs if r["score"] is None and not r["error"]]  # retrieval-only on ABSTAIN (Q4)
    assert {r["qid"] for r in ungraded} <= {"Q4"} and all(r["ungraded_reason"] for r in ungraded)
    assert len(errors) + len(scored) + len(ungraded) == 80 and errors, counts
    assert all(r["score"] is None and "gave up after 2 attempts" in r["error"] for r in errors)
    assert counts["error"] and counts["drop"] and counts["stall"]
    assert all(r["speed_status"] == "unmeasurable" and r["speed_points"] is None for r in scored)
    assert any("queueing" in r["speed_reason"] for r in scored)


def _cli(*args, **kw):
    return subprocess.Popen(
        [sys.executable, "-m", "memeval", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw
    )


def _wait_records(path, n, timeout=30):
    t0 = time.time()
    while time.time() - t0 < timeout:
        if path.exists() and path.read_text().count("\n") >= n:
            return
        time.sleep(0.02)
    raise AssertionError(f"{path} never reached {n} records")


@pytest.mark.parametrize("sig,status", [(signal.SIGKILL, "started"), (signal.SIGINT, "cancelled")])
def test_killed_run_resumes_to_exactly_one_record_each(bench, tmp_path, sig, status, capsys):
    """The killed run is a child process (the signal is the subject); the uninterrupted reference run and the
    resume call ``memeval.cli.main`` in process (tests/incli.py)."""
    from incli import memeval_cli

    with ReferenceServer(BM25(k=3)) as srv:
        args = ["run", "--bench", bench, "--system", srv.url, "--epochs", "6", "--no-progress"]
        full = tmp_path / "full"
        assert memeval_cli(capsys, *args, "--out", str(full)).returncode == 0
        part = tmp_path / "part"
        srv.state.faults = Faults(delay_ms=25)  # 25 ms a query: the child is still running when signalled
        proc = _cli(*args, "--out", str(part))
        _wait_records(part / "records.jsonl", 7)  # mid-tier: core has 24 (question, epoch) pairs
        proc.send_signal(sig)
        proc.wait(30)
        assert read_manifest(part)["status"] == status
        assert 7 <= len(read_records(part)) < 48
        srv.state.faults = Faults()  # the reference run and the resume need no delay
        assert memeval_cli(capsys, *args, "--out", str(part)).returncode == 0
    recs = read_records(part)
    keys = [(r["tier"], r["qid"], r["epoch"]) for r in recs]
    assert len(keys) == 48 and len(set(keys)) == 48
    assert _scores(part) == _scores(full)
    assert read_manifest(part)["status"] == "complete"


def test_cli_run_and_summary(bench, tmp_path, capsys):
    """``python -m memeval run`` as a child process; ``summary`` and the refused run in process (tests/incli.py)."""
    from incli import memeval_cli

    out = tmp_path / "cli"
    p = _cli("run", "--bench", bench, "--system", "bm25", "--out", str(out), "--no-progress")
    stdout, _ = p.communicate(timeout=60)
    assert p.returncode == 0 and stdout.strip() == str(out)
    r = memeval_cli(capsys, "summary", str(out))
    assert r.returncode == 0, r.stderr
    assert "weighted" in r.stdout and "UPDATE" in r.stdout and "FALSE_MEMORY" in r.stdout  # weight table printed
    r = memeval_cli(capsys, "run", "--bench", str(tmp_path / "nope"), "--system", "bm25")
    err = r.stderr
    assert r.returncode == 2 and err.strip().endswith("no bench manifest here (is this a bench folder?)")
    assert len(err.strip().splitlines()) == 1


def test_named_question_set_runs_apart_from_the_main_set(tmp_path):
    from memeval.bench import Question, load_bench, save_bench, write_questions
    from dataclasses import replace

    root = tmp_path / "b"
    make_minibench(root)
    b = load_bench(root)
    write_questions(
        root / "probes_big.jsonl",
        [
            Question(
                "P1",
                "FALSE_MEMORY",
                "When did the user's beagle win the dog show?",
                "",
                kind="ghost",
                false_claim_en="the beagle won a dog show",
                asked_at="2026-06-01",
            )
        ],
    )
    tiers = (b.tiers[0], replace(b.tiers[1], question_sets={"probes": "probes_big.jsonl"}))
    save_bench(replace(b, tiers=tiers))
    rd = run_system(root, "bm25", question_set="probes", out=tmp_path / "p", progress=False)
    recs = read_records(rd)
    assert [(r["tier"], r["qid"], r["axis"]) for r in recs] == [("big", "P1", "FALSE_MEMORY")]
    assert read_manifest(rd)["config"]["question_set"] == "probes"
    with pytest.raises(MemevalError, match="tier 'core' has no question set 'probes'"):
        run_system(root, "bm25", tiers=["core"], question_set="probes", out=tmp_path / "q", progress=False)


def test_question_without_gold_is_ungraded_in_dry_mode_not_zero(tmp_path):
    from dataclasses import replace

    from memeval.bench import load_bench, read_questions, save_bench, write_questions

    root = tmp_path / "b"
    make_minibench(root)
    b = load_bench(root)
    qs = read_questions(root / "questions_core.jsonl")
    write_questions(root / "questions_core.jsonl", [replace(qs[0], gold_answer="")] + qs[1:])
    save_bench(b)
    recs = {
        r["qid"]: r
        for r in read_records(run_system(root, "oracle", tiers=["core"], out=tmp_path / "r", progress=False))
    }
    assert recs["Q1"]["score"] is None and recs["Q1"]["ungraded_reason"].startswith("no gold answer")
    assert recs["Q2"]["score"] == 1.0 and recs["Q4"]["rule"] == "abstain:idk"  # abstention keeps its rule


def test_book_suite_questions_are_scored_by_keyword_recall_in_dry_mode(tmp_path):
    from dataclasses import replace

    from memeval.bench import load_bench, read_questions, save_bench, write_questions

    root = tmp_path / "b"
    make_minibench(root)
    qs = read_questions(root / "questions_core.jsonl")
    # two facts, one with variants: the oracle's evidence turn (the dentist) holds only the first
    qs[0] = replace(qs[0], extra={"required_facts": ["okafor", ["Elm Road", "Elm Rd"]]})
    write_questions(root / "questions_core.jsonl", qs)
    save_bench(load_bench(root))
    rec = next(
        r
        for r in read_records(run_system(root, "oracle", tiers=["core"], out=tmp_path / "r", progress=False))
        if r["qid"] == "Q1"
    )
    assert (rec["score"], rec["verdict"], rec["rule"]) == (0.5, "partial", "keyword-recall")


def test_unreachable_http_system_is_one_line_error_and_resumable_state(bench, tmp_path):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens here
    out = tmp_path / "down"
    p = _cli(
        "run",
        "--bench",
        bench,
        "--system",
        f"http://127.0.0.1:{port}",
        "--out",
        str(out),
        "--no-progress",
        "--http-attempts",
        "1",
    )
    _, err = p.communicate(timeout=60)
    assert p.returncode == 1 and len(err.strip().splitlines()) == 1, err
    assert "GET /health: gave up after 1 attempts (connection error" in err and "rerun the same command" in err
    # the server's name is asked (GET /health) before the run folder is made: nothing half-written
    assert "nothing was written" in err and not out.exists()


def test_synthetic_analysis_records_match_what_load_records_returns(bench, tmp_path):
    """The plots' and widgets' tests use hand-made frames: they must have the real columns."""
    from analysis_fixtures import SCHEMA

    real = load_records(run_system(bench, "bm25", tiers=["core"], out=tmp_path / "r", progress=False))
    assert dict(real.schema) == SCHEMA  # same columns and the same types (Int32 epoch/weight included)
