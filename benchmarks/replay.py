"""Replay throughput of the multi-turn evaluator: samples/s with a scripted agent, 3 runs per sample.

    .venv/bin/python benchmarks/replay.py [--sessions 60] [--repeats 5] [--agent correct]

Generates the built-in suite (seeded), then times ``run_suite`` (replay x3 + grading + records in
memory) over every sample, ``--repeats`` times; prints the median and the spread. Also times the
rule-based extractor's accuracy pass over the hand labels.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

from memeval.multiturn.agents import make_agent
from memeval.multiturn.config import DEFAULT_CONFIG
from memeval.multiturn.extractor import RuleExtractor, StateFromText, extractor_accuracy
from memeval.multiturn.runner import run_suite
from memeval.multiturn.suite import generate_suite


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=60)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--agent", default="correct")
    ap.add_argument("--text-state", action="store_true", help="state read from text by the rule extractor")
    args = ap.parse_args()

    t0 = time.perf_counter()
    suite = generate_suite(seed=20261018, sessions=args.sessions, cross_session=2)
    gen_s = time.perf_counter() - t0
    n = len(suite.samples)
    turns = sum(s.labels.turns for s in suite.samples)
    times = []
    for _ in range(args.repeats):
        agent = make_agent(args.agent)
        kw = {}
        if args.text_state:
            agent, kw = StateFromText(agent), {"extractor": RuleExtractor()}
        t = time.perf_counter()
        recs = run_suite(suite, agent, None, DEFAULT_CONFIG, **kw)
        times.append(time.perf_counter() - t)
        assert len(recs) == n
    med = statistics.median(times)
    t = time.perf_counter()
    sc = extractor_accuracy(RuleExtractor(), suite.labels)
    ex_s = time.perf_counter() - t
    print(f"machine: {platform.machine()} python {platform.python_version()}")
    print(f"suite: {len(suite.sessions)} sessions, {n} samples, {turns} sample turns; generated in {gen_s:.2f}s")
    print(
        f"agent={args.agent}{' (+text state)' if args.text_state else ''}, runs per sample={DEFAULT_CONFIG.runs}, "
        f"repeats={args.repeats}"
    )
    print(f"wall per pass: median {med:.3f}s (min {min(times):.3f}, max {max(times):.3f})")
    print(
        f"throughput: {n / med:.1f} samples/s ({n * DEFAULT_CONFIG.runs / med:.1f} replays/s, "
        f"{turns * DEFAULT_CONFIG.runs / med:.0f} turns/s)"
    )
    print(f"rule extractor: accuracy {sc.accuracy:.3f} over {sc.units} keys in {ex_s:.3f}s")


if __name__ == "__main__":
    main()
