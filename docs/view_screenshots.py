"""Re-take the run-browser screenshots in docs/ from the demo runs (what `make report` makes).

    .venv/bin/python docs/view_screenshots.py

Generates (or reuses) data/lifelog-demo-s1 and the no_memory, bm25 and oracle dry runs under runs/,
writes the site with `memeval view` into build/view/, and screenshots its index and the bm25 page in
headless Chromium (Debian's /usr/bin/chromium, network cut off) into docs/view-index.png and
docs/view-run.png.
"""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import sync_playwright

from memeval.analysis.site import build_site
from memeval.workbench import ensure_bench, project_root, run_systems

ROOT = project_root(Path(__file__).parent)


def shoot(page, path: Path, out: Path, full_page: bool) -> None:
    page.goto(path.resolve().as_uri(), wait_until="load")
    page.wait_for_timeout(1500)  # plotly draws after load
    page.screenshot(path=str(out), full_page=full_page)


def main() -> None:
    bench = ensure_bench(None, "demo", 1, data_root=ROOT / "data")
    runs = run_systems(bench, ["no_memory", "bm25", "oracle"], runs_root=ROOT / "runs")
    site = build_site(ROOT / "runs", ROOT / "build" / "view")
    bm25_page = site.pages[str(runs[1])]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"], headless=True)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file://") else r.abort())
        shoot(page, site.index, ROOT / "docs" / "view-index.png", full_page=False)
        shoot(page, bm25_page, ROOT / "docs" / "view-run.png", full_page=False)
        browser.close()
    print("wrote docs/view-index.png, docs/view-run.png")


if __name__ == "__main__":
    main()
