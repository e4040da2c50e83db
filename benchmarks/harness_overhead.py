"""Harness overhead per question: ``memeval run`` (dry) of a system that returns at once, against a raw
loop over the same questions (issue 31, item 2).

    PYTHONPATH=TREE .venv/bin/python benchmarks/harness_overhead.py lme HAYSTACKS SESSIONS TURNS [--system S]
    PYTHONPATH=TREE .venv/bin/python benchmarks/harness_overhead.py demo [--system S]

``lme``: ``benchmarks/lme_scale.py``'s LongMemEval-format file (HAYSTACKS instances of SESSIONS
sessions of TURNS turns, one question each), imported; ``demo``: the built-in demo bench (every tier,
hundreds of questions per haystack). ``--system``: ``no_memory`` (default) or ``instant``, a
``python:`` system written here whose ``reset``, ``ingest`` and ``query`` return at once.

One warm-up run (it grades the validity gate, which later runs read from its cache), then ``--runs``
runs, each followed by the raw loop; printed: the CPU microseconds per question of each, their
medians, and the overhead (run minus raw loop). The raw loop is what any loop over the bench does
without memeval: read the questions and turns files (``orjson`` per line, no checks), group the turns
by haystack and session, and per haystack reset the system, ingest each session, ask each question.
Run it alternately against two trees (``PYTHONPATH=/path/to/main`` and this branch) for pairs.
"""

from __future__ import annotations

import argparse
import importlib.util
import pathlib
import shutil
import statistics
import sys
import tempfile
import time

import orjson

from memeval.bench.io import load_bench
from memeval.run.runner import run_system
from memeval.systems.registry import make_system

_INSTANT = '''
from memeval.systems.base import Recall


class Instant:
    """Returns at once: the floor of what a harness can cost per question."""

    name, version = "instant", "1"

    def __init__(self):
        self.params = {}

    def reset(self):
        pass

    def ingest(self, session):
        pass

    def query(self, question, asked_at):
        return Recall()
'''


def _lme_bench(tmp: pathlib.Path, hays: int, sessions: int, turns: int) -> pathlib.Path:
    from memeval.bench.loaders.longmemeval import import_longmemeval

    spec = importlib.util.spec_from_file_location("lme_scale", pathlib.Path(__file__).with_name("lme_scale.py"))
    assert spec is not None and spec.loader is not None
    lme_scale = importlib.util.module_from_spec(spec)
    sys.modules["lme_scale"] = lme_scale  # its dataclasses look their module up there
    spec.loader.exec_module(lme_scale)
    lme_scale.write_lme(tmp / "x_m.json", hays, sessions, turns)
    import_longmemeval([tmp / "x_m.json"], tmp / "b")
    return tmp / "b"


def raw_loop(bench_dir: pathlib.Path, system) -> int:
    """Every question of every tier asked, each haystack reset and ingested first; returns how many."""
    bench = load_bench(bench_dir)
    n = 0
    for tier in bench.tiers:
        hays: dict = {}
        with open(bench_dir / tier.turns_file, "rb") as fh:
            for line in fh:
                t = orjson.loads(line)
                hays.setdefault(t.get("haystack"), {}).setdefault(t["session_id"], []).append(t)
        by_hay: dict = {}
        with open(bench_dir / tier.questions_path("main"), "rb") as fh:
            for line in fh:
                q = orjson.loads(line)
                by_hay.setdefault(q.get("haystack"), []).append(q)
        for hay, qs in by_hay.items():
            system.reset()
            for session in hays.get(hay, {}).values():
                system.ingest(session)
            for q in qs:
                system.query(q.get("question") or q["question_en"], q.get("asked_at"))
                n += 1
    return n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("shape", choices=["lme", "demo"])
    ap.add_argument("sizes", nargs="*", type=int, help="lme: HAYSTACKS SESSIONS TURNS")
    ap.add_argument("--system", default="no_memory", choices=["no_memory", "instant"])
    ap.add_argument("--runs", type=int, default=1)
    args = ap.parse_args()
    tmp = pathlib.Path(tempfile.mkdtemp())
    try:
        if args.shape == "lme":
            bench = _lme_bench(tmp, *args.sizes)
        else:
            from memeval.bench.lifelog import generate

            bench = generate("demo", 1, tmp / "b")
        (tmp / "instant_sys.py").write_text(_INSTANT)
        sys.path.insert(0, str(tmp))
        spec = "no_memory" if args.system == "no_memory" else "python:instant_sys:Instant"
        run_system(bench, spec, out=tmp / "warm", progress=False)
        runs, raws = [], []
        n = 0
        for i in range(args.runs):
            t = time.process_time()
            run_system(bench, spec, out=tmp / f"r{i}", progress=False)
            runs.append(time.process_time() - t)
            system = make_system(spec)
            t = time.process_time()
            n = raw_loop(bench, system)
            raws.append(time.process_time() - t)
        run_us = [1e6 * x / n for x in runs]
        raw_us = [1e6 * x / n for x in raws]
        over = statistics.median(run_us) - statistics.median(raw_us)
        print(
            f"{args.shape} {args.sizes} {args.system}: {n} questions; run CPU us/q {[round(x) for x in run_us]}, "
            f"raw loop {[round(x, 1) for x in raw_us]}; overhead (median run - median raw) {over:.0f} us/q"
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
