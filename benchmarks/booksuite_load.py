"""Load time of the book suite's 60 cases (parse + validate), and of the full conversion to a bench.

    .venv/bin/python benchmarks/booksuite_load.py [SUITE_DIR] [--runs 7]

Each figure is the median (and min/max) of --runs runs in this process, after one warm-up run
(files in the page cache), as wall time and as CPU time (user + system, children included: less
sensitive to other work on a shared machine); the CLI figure runs `memeval import booksuite` as a
subprocess (interpreter start and imports included).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from memeval.bench.loaders.booksuite import import_booksuite, load_booksuite

ROOT = Path(__file__).resolve().parents[1]


def _cpu() -> float:
    """CPU seconds of this process and its finished children (less sensitive to a busy machine)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def timed(fn, runs: int) -> tuple[list[float], list[float]]:
    fn()  # warm-up
    wall, cpu = [], []
    for _ in range(runs):
        t0, c0 = time.perf_counter(), _cpu()
        fn()
        wall.append((time.perf_counter() - t0) * 1000)
        cpu.append((_cpu() - c0) * 1000)
    return wall, cpu


def show(label: str, times: tuple[list[float], list[float]]) -> None:
    wall, cpu = times
    print(
        f"{label}: wall median {statistics.median(wall):.0f} ms (min {min(wall):.0f}, max {max(wall):.0f}); "
        f"CPU median {statistics.median(cpu):.0f} ms; n={len(wall)}"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("suite", nargs="?", default=str(ROOT / "tests" / "data" / "booksuite"))
    ap.add_argument("--runs", type=int, default=7)
    a = ap.parse_args()
    s = load_booksuite(a.suite)
    print(
        f"{len(s.cases)} cases, {sum(len(c.histories) for c in s.cases)} histories, "
        f"{sum(len(h.messages) for c in s.cases for h in c.histories)} messages; "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}"
    )
    files = sorted(Path(a.suite).glob("test_cases/*/*.yaml"))
    show(
        "yaml.load only (CSafeLoader, the 60 files)",
        timed(lambda: [yaml.load(f.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader) for f in files], a.runs),
    )
    show("load_booksuite (read + validate 60 YAML cases)", timed(lambda: load_booksuite(a.suite), a.runs))
    with tempfile.TemporaryDirectory() as tmp:
        show(
            "import_booksuite (read + validate + write bench)",
            timed(lambda: import_booksuite(a.suite, Path(tmp) / "b", force=True), a.runs),
        )
        cmd = [
            sys.executable,
            "-m",
            "memeval",
            "import",
            "booksuite",
            a.suite,
            "--out",
            str(Path(tmp) / "c"),
            "--force",
        ]
        show(
            "memeval import booksuite (CLI, subprocess)",
            timed(lambda: subprocess.run(cmd, check=True, capture_output=True), a.runs),
        )


if __name__ == "__main__":
    main()
