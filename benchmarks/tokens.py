"""count_tokens (approx-v1) against its first, per-match Python loop (the baseline), on generated turns;
and the bulk count (``count_tokens_many``) against its first numpy form (a cumulative pass per
character, kept here as ``bulk_baseline``), all in one run.

.venv/bin/python benchmarks/tokens.py --preset demo --copies 5 --runs 3
"""

from __future__ import annotations

import argparse
import re
import statistics
import time
from typing import Sequence

import numpy as np

from memeval.bench import tokens
from memeval.bench.tokens import _ASCII_CLASS, _CJK, count_tokens, count_tokens_many
from runner import bench_dir

_WORD = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+|[^\w\s]", re.UNICODE)


def baseline(text: str) -> int:
    n = 0
    for m in _WORD.finditer(text):
        s = m.group()
        n += (len(s) + 3) // 4 if len(s) > 4 and s[0].isalnum() else 1
    return n


def _count_ascii_cumulative(texts: Sequence[str], idx: list[int], out: list[int]) -> None:
    """The first bulk form: a token-start flag per character, summed per text."""
    joined = "".join(texts[i] + " " for i in idx).encode("ascii")
    cls = _ASCII_CLASS[np.frombuffer(joined, dtype=np.uint8)]
    word = cls == 1
    pos = np.arange(len(cls), dtype=np.int32)
    start = np.empty(len(cls), dtype=bool)
    start[0] = word[0]
    np.greater(word[1:], word[:-1], out=start[1:])
    run_start = np.maximum.accumulate(np.where(start, pos, np.int32(0)))
    first = (word & ((pos - run_start) % 4 == 0)) | (cls == 2)
    bounds = np.cumsum([0] + [len(texts[i]) + 1 for i in idx[:-1]])
    for i, c in zip(idx, np.add.reduceat(first.astype(np.int32), bounds).tolist()):
        out[i] = c


def bulk_baseline(texts: Sequence[str]) -> list[int]:
    current = tokens._count_ascii
    tokens._count_ascii = _count_ascii_cumulative
    try:
        return count_tokens_many(texts)
    finally:
        tokens._count_ascii = current


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--preset", default="demo")
    p.add_argument("--copies", type=int, default=5)
    p.add_argument("--runs", type=int, default=3)
    a = p.parse_args()
    out = bench_dir(a.preset)
    texts = (out / "turns_full.jsonl").read_text(encoding="utf-8").splitlines() * a.copies
    print(f"{sum(map(len, texts)) / 1e6:.1f} MB of turn lines")
    for f in (baseline, count_tokens, bulk_baseline, count_tokens_many):
        times = []
        for _ in range(a.runs):
            t0 = time.perf_counter()
            total = sum(f(texts)) if f in (bulk_baseline, count_tokens_many) else sum(map(f, texts))
            times.append(time.perf_counter() - t0)
        print(
            f"{f.__name__:>17}: {total} tokens, runs {[round(t, 3) for t in times]} s, median {statistics.median(times):.3f} s"
        )


if __name__ == "__main__":
    main()
