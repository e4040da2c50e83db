"""Sweep vs sequence for BENCHMARKS.md (issue 16 item 4): the same runs, wall time end to end.

    .venv/bin/python benchmarks/sweep.py --preset demo --seeds 1 2 --repeat 3
    .venv/bin/python benchmarks/sweep.py --preset demo --seeds 1 2 --repeat 3 --wait-ms 5

``--wait-ms``: each system waits that long before every answer (``sweep_systems.Waiting``), a stand-in
for a system that calls a model or a service (I/O-bound, as answer-mode sweeps are).

``sequence``: one ``memeval run --bench B --system S`` per (seed, system), over all four tiers, one
after another (each its own process, as a user would type them). ``sweep``: ``memeval sweep`` of the
same systems × seeds × tiers, one shard per (seed, system, tier) on a 2-worker ``LocalCluster``
(cluster start-up included). The two alternate within each repeat; every repeat writes fresh folders
and checks that both hold the same number of records. Benches are generated once, before timing.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from memeval.bench.lifelog import GENERATOR_VERSION, generate

SYSTEMS = ["no_memory", "bm25", "oracle"]
HERE = Path(__file__).resolve().parent
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")]))}


def _memeval(*args: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "memeval", *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=ENV
    )
    if done.returncode:
        sys.exit(f"memeval {' '.join(args)}: exit {done.returncode}: {done.stderr.strip()[-2000:]}")


def _child_cpu() -> float:
    """CPU seconds (user + system) of every finished child process and its reaped descendants so far."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _count(run_dirs) -> int:
    return sum(sum(1 for line in (d / "records.jsonl").open() if line.strip()) for d in run_dirs)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--preset", default="demo")
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--systems", nargs="+", default=SYSTEMS)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--wait-ms", type=float, default=0.0, help="wait per answer (an I/O-bound system)")
    args = ap.parse_args()
    if args.wait_ms:
        args.systems = [f"python:sweep_systems:Waiting:inner={s},wait_ms={args.wait_ms:g}" for s in args.systems]
    data = Path(tempfile.gettempdir()) / f"memeval-sweep-benches-g{GENERATOR_VERSION}"
    for s in args.seeds:
        d = data / f"lifelog-{args.preset}-s{s}"
        if not (d / "bench.yaml").is_file():
            generate(args.preset, s, d)
    work = Path(tempfile.mkdtemp(prefix="memeval-sweep-bench-"))
    spec = work / "SWEEP.yaml"
    spec.write_text(
        yaml.safe_dump(
            {
                "name": "bench",
                "systems": args.systems,
                "presets": [args.preset],
                "seeds": args.seeds,
                "data_root": str(data),
            }
        )
    )
    print(f"cpus {os.cpu_count()}; load before: {os.getloadavg()[0]:.2f} (1 min)")
    seq_t, sweep_t, cpu = [], [], {"seq": [], "sweep": []}
    try:
        for i in range(args.repeat):
            order = ("seq", "sweep") if i % 2 == 0 else ("sweep", "seq")
            for what in order:
                out = work / f"{what}{i}"
                t0, c0 = time.perf_counter(), _child_cpu()
                if what == "seq":
                    dirs = []
                    for s in args.seeds:
                        for system in args.systems:
                            d = out / f"{s}-{args.systems.index(system)}"
                            _memeval(
                                "run",
                                "--bench",
                                str(data / f"lifelog-{args.preset}-s{s}"),
                                "--system",
                                system,
                                "--out",
                                str(d),
                                "--no-progress",
                            )
                            dirs.append(d)
                    seq_t.append(time.perf_counter() - t0)
                    n_seq = _count(dirs)
                else:
                    _memeval(
                        "sweep",
                        str(spec),
                        "--out",
                        str(out),
                        "--workers",
                        str(args.workers),
                        "--dashboard-address",
                        "none",
                        "--no-progress",
                    )
                    sweep_t.append(time.perf_counter() - t0)
                    man = json.loads((out / "sweep.json").read_text())
                    assert {r["status"] for r in man["shards"]} == {"complete"}
                    n_sweep = _count(out / r["run_dir"] for r in man["shards"])
                cpu[what].append(_child_cpu() - c0)
            assert n_seq == n_sweep, (n_seq, n_sweep)
            shutil.rmtree(work / f"seq{i}")
            shutil.rmtree(work / f"sweep{i}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    n_shards = len(args.seeds) * len(args.systems) * 4
    ms, mq = statistics.median(seq_t), statistics.median(sweep_t)
    print(f"{len(args.systems)} systems x {len(args.seeds)} seeds x 4 tiers of {args.preset}: {n_seq} records each way")
    print(
        f"sequence ({len(args.seeds) * len(args.systems)} x memeval run): s per repeat {[round(t, 1) for t in seq_t]}; median {ms:.1f} s"
    )
    print(
        f"sweep ({n_shards} shards, {args.workers}-worker LocalCluster): s per repeat {[round(t, 1) for t in sweep_t]}; median {mq:.1f} s"
    )
    print(
        f"speed-up (median sequence / median sweep): {ms / mq:.2f}x; per repeat {[round(a / b, 2) for a, b in zip(seq_t, sweep_t)]}"
    )
    print(
        f"CPU s (children, user+sys) median: sequence {statistics.median(cpu['seq']):.1f}, "
        f"sweep {statistics.median(cpu['sweep']):.1f}; load after: {os.getloadavg()[0]:.2f} (1 min)"
    )


if __name__ == "__main__":
    main()
