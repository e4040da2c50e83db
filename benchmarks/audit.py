"""Benchmark ``memeval audit``: wall time on the generated ``demo`` and ``full`` presets, and dry
scoring throughput (questions/s) on the full tier's questions answered with their evidence text.

    .venv/bin/python benchmarks/audit.py [--presets demo full] [--runs 3] [--seed 1] [--out FILE]

Benches are generated once into a temporary folder (generation is not timed); each figure is the
median of ``--runs`` runs. Writes a Markdown fragment (default ``benchmarks/results/audit.md``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from memeval.atomic import write_text
from memeval.audit import audit
from memeval.bench.io import load_bench, read_questions, read_turns
from memeval.bench.lifelog import generate
from memeval.scoring.dry import score_answer

ROOT = Path(__file__).resolve().parent.parent


def _machine() -> str:
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{os.cpu_count()} cores, {mem:.0f} GiB, Python {platform.python_version()}, {platform.machine()}"


def _median_time(fn, runs: int) -> tuple[float, list[float], float, object]:
    """Median wall time, the wall times, median CPU time of this process, last result."""
    times, cpu, out = [], [], None
    for _ in range(runs):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return statistics.median(times), times, statistics.median(cpu), out


def bench_audit(folder: Path, runs: int) -> dict:
    """``memeval audit DIR`` in a fresh process per run (cold caches, imports included)."""
    times, cpu = [], []
    cmd = [sys.executable, "-m", "memeval", "audit", str(folder)]
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        times.append(time.perf_counter() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"audit failed ({proc.returncode}): {proc.stderr}")
    rss_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # largest child so far
    report = audit(folder)
    b = load_bench(folder)
    return {
        "median_s": statistics.median(times),
        "times": times,
        "cpu_s": statistics.median(cpu),
        "rss": rss_mib,
        "passed": report.passed,
        "failed": report.failed_checks,
        "in_process_s": report.elapsed_s,
        "floor": {t: v["weighted"] for t, v in report.check("idk-floor").numbers.items()},
        "ceiling": {
            t: v["weighted"] for t, v in report.check("evidence-ceiling").numbers.items() if isinstance(v, dict)
        },
        "tiers": {t.name: (t.n_turns, t.n_questions) for t in b.tiers},
    }


def _clear_scoring_caches() -> None:
    from memeval.scoring import dry, idk, matching

    for mod in (matching, idk, dry):
        for obj in vars(mod).values():
            if hasattr(obj, "cache_clear"):
                obj.cache_clear()


def bench_scoring(folder: Path, runs: int) -> dict:
    b = load_bench(folder)
    tier = b.tiers[-1]
    turns = {t.turn_id: t.text for t in read_turns(folder / tier.turns_file)}
    pairs = [
        (q, "\n".join(turns[i] for i in q.evidence_turns if i in turns))
        for q in read_questions(folder / tier.questions_file)
    ]

    def score_all():
        _clear_scoring_caches()  # every run starts cold
        return [score_answer(q, a) for q, a in pairs]

    med, times, cpu, _ = _median_time(score_all, runs)
    chars = sum(len(a) for _, a in pairs)
    return {
        "tier": tier.name,
        "n": len(pairs),
        "median_s": med,
        "times": times,
        "qps": len(pairs) / med,
        "cpu_qps": len(pairs) / cpu,
        "mean_answer_chars": chars / max(1, len(pairs)),
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--presets", nargs="+", default=["demo", "full"])
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "audit.md"))
    args = p.parse_args(argv)
    cmd = " ".join(["cd /work/main && .venv/bin/python benchmarks/audit.py", *(sys.argv[1:] if argv is None else argv)])
    rows, scoring = [], None
    load0 = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    with tempfile.TemporaryDirectory(prefix="memeval-audit-bench-") as tmp:
        for preset in args.presets:
            folder = Path(tmp) / preset
            t0 = time.perf_counter()
            generate(preset, args.seed, folder)
            gen_s = time.perf_counter() - t0
            r = bench_audit(folder, args.runs)
            r.update(preset=preset, gen_s=gen_s)
            rows.append(r)
            print(
                f"audit {preset}: median {r['median_s']:.2f} s (CPU {r['cpu_s']:.2f} s) over {args.runs} runs "
                f"{r['times']}; "
                f"passed={r['passed']} {r['failed']}",
                flush=True,
            )
            if preset == args.presets[-1]:
                scoring = bench_scoring(folder, args.runs)
                print(
                    f"dry scoring {preset}/{scoring['tier']}: {scoring['n']} questions, "
                    f"{scoring['qps']:.0f} questions/s",
                    flush=True,
                )
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    lines = [
        "## Bench audit (`memeval audit`)",
        "",
        f"Machine: {_machine()}. Date: {dt.date.today().isoformat()}. Medians of {args.runs} runs; "
        f"benches generated with seed {args.seed} (generation not timed).",
        "",
        f"Command: `{cmd}`",
        "",
        f"Load average when the runs started: {load0}; the machine was shared with other jobs, so the CPU "
        "time of the audit process is given beside the wall time.",
        "",
        "Each audit run is `python -m memeval audit DIR` in a fresh process (interpreter start and imports "
        "included, caches cold); CPU = user + system time of that process.",
        "",
        "| preset | tiers (turns / questions) | audit wall time, median | CPU time, median | runs, wall (s) | peak RSS | verdict |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        tiers = ", ".join(f"{k} {n:,}/{q:,}" for k, (n, q) in r["tiers"].items())
        verdict = "pass" if r["passed"] else "FAIL: " + ", ".join(r["failed"])
        lines.append(
            f"| {r['preset']} | {tiers} | {r['median_s']:.2f} s | {r['cpu_s']:.2f} s | "
            f"{', '.join(f'{t:.2f}' for t in r['times'])} | {r['rss']:.0f} MiB | {verdict} |"
        )
    lines += [
        "",
        "Scorer sanity bars found by the audit (weighted, per tier; bars: IDK floor at most 0.20, "
        "evidence ceiling at least 0.90, on each tier's main question set; `<tier>/probes` is the "
        "false-memory probes set, checked like the main set but reported, not barred: IDK is the right "
        "answer to every probe):",
        "",
    ]
    for r in rows:
        floor = ", ".join(f"{t} {v:.3f}" for t, v in r["floor"].items())
        ceiling = ", ".join(f"{t} {v:.3f}" for t, v in r["ceiling"].items())
        lines.append(f"- {r['preset']}: IDK floor {floor}; evidence ceiling {ceiling}")
    if scoring:
        lines += [
            "",
            f"Dry scoring throughput (`score_answer`, each question answered with its evidence turns' text "
            f"joined, mean {scoring['mean_answer_chars']:.0f} chars): preset {args.presets[-1]}, tier "
            f"{scoring['tier']}, {scoring['n']:,} questions in {scoring['median_s']:.2f} s median = "
            f"**{scoring['qps']:,.0f} questions/s** wall, {scoring['cpu_qps']:,.0f} questions per CPU-second "
            f"(runs: {', '.join(f'{t:.2f}' for t in scoring['times'])} s).",
        ]
    lines += [
        "",
        "Peak RSS: the largest audit process so far (presets run smallest first, so the full row is the "
        f"full preset's). Benchmark process itself (generation included): {rss:.0f} MiB.",
        "",
    ]
    write_text(args.out, "\n".join(lines))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
