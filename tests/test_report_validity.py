"""The degradation report on an abstractive bench (LoCoMo-shaped): it leads with evidence-recall
curves and says dry answer scores are not valid there; no dry score curve is drawn (Chromium).

Each report is rendered in a folder of its own, as each test did alone; the rendered pages are then
opened one after the other in one Chromium tab (``load_pages(..., one_tab=True)``: one renderer instead of a
fresh browser context per page, ~1.3 CPU-s less a page on the 2-core machine). Every page still gets its own
errors, blocked requests and values, and every test its own assertions; a render that failed fails only
its own test."""

import json
from pathlib import Path

import pytest
from browser import PageReport, load_pages, require_chromium
from rendered import render_each, report_of
from test_loaders_locomo import _conv, _write

from memeval.analysis.report import render_report
from memeval.bench.loaders.locomo import import_locomo

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
OTHERS = ["compare", "traces", "latency"]
PWNED = {"pwned": "typeof window.__pwned"}

# the module's renders share one Chromium tab: keep them on one xdist worker
pytestmark = pytest.mark.xdist_group("report_validity")


def _figure_titles(html_text: str) -> list[str]:
    """The text of every plotly title object (figure and axis titles), in page order (each ``"title":{...}``
    decoded as JSON, whatever order its keys come in)."""
    out, pos, decode = [], 0, json.JSONDecoder().raw_decode
    while (i := html_text.find('"title":{', pos)) >= 0:
        obj, end = decode(html_text, i + 8)
        if isinstance(obj, dict) and isinstance(obj.get("text"), str):
            out.append(obj["text"])
        pos = end
    return out


def _render_degradation(tmp_path: Path) -> Path:
    conv = _conv("conv-26")
    conv["conversation"]["session_1"][0]["text"] += " <script>window.__pwned=1</script>"
    import_locomo([_write(tmp_path, [conv])], tmp_path / "locomo")
    out = tmp_path / "reports" / "degradation.html"
    render_report(
        NOTEBOOKS / "degradation.ipynb",
        out,
        {"bench_dir": str(tmp_path / "locomo"), "systems": ["no_memory", "bm25", "oracle"]},
        cwd=tmp_path,
    )
    return out


def _render_other(name: str, tmp_path: Path) -> Path:
    import_locomo([_write(tmp_path, [_conv("conv-26")])], tmp_path / "locomo")
    out = tmp_path / "reports" / f"{name}.html"
    params = {"bench_dir": str(tmp_path / "locomo"), "systems": ["bm25"]}
    if name == "compare":
        params["systems"] = ["no_memory", "bm25", "oracle"]
    if name == "latency":
        params["served"] = []
    render_report(NOTEBOOKS / f"{name}.ipynb", out, params, cwd=tmp_path)
    return out


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[str, Path | BaseException]:
    """Each report rendered in a fresh folder of its own: its path, or the exception its render raised."""
    return render_each(
        {
            "degradation": lambda: _render_degradation(tmp_path_factory.mktemp("validity-degradation")),
            **{n: lambda n=n: _render_other(n, tmp_path_factory.mktemp(f"validity-{n}")) for n in OTHERS},
        }
    )


@pytest.fixture(scope="module")
def pages(reports) -> dict[str, PageReport]:
    """Every rendered report opened in turn in one tab (screenshots beside each report)."""
    require_chromium()
    names = [n for n, r in reports.items() if isinstance(r, Path)]
    loaded = load_pages([(reports[n], reports[n].parent / f"{n}.png") for n in names], PWNED, one_tab=True)
    return dict(zip(names, loaded))


def test_degradation_report_on_locomo_shape_leads_with_retrieval_and_says_dry_is_not_valid(reports, request):
    text = report_of(reports, "degradation").read_text()
    titles = [
        t for t in _figure_titles(text) if t.startswith(("Evidence retrieval", "Degradation", "Mean score", "Outcome"))
    ]
    assert titles and all(t.startswith("Evidence retrieval") for t in titles), titles
    require_chromium()
    page = request.getfixturevalue("pages")["degradation"]
    assert page.blocked_requests == () and page.page_errors == () and page.console_errors == ()
    assert page.plotly_svgs >= 2 * page.plotly_divs >= 6  # every declared figure drawn
    assert page.values["pwned"] == "undefined"
    seen = page.text
    gate = seen.index("NOT VALID: dry answer scores on locomo")
    assert gate < seen.index("dry answer-score curves are not drawn")
    assert gate < seen.index("NOT VALID on this bench")  # the dry table is labelled too
    assert "evidence ceiling" in seen[gate : gate + 300]


@pytest.mark.parametrize("name", OTHERS)
def test_other_reports_say_dry_scores_are_not_valid_in_one_line(name, reports, request):
    text = report_of(reports, name).read_text()
    assert text.count('class="validity-gate"') == 1
    assert not [t for t in _figure_titles(text) if t.startswith(("Degradation", "Outcome"))]
    require_chromium()
    page = request.getfixturevalue("pages")[name]
    assert page.page_errors == () and page.blocked_requests == ()
    assert page.text.count("NOT VALID: dry answer scores on locomo") == 1
