"""Reading-budget figures for BENCHMARKS.md (issue 17): what ``context:tokens=N`` costs per query, and
what cutting memories to ``--context-max-tokens`` adds per question.

    .venv/bin/python benchmarks/reading.py --preset demo --repeat 5

For each tier of the generated bench: ingest once into ``context:tokens=N`` and time ``query`` over
every question (median ms per query over the repeats); then cut each question's ``bm25:k=20``
memories to N tokens with ``fit_memories`` (median ms per question).
"""

from __future__ import annotations

import argparse
import statistics
import time

from memeval.bench import haystacks_of, load_bench, read_questions, read_turns
from memeval.systems.baselines import BM25
from memeval.systems.context import LongContext, fit_memories

from runner import bench_dir  # noqa: E402  (the cached generated bench)


def _per_call_ms(fn, items, repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for x in items:
            fn(x)
        runs.append((time.perf_counter() - t0) * 1000 / max(1, len(items)))
    return statistics.median(runs)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--preset", default="demo")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--tokens", type=int, nargs="+", default=[2000, 8000, 32000])
    args = ap.parse_args()
    bench = load_bench(bench_dir(args.preset))
    print("| tier | turns | N | context:tokens=N query (ms) | cut bm25:k=20 to N (ms/question) |")
    print("|---|---|---|---|---|")
    for tier in bench.tiers:
        sessions = [s for ss in haystacks_of(read_turns(f"{bench.root}/{tier.turns_file}")).values() for s in ss]
        questions = [q.text_to_ask for q in read_questions(f"{bench.root}/{tier.questions_file}")]
        bm25 = BM25(k=20)
        for s in sessions:
            bm25.ingest(s)
        memories = [bm25.query(q, None).memories for q in questions]
        for n in args.tokens:
            ctx = LongContext(tokens=n)
            for s in sessions:
                ctx.ingest(s)
            q_ms = _per_call_ms(lambda q: ctx.query(q, None), questions, args.repeat)
            cut_ms = _per_call_ms(lambda m: fit_memories(m, n), memories, args.repeat)
            print(f"| {tier.name} | {tier.n_turns} | {n} | {q_ms:.3f} | {cut_ms:.4f} |")


if __name__ == "__main__":
    main()
