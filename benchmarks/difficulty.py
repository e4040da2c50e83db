"""The difficulty table of issue 13: question<->evidence content-word overlap, gold verbatim in the
evidence, and a BM25 top-10 dry probe, on the published glasshouse v0.1 core (the shared files) and on
generated lifelog presets, measured by one function (``memeval.audit.difficulty.measure``).

    .venv/bin/python benchmarks/difficulty.py --presets demo full --seeds 1 2 3

Prints one markdown row per (bench, tier). glasshouse's questions carry evidence turn ids of its
core file; every figure on its row is measured here by memeval's code (the probe is memeval's
``bm25`` system under memeval's dry rules). glasshouse publishes only its own BM25 baseline's score
under its own score.py (34.6 weighted): another retriever and other rules, set beside memeval's in
``benchmarks/glasshouse_parity.py``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memeval.audit.difficulty import glasshouse_core, glasshouse_folder, measure  # noqa: E402
from memeval.bench.io import load_bench, read_questions, read_turns  # noqa: E402
from memeval.bench.lifelog.generator import generate  # noqa: E402

GH = glasshouse_folder()  # $MEMEVAL_GLASSHOUSE, else ../shared/external/glasshouse-v0.1


def _row(label: str, m: dict) -> str:
    return (
        f"| {label} | {m['overlap']:.3f} | {m['gold_in_ev']:.0%} | {m['bm25_top10']:.3f} "
        f"| {m['bm25_ev_top10']:.1%} | {m['n_text']} | {m['n_bm25']} |"
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
    print(
        "| bench / tier | overlap | gold in evidence | BM25 top-10 dry weighted | evidence in BM25 top 10 "
        "| n (text axes) | n (graded) |"
    )
    print("|---|---|---|---|---|---|---|")
    gh = glasshouse_core(a.glasshouse)
    print(_row("glasshouse v0.1 core (shared files)", gh) if isinstance(gh, dict) else f"glasshouse v0.1 core: {gh}")
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
