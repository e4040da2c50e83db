"""count_tokens (approx-v1) against its first, per-match Python loop (the baseline), on generated turns.

.venv/bin/python benchmarks/tokens.py --preset demo --copies 5 --runs 3
"""

from __future__ import annotations

import argparse
import re
import statistics
import time

from memeval.bench.tokens import _CJK, count_tokens
from runner import bench_dir

_WORD = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+|[^\w\s]", re.UNICODE)


def baseline(text: str) -> int:
    n = 0
    for m in _WORD.finditer(text):
        s = m.group()
        n += (len(s) + 3) // 4 if len(s) > 4 and s[0].isalnum() else 1
    return n


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--preset", default="demo")
    p.add_argument("--copies", type=int, default=5)
    p.add_argument("--runs", type=int, default=3)
    a = p.parse_args()
    out = bench_dir(a.preset)
    texts = (out / "turns_full.jsonl").read_text(encoding="utf-8").splitlines() * a.copies
    print(f"{sum(map(len, texts)) / 1e6:.1f} MB of turn lines")
    for f in (baseline, count_tokens):
        times = []
        for _ in range(a.runs):
            t0 = time.perf_counter()
            total = sum(map(f, texts))
            times.append(time.perf_counter() - t0)
        print(
            f"{f.__name__:>12}: {total} tokens, runs {[round(t, 3) for t in times]} s, median {statistics.median(times):.3f} s"
        )


if __name__ == "__main__":
    main()
