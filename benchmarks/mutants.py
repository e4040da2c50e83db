"""A mutation spot check: plant hand-written mutants in scoring and interval code, one at a time, and
run the tests that cover that code; a mutant is *caught* when some test fails, *missed* when all pass.

    .venv/bin/python benchmarks/mutants.py [--only NAME ...] [--out FILE]

Each mutant is planted in a copy of ``memeval/``, ``tests/``, ``conftest.py`` and ``pyproject.toml`` in a
temporary folder (the checkout is never edited), and its tests run there with ``pytest -x -n 0``. The
unmutated copy runs first: a spot check over a red suite would mean nothing. Prints a Markdown table
(and writes it to ``--out``); exits 1 if a mutant was missed or the baseline failed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Mutant:
    name: str
    path: str  # inside the checkout
    old: str  # must occur exactly once
    new: str
    tests: tuple[str, ...]  # pytest arguments (test files; a module path also runs its doctests)


INTERVAL_TESTS = ("tests/test_intervals.py", "memeval/analysis/intervals.py")
JUDGE_TESTS = (
    "tests/test_judge_modes.py",
    "tests/test_judges.py",
    "tests/test_scorers.py",
    "tests/test_regrade.py",
)

MUTANTS = (
    Mutant(
        "interval level 95% -> 90% (default)",
        "memeval/analysis/intervals.py",
        '    n_resamples: int = DEFAULT_RESAMPLES,\n    level: float = 0.95,\n    seed: int = 0,\n) -> pl.DataFrame:\n    """Per group',
        '    n_resamples: int = DEFAULT_RESAMPLES,\n    level: float = 0.90,\n    seed: int = 0,\n) -> pl.DataFrame:\n    """Per group',
        INTERVAL_TESTS,
    ),
    Mutant(
        "interval tail not halved (95% -> 90%)",
        "memeval/analysis/intervals.py",
        "tail = (1.0 - level) / 2",
        "tail = 1.0 - level",
        INTERVAL_TESTS,
    ),
    Mutant(
        "judge partial credit 0.5 -> 0.6",
        "memeval/scoring/judge.py",
        '"partial": 0.5,',
        '"partial": 0.6,',
        JUDGE_TESTS,
    ),
    Mutant(
        "dry rule: UPDATE answered 'unknown' 0.5 -> 0.6",
        "memeval/scoring/dry.py",
        'DryScore.of(0.5, "update:idk")',
        'DryScore.of(0.6, "update:idk")',
        ("tests/test_scoring_dry.py", "tests/test_glasshouse_rules.py", "memeval/scoring/dry.py"),
    ),
    Mutant(
        "speed points: slow side not halved",
        "memeval/scoring/speed.py",
        "        v /= 2.0\n",
        "        v /= 1.0\n",
        ("tests/test_scoring_speed.py", "memeval/scoring/speed.py"),
    ),
    Mutant(
        "speed points: floor of -1 at 3x the target instead of 4x",
        "memeval/scoring/speed.py",
        "if r >= 4.0:",
        "if r >= 3.0:",
        ("tests/test_scoring_speed.py", "memeval/scoring/speed.py"),
    ),
    Mutant(
        "LoCoMo token F1 without its factor 2",
        "memeval/scoring/locomo_f1.py",
        "return 2 * precision * recall / (precision + recall)",
        "return precision * recall / (precision + recall)",
        ("tests/test_official_metrics.py", "memeval/scoring/locomo_f1.py"),
    ),
    Mutant(
        "NDCG discount log2(i + 1) in place of log2(i)",
        "memeval/scoring/retrieval.py",
        "r / math.log2(i) for i, r in enumerate(rel[1:], start=2)",
        "r / math.log2(i + 1) for i, r in enumerate(rel[1:], start=2)",
        ("tests/test_ceiling_metrics.py", "tests/test_scoring_retrieval.py", "memeval/scoring/retrieval.py"),
    ),
    Mutant(
        "McNemar one-sided (tail not doubled)",
        "memeval/analysis/intervals.py",
        "return min(1.0, 2 * tail)",
        "return min(1.0, tail)",
        INTERVAL_TESTS,
    ),
)


def _copy(dest: Path) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("memeval", "tests"):
        shutil.copytree(ROOT / name, dest / name, ignore=ignore)
    for name in ("conftest.py", "pyproject.toml"):
        shutil.copy2(ROOT / name, dest / name)


def _pytest(where: Path, tests: tuple[str, ...]) -> tuple[int, float, str]:
    env = {**os.environ, "PYTHONPATH": str(where)}
    if "MEMEVAL_SHARED" not in env and (ROOT.parent / "shared").is_dir():
        env["MEMEVAL_SHARED"] = str(ROOT.parent / "shared")  # the copy does not stand beside ../shared
    argv = [sys.executable, "-m", "pytest", *tests, "-x", "-q", "-n", "0", "-p", "no:cacheprovider", "--durations=0"]
    t0 = time.perf_counter()
    p = subprocess.run(argv, cwd=where, env=env, capture_output=True, text=True)
    out = p.stdout.splitlines()
    lines = [ln for ln in out if ln.startswith(("FAILED", "ERROR"))] or [ln for ln in out if " passed" in ln]
    return p.returncode, time.perf_counter() - t0, (lines[0] if lines else p.stdout[-300:]).strip()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="*", help="run only the mutants whose name contains one of these words")
    ap.add_argument("--out", type=Path, help="also write the Markdown table here")
    args = ap.parse_args(argv)
    mutants = [m for m in MUTANTS if not args.only or any(w.lower() in m.name.lower() for w in args.only)]
    rows, missed = [], 0
    with tempfile.TemporaryDirectory(prefix="memeval-mutants-") as tmp:
        base = Path(tmp) / "base"
        _copy(base)
        union = tuple(dict.fromkeys(t for m in mutants for t in m.tests))
        rc, took, line = _pytest(base, union)
        print(f"baseline (no mutant): exit {rc} in {took:.0f} s: {line}", file=sys.stderr)
        if rc != 0:
            print("the unmutated tests fail: no spot check over a red suite", file=sys.stderr)
            return 1
        for i, m in enumerate(mutants):
            where = Path(tmp) / f"m{i}"
            _copy(where)
            target = where / m.path
            text = target.read_text(encoding="utf-8")
            if text.count(m.old) != 1:
                raise SystemExit(f"mutant {m.name!r}: the text to replace occurs {text.count(m.old)} times in {m.path}")
            target.write_text(text.replace(m.old, m.new), encoding="utf-8")
            rc, took, line = _pytest(where, m.tests)
            verdict = "caught" if rc == 1 else "missed" if rc == 0 else f"error (exit {rc})"
            missed += verdict != "caught"
            rows.append(f"| {m.name} | `{m.path}` | {verdict} | {line.replace('|', '/')} | {took:.0f} |")
            print(rows[-1], file=sys.stderr)
            shutil.rmtree(where)
    table = "\n".join(
        ["| mutant | file | result | first failure (or the pass line) | s |", "| --- | --- | --- | --- | ---: |", *rows]
    )
    print(table)
    if args.out:
        args.out.write_text(table + "\n", encoding="utf-8")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
