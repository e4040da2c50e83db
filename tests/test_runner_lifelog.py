"""The runner on the generated bench: baselines bracket, and the served system scores identically."""

import socket
import subprocess
import sys
import time

import httpx
import polars as pl
import pytest

from memeval.analysis.aggregate import load_records, tier_axis_table
from memeval.bench import load_bench, read_questions
from memeval.bench.lifelog import generate
from memeval.run import read_records, run_system


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return generate("tiny", 3, tmp_path_factory.mktemp("b") / "tiny")


def test_every_tier_question_recorded_oracle_ceiling_and_floor(tiny, tmp_path):
    bench = load_bench(tiny)
    expected = {(t.name, q.id) for t in bench.tiers for q in read_questions(tiny / t.questions_file)}
    runs = {s: run_system(tiny, s, out=tmp_path / s, progress=False) for s in ("oracle", "no_memory")}
    for rd in runs.values():
        assert {(r["tier"], r["qid"]) for r in read_records(rd)} == expected
    table = tier_axis_table(load_records(list(runs.values())))
    text_axes = [
        "BASIC",
        "PARAPHRASE",
        "XLING_QUERY",
        "XLING_STORE",
        "TEMPORAL",
        "UPDATE",
        "GATHER",
        "RECONCILE",
        "MULTI",
        "IMPLICIT",
        "CROSS",
        "CONFLICT",
        "STALE",
        "CONTRADICT",
    ]
    oracle = table.filter((pl.col("system") == "oracle") & pl.col("axis").is_in(text_axes))
    assert oracle.height >= len(text_axes) and oracle["score"].min() >= 0.9, oracle
    floor = table.filter(pl.col("system") == "no_memory")
    assert floor["score"].max() == 0.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_memeval_serve_gives_the_in_process_scores(tiny, tmp_path):
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "memeval", "serve", "bm25:k=5", "--port", str(port)], stderr=subprocess.PIPE, text=True
    )
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(200):
            try:
                assert httpx.get(url + "/health").status_code == 200
                break
            except httpx.TransportError:
                time.sleep(0.05)
        spec = httpx.get(url + "/openapi.json").json()
        assert set(spec["paths"]) == {"/reset", "/sessions", "/query", "/health", "/stats", "/memories"}
        remote = run_system(tiny, url, tiers=["core", "full"], out=tmp_path / "remote", progress=False)
    finally:
        server.terminate()
        server.wait(10)
    local = run_system(tiny, "bm25:k=5", tiers=["core", "full"], out=tmp_path / "local", progress=False)

    def scores(rd):
        return {(r["tier"], r["qid"]): (r["score"], r["retrieved_turns"]) for r in read_records(rd)}

    assert scores(remote) == scores(local) and len(scores(local)) > 50
