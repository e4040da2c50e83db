"""Issue 30, the run browser: the index tells two seeds of one preset apart, sorts its columns, groups a
sweep's shards, ranks systems on a leaderboard with the oracle as a ceiling (never ranked), and two
runs picked there open a comparison page with the McNemar line and the flipped questions' traces
(Chromium, offline). Issue 22: the oracle is a bound in every view."""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from memeval.cli import main
from memeval.run import read_records, run_system
from memeval.workbench import ensure_bench
from tests.browser import load_html, load_pages, require_chromium

pytestmark = pytest.mark.xdist_group("view_browser")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """Two seeds of the tiny preset; on seed 1 bm25, bm25:k=2, the oracle and no_memory, on seed 2
    bm25; and a sweep folder holding two shards (bm25 on seed 1's small tier and on seed 2's core)."""
    root = tmp_path_factory.mktemp("browser")
    s1 = ensure_bench(None, "tiny", 1, data_root=root / "data")
    s2 = ensure_bench(None, "tiny", 2, data_root=root / "data")
    runs = root / "runs"
    made = {
        name: run_system(bench, spec, tiers=["core"], out=runs / name, progress=False)
        for name, bench, spec in (
            ("s1-bm25", s1, "bm25"),
            ("s1-bm25k2", s1, "bm25:k=2"),
            ("s1-oracle", s1, "oracle"),
            ("s1-floor", s1, "no_memory"),
            ("s2-bm25", s2, "bm25"),
        )
    }
    sweep = runs / "sw"
    made["shard-a"] = run_system(s1, "bm25", tiers=["small"], out=sweep / "shard-a", progress=False)
    made["shard-b"] = run_system(s2, "bm25", tiers=["core"], out=sweep / "shard-b", progress=False)
    (sweep / "sweep.json").write_text(json.dumps({"sweep": "sw", "shards": []}))
    assert main(["view", str(runs), "--out", str(root / "site"), "--no-progress"]) == 0
    return root, made


def _page(made, key):
    from memeval.analysis.site import page_name

    return page_name(made[key])


def _index_evaluations(made) -> dict[str, dict[str, str]]:
    """What each test below does on the index, by test: JavaScript run after the page has drawn, in order."""
    order = (
        """Array.from(document.querySelector('#runs').tBodies[0].children).map(r => r.getAttribute('data-k-folder'))"""
    )
    a, b = _page(made, "s1-bm25"), _page(made, "s1-bm25k2")
    return {
        "seeds": {
            "benches": """Array.from(document.querySelectorAll('#runs > tbody > tr.run'))
                .filter(r => r.getAttribute('data-f-system') === 'bm25').map(r => r.cells[1].innerText)""",
            "options": "Array.from(document.querySelectorAll('select[name=bench] option')).map(o => o.value)",
            "after_filter": """(() => {
                const s = document.querySelector('select[name=bench]');
                s.value = Array.from(s.options).find(o => o.value.includes('tiny s2')).value;
                s.dispatchEvent(new Event('change'));
                return Array.from(document.querySelectorAll('#runs tr.run'))
                    .filter(r => r.style.display !== 'none').map(r => r.cells[1].textContent);
            })()""",
        },
        "sort": {
            "before": order,
            "up": f"(() => {{ document.querySelector('#runs > thead th[data-key=folder]').click(); return {order}; }})()",
            "down": f"(() => {{ document.querySelector('#runs > thead th[data-key=folder]').click(); return {order}; }})()",
            "scores": """(() => {
                document.querySelector('#runs > thead th[data-key=score]').click();
                return Array.from(document.querySelector('#runs').tBodies[0].children).map(r => r.getAttribute('data-k-score'));
            })()""",
            "sweeps": """Array.from(document.querySelectorAll('#runs > tbody > tr.sweep'))
                .map(r => r.querySelectorAll('tr.run').length)""",
        },
        "oracle": {
            "boards": """Array.from(document.querySelectorAll('.leaderboard')).map(div => ({
        title: div.querySelector('h3').innerText,
        rows: Array.from(div.querySelectorAll('tbody tr')).map(r => [r.cells[0].innerText, r.cells[1].innerText, r.className])
    }))""",
            "option": "document.querySelector('select[name=system] option[value=oracle]').textContent",
            "oracle_row": """Array.from(document.querySelectorAll('#runs tr.run'))
                .filter(r => r.getAttribute('data-f-system') === 'oracle').map(r => [r.className, r.cells[2].innerText])""",
        },
        "pick": {
            "pick": f"""(() => {{
        for (const v of ['{a}', '{b}']) {{
            const c = document.querySelector(`input.pick[value="${{v}}"]`); c.checked = true; c.dispatchEvent(new Event('change'));
        }}
        const go = document.getElementById('compare-go');
        return [go.hidden, go.getAttribute('href'), document.getElementById('picked').innerText];
    }})()""",
            "other": f"""(() => {{
        for (const c of document.querySelectorAll('input.pick')) {{ if (c.checked) {{ c.checked = false; c.dispatchEvent(new Event('change')); }} }}
        for (const v of ['{a}', '{_page(made, "s2-bm25")}']) {{
            const c = document.querySelector(`input.pick[value="${{v}}"]`); c.checked = true; c.dispatchEvent(new Event('change'));
        }}
        return [document.getElementById('compare-go').hidden, document.getElementById('compare-why').innerText];
    }})()""",
        },
    }


@pytest.fixture(scope="module")
def index_visits(site, tmp_path_factory):
    """The index opened once for each test below, one visit after another in one tab (a reader coming
    back to it: one renderer process, not a fresh context per visit, ~1 CPU-s less each); every visit is
    a new window with its own errors, blocked requests and values (the index keeps no storage)."""
    require_chromium()
    root, made = site
    shots = tmp_path_factory.mktemp("index-visits")
    names = _index_evaluations(made)
    index = root / "site" / "index.html"
    reports = load_pages([(index, shots / f"{k}.png", ev) for k, ev in names.items()], one_tab=True)
    return dict(zip(names, reports))


@pytest.mark.timeout(300)
def test_index_tells_two_seeds_of_one_preset_apart_and_filters_by_bench(index_visits):
    rep = index_visits["seeds"]
    assert not rep.console_errors and not rep.page_errors and not rep.blocked_requests
    benches = rep.values["benches"]
    assert len(benches) == 2 and len(set(benches)) == 2  # the two seeds' bm25 runs, told apart
    assert any("tiny s1" in b for b in benches) and any("tiny s2" in b for b in benches)
    assert len([o for o in rep.values["options"] if o]) == 2
    # seed 2 only: its plain run and its sweep shard, nothing of seed 1
    assert len(rep.values["after_filter"]) == 2 and all("tiny s2" in b for b in rep.values["after_filter"])


@pytest.mark.timeout(300)
def test_columns_sort_both_ways_and_sweeps_are_one_row(index_visits):
    rep = index_visits["sort"]
    assert not rep.page_errors
    folders = ["s1-bm25", "s1-bm25k2", "s1-floor", "s1-oracle", "s2-bm25", "sw"]
    assert sorted(rep.values["before"]) == folders  # five runs and one sweep row at the top level
    assert rep.values["up"] == folders and rep.values["down"] == folders[::-1]
    scores = rep.values["scores"]
    numbers = [float(s) for s in scores if s]
    assert numbers == sorted(numbers) and len(set(numbers)) > 2
    assert scores[len(numbers) :] == [""] * (len(scores) - len(numbers))  # the sweep row (no score) last
    assert rep.values["sweeps"] == [2]


@pytest.mark.timeout(300)
def test_oracle_is_a_ceiling_in_every_view_never_ranked(site, index_visits):
    root, made = site
    rep = index_visits["oracle"]
    (s1,) = [b for b in rep.values["boards"] if "tiny s1" in b["title"]]
    by_system = {system: (rank, cls) for rank, system, cls in s1["rows"]}
    assert by_system["oracle"] == ("ceiling (bound)", "bound")
    assert by_system["no_memory"] == ("floor (bound)", "bound")
    ranks = sorted(int(rank) for rank, cls in by_system.values() if cls == "system")
    assert ranks == [1, 2]  # bm25 and bm25:k=2 only: the oracle scores highest but holds no rank
    assert s1["rows"][0][1] == "oracle" and s1["rows"][-1][1] == "no_memory"  # bounds above and below
    assert rep.values["option"] == "oracle (ceiling bound)"
    ((cls, cell),) = rep.values["oracle_row"]
    assert "bound" in cls and "ceiling (bound)" in cell
    oracle_page = (root / "site" / "runs" / _page(made, "s1-oracle")).read_text()
    assert "A ceiling run</b>: a bound shown beside systems" in oracle_page
    # a comparison with the oracle puts it second, marked as the bound it is
    cmp = root / "site" / "compare" / f"{Path(_page(made, 's1-bm25')).stem}--{Path(_page(made, 's1-oracle')).stem}.html"
    assert cmp.is_file() and "ceiling (bound)" in cmp.read_text()


@pytest.mark.timeout(300)
def test_two_runs_picked_open_a_comparison_with_mcnemar_and_flipped_traces(site, index_visits, tmp_path):
    root, made = site
    rep = index_visits["pick"]
    hidden, href, picked = rep.values["pick"]
    assert not hidden and href.startswith("compare/")
    # the page written with the site may hold the pair the other way round: the index says which is A
    assert picked in ("A = bm25, B = bm25:k=2", "A = bm25:k=2, B = bm25")
    run_a, run_b = ("s1-bm25", "s1-bm25k2") if picked.startswith("A = bm25,") else ("s1-bm25k2", "s1-bm25")
    assert rep.values["other"][0] and "not comparable" in rep.values["other"][1]  # two seeds: not the same questions

    cmp = load_html(
        root / "site" / href,
        tmp_path / "c.png",
        evaluate={
            "mcnemar": "Array.from(document.querySelectorAll('.mcnemar')).map(p => p.innerText)",
            "flips": "document.querySelectorAll('details.flip').length",
            "sides": "Array.from(document.querySelectorAll('details.flip')[0].querySelectorAll('.flip-side .trace h4')).map(h => h.innerText)",
        },
    )
    assert not cmp.console_errors and not cmp.page_errors and not cmp.blocked_requests
    # the expected counts from the records themselves
    ra = {(r["tier"], r["qid"]): r["score"] for r in read_records(made[run_a])}
    rb = {(r["tier"], r["qid"]): r["score"] for r in read_records(made[run_b])}
    both = [k for k in ra if k in rb and ra[k] is not None and rb[k] is not None]
    a_only = sum(1 for k in both if ra[k] >= 1 > rb[k])
    b_only = sum(1 for k in both if rb[k] >= 1 > ra[k])
    assert a_only + b_only > 0
    (line,) = cmp.values["mcnemar"]
    assert line.startswith("core: A − B = ") and f"over n={len(both)} questions" in line
    assert f"right in A only {a_only}, in B only {b_only}; McNemar exact p = " in line
    assert cmp.values["flips"] == a_only + b_only
    side_a, side_b = cmp.values["sides"]  # the same question, run A's trace beside run B's
    assert side_a.split(" · ")[0] == side_b.split(" · ")[0]
    labels = {"s1-bm25": "bm25", "s1-bm25k2": "bm25:k=2"}
    assert side_a.split(" · ")[1] == labels[run_a] and side_b.split(" · ")[1] == labels[run_b]
    assert "Flipped questions: " in cmp.text and "fairness: " in cmp.text


def test_worst_list_holds_no_full_credit_answer(site):
    root, made = site
    page = (root / "site" / "runs" / _page(made, "s1-bm25")).read_text()
    table = page[page.index('<table class="worst-questions">') :]
    table = table[: table.index("</table>")]
    rows = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in re.findall(r"<tr>(<td.*?)</tr>", table)]
    scores = [float(cells[5]) for cells in rows]  # the score column
    assert scores and all(s < 1 for s in scores)
    assert "with full credit left out" in table
    assert any(r["score"] == 1 for r in read_records(made["s1-bm25"]))  # there was full credit to leave out


def test_missed_evidence_text_from_the_manifest_bench_or_bench_option(site, tmp_path):
    """The run's own bench folder (from its manifest) gives the missed evidence its text; when that
    folder is gone, the page says so and ``--bench`` brings the text back."""
    root, made = site
    page = (root / "site" / "runs" / _page(made, "s1-bm25")).read_text()
    assert "evidence not returned" in page and "text not loaded" not in page
    assert "missed-evidence text from the bench folder" in page
    moved = tmp_path / "runs" / "s1-bm25"
    shutil.copytree(made["s1-bm25"], moved)
    man = json.loads((moved / "manifest.json").read_text())
    man["config"]["bench"]["root"] = str(tmp_path / "gone")
    (moved / "manifest.json").write_text(json.dumps(man))
    assert main(["view", str(moved.parent), "--out", str(tmp_path / "a"), "--no-progress"]) == 0
    (page_a,) = (tmp_path / "a" / "runs").glob("*.html")
    text = page_a.read_text()
    assert "text not loaded" in text and "pass the bench with memeval view --bench DIR" in text
    data = root / "data"  # a folder of bench folders: the one with this run's content hash is used
    assert main(["view", str(moved.parent), "--out", str(tmp_path / "b"), "--bench", str(data), "--no-progress"]) == 0
    (page_b,) = (tmp_path / "b" / "runs").glob("*.html")
    assert "text not loaded" not in page_b.read_text() and "lifelog-tiny-s1" in page_b.read_text()


@pytest.mark.timeout(300)
def test_serve_rebuilds_when_runs_change_and_compares_any_pair(site, tmp_path):
    root, made = site
    runs = tmp_path / "runs"
    runs.mkdir()
    shutil.copytree(made["s1-bm25"], runs / "a")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [sys.executable, "-m", "memeval", "view", str(runs), "--out", str(tmp_path / "site"), "--serve"]
    cmd += ["--port", str(port), "--poll", "0.3", "--pairs", "0", "--no-progress"]
    err = tmp_path / "stderr.txt"
    with open(err, "w") as fh:
        proc = subprocess.Popen(cmd, cwd=Path(__file__).resolve().parents[1], stdout=subprocess.DEVNULL, stderr=fh)
    base = f"http://127.0.0.1:{port}"

    def get(path: str) -> str:
        return urllib.request.urlopen(base + path, timeout=10).read().decode()

    def wait_for(check, what: str) -> str:
        deadline = time.monotonic() + 180
        while True:
            try:
                body = check()
                if body:
                    return body
            except OSError:
                pass
            assert time.monotonic() < deadline and proc.poll() is None, f"{what}: {err.read_text()[-2000:]}"
            time.sleep(0.3)

    try:
        index = wait_for(lambda: get("/index.html"), "site served")
        stamp = get("/stamp.txt").strip()
        assert f'data-stamp="{stamp}"' in index and re.search(r"updated \d\d:\d\d:\d\d UTC", index)
        assert len(set(re.findall(r'href="runs/([^"]+)"', index))) == 1
        # A run appears. The copy is not atomic: a poll may see it half written (skipped) and rebuild with
        # one run, and the next poll rebuild with both; wait for the state a user ends up seeing.
        shutil.copytree(made["s1-bm25k2"], runs / "b")

        def listed() -> set[str]:
            return set(re.findall(r'href="runs/([^"]+)"', get("/index.html")))

        wait_for(lambda: get("/stamp.txt").strip() != stamp and len(listed()) == 2, "rebuilt")
        index = get("/index.html")
        pages = sorted(set(re.findall(r'href="runs/([^"]+)"', index)))
        assert len(pages) == 2 and "bm25:k=2" in index
        assert json.loads(re.search(r'<script type="application/json" id="pairs">(.*?)</script>', index)[1]) == {}
        page = get(f"/compare?a={pages[0]}&b={pages[1]}")  # not written with the site: built when asked
        assert "McNemar exact p" in page and "Flipped questions" in page
        stamp = get("/stamp.txt").strip()
        gone = next(p for p in pages if p.startswith("a-"))
        shutil.rmtree(runs / "a")  # a run goes away: its page and its comparison go too
        wait_for(lambda: get("/stamp.txt").strip() != stamp and listed() == set(pages) - {gone}, "rebuilt again")
        assert not (tmp_path / "site" / "runs" / gone).exists() and not list((tmp_path / "site" / "compare").iterdir())
    finally:
        proc.terminate()
        proc.wait(timeout=30)
