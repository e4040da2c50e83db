"""Runner figures for BENCHMARKS.md (issue: run any memory system).

    .venv/bin/python benchmarks/runner.py overhead --preset full --repeat 3
    .venv/bin/python benchmarks/runner.py bm25 --preset full --repeat 3
    .venv/bin/python benchmarks/runner.py http --preset demo --tier full --concurrency 1 16 --repeat 5
    .venv/bin/python benchmarks/runner.py http --preset demo --tier full --system no_memory --delay-ms 20

``overhead``: wall time per question of a ``no_memory`` run (runner + dry scoring + record write),
over every tier; ``bm25``: a whole bm25 run over the four tiers; ``http``: queries per second through
the HTTP adapter against ``memeval serve bm25`` started as its own process (so client and server do
not share an interpreter lock).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from memeval.bench import haystacks_of, load_bench, read_questions, read_turns
from memeval.bench.lifelog import GENERATOR_VERSION, generate
from memeval.run import read_records, run_system
from memeval.systems.http import HttpSystem


def bench_dir(preset: str, seed: int = 1) -> Path:
    """The generated bench, cached in the temp folder per generator version (a stale cache is rebuilt)."""
    d = Path(tempfile.gettempdir()) / f"memeval-bench-{preset}-{seed}-g{GENERATOR_VERSION}"
    if not (d / "bench.yaml").exists():
        generate(preset, seed, d)
    return d


def timed_run(bench: Path, system: str) -> tuple[float, int]:
    out = Path(tempfile.mkdtemp(prefix="memeval-run-"))
    t0 = time.perf_counter()
    run_system(bench, system, out=out / "r", progress=False)
    dt = time.perf_counter() - t0
    n = len(read_records(out / "r"))
    shutil.rmtree(out)
    return dt, n


def cmd_run(args, system: str) -> None:
    bench = bench_dir(args.preset)
    runs = [timed_run(bench, system) for _ in range(args.repeat)]
    times = [t for t, _ in runs]
    n = runs[0][1]
    med = statistics.median(times)
    print(
        f"{system} over {args.preset} (all tiers): {n} records; wall s per run {[round(t, 2) for t in times]}; "
        f"median {med:.2f} s = {1000 * med / n:.3f} ms/question"
    )


def cmd_http(args) -> None:
    bench_path = bench_dir(args.preset)
    bench = load_bench(bench_path)
    tier = bench.tier(args.tier)
    port = 18700 + (hash(time.time()) % 200)
    server = subprocess.Popen(
        [sys.executable, "-m", "memeval", "serve", args.system, "--port", str(port), "--delay-ms", str(args.delay_ms)],
        stderr=subprocess.DEVNULL,
    )
    try:
        h = HttpSystem(f"http://127.0.0.1:{port}", pool=64)
        for _ in range(100):
            try:
                h.warm(1)
                break
            except Exception:
                time.sleep(0.1)
        h.reset()
        for s in haystacks_of(read_turns(Path(bench.root) / tier.turns_file))[None]:
            h.ingest(s)
        questions = [q.text_to_ask for q in read_questions(Path(bench.root) / tier.questions_file)]
        h.warm(5)
        print(f"network floor (GET /health median): {h.network_floor_ms():.3f} ms")
        for c in args.concurrency:
            rates = []
            for _ in range(args.repeat):
                with ThreadPoolExecutor(c) as pool:
                    t0 = time.perf_counter()
                    list(pool.map(lambda q: h.query(q, None), questions))
                    rates.append(len(questions) / (time.perf_counter() - t0))
            print(
                f"concurrency {c:>2}: {len(questions)} queries/run, q/s per run {[round(r) for r in rates]}, "
                f"median {statistics.median(rates):.0f} q/s"
            )
    finally:
        server.terminate()
        server.wait()


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("what", choices=["overhead", "bm25", "http"])
    p.add_argument("--preset", default="demo")
    p.add_argument("--tier", default="full")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--concurrency", type=int, nargs="+", default=[1, 16])
    p.add_argument("--system", default="bm25", help="system the reference server wraps (http)")
    p.add_argument("--delay-ms", type=float, default=0.0, help="server-side service delay per query (http)")
    args = p.parse_args()
    if args.what == "http":
        cmd_http(args)
    else:
        cmd_run(args, "no_memory" if args.what == "overhead" else "bm25")


if __name__ == "__main__":
    main()
