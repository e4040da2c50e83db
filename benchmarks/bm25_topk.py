"""BM25 top-k selection: ``bm25s.retrieve`` (numpy argpartition over every score) against memeval's
``top_k_positive`` (only positive scores ranked), side by side on the same index and questions.

    .venv/bin/python benchmarks/bm25_topk.py --preset full --repeat 3

Per tier: the median over repeats of the summed query time (scoring + selection) of each method, their
ratio, and how many questions got the same ranked turns (identical), the same turns in another order
(tie order only: bm25s leaves ties in arbitrary order) or different turns (none expected).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import bm25s
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from runner import bench_dir  # noqa: E402  (the cached generated bench)

from memeval.bench import load_bench, read_questions, read_turns  # noqa: E402
from memeval.systems.baselines import bm25_tokens, top_k_positive  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--preset", default="full")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    folder = bench_dir(args.preset)
    bench = load_bench(folder)
    for tier in bench.tiers:
        turns = read_turns(folder / tier.turns_file)
        index = bm25s.BM25()
        index.index([bm25_tokens(t.text) or ["\u2205"] for t in turns], show_progress=False)
        queries = [q for q in (bm25_tokens(x.question_en) for x in read_questions(folder / tier.questions_file)) if q]
        k = min(args.k, len(turns))

        def old(q):
            docs, scores = index.retrieve([q], k=k, show_progress=False, n_threads=0)
            return [int(d) for d, s in zip(docs[0], scores[0]) if s > 0]

        def new(q):
            return top_k_positive(index.get_scores(q), k).tolist()

        times = {"bm25s.retrieve": [], "top_k_positive": []}
        for _ in range(args.repeat):
            for name, fn in (("bm25s.retrieve", old), ("top_k_positive", new)):
                t0 = time.perf_counter()
                for q in queries:
                    fn(q)
                times[name].append(time.perf_counter() - t0)
        same = reordered = different = 0
        for q in queries:
            a, b = old(q), new(q)
            if a == b:
                same += 1
            elif sorted(a) == sorted(b):
                reordered += 1
            else:
                scores = index.get_scores(q)  # different turns: only acceptable as a tie at the cut
                tie_only = np.allclose(sorted(scores[a]), sorted(scores[b]))
                different += 0 if tie_only else 1
                reordered += 1 if tie_only else 0
        t_old, t_new = (statistics.median(v) for v in times.values())
        print(
            f"{tier.name:>6}: {len(turns):>7} turns, {len(queries)} queries; "
            f"bm25s.retrieve {t_old:.2f} s, top_k_positive {t_new:.2f} s ({t_old / t_new:.1f}x); "
            f"identical {same}, tie order/cut only {reordered}, different {different}"
        )


if __name__ == "__main__":
    main()
