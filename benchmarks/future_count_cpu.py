"""CPU-s of a dry bm25 run of demo seed 1 and of its causal guard (``writepath.future_count``, timed
in place; issue 23 round 6, h25e). Run it on two trees, interleaved.

    PYTHONPATH=<tree> .venv/bin/python benchmarks/future_count_cpu.py
"""

import tempfile
import time
from pathlib import Path

import memeval.run.writepath as writepath
from memeval.bench.lifelog import generate
from memeval.run import run_system

spent = [0.0]
real = writepath.future_count


def timed(*a):
    t = time.process_time()
    try:
        return real(*a)
    finally:
        spent[0] += time.process_time() - t


writepath.future_count = timed
d = Path(tempfile.mkdtemp())
bench = generate("demo", 1, d / "demo")
run_system(bench, "bm25", out=d / "warm", progress=False)
spent[0] = 0.0
t = time.process_time()
run_system(bench, "bm25", out=d / "run", progress=False)
print(f"run {time.process_time() - t:.3f} CPU-s, future_count {spent[0]:.3f}")
