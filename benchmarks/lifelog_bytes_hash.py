"""Hash every file of generated benches and the build() objects of many seeds (issue 23 round 5, h24e):
run before and after a generator change; the two outputs must be identical.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/lifelog_bytes_hash.py          # files and build()
    PYTHONPATH=$PWD .venv/bin/python benchmarks/lifelog_bytes_hash.py --wide   # files of more seeds

``--wide`` (round 6, h25e, for a change to the generator's writer): the written files of tiny 0-5, demo
2-5 and full 7, one hash each, and no build() hashes.
"""

import hashlib
import shutil
import sys
import tempfile
from pathlib import Path

from memeval.bench.lifelog import generate
from memeval.bench.lifelog.generator import build


def files_hash(preset: str, seed: int) -> str:
    d = Path(tempfile.mkdtemp()) / "b"
    generate(preset, seed, d)
    h = hashlib.sha256()
    for p in sorted(d.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(d)).encode())
            h.update(p.read_bytes())
    shutil.rmtree(d.parent)
    return h.hexdigest()


if "--wide" in sys.argv[1:]:
    for preset, seed in [("tiny", s) for s in range(6)] + [("demo", s) for s in range(2, 6)] + [("full", 7)]:
        print(preset, seed, files_hash(preset, seed), flush=True)
    sys.exit(0)
out = [
    f"{preset} {seed} files {files_hash(preset, seed)}"
    for preset, seed in [("tiny", 0), ("tiny", 1), ("demo", 1), ("demo", 0), ("full", 0)]
]
for preset, seeds in [("tiny", range(50)), ("demo", range(50)), ("full", [7, 21, 42])]:
    h = hashlib.sha256()
    for s in seeds:
        b = build(preset, s)
        h.update(repr(b.questions).encode())
        h.update(repr(b.sessions).encode())
        h.update(repr(b.photos).encode())
    out.append(f"{preset} build {h.hexdigest()}")
print("\n".join(out))
