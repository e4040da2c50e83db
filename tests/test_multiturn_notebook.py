"""notebooks/multiturn: paired and stripped; executed on a small suite, exported, checked in Chromium."""

import html
import re
from pathlib import Path

import jupytext
import nbformat

from browser import load_html, require_chromium
from notebook_project import assert_clean, notebook_project
from memeval.analysis.report import render_report

NB = Path(__file__).resolve().parent.parent / "notebooks"


def test_notebook_is_paired_and_stripped():
    nb = nbformat.read(NB / "multiturn.ipynb", as_version=4)
    paired = jupytext.read(NB / "multiturn.py")
    assert nb.metadata["jupytext"]["formats"] == "ipynb,py:percent"
    assert [c.source for c in nb.cells] == [c.source for c in paired.cells]
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.outputs == [] and c.execution_count is None for c in code)
    assert "parameters" in code[0].metadata.get("tags", [])


def test_notebook_runs_on_a_small_suite_and_renders(tmp_path):
    out = tmp_path / "reports" / "multiturn.html"
    render_report(
        NB / "multiturn.ipynb",
        out,
        {"sessions": 6, "cross_session": 1, "agents": ["correct", "drops_constraint", "omits_key"]},
        cwd=notebook_project(tmp_path),  # as JupyterLab runs it: from notebooks/
    )
    assert_clean(tmp_path)  # the suite went to the project's data/, not notebooks/data/
    text = out.read_text()
    assert (tmp_path / "data" / "multiturn-s20261018-n6" / "suite.yaml").is_file()
    assert text.count("Plotly.newPlot(") == 3
    assert "bad-turn" in text  # static drill-down of a failure
    assert "total (weighted)" in text and "9+" in text
    assert re.search(r"<td>\d\.\d+–\d\.\d+</td>", text)  # pass rates with their 95% intervals
    plain = html.unescape(text)
    assert "drops_constraint" in plain and "remembered" in plain
    assert "paraphrase" in plain and "rules-v1" in plain  # extractor accuracy table
    require_chromium()
    align = "getComputedStyle(document.querySelector('table.memeval-table td')).textAlign"
    page = load_html(out, tmp_path / "multiturn.png", evaluate={"align": align})
    assert page.values["align"] == "left"  # prose reads left to right, not JupyterLab's right-aligned cells
    assert page.blocked_requests == () and page.page_errors == () and page.console_errors == ()
    assert page.plotly_divs == 3 and page.plotly_svgs >= 6
    assert "tax_mode" in page.text
    # where it breaks: the bad-turn histogram (a drawn figure) and the correction breakdown table
    assert "Bad-turn histogram per stratum" in page.text and "Bad turn per assertion mode" in page.text
    assert "drops_constraint\tpersist\t" in page.text  # it breaks a persist key
    assert "drops_constraint\tfact\t1\t0\t1\t" in page.text  # 1 task with a fact correction, failed
    assert "Correction breakdown (fact, goal, form)" in page.text and "stale_residue" in page.text
    assert "final right / process wrong" in page.text
