"""What a report page costs the machine in the test suite's Chromium: in a fresh browser context per page
(tests/browser.py before issue 23 round 7) against the process's one tab (after).

    .venv/bin/python benchmarks/chromium_page_cost.py REPORT.html [--pages 3] [--repeats 3]

``REPORT.html`` is any rendered report (``make report`` writes ``reports/degradation.html``). Each
measurement runs in a child process that launches Chromium through ``tests/browser.py``, opens the page
``--pages`` times and closes the browser; the CPU is the whole machine's (``/proc/stat``: Chromium's
renderers are not all reaped by the process that started them, so a process's own rusage misses them).
A run that opens no page is subtracted, so the figure is per page. Prints the median of ``--repeats``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_CHILD = r"""
import json, sys, tempfile
sys.path.insert(0, sys.argv[1])
import browser
mode, page, n = sys.argv[2], sys.argv[3], int(sys.argv[4])
shots = tempfile.mkdtemp()
browser.run_in_chromium(lambda b: None)  # the launch, in every mode
if mode == "tab":
    reports = [browser.load_html(page, f"{shots}/{i}.png") for i in range(n)]
else:  # a fresh context per page, as tests/browser.py did before
    def job(b):
        out = []
        for i in range(n):
            context = b.new_context(viewport={"width": 1280, "height": 900})
            try:
                out.append(browser._visit(browser._Tab(context.new_page()), page, f"{shots}/{i}.png", None, False, 30_000))
            finally:
                context.close()
        return out
    reports = browser.run_in_chromium(job)
browser._chromium().close()
print(json.dumps([[r.plotly_divs, r.plotly_svgs, len(r.page_errors)] for r in reports]))
"""


def _busy() -> float:
    fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return (sum(fields) - fields[3] - fields[4]) / 100  # all but idle and iowait, in CPU-s


def _measure(mode: str, page: str, n: int) -> tuple[float, float, list]:
    b0, t0 = _busy(), time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(ROOT / "tests"), mode, page, str(n)],
        capture_output=True,
        text=True,
        check=True,
    )
    return _busy() - b0, time.perf_counter() - t0, json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("report")
    ap.add_argument("--pages", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    page = str(Path(args.report).resolve())
    per_page: dict[str, list[float]] = {"fresh": [], "tab": []}
    for _ in range(args.repeats):
        for mode in per_page:
            base, _, _ = _measure(mode, page, 0)
            busy, wall, pages = _measure(mode, page, args.pages)
            per_page[mode].append((busy - base) / args.pages)
            print(f"{mode}: {busy:.1f} CPU-s for {args.pages} pages, {base:.1f} for none, {wall:.1f} s; pages {pages}")
    fresh, tab = (statistics.median(per_page[m]) for m in ("fresh", "tab"))
    print(
        f"per page, median of {args.repeats}: fresh context {fresh:.2f} CPU-s, one tab {tab:.2f} ({tab / fresh:.2f}x)"
    )


if __name__ == "__main__":
    main()
