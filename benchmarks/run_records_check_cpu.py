"""check_record's CPU a record and read_records' CPU on a dry bm25 run of demo seed 1 (2,626 records;
issue 23 round 6, h25e). Run it on two trees, interleaved.

    PYTHONPATH=<tree> .venv/bin/python benchmarks/run_records_check_cpu.py
"""

import tempfile
import time
from pathlib import Path

from memeval.bench.files import loads_json
from memeval.bench.lifelog import generate
from memeval.run import run_system
from memeval.run.records import check_record, read_records

d = Path(tempfile.mkdtemp())
rd = Path(run_system(generate("demo", 1, d / "demo"), "bm25", out=d / "run", progress=False))
lines = (rd / "records.jsonl").read_text(encoding="utf-8").splitlines(True)
objs = [loads_json(line, "p", 1) for line in lines]
read_records(rd)
t = time.process_time()
for _ in range(10):
    [check_record(o, "p", 1) for o in objs]
t1 = time.process_time()
for _ in range(5):
    read_records(rd)
t2 = time.process_time()
print(
    f"check_record {1e6 * (t1 - t) / 10 / len(objs):.1f} us/record; read_records ({len(objs)} records) {(t2 - t1) / 5:.3f} s"
)
