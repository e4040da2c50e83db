"""Time `make report`'s command on a fresh working folder, and take the README screenshot.

    .venv/bin/python benchmarks/report.py [--runs 3] [--out benchmarks/results/report.md]
                                          [--screenshot docs/degradation.png]

Each cold run starts from an empty folder (no data/, no runs/, no reports/), exactly what a fresh
clone has, and runs `memeval report notebooks/degradation.ipynb -o reports/degradation.html` there:
the notebook generates the demo bench into data/, runs no_memory, bm25 and oracle, and renders.
A warm run repeats the command in the same folder (bench and runs found and reused).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MEMEVAL = Path(sys.executable).parent / "memeval"
NOTEBOOK = ROOT / "notebooks" / "degradation.ipynb"
COMMAND = "memeval report notebooks/degradation.ipynb -o reports/degradation.html"


def _run(cwd: Path) -> float:
    t0 = time.perf_counter()
    subprocess.run(
        [str(MEMEVAL), "report", str(NOTEBOOK), "-o", "reports/degradation.html"],
        cwd=cwd,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return time.perf_counter() - t0


def _machine() -> str:
    mem = ""
    try:
        kb = int(next(ln for ln in open("/proc/meminfo") if ln.startswith("MemTotal")).split()[1])
        mem = f", {kb / 2**20:.0f} GiB RAM"
    except (OSError, StopIteration, ValueError):
        pass
    return f"{os.cpu_count()} cores{mem}, {platform.system()} {platform.release()}, Python {platform.python_version()}"


def screenshot(html: Path, png: Path) -> int:
    """The first figure of the report (the degradation curve), as a small PNG."""
    sys.path.insert(0, str(ROOT / "tests"))
    from browser import CHROMIUM, CHROMIUM_ARGS
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 700})  # the curve title fits
        page.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file://") else r.abort())
        page.goto(html.resolve().as_uri(), wait_until="load")
        page.wait_for_selector(".plotly-graph-div .main-svg")
        png.parent.mkdir(parents=True, exist_ok=True)
        page.locator(".plotly-graph-div").first.screenshot(path=str(png))
        browser.close()
    return png.stat().st_size


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "report.md"))
    ap.add_argument("--screenshot", default=None, help="also write the README screenshot here")
    args = ap.parse_args()
    cold, warm, sizes = [], [], []
    load_before = os.getloadavg()[0]
    last = None
    for i in range(args.runs):
        work = Path(tempfile.mkdtemp(prefix="memeval-bench-report-"))
        cold.append(_run(work))
        warm.append(_run(work))
        html = work / "reports" / "degradation.html"
        sizes.append(html.stat().st_size)
        last = work
        print(f"run {i + 1}: cold {cold[-1]:.1f} s, warm {warm[-1]:.1f} s, {sizes[-1] / 1e6:.2f} MB", flush=True)
    bench = next((last / "data").iterdir())
    import yaml

    manifest = yaml.safe_load((bench / "bench.yaml").read_text())
    tiers = ", ".join(f"{t['name']} {t.get('n_turns', '?')} turns" for t in manifest.get("tiers", []))
    n_records = sum(sum(1 for _ in open(d / "records.jsonl")) for d in (last / "runs").iterdir())
    lines = [
        "## `make report` (the degradation report from nothing)",
        "",
        f"Command, run in an empty folder (what a fresh clone has: no data/, no runs/): `{COMMAND}`",
        f"(timed by `.venv/bin/python benchmarks/report.py --runs {args.runs}`). Bench generated: "
        f"{bench.name} ({tiers}); systems no_memory, bm25, oracle in dry mode; {n_records} records.",
        "",
        "| figure | median | runs |",
        "|---|---|---|",
        f"| cold: generate bench + run 3 systems + execute + export | {statistics.median(cold):.1f} s | "
        + ", ".join(f"{x:.1f}" for x in cold)
        + " |",
        f"| warm: bench and runs reused, execute + export | {statistics.median(warm):.1f} s | "
        + ", ".join(f"{x:.1f}" for x in warm)
        + " |",
        f"| report size (plotly.js inline, offline) | {statistics.median(sizes) / 1e6:.2f} MB | |",
        "",
        f"Machine: {_machine()}. Date: {dt.date.today().isoformat()}. Budget: < 120 s cold on 2 cores.",
        f"1-minute load average before / after: {load_before:.1f} / {os.getloadavg()[0]:.1f} (other jobs on the "
        "machine inflate these times; a load near 0 is the clean case).",
        "",
    ]
    if args.screenshot:
        size = screenshot(last / "reports" / "degradation.html", Path(args.screenshot))
        lines.append(
            f"README screenshot `{args.screenshot}` taken from that report with headless Chromium "
            f"({size / 1e3:.0f} KB)."
        )
        lines.append("")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
