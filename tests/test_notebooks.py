"""Every notebook executed with papermill on the ``tiny`` lifelog preset, exported, and loaded in Chromium.

The four shipped renders (shared session-wide through ``rendered.shipped_report``) and the module's own
two (a bench whose text carries a script; degradation over two seeds) are opened one after the other in
one Chromium tab (``load_pages(..., one_tab=True)``: one renderer instead of a fresh browser context per
page, ~1.3 CPU-s less a page on the 2-core machine); each page keeps its own errors, blocked requests and
counts, and each test its own assertions."""

import html
import json
import re
from pathlib import Path

import jupytext
import nbformat
import pytest

from browser import PageReport, load_pages, require_chromium
from notebook_project import assert_clean, notebook_project
from rendered import TINY, render_each, report_of, shipped_report
from memeval.analysis.report import render_report
from memeval.bench import Question, Turn, save_bench, write_questions, write_turns
from memeval.bench.model import Bench, Tier

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
NAMES = ["degradation", "latency", "traces", "compare"]
PAYLOAD = "<script>window.__pwned=1</script>"
PWNED = {"pwned": "typeof window.__pwned"}

# the shipped pages share one Chromium tab (a module fixture): keep the module on one xdist worker
pytestmark = pytest.mark.xdist_group("notebooks")


@pytest.fixture(scope="module")
def own_reports(tmp_path_factory) -> dict[str, Path | BaseException]:
    """This module's own renders (the script-payload bench; degradation over two seeds), each in a fresh
    folder as its test rendered it: the report's path, or the exception its render raised (raised again in
    that test only)."""
    return render_each(
        {
            "payload": lambda: _render_payload(tmp_path_factory.mktemp("own-payload")),
            "seeds": lambda: _render_seeds(tmp_path_factory.mktemp("own-seeds")),
        }
    )


@pytest.fixture(scope="module")
def pages(tmp_path_factory, own_reports) -> dict[str, PageReport]:
    """Every report of the module that rendered (the four shipped ones, then this module's own), opened in
    turn in one tab. A shipped render that failed raises again in its own test, from ``shipped_report``."""
    require_chromium()
    shots = tmp_path_factory.mktemp("pages")
    made: dict[str, Path] = {}
    for name in NAMES:
        try:
            made[name] = shipped_report(tmp_path_factory, name, TINY)[1]
        except Exception:  # noqa: BLE001 - the test of that notebook renders it again and fails there
            continue
    made.update((n, r) for n, r in own_reports.items() if isinstance(r, Path))
    loaded = load_pages([(out, shots / f"{n}.png") for n, out in made.items()], PWNED, one_tab=True)
    return dict(zip(made, loaded))


def _generator():
    from memeval.bench.lifelog import generate

    return generate


@pytest.mark.parametrize("name", NAMES)
def test_notebook_is_paired_and_stripped(name):
    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    paired = jupytext.read(NOTEBOOKS / f"{name}.py")
    assert nb.metadata["jupytext"]["formats"] == "ipynb,py:percent"
    assert [c.source for c in nb.cells] == [c.source for c in paired.cells]
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.outputs == [] and c.execution_count is None for c in code)
    assert "parameters" in code[0].metadata.get("tags", [])


@pytest.mark.parametrize("name", NAMES)
def test_notebook_runs_on_tiny_preset_and_renders(name, tmp_path_factory, request):
    # each notebook rendered once per session in a fresh project (as on a fresh clone, under git), run as
    # JupyterLab runs it: the kernel's folder is notebooks/; data/ and runs/ still land at the project root
    workdir, out = shipped_report(tmp_path_factory, name, TINY)
    assert_clean(workdir)  # git status clean, nothing written beside the notebooks
    text = out.read_text()
    assert (workdir / "data" / "lifelog-tiny-s1" / "bench.yaml").is_file()
    expected_figures = {"degradation": 5, "latency": 1, "traces": 0, "compare": 2}[name]
    assert text.count("Plotly.newPlot(") >= expected_figures
    if name == "traces":
        assert "worst-questions" in text and "evidence not returned" in text  # greyed, with the bench's text
        assert "text not loaded" not in text and "flip between tiers" in text
    if name == "degradation":  # one colour per system in every figure of the report
        colours: dict[str, set] = {}
        for data in _figure_data(text):
            for t in data:
                who = str(t.get("name", "")).split(": ", 1)[-1].split(",")[0]  # "floor: no_memory" -> no_memory
                colour = (t.get("line") or {}).get("color") or (t.get("marker") or {}).get("color")
                if who in ("bm25", "no_memory", "oracle") and isinstance(colour, str):
                    colours.setdefault(who, set()).add(colour)
        assert set(colours) == {"bm25", "no_memory", "oracle"}
        assert all(len(c) == 1 for c in colours.values()), colours
        assert len({c for cs in colours.values() for c in cs}) == 3  # and no two systems share one
    if name == "compare":  # the paired section: each system against the baseline, with McNemar's p
        # default baseline: the first system in natural order (bm25, bm25:k=5, bm25:k=20, recent:...)
        assert "exact McNemar" in text and "recent:tokens=2000 − bm25" in text and "B = bm25 (baseline)" in text
        assert "recent:tokens=2000 − no_memory" not in text and "− oracle" not in text
        pairs = re.findall(r"<td>(bm25:k=\d+) − bm25</td>", text)
        assert list(dict.fromkeys(pairs)) == ["bm25:k=5", "bm25:k=20"]  # natural order, not text order
    if name == "latency":  # bm25 in process and, served on loopback, measured over HTTP
        assert "<td>bm25 over HTTP</td><td>measured</td>" in text and "<td>bm25</td><td>in_process</td>" in text
    require_chromium()
    page = request.getfixturevalue("pages")[name]
    assert page.blocked_requests == () and page.page_errors == () and page.console_errors == ()
    assert page.plotly_divs == text.count("Plotly.newPlot(")
    assert page.plotly_svgs >= 2 * page.plotly_divs  # every declared figure was drawn
    assert page.screenshot.stat().st_size > 10_000


def _figure_data(text: str) -> list[list[dict]]:
    """The trace lists of every plotly figure an exported report draws (``Plotly.newPlot(id, data, ...)``)."""
    decoder, out, at = json.JSONDecoder(), [], 0
    while (at := text.find("Plotly.newPlot(", at)) >= 0:
        start = text.index("[", at)
        data, _ = decoder.raw_decode(text, start)
        out.append(data)
        at = start
    return out


def _payload_bench(root: Path) -> Path:
    turns = [
        Turn(1, 1, "user", f"My dentist is Dr Okafor. {PAYLOAD}", "2026-01-05"),
        Turn(2, 1, "assistant", "Noted: Dr Okafor.", "2026-01-05"),
        Turn(3, 2, "user", "We adopted a beagle named Biscuit.", "2026-02-10"),
    ]
    questions = [
        Question("Q1", "BASIC", "Who is the user's dentist?", "Dr Okafor", evidence_turns=(1,)),
        Question("Q2", "BASIC", "What is the beagle called?", "Rex", evidence_turns=(3,)),
    ]
    write_turns(root / "turns.jsonl", turns)
    write_questions(root / "questions.jsonl", questions)
    save_bench(
        Bench(
            name="payload",
            version="1",
            root=str(root),
            tiers=(Tier("core", "turns.jsonl", "questions.jsonl", n_turns=3, n_questions=2, n_tokens=30),),
        )
    )
    return root


def _render_payload(tmp_path: Path) -> Path:
    bench = _payload_bench(tmp_path / "bench")
    out = tmp_path / "traces.html"
    render_report(
        NOTEBOOKS / "traces.ipynb",
        out,
        {"bench_dir": str(bench), "systems": ["bm25"], "runs_root": str(tmp_path / "runs"), "n_worst": 10},
        cwd=tmp_path,
    )
    return out


def test_trace_report_escapes_bench_text(own_reports, request):
    """A turn carrying a script tag shows as text in the trace tables and never runs."""
    out = report_of(own_reports, "payload")
    text = out.read_text()
    assert PAYLOAD not in text.replace("\\u003c", "<")  # nowhere raw, not even in embedded JSON
    assert html.escape(PAYLOAD) in text
    require_chromium()
    page = request.getfixturevalue("pages")["payload"]
    assert page.values["pwned"] == "undefined"
    assert PAYLOAD in page.text  # visible to the reader as text
    assert page.page_errors == () and page.blocked_requests == ()


def test_ensure_bench_generates_once(tmp_path):
    from memeval.workbench import ensure_bench

    _generator()
    path = ensure_bench(None, "tiny", 1, data_root=tmp_path / "data")
    assert path == tmp_path / "data" / "lifelog-tiny-s1" and (path / "bench.yaml").is_file()
    stamp = (path / "bench.yaml").stat().st_mtime_ns
    assert ensure_bench(None, "tiny", 1, data_root=tmp_path / "data") == path
    assert (path / "bench.yaml").stat().st_mtime_ns == stamp  # not regenerated


def test_ensure_bench_rejects_a_folder_without_manifest(tmp_path):
    from memeval.workbench import ensure_bench
    from memeval.errors import InputError

    with pytest.raises(InputError, match="bench.yaml: no bench manifest here"):
        ensure_bench(tmp_path)


def _render_seeds(tmp_path: Path) -> Path:
    workdir = tmp_path / "project"
    notebook_project(workdir)
    out = workdir / "reports" / "degradation-seeds.html"
    render_report(
        NOTEBOOKS / "degradation.ipynb",
        out,
        {"preset": "tiny", "seed": 1, "seeds": [1, 2], "systems": ["no_memory", "bm25"], "resamples": 200},
        cwd=workdir,
    )
    return out


def test_degradation_with_seeds_shows_the_between_bench_spread(own_reports, request):
    out = report_of(own_reports, "seeds")
    workdir = out.parent.parent
    text = out.read_text()
    assert (workdir / "data" / "lifelog-tiny-s2" / "bench.yaml").is_file()  # one bench per seed
    assert "Degradation across 2 generated benches (seeds 1, 2)" in text
    assert "bm25: between-seed spread" in text and "weighted_lo" in text
    require_chromium()
    page = request.getfixturevalue("pages")["seeds"]
    assert page.page_errors == () and page.console_errors == () and page.blocked_requests == ()
    assert page.plotly_svgs >= 2 * page.plotly_divs
