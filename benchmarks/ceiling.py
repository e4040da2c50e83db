"""The floor (``no_memory``), always-IDK and ceiling (``oracle``) on each generated preset, dry mode,
per tier: main question set and the false-memory probes set, weighted and unweighted, with the
oracle's ABSTAIN and FALSE_MEMORY means and what the ceiling cannot reach.

    .venv/bin/python benchmarks/ceiling.py [--presets tiny demo full] [--seed 1] [--out FILE]

``no_memory`` and ``oracle`` are real in-process runs (``memeval.run.run_system``); always-IDK is
the audit's ``bounds`` figure (the audit's "I don't know" phrase graded by the same dry grader).
The run's oracle is checked against the audit's ceiling (they must agree). Scores are deterministic:
one run each. Writes a Markdown fragment (default ``benchmarks/results/ceiling.md``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import sys
import tempfile
from pathlib import Path

import polars as pl

from memeval.analysis.aggregate import load_records, overall_table, tier_axis_table
from memeval.atomic import write_text
from memeval.audit import audit
from memeval.bench.lifelog import generate
from memeval.run.runner import run_system

ROOT = Path(__file__).resolve().parent.parent


def _machine() -> str:
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{os.cpu_count()} cores, {mem:.0f} GiB, Python {platform.python_version()}, {platform.machine()}"


def one_preset(preset: str, seed: int, tmp: Path) -> list[dict]:
    bench = tmp / preset
    generate(preset, seed, bench)
    bounds = audit(bench).check("bounds").numbers
    rows = []
    for qset in ("main", "probes"):
        runs = {
            s: run_system(bench, s, out=tmp / f"{preset}-{s}-{qset}", progress=False, question_set=qset)
            for s in ("no_memory", "oracle")
        }
        df = load_records(list(runs.values()))
        ov = {(r["system"], r["tier"]): r for r in overall_table(df).to_dicts()}
        ax = {
            (r["tier"], r["axis"]): r["score"]
            for r in tier_axis_table(df.filter(pl.col("system") == "oracle")).to_dicts()
        }
        for tier in df["tier"].unique(maintain_order=True).to_list():
            label = tier if qset == "main" else f"{tier}/{qset}"
            b = bounds[label]
            o, f = ov["oracle", tier], ov["no_memory", tier]
            if abs(o["weighted"] - b["ceiling"]) > 1e-9:
                raise SystemExit(f"{preset} {label}: run oracle {o['weighted']} != audit ceiling {b['ceiling']}")
            rows.append(
                {
                    "preset": preset,
                    "tier": label,
                    "n": o["n"],
                    "floor": (f["weighted"], f["unweighted"]),
                    "idk": b["idk"],
                    "oracle": (o["weighted"], o["unweighted"]),
                    "abstain": ax.get((tier, "ABSTAIN")),
                    "false_memory": ax.get((tier, "FALSE_MEMORY")),
                    "cannot_reach": b.get("ceiling_cannot_reach", {}),
                }
            )
    return rows


def _f(v) -> str:
    """A mean, "–" where there is none, "ungraded" where no question of the set was graded (a NaN)."""
    if v is None:
        return "–"
    return "ungraded" if v != v else f"{v:.3f}"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--presets", nargs="+", default=["tiny", "demo", "full"])
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "ceiling.md"))
    args = p.parse_args(argv)
    cmd = " ".join([".venv/bin/python benchmarks/ceiling.py", *(sys.argv[1:] if argv is None else argv)])
    rows = []
    with tempfile.TemporaryDirectory(prefix="memeval-ceiling-") as tmp:
        for preset in args.presets:
            rows += one_preset(preset, args.seed, Path(tmp))
            print(f"{preset}: done", file=sys.stderr)
    lines = [
        f"`{cmd}` — {dt.date.today().isoformat()}, {_machine()}; dry mode, seed {args.seed}.",
        "",
        "| preset | tier / set | n | no_memory (w / u) | always-IDK (w) | oracle (w / u) | oracle ABSTAIN | "
        "oracle FALSE_MEMORY | ceiling cannot reach |",
        "|---|---|---:|---|---:|---|---:|---:|---|",
    ]
    for r in rows:
        reach = ", ".join(f"{k} ({v})" for k, v in r["cannot_reach"].items()) or "–"
        lines.append(
            f"| {r['preset']} | {r['tier']} | {r['n']} | {_f(r['floor'][0])} / {_f(r['floor'][1])} | "
            f"{_f(r['idk'])} | {_f(r['oracle'][0])} / {_f(r['oracle'][1])} | {_f(r['abstain'])} | "
            f"{_f(r['false_memory'])} | {reach} |"
        )
    lines += [
        "",
        "ungraded: no question of the set graded (no_memory answers nothing of its own, and a memory-only run is "
        "not graded on abstention questions such as the probes).",
    ]
    text = "\n".join(lines) + "\n"
    write_text(args.out, text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
