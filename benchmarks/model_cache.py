"""Regrade wall time with the model-call cache: cold (empty cache), warm (the same regrade again) and
without a cache, against the scripted loopback reader and judge (``memeval.testing``).

    .venv/bin/python benchmarks/model_cache.py [--bench data/lifelog-demo-s1] [--tier core] [--repeats 5]
        [--url http://127.0.0.1:PORT/v1 --model M] [--limit N] [--sides cold,warm,none]

Makes a dry ``bm25:k=10`` run of the tier once, then, ``--repeats`` times in turn: ``memeval regrade
--mode answer`` with a new cache folder (cold: every reader and judge call asked and stored), the same
regrade again into that folder (warm), and with ``--no-cache``. Prints the median and range of each, the
calls the stubs served and the ratios. The stubs answer in about a millisecond: a real endpoint's
seconds per call make the cold and uncached sides far slower, the warm side not. ``--url``/``--model``:
a real OpenAI-compatible endpoint as both reader and judge instead (e.g. ``memeval models serve``);
``--limit N``: only the tier's first N questions (in a copy of the bench).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import platform
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from memeval.bench.io import load_bench
from memeval.cli import main as cli
from memeval.run import read_records, run_system
from memeval.testing.chat_stub import ScriptedChatServer
from memeval.testing.judge_stubs import judge_responder, reader_responder


def _regrade(src: Path, out: Path, judge: tuple[str, str], reader: tuple[str, str], cache: list[str]) -> float:
    args = ["regrade", str(src), "--mode", "answer", "--out", str(out), *cache]
    args += ["--judge-url", judge[0], "--judge-model", judge[1], "--reader-url", reader[0], "--reader-model", reader[1]]
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        assert cli(args) == 0
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", default="data/lifelog-demo-s1")
    ap.add_argument("--tier", default="core")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--url", help="a real endpoint for the reader and the judge (default: the loopback stubs)")
    ap.add_argument("--model", default="local", help="its model name (with --url)")
    ap.add_argument("--limit", type=int, help="only the tier's first N questions")
    ap.add_argument("--sides", default="cold,warm,none", help="which regrades to time, in this order")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="memeval-cache-bench-"))
    try:
        bench = Path(args.bench)
        if args.limit:
            bench = Path(shutil.copytree(bench, work / "bench"))
            qfile = bench / load_bench(bench).tier(args.tier).questions_path("main")
            kept = qfile.read_text(encoding="utf-8").splitlines(True)[: args.limit]
            qfile.write_text("".join(kept), encoding="utf-8")
        src = run_system(
            bench, "bm25:k=10", tiers=[args.tier], mode="dry", out=work / "src", progress=False, verify=False
        )
        sides = args.sides.split(",")
        times: dict[str, list[float]] = {k: [] for k in sides}
        calls: dict[str, list[int]] = {k: [] for k in sides}
        with ScriptedChatServer(judge_responder("strict")) as j, ScriptedChatServer(reader_responder) as r:
            judge, reader = (j.base_url, "strict-stub"), (r.base_url, "reader-stub")
            if args.url:
                judge = reader = (args.url, args.model)
            for i in range(args.repeats):
                cache = ["--cache", str(work / f"cache{i}")]
                for side in sides:
                    opts = ["--no-cache"] if side == "none" else cache
                    before = len(j.requests) + len(r.requests)
                    times[side].append(_regrade(src, work / f"{side}{i}", judge, reader, opts))
                    calls[side].append(len(j.requests) + len(r.requests) - before)
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
        where = args.url or "the loopback stubs"
        print(f"bench {args.bench} tier {args.tier} ({len(read_records(src))} questions); {where}")
        print(f"commit {commit}; {platform.platform()}; {args.repeats} repeats")
        for side, ts in times.items():
            served = "" if args.url else f"  stub calls per regrade {sorted(set(calls[side]))}"
            print(f"  {side:5s} median {statistics.median(ts):7.2f} s  (min {min(ts):.2f}, max {max(ts):.2f}){served}")
        med = {k: statistics.median(v) for k, v in times.items()}
        for a, b in (("warm", "cold"), ("warm", "none"), ("cold", "none")):
            if a in med and b in med:
                print(f"  {a}/{b} {med[a] / med[b]:.2f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
