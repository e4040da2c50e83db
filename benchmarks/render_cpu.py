"""CPU of rendering the shipped notebooks (``render_report``) on the tiny preset: the kernel's and the
rendering parent's, for one or more source trees side by side (say a baseline exported with
``git archive`` and this checkout), runs interleaved.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/render_cpu.py --trees /tmp/base . [--runs 3]
        [--notebooks degradation latency traces compare] [--preset tiny] [--seed 1]

Each tree gets its own project folder (``memeval.toml`` + ``notebooks/``), rendered once first so the
bench and the runs exist (what a second ``memeval report`` finds; not timed). Each timed render is a
fresh ``python`` running ``render_report`` with that tree first on ``PYTHONPATH`` (the kernel inherits
it): parent = that process's own CPU, kernel = the CPU of the children it reaped (the kernel, and
whatever the kernel started and reaped). Order: run 1 of every (notebook, tree), then run 2, ...
Prints medians per notebook and tree, and each run's figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, resource, sys
from memeval.analysis.report import render_report
nb, out, cwd, params = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
render_report(nb, out, params, cwd=cwd)
s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"parent": s.ru_utime + s.ru_stime, "kernel": c.ru_utime + c.ru_stime}))
"""


def render(tree: Path, project: Path, notebook: str, params: dict) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            CHILD,
            str(tree / "notebooks" / f"{notebook}.ipynb"),
            str(project / "reports" / f"{notebook}.html"),
            str(project / "notebooks"),
            json.dumps(params),
        ],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trees", nargs="+", type=Path, required=True)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--notebooks", nargs="+", default=["degradation", "latency", "traces", "compare"])
    ap.add_argument("--preset", default="tiny")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    params = {"preset": args.preset, "seed": args.seed}
    trees = [t.resolve() for t in args.trees]
    work = Path(tempfile.mkdtemp(prefix="render_cpu-"))
    projects = {}
    for i, tree in enumerate(trees):
        p = work / f"project{i}"
        (p / "notebooks").mkdir(parents=True)
        (p / "memeval.toml").write_text("")
        projects[tree] = p
        for nb in args.notebooks:  # bench and runs made once, untimed
            render(tree, p, nb, params)
    got: dict[tuple[str, Path], list[dict[str, float]]] = {}
    for run in range(args.runs):
        for nb in args.notebooks:
            for tree in trees:
                r = render(tree, projects[tree], nb, params)
                got.setdefault((nb, tree), []).append(r)
                print(f"run {run + 1} {nb:12s} {tree}: kernel {r['kernel']:.2f} parent {r['parent']:.2f}", flush=True)
    print(f"\nmedians over {args.runs} runs (CPU-s; kernel + parent = total)")
    header = "| notebook | " + " | ".join(f"{t} kernel / parent / total" for t in trees) + " |"
    print(header)
    print("|---|" + "---:|" * len(trees))
    sums = {t: 0.0 for t in trees}
    for nb in args.notebooks:
        cells = []
        for t in trees:
            k = statistics.median(r["kernel"] for r in got[(nb, t)])
            p = statistics.median(r["parent"] for r in got[(nb, t)])
            tot = statistics.median(r["kernel"] + r["parent"] for r in got[(nb, t)])
            sums[t] += tot
            cells.append(f"{k:.2f} / {p:.2f} / {tot:.2f}")
        print(f"| {nb} | " + " | ".join(cells) + " |")
    print("| all four (sum of medians) | " + " | ".join(f"{sums[t]:.2f}" for t in trees) + " |")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
