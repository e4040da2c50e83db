"""memeval's LAFS (``memeval.analysis.lafs``) beside LongMemEval-V2's ``leaderboard/compute_lafs.py``
on random operating-point sets, and the cost of the bootstrap interval.

The official file is fetched, never shipped: ``git -C <clone of xiaowu0162/LongMemEval-V2> show
HEAD:leaderboard/compute_lafs.py > /tmp/compute_lafs.py``.

    .venv/bin/python benchmarks/lme_v2_lafs_parity.py --official /tmp/compute_lafs.py [--sets 5000] [--seed 0]

Each set: 1-6 points (accuracy 0-100, latency log-uniform in 0.01-1000 s, with repeated latencies,
repeated accuracies and values exactly at the reference points' and the 1 s / 200 s bounds), a tier.
Compared: LAFS of the set, the gain over the tier's reference frontier, the names on the joined
frontier. Agreement: equal frontier names and |difference| <= 1e-9 on both numbers (the count of
bit-identical numbers is given too).
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import random
import sys
import time
from pathlib import Path

from memeval.analysis import lafs as mine
from memeval.errors import MemevalError


def _load(path: Path):
    spec = importlib.util.spec_from_file_location("official_compute_lafs", path)
    if spec is None or spec.loader is None:
        sys.exit(f"cannot load {path}")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _points(rng: random.Random, tier: str) -> list[tuple[str, float, float]]:
    ref = mine.REFERENCE[tier]
    out = []
    for i in range(rng.randint(1, 6)):
        r = rng.random()
        if r < 0.1:
            lat = rng.choice([1.0, 200.0, *(p.latency for p in ref)])
        elif r < 0.2 and out:
            lat = out[-1][2]
        else:
            lat = math.exp(rng.uniform(math.log(0.01), math.log(1000)))
        a = rng.random()
        acc = rng.choice([p.acc for p in ref]) if a < 0.1 else (out[-1][1] if a < 0.2 and out else rng.uniform(0, 100))
        out.append((f"p{i}", round(acc, rng.choice([1, 3, 9])), round(lat, rng.choice([2, 3, 9]))))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--official", required=True, type=Path, help="path to a fetched compute_lafs.py")
    ap.add_argument("--sets", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    off = _load(args.official)
    rng = random.Random(args.seed)
    agree = exact = refused = 0
    worst = []
    for _ in range(args.sets):
        tier = rng.choice(["small", "medium"])
        pts = _points(rng, tier)
        o_pts = [off.Point(n, a, t) for n, a, t in pts]
        m_pts = [mine.Point(n, a, t) for n, a, t in pts]
        try:
            o = off.lafs_summary_for_submission(tier, o_pts)
        except ValueError:  # a latency rounded to 0: refused
            o = None
        try:
            m_gain = mine.lafs_gain(tier, m_pts)
            m_lafs = mine.lafs([*mine.REFERENCE[tier], *m_pts])
            m_front = [p.name for p in mine.pareto([*mine.REFERENCE[tier], *m_pts])]
        except MemevalError:
            m_gain = None
        if o is None or m_gain is None:
            refused += o is None
            same = o is None and m_gain is None
            agree += same
            exact += same
            if not same and len(worst) < 5:
                worst.append((tier, pts, o, m_gain))
            continue
        o_front = [p["name"] for p in o["submission_frontier"]]
        same = (
            m_front == o_front and abs(m_gain - o["lafs_gain"]) <= 1e-9 and abs(m_lafs - o["submission_lafs"]) <= 1e-9
        )
        agree += same
        exact += m_gain == o["lafs_gain"] and m_lafs == o["submission_lafs"] and m_front == o_front
        if not same and len(worst) < 5:
            worst.append((tier, pts, o["lafs_gain"], m_gain))
    print("| compared | point sets | agree (1e-9, same frontier) | bit-identical | refused by both (latency 0) |")
    print("|---|---:|---:|---:|---:|")
    print(
        f"| LAFS, gain, frontier | {args.sets} | {agree} ({agree / args.sets:.2%}) | {exact} ({exact / args.sets:.2%}) "
        f"| {refused} |"
    )
    for w in worst:
        print("- disagree:", w)
    # the interval's cost: 451 questions, 3 operating points, 2000 resamples
    qrng = random.Random(1)
    scores = {f"op{k}": [float(qrng.random() < 0.5 + 0.1 * k) for _ in range(451)] for k in range(3)}
    secs = {f"op{k}": [qrng.expovariate(1 / (5 + 40 * k)) for _ in range(451)] for k in range(3)}
    t0 = time.perf_counter()
    iv = mine.bootstrap_gain("small", scores, secs, n_resamples=2000)
    dt = time.perf_counter() - t0
    print(
        f"\nbootstrap_gain, 451 questions x 3 operating points x 2000 resamples: gain {iv.gain:.2f} "
        f"[{iv.lo:.2f}, {iv.hi:.2f}] in {dt:.2f} s"
    )


if __name__ == "__main__":
    main()
