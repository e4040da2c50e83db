"""Benchmark ``memeval generate``: wall time (median of N runs) and peak RSS per preset, and a check
that the ``full`` preset hits the glasshouse-scale targets of lifelog.md.

Each run is a fresh ``python -m memeval generate`` process (so imports and interpreter start-up are
included); peak RSS is that process's ``ru_maxrss`` from ``os.wait4``.

    .venv/bin/python benchmarks/generate.py                 # demo and full, 3 runs each
    .venv/bin/python benchmarks/generate.py --runs 5 --presets demo --write benchmarks/results/generate.md
    .venv/bin/python benchmarks/generate.py --presets tiny demo full --audit --saturation 1 2 3

``--saturation SEEDS`` also generates the demo preset with each seed and runs ``bm25`` and ``oracle``
(dry, in process) over every tier: the core-question-set means per tier show the saturation curve.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memeval.bench.io import load_bench, read_questions  # noqa: E402

# lifelog.md / benchmark.md §1 targets for the full preset (glasshouse v0.1).
FULL_TURNS = {"core": 1882, "small": 7186, "medium": 12884, "full": 103572}
FULL_SESSIONS = 1991
FULL_TOKENS = 1_971_338
FULL_COUNTS = {"FALSE_MEMORY": 500, "IMAGE": 150, "XLING": 800, "FOURTEEN_AXES": 1547}


def run_once(preset: str, seed: int, out: Path) -> tuple[float, int]:
    cmd = [sys.executable, "-m", "memeval", "generate", "--preset", preset, "--seed", str(seed), "--out", str(out)]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed: {proc.stderr.read().decode()}")
    return elapsed, usage.ru_maxrss  # KiB on Linux


NOTE_IDK_FLOOR = (
    "The false-memory probes (9 / 60 / 500 at tiny / demo / full) are the question set `probes` "
    "(`probes_<tier>.jsonl`, `memeval run --question-set probes`); the main set keeps 3 / 15 / 12 false-memory "
    "questions. The audit checks every set; `idk-floor` and `evidence-ceiling` are bars on the main set, and a "
    "probes set's all-IDK score (100% by design) is reported as `<tier>/probes`."
)


def in_process(preset: str, seed: int, out: Path, runs: int) -> list[float]:
    """Seconds per ``memeval.bench.lifelog.generate`` call in this process (imports and the
    vocabulary files already loaded by a first, untimed call)."""
    from memeval.bench.lifelog import generate

    generate(preset, seed, out / "warm")
    times = []
    for i in range(runs):
        t0 = time.perf_counter()
        generate(preset, seed, out / f"r{i}")
        times.append(time.perf_counter() - t0)
    return times


def check_full(out: Path) -> list[str]:
    bench = load_bench(out)
    lines = ["| check | target | generated | ok |", "|---|---|---|---|"]

    def row(name, target, got, ok):
        lines.append(f"| {name} | {target} | {got} | {'yes' if ok else 'NO'} |")

    for t in bench.tiers:
        want = FULL_TURNS[t.name]
        row(f"turns {t.name}", f"{want:,} ±5%", f"{t.n_turns:,}", abs(t.n_turns - want) <= 0.05 * want)
    top = bench.tiers[-1]
    row(
        "sessions full",
        f"{FULL_SESSIONS:,}",
        f"{top.n_sessions:,}",
        abs(top.n_sessions - FULL_SESSIONS) <= 0.05 * FULL_SESSIONS,
    )
    row(
        "tokens full (approx-v1)",
        f"~{FULL_TOKENS:,}",
        f"{top.n_tokens:,}",
        abs(top.n_tokens - FULL_TOKENS) <= 0.05 * FULL_TOKENS,
    )
    qs = read_questions(out / top.questions_file)
    axes = Counter(q.axis for q in qs)
    fourteen = sum(n for a, n in axes.items() if a not in ("FALSE_MEMORY", "XLING_QUERY", "XLING_STORE"))
    row("questions on 14 axes", "1,547", f"{fourteen:,}", fourteen == FULL_COUNTS["FOURTEEN_AXES"])
    probes = read_questions(out / top.question_sets["probes"]) if "probes" in top.question_sets else []
    n_probes = sum(q.axis == "FALSE_MEMORY" for q in probes)
    row("false-memory probes (question set `probes`)", "500", n_probes, n_probes == 500)
    row("image questions", "150", axes["IMAGE"], axes["IMAGE"] == 150)
    xl = axes["XLING_QUERY"] + axes["XLING_STORE"]
    row("cross-language questions", "800", xl, xl == 800)
    photos = len(list((out / "img").glob("img*.png")))
    row("photos", "50", photos, photos == 50)
    langs = Counter(q.store_lang for q in qs if q.axis == "XLING_STORE")
    row("languages with stored facts", "10", len(langs), len(langs) == 10)
    lines.append("")
    lines.append(
        "Per-axis question counts at `full` (top tier, main set): "
        + ", ".join(f"{a} {n}" for a, n in sorted(axes.items()))
    )
    return lines


def audit_lines(preset: str, out: Path) -> list[str]:
    from memeval.audit import audit

    t0 = time.perf_counter()
    report = audit(out)
    took = time.perf_counter() - t0
    verdict = "PASS" if report.passed else "FAIL (" + ", ".join(report.failed_checks) + ")"
    lines = [f"`memeval audit` on the `{preset}` output: {verdict} in {took:.1f} s.", ""]
    lines += ["    " + line for line in report.lines() if line.startswith("FAIL")][:8]
    return lines


def saturation(seeds: list[int], tmp: Path) -> list[str]:
    """bm25 (k=10) and oracle, dry, over every tier of the demo preset, on the core question set."""
    from memeval.analysis.aggregate import load_records, overall_table, question_set
    from memeval.bench.lifelog import generate
    from memeval.run import run_system

    lines = [
        "Saturation on the `demo` preset (dry mode, questions present in every tier; weighted / unweighted "
        "mean), `run_system(bench, system, progress=False)` in process:",
        "",
        "| seed | system | core | small | medium | full | drop core→full (w / u) |",
        "|---|---|---|---|---|---|---|",
    ]
    for seed in seeds:
        bench = generate("demo", seed, tmp / f"sat-{seed}")
        for system in ("bm25", "oracle"):
            df = question_set(
                load_records(run_system(bench, system, out=tmp / f"sat-{seed}-{system}", progress=False)), "core"
            )
            t = {r["tier"]: (r["weighted"], r["unweighted"]) for r in overall_table(df).iter_rows(named=True)}
            cells = [f"{t[n][0]:.3f} / {t[n][1]:.3f}" for n in ("core", "small", "medium", "full")]
            drop = f"{t['core'][0] - t['full'][0]:.3f} / {t['core'][1] - t['full'][1]:.3f}"
            lines.append(f"| {seed} | {system} | {' | '.join(cells)} | {drop} |")
            print(lines[-1], flush=True)
    lines += [
        "",
        "The oracle's core-set mean is below 1 only through ABSTAIN and FALSE_MEMORY (it returns the "
        "evidence, none for those); on every answerable text axis it scores ≥ 0.9 in every tier (tested).",
    ]
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--presets", nargs="+", default=["demo", "full"])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--write", type=Path, help="write the markdown fragment here")
    ap.add_argument("--audit", action="store_true", help="also run `memeval audit` on each preset's first output")
    ap.add_argument(
        "--saturation",
        type=int,
        nargs="*",
        default=[],
        metavar="SEED",
        help="also run bm25 and oracle over the demo preset with these seeds",
    )
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="memeval-gen-bench-"))
    rows, checks, audits, sat = [], [], [], []
    try:
        for preset in args.presets:
            times, rss = [], []
            for i in range(args.runs):
                out = tmp / f"{preset}-{i}"
                t, kib = run_once(preset, args.seed, out)
                times.append(t)
                rss.append(kib)
                print(f"{preset} run {i + 1}: {t:.2f} s, peak RSS {kib / 1024:.0f} MiB", flush=True)
            bench = load_bench(tmp / f"{preset}-0")
            top = bench.tiers[-1]
            inproc = in_process(preset, args.seed, tmp / f"{preset}-inproc", args.runs)
            shutil.rmtree(tmp / f"{preset}-inproc", ignore_errors=True)
            rows.append(
                f"| {preset} | {args.runs} | {statistics.median(times):.2f} s | {min(times):.2f}–{max(times):.2f} s "
                f"| {statistics.median(inproc):.2f} s | {max(rss) / 1024:.0f} MiB | {top.n_turns:,} "
                f"| {top.n_tokens:,} | {top.n_questions:,} |"
            )
            if preset == "full":
                checks = check_full(tmp / "full-0")
            if args.audit:
                audits.append(audit_lines(preset, tmp / f"{preset}-0"))
            for i in range(1, args.runs):  # same preset and seed: byte-identical
                a = (tmp / f"{preset}-0" / top.turns_file).read_bytes()
                if (tmp / f"{preset}-{i}" / top.turns_file).read_bytes() != a:
                    raise SystemExit(f"{preset}: run {i + 1} differs from run 1")
        if args.saturation:
            sat = saturation(args.saturation, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    cpus = os.cpu_count()
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    load = os.getloadavg()[0]
    md = [
        "## `memeval generate` (built-in life-story bench)",
        "",
        f"Measured {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC on {platform.machine()} Linux, {cpus} cores, "
        f"{mem:.0f} GiB RAM, Python {platform.python_version()} (load average {load:.1f} at the end of the run).",
        "",
        f"Command: `.venv/bin/python benchmarks/generate.py --runs {args.runs} --presets {' '.join(args.presets)}"
        f"{' --audit' if args.audit else ''}"
        f"{' --saturation ' + ' '.join(map(str, args.saturation)) if args.saturation else ''}` "
        f"— each run is `python -m memeval generate --preset P --seed {args.seed} --out DIR` in a fresh process "
        "(interpreter start-up, imports, building, writing four tiers, the PNGs and the manifest); the in-process "
        "column times `memeval.bench.lifelog.generate()` alone after a warm-up call (imports and vocabulary loaded).",
        "",
        "| preset | runs | median wall time (process) | range | median `generate()` in process | peak RSS (max) "
        "| turns (top tier) | tokens (top tier) | questions (top tier) |",
        "|---|---|---|---|---|---|---|---|---|",
        *rows,
        "",
        "Runs with the same preset and seed produced byte-identical top-tier turn files.",
    ]
    if checks:
        md += ["", "Targets of the `full` preset (lifelog.md, benchmark.md §1):", "", *checks]
    for lines in audits:
        md += ["", *lines]
    if audits:
        md += ["", NOTE_IDK_FLOOR]
    if sat:
        md += ["", *sat]
    text = "\n".join(md) + "\n"
    print(text)
    if args.write:
        args.write.parent.mkdir(parents=True, exist_ok=True)
        args.write.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
