"""Regrade wall time with the model-call cache: cold (empty cache), warm (the same regrade again) and
without a cache, against the scripted loopback reader and judge (``memeval.testing``).

    .venv/bin/python benchmarks/model_cache.py [--bench data/lifelog-demo-s1] [--tier core] [--repeats 5]

Makes a dry ``bm25:k=10`` run of the tier once, then, ``--repeats`` times in turn: ``memeval regrade
--mode answer`` with a new cache folder (cold: every reader and judge call asked and stored), the same
regrade again into that folder (warm), and with ``--no-cache``. Prints the median and range of each, the
calls the stubs served and the warm/cold and warm/none ratios. The stubs answer in about a millisecond:
a real endpoint's seconds per call make the cold and uncached sides far slower, the warm side not.
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

from memeval.cli import main as cli
from memeval.run import run_system
from memeval.testing.chat_stub import ScriptedChatServer
from memeval.testing.judge_stubs import judge_responder, reader_responder


def _regrade(src: Path, out: Path, judge: str, reader: str, cache: list[str]) -> float:
    args = ["regrade", str(src), "--mode", "answer", "--out", str(out), *cache]
    args += [
        "--judge-url",
        judge,
        "--judge-model",
        "strict-stub",
        "--reader-url",
        reader,
        "--reader-model",
        "reader-stub",
    ]
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        assert cli(args) == 0
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", default="data/lifelog-demo-s1")
    ap.add_argument("--tier", default="core")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="memeval-cache-bench-"))
    try:
        src = run_system(args.bench, "bm25:k=10", tiers=[args.tier], mode="dry", out=work / "src", progress=False)
        times: dict[str, list[float]] = {"cold": [], "warm": [], "none": []}
        calls: dict[str, list[int]] = {k: [] for k in times}
        with ScriptedChatServer(judge_responder("strict")) as j, ScriptedChatServer(reader_responder) as r:
            for i in range(args.repeats):
                cache = ["--cache", str(work / f"cache{i}")]
                for side, opts in (("cold", cache), ("warm", cache), ("none", ["--no-cache"])):
                    before = len(j.requests) + len(r.requests)
                    times[side].append(_regrade(src, work / f"{side}{i}", j.base_url, r.base_url, opts))
                    calls[side].append(len(j.requests) + len(r.requests) - before)
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
        print(f"bench {args.bench} tier {args.tier}; commit {commit}; {platform.platform()}; {args.repeats} repeats")
        for side, ts in times.items():
            print(
                f"  {side:5s} median {statistics.median(ts):7.2f} s  (min {min(ts):.2f}, max {max(ts):.2f})  "
                f"model calls per regrade {sorted(set(calls[side]))}"
            )
        med = {k: statistics.median(v) for k, v in times.items()}
        print(f"  warm/cold {med['warm'] / med['cold']:.2f}  warm/none {med['warm'] / med['none']:.2f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
