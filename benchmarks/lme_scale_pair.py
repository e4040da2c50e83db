"""CPU time per question of one in-process run on a generated LongMemEval-format bench (issue 31).

    PYTHONPATH=TREE .venv/bin/python benchmarks/lme_scale_pair.py SYSTEM HAYSTACKS SESSIONS TURNS

Writes ``benchmarks/lme_scale.py``'s file (HAYSTACKS instances of SESSIONS sessions of TURNS turns),
imports it, runs SYSTEM once to warm up (and, where the tree caches it, to grade the validity gate),
then prints the CPU microseconds per question of a second run. Run it alternately against two trees
(``PYTHONPATH=/path/to/main`` and this branch) for interleaved pairs.
"""

import importlib.util
import pathlib
import shutil
import sys
import tempfile
import time

from memeval.bench.loaders.longmemeval import import_longmemeval
from memeval.run.runner import run_system

_spec = importlib.util.spec_from_file_location("lme_scale", pathlib.Path(__file__).with_name("lme_scale.py"))
assert _spec is not None and _spec.loader is not None
lme_scale = importlib.util.module_from_spec(_spec)
sys.modules["lme_scale"] = lme_scale  # its dataclasses look their module up there
_spec.loader.exec_module(lme_scale)


def main() -> None:
    system, hays, sessions, turns = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    tmp = pathlib.Path(tempfile.mkdtemp())
    try:
        lme_scale.write_lme(tmp / "x_m.json", hays, sessions, turns)
        import_longmemeval([tmp / "x_m.json"], tmp / "b")
        run_system(tmp / "b", system, out=tmp / "warm", progress=False)
        t = time.process_time()
        run_system(tmp / "b", system, out=tmp / "r0", progress=False)
        print(f"{(time.process_time() - t) / hays * 1e6:.0f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
