"""CPU-s of generate() (build and write) for demo seeds 0-4 and full seed 0, and of read_turns on the
full preset's full tier three times (issue 23 round 6, h25e). Run it on two trees, interleaved.

    PYTHONPATH=<tree> .venv/bin/python benchmarks/generate_write_cpu.py
"""

import shutil
import tempfile
import time
from pathlib import Path

from memeval.bench.io import read_turns
from memeval.bench.lifelog import generate

generate("tiny", 0, Path(tempfile.mkdtemp()) / "w")  # imports and data tables first
d = Path(tempfile.mkdtemp())
t = time.process_time()
for s in range(5):
    generate("demo", s, d / f"demo{s}")
t1 = time.process_time()
generate("full", 0, d / "full")
t2 = time.process_time()
for _ in range(3):
    read_turns(d / "full" / "turns_full.jsonl")
t3 = time.process_time()
print(f"demo0-4 {t1 - t:.3f} full0 {t2 - t1:.3f} read_turns(full)x3 {t3 - t2:.3f}")
shutil.rmtree(d)
