"""The judges notebook: paired and stripped, renders offline on the tiny preset with the two scripted
loopback judges (and says so), and loads in Chromium without errors or outside requests."""

from pathlib import Path

import jupytext
import nbformat

from browser import load_html, require_chromium
from notebook_project import assert_clean, notebook_project
from memeval.analysis.report import render_report

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "judges"


def test_judges_notebook_is_paired_and_stripped():
    nb = nbformat.read(NOTEBOOK.with_suffix(".ipynb"), as_version=4)
    paired = jupytext.read(NOTEBOOK.with_suffix(".py"))
    assert nb.metadata["jupytext"]["formats"] == "ipynb,py:percent"
    assert [c.source for c in nb.cells] == [c.source for c in paired.cells]
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.outputs == [] and c.execution_count is None for c in code)
    assert "parameters" in code[0].metadata.get("tags", [])


def test_judges_notebook_renders_offline_with_stub_judges(tmp_path):
    out = tmp_path / "reports" / "judges.html"
    render_report(NOTEBOOK.with_suffix(".ipynb"), out, {"preset": "tiny", "seed": 1}, cwd=notebook_project(tmp_path))
    assert_clean(tmp_path)
    assert not (tmp_path / "runs").exists()  # the two gradings are scratch runs: a temporary folder, not runs/
    text = out.read_text()
    assert "No judge given" in text and "scripted judges on loopback" in text
    assert "strict-stub" in text and "lenient-stub" in text and "Cohen" in text
    assert "<td>false_premise</td>" in text and "<td>near_miss</td>" in text
    assert text.count("Plotly.newPlot(") == 3  # confusion heatmap, acceptance per trap, per axis
    require_chromium()
    align = "getComputedStyle(document.querySelector('table.memeval-table td')).textAlign"
    page = load_html(out, tmp_path / "judges.png", evaluate={"align": align})
    assert page.values["align"] == "left"
    assert page.blocked_requests == () and page.page_errors == () and page.console_errors == ()
    assert page.plotly_divs == 3 and page.plotly_svgs >= 2 * page.plotly_divs
    assert page.screenshot.stat().st_size > 10_000
