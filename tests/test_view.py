"""``memeval view``: the static run browser opens offline in Chromium, links every run, escapes bench text."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from memeval.workbench import ensure_bench, run_systems
from memeval.cli import main
from memeval.run import run_system
from tests.browser import load_html, load_pages, require_chromium

EVIL = "<img src=x onerror=window.__pwned=1>"


# one xdist worker runs this module: the site of four runs, built by a module fixture, is built once
pytestmark = pytest.mark.xdist_group("view")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("view")
    bench = ensure_bench(None, "tiny", 1, data_root=root / "data")
    runs = run_systems(bench, ["bm25", "no_memory", "oracle"], runs_root=root / "runs")
    runs.append(
        run_system(bench, "recent:tokens=200", tiers=["core"], name=EVIL, runs_root=root / "runs", progress=False)
    )
    assert main(["view", str(root / "runs"), "--out", str(root / "site"), "--no-progress"]) == 0
    return root, runs


def test_index_links_every_run_and_escapes_names(site):
    root, runs = site
    index = (root / "site" / "index.html").read_text()
    links = set(re.findall(r'href="(runs/[^"]+\.html)"', index))  # in the runs table and the leaderboards
    assert len(links) == len(runs) == 4
    assert all((root / "site" / link).is_file() for link in links)
    assert EVIL not in index and "&lt;img src=x" in index
    assert "n=" in index and "[" in index  # headline with interval and n
    assert "http://" not in index and "https://" not in index  # nothing fetched from the network


def test_run_page_compares_with_its_bounds_over_equal_questions(site):
    """The bm25 run's page states the fairness line and sets its floor and ceiling beside it over the
    questions all three graded: the oracle's abstention questions are left out and said so."""
    from memeval.analysis.site import page_name

    root, runs = site
    bm25 = next(r for r in runs if "bm25" in r.name)
    page = (root / "site" / "runs" / page_name(bm25)).read_text()
    assert '<p class="fairness">fairness: ' in page and "side by side over the" in page
    assert "oracle: " in page and "graded question" in page and "left out" in page
    assert "graded_own" in page


@pytest.mark.timeout(300)
def test_site_opens_offline_in_chromium(site, tmp_path):
    require_chromium()
    root, runs = site
    run_files = sorted((root / "site" / "runs").glob("*.html"))
    compares = sorted((root / "site" / "compare").glob("*.html"))  # the named run's pairs too: bench text inside
    assert any("pwned" in p.name for p in compares)
    pages = [root / "site" / "index.html", *run_files, *compares]
    links = "document.querySelectorAll('#runs tbody a').length"
    # one tab clicks through the site (plotly.min.js compiled once, not once per page); each page's
    # errors, blocked requests and window are its own; each screenshot is of the first screen (the default)
    reports = load_pages(
        [(p, tmp_path / (p.stem + ".png")) for p in pages],
        {"pwned": "typeof window.__pwned", "links": links},
        one_tab=True,
    )
    index, *rest = reports  # one browser launch for the index, every run page and every comparison page
    run_pages = rest[: len(run_files)]
    assert not index.console_errors and not index.page_errors and not index.blocked_requests
    assert index.values == {"pwned": "undefined", "links": 4}
    assert len(run_pages) == 4
    for page, rep in zip(pages[1:], rest):
        assert not rep.console_errors and not rep.page_errors and not rep.blocked_requests, page.name
        assert rep.values["pwned"] == "undefined"
        assert rep.plotly_svgs >= rep.plotly_divs  # every figure drawn
        assert "all runs" in rep.text
    for page, rep in zip(run_files, run_pages):
        assert "Per tier × axis" in rep.text
        # plotly.min.js (4.8 MB) is read by the pages that draw a figure, and only by them
        assert ("plotly.min.js" in page.read_text()) == (rep.plotly_divs > 0), page.name
    assert any(rep.plotly_divs == 0 for rep in run_pages)  # the one-tier run draws no curve
    for rep in rest[len(run_files) :]:
        assert "McNemar exact p" in rep.text or "no question graded by both runs" in rep.text
    (bm25,) = [rep for page, rep in zip(run_files, run_pages) if page.name.startswith("lifelog_bm25")]
    assert bm25.plotly_divs >= 1  # the degradation curve


def test_filters_hide_rows(site, tmp_path):
    require_chromium()
    root, _ = site
    rep = load_html(
        root / "site" / "index.html",
        tmp_path / "f.png",
        evaluate={
            "shown": """(() => {
        const s = document.querySelector('select[name=system]'); s.value = 'oracle';
        s.dispatchEvent(new Event('change'));
        return Array.from(document.querySelectorAll('#runs tbody tr')).filter(r => r.style.display !== 'none').length;
    })()"""
        },
    )
    assert rep.values["shown"] == 1


def test_serve_on_loopback(site):
    root, _ = site
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "memeval",
            "view",
            str(root / "runs"),
            "--out",
            str(root / "site2"),
            "--serve",
            "--port",
            str(port),
            "--no-progress",
        ],
        cwd=Path(__file__).resolve().parents[1],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        for line in proc.stdout:  # wait for the thing: "serving ..." is printed once the socket listens
            if line.startswith("serving http://"):
                break
        else:
            raise AssertionError(f"memeval view --serve ended ({proc.wait()}) without serving")
        body = urllib.request.urlopen(f"http://127.0.0.1:{port}/index.html", timeout=30).read().decode()
        assert "memeval runs" in body and len(set(re.findall(r'href="(runs/[^"]+)"', body))) == 4
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_missing_runs_folder_is_one_line(tmp_path, capsys):
    assert main(["view", str(tmp_path / "nope"), "--out", str(tmp_path / "s")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no such folder of runs" in err
