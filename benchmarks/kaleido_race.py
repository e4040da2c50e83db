"""How often kaleido's browser starts with the wrong JavaScript context on a busy machine, and what
memeval's export does about it.

    .venv/bin/python benchmarks/kaleido_race.py [--sessions 16] [--load 12]

Starts ``--load`` busy processes (one core's worth each), then opens ``--sessions`` kaleido browsers one
after another and draws one figure in each, twice over, alternating: with ``kaleido.Kaleido`` directly
(kaleido 1.5 enables the DevTools Runtime domain after ``Page.navigate``, so the context it keeps can be
the blank page's: ``ReferenceError: kaleido_scopes is not defined``) and with ``memeval.analysis.figures``
(``export_all``, which starts one fresh browser when that happens). Prints the failures of each.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import tempfile
import time
from pathlib import Path

import kaleido

from memeval.analysis import figures

FIG = {"data": [{"type": "bar", "x": [1, 2, 3], "y": [3, 1, 2]}], "layout": {"title": {"text": "race"}}}


def _spin() -> None:
    while True:
        pass


async def _direct() -> None:
    async with kaleido.Kaleido(n=1, timeout=120, mathjax=False) as k:
        await k.calc_fig(FIG, opts={"format": "svg", "width": 600, "height": 400})


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=16)
    ap.add_argument("--load", type=int, default=12)
    args = ap.parse_args()
    spinners = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(args.load)]
    for p in spinners:
        p.start()
    failed = {"kaleido.Kaleido": [], "memeval export_all": []}
    t0 = time.perf_counter()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for i in range(args.sessions):
                try:
                    asyncio.run(_direct())
                except Exception as e:
                    failed["kaleido.Kaleido"].append(" ".join(str(e).split()))
                try:
                    figures.export_all([(Path(tmp) / f"f{i}", FIG)], formats=("svg",))
                except Exception as e:
                    failed["memeval export_all"].append(" ".join(str(e).split()))
    finally:
        for p in spinners:
            p.kill()
    print(
        f"load {args.load} busy processes on {os.cpu_count()} cores, {args.sessions} sessions each, "
        f"{time.perf_counter() - t0:.0f} s"
    )
    for name, errs in failed.items():
        race = sum("kaleido_scopes is not defined" in e for e in errs)
        print(f"{name}: {len(errs)} of {args.sessions} failed ({race} with kaleido_scopes is not defined)")
        for e in errs[:3]:
            print("   ", e[:160])


if __name__ == "__main__":
    main()
