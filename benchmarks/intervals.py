"""The time 95% bootstrap intervals add to `make report` (warm: bench and runs already there).

    .venv/bin/python benchmarks/intervals.py [--runs 5]

One working folder is prepared with one cold `memeval report` of the degradation notebook; then warm
renders alternate between the default (`resamples` 1000) and a single resample (`-p resamples 1`, the
same report with intervals that cost next to nothing), so both see the same machine load. Medians.
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

ROOT = Path(__file__).resolve().parent.parent
MEMEVAL = Path(sys.executable).parent / "memeval"
NOTEBOOK = ROOT / "notebooks" / "degradation.ipynb"


def _render(cwd: Path, resamples: int | None) -> float:
    extra = [] if resamples is None else ["-p", "resamples", str(resamples)]
    t0 = time.perf_counter()
    subprocess.run(
        [str(MEMEVAL), "report", str(NOTEBOOK), "-o", "reports/degradation.html", "--no-progress", *extra],
        cwd=cwd,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="memeval-bench-intervals-"))
    cold = _render(work, None)
    with_ci, without = [], []
    for _ in range(args.runs):
        with_ci.append(_render(work, None))
        without.append(_render(work, 1))
    a, b = statistics.median(with_ci), statistics.median(without)
    print(f"cold render (generate demo, run 3 systems, render): {cold:.1f} s")
    print(f"warm, resamples 1000 (default): {[round(x, 1) for x in with_ci]} median {a:.1f} s")
    print(f"warm, resamples 1:              {[round(x, 1) for x in without]} median {b:.1f} s")
    print(f"intervals add {a - b:.1f} s ({a / b:.2f}x) to a warm `make report`; load average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
