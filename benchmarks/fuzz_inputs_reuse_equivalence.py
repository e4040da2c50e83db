"""Old (a fresh copy per example) vs new (tests/test_fuzz_inputs.py Inputs, reused) check_one: the same
mutated bytes and the same outcome (read, or the same refusal) for 480 seeded mutations (issue 23 round 5, h24e).

    PYTHONPATH=$PWD .venv/bin/python benchmarks/fuzz_inputs_reuse_equivalence.py
"""

import os, random, re, shutil, sys, tempfile
from pathlib import Path

sys.path.insert(0, "tests")
import test_fuzz_inputs as f
from memeval.errors import MemevalError


def outcome(reader, d, out, tmp):
    try:
        reader(d, out)
        return "ok"
    except MemevalError as e:
        return "refused: " + re.sub(r"/tmp/\S+?/(in|in-\d+)/", "IN/", str(e))


root = Path(tempfile.mkdtemp())
rng = random.Random(5)
total = diff = 0
for name, (build, reader, files, _) in f.FORMATS.items():
    base = root / name
    build(base)
    names = sorted(files)
    ws = Path(tempfile.mkdtemp())
    inputs = f.Inputs(base, ws)
    for i in range(60):
        rel = rng.choice(names)
        m = rng.choice(
            [
                ("flip", rng.randrange(10**6), rng.randrange(1, 256)),
                ("truncate", rng.randrange(10**6)),
                ("value", rng.randrange(10**6), rng.randrange(10**6), rng.randrange(len(f.VALUES))),
                ("delete", rng.randrange(10**6), rng.randrange(10**6)),
                ("splice", rng.randrange(10**6), rng.randrange(len(f.SPLICES))),
            ]
        )
        # old
        with tempfile.TemporaryDirectory() as tmp:
            d = Path(tmp) / "in"
            shutil.copytree(base, d, copy_function=os.link)
            t = d / rel
            data = f.mutate(t.read_bytes(), files[rel], m)
            t.unlink()
            t.write_bytes(data)
            a = outcome(reader, d, Path(tmp) / "out", tmp)
        # new
        d = inputs.next()
        t = d / rel
        data2 = f.mutate(t.read_bytes(), files[rel], m)
        t.unlink()
        t.write_bytes(data2)
        b = outcome(reader, d, ws / "out", ws)
        for p in ws.iterdir():
            if p.name != d.name:
                shutil.rmtree(p) if p.is_dir() else p.unlink()
        inputs.restore(rel)
        total += 1
        if a != b or data != data2:
            diff += 1
            print("DIFF", name, rel, m, a[:200], "|", b[:200])
    print(name, "checked; rebuilds:", "n/a")
print("total", total, "differ", diff)
