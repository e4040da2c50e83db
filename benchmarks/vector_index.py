"""Vector index build and query time per tier size, the embedding endpoint's time excluded.

    .venv/bin/python benchmarks/vector_index.py --preset full --repeat 3

Each tier's turns and questions are embedded in-process with the loopback stub's vectors
(``memeval.testing.chat_stub.hashed_embedding``, ``--dim`` dimensions; not timed), then, per index
(``exact``: numpy, the default; ``usearch``: HNSW, the ann extra), the median over repeats of: the
build (every turn added session by session, as ``vector`` ingests, then the first search's join),
and the query time per question (top ``--k``). ``cache read`` is the time to fetch the whole tier's
vectors back from the on-disk cache (what a second run pays instead of the endpoint); ``usearch
recall`` is the share of usearch's top-k that scores at least the exact k-th score (hashed
bag-of-words vectors tie often, so another turn of the same score counts as found).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from runner import bench_dir  # noqa: E402  (the cached generated bench)

from memeval.bench import load_bench, read_questions, read_turns  # noqa: E402
from memeval.bench.model import sessions_of  # noqa: E402
from memeval.systems.embeddings import EmbeddingCache, text_key  # noqa: E402
from memeval.systems.vector_index import make_index  # noqa: E402
from memeval.testing.chat_stub import hashed_embedding  # noqa: E402


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--preset", default="demo")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--index", nargs="+", default=["exact", "usearch"], choices=["exact", "usearch"])
    ap.add_argument("--queries", type=int, default=500, help="questions timed per tier (the first N)")
    args = ap.parse_args()
    folder = bench_dir(args.preset)
    bench = load_bench(folder)
    print(f"preset {args.preset}, dim {args.dim}, k {args.k}, median of {args.repeat}")
    for tier in bench.tiers:
        turns = read_turns(folder / tier.turns_file)
        sizes = [len(s.turns) for s in sessions_of(turns)]
        vecs = np.array([hashed_embedding(t.text, args.dim) for t in turns], np.float32)
        questions = read_questions(folder / tier.questions_file)[: args.queries]
        qvecs = [np.array(hashed_embedding(q.text_to_ask, args.dim), np.float32) for q in questions]
        bounds = np.cumsum([0, *sizes])
        line = f"{tier.name:>6}: {len(turns):>7} turns, {len(qvecs)} queries;"
        tops = {}
        for kind in args.index:
            builds, queries = [], []
            for _ in range(args.repeat):
                index = make_index(kind)

                def build():
                    for a, b in zip(bounds[:-1], bounds[1:]):
                        index.add(vecs[a:b])
                    index.search(qvecs[0], args.k)  # the exact index joins its parts on the first search

                builds.append(timed(build))
                queries.append(timed(lambda: [index.search(q, args.k) for q in qvecs]) / len(qvecs))
            tops[kind] = [index.search(q, args.k).tolist() for q in qvecs]
            line += f" {kind} build {statistics.median(builds) * 1e3:.1f} ms, query {statistics.median(queries) * 1e6:.0f} us;"
        if set(args.index) != {"exact", "usearch"}:
            print(line)
            continue
        unit = vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
        recall = statistics.mean(  # a usearch hit counts when it scores at least the exact k-th (ties)
            sum(s >= (unit[e] @ q).min() - 1e-6 for s in unit[u] @ q) / max(1, len(e))
            for q, e, u in zip(qvecs, tops["exact"], tops["usearch"])
        )
        with tempfile.TemporaryDirectory() as d:
            cache = EmbeddingCache(Path(d) / "c.sqlite")
            keys = [text_key(t.text) for t in turns]
            cache.put("m", dict(zip(keys, vecs)))
            reads = [timed(lambda: cache.get("m", keys)) for _ in range(args.repeat)]
            cache.close()
        print(f"{line} cache read {statistics.median(reads) * 1e3:.0f} ms; usearch recall@{args.k} {recall:.3f}")


if __name__ == "__main__":
    main()
