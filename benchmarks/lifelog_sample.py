"""Write a reader's sample of the built-in bench per preset into ``docs/lifelog_samples/``: 20 random
story exchanges and 20 random questions of the core tier (``memeval.bench.lifelog.sample``).

    .venv/bin/python benchmarks/lifelog_sample.py                     # tiny, demo, full; seed 1
    .venv/bin/python benchmarks/lifelog_sample.py --presets demo --n 20 --seed 1
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memeval.bench.lifelog.generator import generate  # noqa: E402
from memeval.bench.lifelog.sample import sample_markdown  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--presets", nargs="*", default=["tiny", "demo", "full"])
    ap.add_argument("--seed", type=int, default=1, help="generator seed")
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "lifelog_samples")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for preset in a.presets:
            folder = generate(preset, a.seed, Path(tmp) / preset)
            path = a.out / f"{preset}.md"
            path.write_text(sample_markdown(folder, a.n, seed=a.seed), encoding="utf-8")
            print(path)


if __name__ == "__main__":
    main()
