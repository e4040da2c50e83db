"""A whole `memeval run --system bm25` over a generated preset, this checkout against an older one,
alternating run by run in fresh processes (wall and CPU time), and whether their records agree.

    .venv/bin/python benchmarks/bm25_run.py --preset full --repeat 3 --old-tree /tmp/memeval-old

``--old-tree``: a folder holding an older ``memeval`` package (e.g. ``git archive COMMIT memeval |
tar -x -C DIR``); without it only this checkout is timed. Records are compared on the fields a
run's scores come from: returned turns, score and verdict (timings and dates aside).
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from runner import bench_dir  # noqa: E402  (the generated bench, cached per generator version)

from memeval.run import read_records  # noqa: E402

HERE = str(Path(__file__).resolve().parents[1])


def one_run(bench: Path, tree: str, out: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of `python -m memeval run` on the memeval in ``tree``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "memeval", "run", "--bench", str(bench), "--system", "bm25"]
        + ["--out", str(out), "--no-progress"],
        env=dict(os.environ, PYTHONPATH=tree),
        cwd=tempfile.gettempdir(),  # not the checkout: the working folder comes first on sys.path
        check=True,
        capture_output=True,
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def key_fields(run: Path) -> dict:
    return {
        (r["tier"], r["qid"]): (r.get("retrieved_turns"), r.get("score"), r.get("verdict")) for r in read_records(run)
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="full")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--old-tree", help="folder with an older memeval package to time beside this one")
    args = ap.parse_args()
    bench = bench_dir(args.preset)
    trees = {"current": HERE} | ({"old": args.old_tree} if args.old_tree else {})
    work = Path(tempfile.mkdtemp(prefix="memeval-bm25-run-"))
    times: dict[str, list[tuple[float, float]]] = {k: [] for k in trees}
    print(f"load average before: {os.getloadavg()[0]:.1f}", flush=True)
    try:
        for r in range(args.repeat):
            for label, tree in trees.items():
                out = work / f"{label}{r}"
                times[label].append(one_run(bench, tree, out))
                print(f"  run {r + 1} {label}: wall {times[label][-1][0]:.2f} s, CPU {times[label][-1][1]:.2f} s")
                if r:
                    shutil.rmtree(out)
        for label, ts in times.items():
            wall = statistics.median(t for t, _ in ts)
            cpu = statistics.median(c for _, c in ts)
            print(
                f"bm25 over {args.preset} (all tiers), {label}: wall s {[round(t, 2) for t, _ in ts]} median {wall:.2f} s; "
                f"CPU s {[round(c, 2) for _, c in ts]} median {cpu:.2f} s"
            )
        if args.old_tree:
            new, old = key_fields(work / "current0"), key_fields(work / "old0")
            same = sum(new[k] == old.get(k) for k in new)
            w = statistics.median(t for t, _ in times["old"]) / statistics.median(t for t, _ in times["current"])
            c = statistics.median(c for _, c in times["old"]) / statistics.median(c for _, c in times["current"])
            print(
                f"speed-up {w:.2f}x wall, {c:.2f}x CPU; records with the same turns, score and verdict: {same} of {len(new)}"
            )
        print(f"load average after: {os.getloadavg()[0]:.1f}")
        print(f"machine: {platform.platform()}, {os.cpu_count()} cores, python {platform.python_version()}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
