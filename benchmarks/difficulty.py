"""The difficulty table of issue 13: question<->evidence content-word overlap, gold verbatim in the
evidence, and a BM25 top-10 dry probe, on the published glasshouse v0.1 core (the shared files) and on
generated lifelog presets, measured by one function (``memeval.audit.difficulty.measure``).

    .venv/bin/python benchmarks/difficulty.py --presets demo full --seeds 1 2 3

Prints one markdown row per (bench, tier). glasshouse's questions carry evidence turn ids of its
core file; its BM25 figure here is memeval's probe (bm25s, the same tokenizer), shown beside the
published 0.346 of glasshouse's own baseline scored by its own score.py.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memeval.audit.difficulty import GLASSHOUSE_CORE, measure  # noqa: E402
from memeval.bench.io import load_bench, read_questions, read_turns  # noqa: E402
from memeval.bench.lifelog.generator import generate  # noqa: E402

GH = ROOT.parent / "shared/external/glasshouse-v0.1"


def _row(label: str, m: dict) -> str:
    return (
        f"| {label} | {m['overlap']:.3f} | {m['gold_in_ev']:.0%} | {m['bm25_top10']:.3f} "
        f"| {m['n_text']} | {m['n_bm25']} |"
    )


def _measure_folder(turns, questions) -> dict:
    pos = {t.turn_id: t for t in turns}
    return measure(turns, questions, lambda q: [pos[i] for i in q.evidence_turns if i in pos] or None)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--presets", nargs="*", default=["demo", "full"])
    ap.add_argument("--seeds", nargs="*", type=int, default=[1, 2, 3])
    ap.add_argument("--tiers", nargs="*", default=["core", "full"])
    ap.add_argument("--glasshouse", type=Path, default=GH)
    a = ap.parse_args()
    print("| bench / tier | overlap | gold in evidence | BM25 top-10 dry weighted | n (text axes) | n (graded) |")
    print("|---|---|---|---|---|---|")
    if (a.glasshouse / "questions_core.jsonl").exists():
        m = _measure_folder(
            read_turns(a.glasshouse / "glasshouse_v0.1_core.jsonl"),
            read_questions(a.glasshouse / "questions_core.jsonl"),
        )
        print(_row("glasshouse v0.1 core (shared files)", m))
        print(
            f"| glasshouse v0.1 core (published) | {GLASSHOUSE_CORE['overlap']} | "
            f"{GLASSHOUSE_CORE['gold_in_ev']:.0%} | {GLASSHOUSE_CORE['bm25_top10']} | | 605 |"
        )
    with tempfile.TemporaryDirectory() as tmp:
        for preset in a.presets:
            for seed in a.seeds:
                out = generate(preset, seed, Path(tmp) / f"{preset}-{seed}")
                bench = load_bench(out)
                for tier in bench.tiers:
                    if tier.name not in a.tiers:
                        continue
                    m = _measure_folder(read_turns(out / tier.turns_file), read_questions(out / tier.questions_file))
                    print(_row(f"lifelog {preset} seed {seed} {tier.name}", m), flush=True)


if __name__ == "__main__":
    main()
