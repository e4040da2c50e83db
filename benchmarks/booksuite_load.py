"""Load time of the book suite's 60 cases (parse + validate), and of the full conversion to a bench.

    .venv/bin/python benchmarks/booksuite_load.py [SUITE_DIR] [--runs 7]

Each figure is the median (and min/max) of --runs runs in this process, after one warm-up run
(files in the page cache); the CLI figure is the wall time of `memeval import booksuite` as a
subprocess (interpreter start and imports included).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from memeval.bench.loaders.booksuite import import_booksuite, load_booksuite

ROOT = Path(__file__).resolve().parents[1]


def timed(fn, runs: int) -> list[float]:
    fn()  # warm-up
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1000)
    return out


def show(label: str, ms: list[float]) -> None:
    print(f"{label}: median {statistics.median(ms):.0f} ms (min {min(ms):.0f}, max {max(ms):.0f}, n={len(ms)})")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("suite", nargs="?", default=str(ROOT / "tests" / "data" / "booksuite"))
    ap.add_argument("--runs", type=int, default=7)
    a = ap.parse_args()
    s = load_booksuite(a.suite)
    print(f"{len(s.cases)} cases, {sum(len(c.histories) for c in s.cases)} histories, "
          f"{sum(len(h.messages) for c in s.cases for h in c.histories)} messages; "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    show("load_booksuite (read + validate 60 YAML cases)", timed(lambda: load_booksuite(a.suite), a.runs))
    with tempfile.TemporaryDirectory() as tmp:
        show("import_booksuite (read + validate + write bench)",
             timed(lambda: import_booksuite(a.suite, Path(tmp) / "b"), a.runs))
        cmd = [sys.executable, "-m", "memeval", "import", "booksuite", a.suite, "--out", str(Path(tmp) / "c"),
               "--force"]
        show("memeval import booksuite (CLI, subprocess)",
             timed(lambda: subprocess.run(cmd, check=True, capture_output=True), a.runs))


if __name__ == "__main__":
    main()
