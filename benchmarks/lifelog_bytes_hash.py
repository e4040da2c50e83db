"""Hash every file of generated benches and the build() objects of many seeds (issue 23 round 5, h24e):
run before and after a generator change; the two outputs must be identical.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/lifelog_bytes_hash.py
"""

import hashlib, tempfile
from pathlib import Path
from memeval.bench.lifelog import generate
from memeval.bench.lifelog.generator import build

out = []
for preset, seed in [("tiny", 0), ("tiny", 1), ("demo", 1), ("demo", 0), ("full", 0)]:
    d = Path(tempfile.mkdtemp()) / "b"
    generate(preset, seed, d)
    h = hashlib.sha256()
    for p in sorted(d.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(d)).encode())
            h.update(p.read_bytes())
    out.append(f"{preset} {seed} files {h.hexdigest()}")
for preset, seeds in [("tiny", range(50)), ("demo", range(50)), ("full", [7, 21, 42])]:
    h = hashlib.sha256()
    for s in seeds:
        b = build(preset, s)
        h.update(repr(b.questions).encode())
        h.update(repr(b.sessions).encode())
        h.update(repr(b.photos).encode())
    out.append(f"{preset} build {h.hexdigest()}")
print("\n".join(out))
