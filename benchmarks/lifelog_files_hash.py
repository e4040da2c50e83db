"""Hash every written file of more generated benches than lifelog_bytes_hash.py (issue 23 round 6, h25e):
tiny 0-5, demo 2-5, full 7. Run before and after a change to the generator's writer; the outputs must
be identical.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/lifelog_files_hash.py
"""

import hashlib
import shutil
import tempfile
from pathlib import Path

from memeval.bench.lifelog import generate

for preset, seed in [("tiny", s) for s in range(6)] + [("demo", s) for s in range(2, 6)] + [("full", 7)]:
    d = Path(tempfile.mkdtemp()) / "b"
    generate(preset, seed, d)
    h = hashlib.sha256()
    for p in sorted(d.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(d)).encode())
            h.update(p.read_bytes())
    print(preset, seed, h.hexdigest(), flush=True)
    shutil.rmtree(d.parent)
