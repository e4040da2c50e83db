"""notebooks/sweep: paired and stripped; run on the tiny preset (a 2-worker sweep), exported, and loaded in Chromium."""

from pathlib import Path

import jupytext
import nbformat

from browser import load_html, require_chromium
from notebook_project import assert_clean, notebook_project
from memeval.analysis.report import render_report

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "sweep"


def test_sweep_notebook_is_paired_and_stripped():
    nb = nbformat.read(NOTEBOOK.with_suffix(".ipynb"), as_version=4)
    paired = jupytext.read(NOTEBOOK.with_suffix(".py"))
    assert nb.metadata["jupytext"]["formats"] == "ipynb,py:percent"
    assert [c.source for c in nb.cells] == [c.source for c in paired.cells]
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.outputs == [] and c.execution_count is None for c in code)
    assert "parameters" in code[0].metadata.get("tags", [])


def test_sweep_notebook_runs_a_sweep_and_renders(tmp_path):
    out = tmp_path / "reports" / "sweep.html"
    params = {"preset": "tiny", "seeds": [1, 2], "workers": 2, "dashboard": None, "resamples": 200}
    render_report(NOTEBOOK.with_suffix(".ipynb"), out, params, cwd=notebook_project(tmp_path))
    assert_clean(tmp_path)
    text = out.read_text()
    sweep = tmp_path / "runs" / "sweep_notebook"
    assert (sweep / "sweep.json").is_file() and len(list(sweep.glob("*/records.jsonl"))) == 24
    assert "24 shards" in text
    assert "Degradation across 2 generated benches (seeds 1, 2)" in text
    assert text.count("Plotly.newPlot(") == 1 + 2 * 2  # the spread, then per bench: scores and retrieval
    require_chromium()
    page = load_html(out, tmp_path / "sweep.png")
    assert page.blocked_requests == () and page.page_errors == () and page.console_errors == ()
    assert page.plotly_divs == 5 and page.plotly_svgs >= 2 * page.plotly_divs
