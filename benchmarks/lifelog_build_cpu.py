"""CPU seconds of the lifelog generator's build (demo seeds 0-9, full seed 0), for before/after comparisons
(issue 23 round 5, h24e): PYTHONPATH=<tree> .venv/bin/python benchmarks/lifelog_build_cpu.py
"""

import time
from memeval.bench.lifelog.generator import build

build("tiny", 0)
t = time.process_time()
for s in range(10):
    build("demo", s)
t1 = time.process_time()
build("full", 0)
t2 = time.process_time()
print(f"demo x10 {t1 - t:.2f} full {t2 - t1:.2f}")
