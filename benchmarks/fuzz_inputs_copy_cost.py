"""CPU per fuzz example spent copying the input folder: a fresh hard-linked temporary copy (before) vs
tests/test_fuzz_inputs.py Inputs (one copy, renamed per example, the mutated file linked back), with a
reader that does nothing (issue 23 round 5, h24e).

    PYTHONPATH=$PWD .venv/bin/python benchmarks/fuzz_inputs_copy_cost.py
"""

import sys, time, tempfile, shutil, os
from pathlib import Path

sys.path.insert(0, "tests")
import test_fuzz_inputs as f

root = Path(tempfile.mkdtemp())


def null(d, out):
    pass


for name in ("multiturn", "booksuite"):
    build, reader, files, _ = f.FORMATS[name]
    base = root / name
    build(base)
    rel = sorted(files)[0]
    kind = files[rel]
    N = 300
    for rep in range(2):
        t = time.process_time()
        for i in range(N):
            with tempfile.TemporaryDirectory(prefix="memeval-fuzz-") as tmp:
                d = Path(tmp) / "in"
                shutil.copytree(base, d, copy_function=os.link)
                target = d / rel
                data = f.mutate(target.read_bytes(), kind, ("flip", i, 3))
                target.unlink()
                target.write_bytes(data)
                null(d, Path(tmp) / "out")
        old = (time.process_time() - t) / N * 1000
        ws = Path(tempfile.mkdtemp())
        inputs = f.Inputs(base, ws)
        t = time.process_time()
        for i in range(N):
            f.check_one(inputs, null, rel, kind, ("flip", i, 3))
        new = (time.process_time() - t) / N * 1000
        print(f"{name}: per example, fresh copy {old:.2f} ms CPU, reused {new:.2f} ms CPU")
