"""Load time and peak memory of the LoCoMo and glasshouse loaders on the largest files made here in
their real shapes (each import in a fresh process; wall time, peak RSS from ru_maxrss).

    .venv/bin/python benchmarks/loaders_other.py --runs 3

LoCoMo: 10 conversations (like the real file) but ``--sessions`` × ``--turns`` each (the real one has
~19-32 sessions of ~20 turns); ~200 questions per conversation in all five categories.
glasshouse: the lifelog ``full`` preset written under glasshouse's file names
(``glasshouse_v0.1_{tier}.jsonl``, ``questions_{tier}.jsonl``, ``glasshouse_v0.1_probes.jsonl``):
glasshouse scale, 103,572 turns in the top tier.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from memeval.bench import load_bench
from memeval.bench.lifelog import generate

CHILD = """
import resource, sys, time
from pathlib import Path
t0 = time.perf_counter()
kind, src, out = sys.argv[1:4]
if kind == "locomo":
    from memeval.bench.loaders.locomo import import_locomo
    import_locomo([src], out)
else:
    from memeval.bench.loaders.glasshouse import import_glasshouse
    import_glasshouse(src, out)
print(time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def make_locomo(path: Path, sessions: int, turns: int) -> int:
    convs = []
    for c in range(10):
        a, b = f"Alex{c}", f"Sam{c}"
        conv = {"speaker_a": a, "speaker_b": b}
        for s in range(1, sessions + 1):
            conv[f"session_{s}_date_time"] = f"1:{s % 60:02d} pm on {1 + s % 28} May, 2023"
            conv[f"session_{s}"] = [
                {
                    "speaker": a if t % 2 == 0 else b,
                    "dia_id": f"D{s}:{t + 1}",
                    "text": f"In session {s} I told you about hobby number {t} and the trip to town {s * t % 97}.",
                }
                for t in range(turns)
            ]
        qa = [
            {
                "question": f"What hobby came up in session {s}?",
                "answer": f"hobby number {s % turns}",
                "evidence": [f"D{s}:{s % turns + 1}"],
                "category": 1 + s % 4,
            }
            for s in range(1, sessions + 1)
        ]
        qa += [
            {
                "question": f"Which town did {b} move to?",
                "adversarial_answer": "town 5",
                "evidence": ["D1:1"],
                "category": 5,
            }
        ] * 40
        convs.append({"sample_id": f"conv-{c}", "conversation": conv, "qa": qa})
    path.write_text(json.dumps(convs), encoding="utf-8")
    return sum(len(x["qa"]) for x in convs)


def make_glasshouse(folder: Path) -> None:
    bench_dir = folder.parent / "lifelog-full"
    generate("full", 1, bench_dir)
    bench = load_bench(bench_dir)
    folder.mkdir()
    for t in bench.tiers:
        shutil.copy(bench_dir / t.turns_file, folder / f"glasshouse_v0.1_{t.name}.jsonl")
        shutil.copy(bench_dir / t.questions_file, folder / f"questions_{t.name}.jsonl")
    probes = bench.tiers[-1].question_sets["probes"]
    shutil.copy(bench_dir / probes, folder / "glasshouse_v0.1_probes.jsonl")
    shutil.copytree(bench_dir / "img", folder / "img")


def measure(kind: str, src: Path, work: Path, runs: int) -> None:
    rows = []
    for i in range(runs):
        out = work / f"out-{kind}-{i}"
        p = subprocess.run([sys.executable, "-c", CHILD, kind, str(src), str(out)], capture_output=True, text=True)
        if p.returncode:
            raise SystemExit(p.stderr)
        rows.append(tuple(map(float, p.stdout.split())))
        shutil.rmtree(out)
    secs = [r[0] for r in rows]
    print(
        f"{kind}: runs {[round(s, 2) for s in secs]} s; median {statistics.median(secs):.2f} s; "
        f"peak RSS median {statistics.median(r[1] for r in rows):.0f} MiB"
    )


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--sessions", type=int, default=60)
    p.add_argument("--turns", type=int, default=100)
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        n_q = make_locomo(work / "locomo10.json", a.sessions, a.turns)
        size = (work / "locomo10.json").stat().st_size / 2**20
        print(
            f"LoCoMo-shaped file: 10 conversations x {a.sessions} sessions x {a.turns} turns "
            f"({10 * a.sessions * a.turns} turns, {n_q} questions), {size:.1f} MiB"
        )
        measure("locomo", work / "locomo10.json", work, a.runs)
        make_glasshouse(work / "glasshouse")
        size = sum(f.stat().st_size for f in (work / "glasshouse").rglob("*") if f.is_file()) / 2**20
        print(f"glasshouse-shaped folder (lifelog full preset under glasshouse names): {size:.1f} MiB")
        measure("glasshouse", work / "glasshouse", work, a.runs)


if __name__ == "__main__":
    main()
