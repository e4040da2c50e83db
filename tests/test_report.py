import os
import re
import stat

import pytest

from browser import load_html, require_chromium
from memeval.analysis.report import parse_parameter, to_offline_html
from memeval.cli import main

NOTEBOOK = """# %% tags=["parameters"]
n = 3
label = "x"
run_dirs: list[str] | None = None
systems = ["bm25"]

# %%
from memeval.analysis.report import setup_notebook
setup_notebook()
import plotly.graph_objects as go
go.Figure(go.Bar(x=[1, 2, 3], y=[n, 2, 1]))

# %%
go.Figure(go.Scatter(x=[1, 2], y=[2, 1]))

# %%
import ipywidgets as w
w.Button(description="live only")

# %%
print("SECRET_SOURCE_MARKER".lower(), n * 2, label)

# %%
print("GOT", repr(run_dirs), repr(systems))

# %%
import sys
ip = get_ipython()
print("KERNEL", type(ip.kernel).__name__, "debugpy" in sys.modules, ip.history_manager.enabled)
import debugpy
print("DEBUGPY", debugpy.__name__)

# %%
from IPython.display import HTML
import polars as pl
from memeval.analysis.tables import html_table
HTML(html_table(pl.DataFrame({"system": ["b", "a", "c"], "score": [0.5, 10.0, 2.0]})))
"""


# one xdist worker runs this module: the rendered report, built by a module fixture, is built once
pytestmark = pytest.mark.xdist_group("report")


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    d = tmp_path_factory.mktemp("report")
    (d / "demo.py").write_text(NOTEBOOK)
    out = d / "out" / "demo.html"
    # one render for the tests below: parameters (one value where a list is expected among them), hidden
    # code, embedded plotly, a widget, an interactive table
    code = main(
        ["report", str(d / "demo.py"), "-p", "n", "21", "-p", "label", "hello <b>"]
        + ["-p", "run_dirs", "runs/x", "-p", "systems", "oracle", "-o", str(out)]
    )
    return code, out


def test_report_executes_with_parameters_and_hides_code(rendered, capsys):
    code, out = rendered
    assert code == 0
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~umask  # a normal file, not the temp file's 0600
    html = out.read_text()
    assert "secret_source_marker 42 hello &lt;b&gt;" in html  # output kept, parameter applied, text escaped
    assert "SECRET_SOURCE_MARKER" not in html  # input cells excluded
    assert "from demo.py at " in html
    assert "parameters: n=21, label='hello &lt;b&gt;', run_dirs='runs/x', systems='oracle'." in html
    assert "jp-InputArea" not in re.sub(r"\.jp-InputArea[^{]*\{", "", html)  # no input area elements


def test_render_kernel_has_no_debugger_and_no_history(rendered):
    """A render's kernel is memeval's ReportKernel: ipykernel's debugger (debugpy's pydevd) never loaded and
    IPython's history off; a notebook that imports debugpy itself still gets it."""
    code, out = rendered
    assert code == 0
    html = out.read_text()
    assert "KERNEL ReportKernel False False" in html
    assert "DEBUGPY debugpy" in html


def test_kernel_class_only_for_a_kernel_running_this_interpreter(tmp_path, monkeypatch):
    """Another interpreter's kernel (memeval maybe not installed there) is started as its spec says."""
    import json
    import sys

    from memeval.analysis.report import REPORT_KERNEL_CLASS, _kernel_arguments
    from memeval.analysis.report_kernel import ReportKernel

    assert f"{ReportKernel.__module__}.{ReportKernel.__qualname__}" == REPORT_KERNEL_CLASS
    for name, exe in [("ours", sys.executable), ("plain", "python"), ("other", str(tmp_path / "bin" / "python"))]:
        spec = tmp_path / "kernels" / name
        spec.mkdir(parents=True)
        argv = [exe, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
        (spec / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": name, "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path))
    chosen = f"--IPKernelApp.kernel_class={REPORT_KERNEL_CLASS}"
    assert chosen in _kernel_arguments("ours") and chosen in _kernel_arguments("plain")
    assert chosen not in _kernel_arguments("other")
    assert "--HistoryManager.enabled=False" in _kernel_arguments("other")
    assert chosen not in _kernel_arguments("no-such-kernel")


def test_report_embeds_plotly_and_fetches_nothing(rendered):
    html = rendered[1].read_text()
    assert "window.Plotly = Plotly" in html  # plotly.js itself, inline
    assert html.count("Plotly.newPlot(") == 2
    assert not re.search(r"<script[^>]+src=", html)
    assert not re.search(r"<link[^>]+href=[\"']https?:", html)
    assert "mathjax" not in html.lower().split("window.plotly = plotly")[-1]
    assert "widget-view+json" not in html and "interactive widget: it runs in a live Jupyter session only" in html


_ROWS = "Array.from(document.querySelectorAll('table.memeval-table tbody tr'))"
_TABLE_CLICKS = {  # run in this order once the page has drawn (its text is read before)
    "initial": f"{_ROWS}.map(r => r.cells[0].textContent).join(',')",
    "by_score": "(() => { document.querySelectorAll('table.memeval-table th')[1].click(); "
    f"return {_ROWS}.map(r => r.cells[0].textContent).join(','); }})()",
    "by_score_desc": "(() => { document.querySelectorAll('table.memeval-table th')[1].click(); "
    f"return {_ROWS}.map(r => r.cells[0].textContent).join(','); }})()",
    "filtered": "(() => { const box = document.querySelector('input.memeval-filter'); box.value = 'c'; "
    "box.dispatchEvent(new Event('input')); "
    f"return {_ROWS}.filter(r => r.style.display !== 'none').length; }})()",
}


@pytest.fixture(scope="module")
def report_page(rendered, tmp_path_factory):
    """The rendered report opened once in Chromium (a fresh context: plotly.js, inline, compiled once,
    ~3 CPU-s) for the two tests below: its errors and blocked requests cover the load and the table
    clicks, each test checks its own part."""
    require_chromium()
    code, out = rendered
    assert code == 0
    return load_html(out, tmp_path_factory.mktemp("report-page") / "report.png", evaluate=_TABLE_CLICKS)


def test_report_renders_offline_in_chromium(report_page):
    page = report_page
    assert page.blocked_requests == ()
    assert page.page_errors == () and page.console_errors == ()
    assert page.plotly_divs == 2
    assert page.plotly_svgs >= 2 * 2  # plotly draws two .main-svg layers per figure
    assert "secret_source_marker 42" in page.text
    assert page.screenshot.stat().st_size > 10_000  # drawn: a blank first screen is a 5.3 KB PNG


def test_failing_cell_is_named_and_nothing_written(tmp_path, capsys):
    nb = tmp_path / "bad.py"
    nb.write_text('# %% tags=["parameters"]\nx = 1\n\n# %%\ny = 2\n\n# %%\nraise ValueError("no such tier: huge")\n')
    out = tmp_path / "bad.html"
    assert main(["report", str(nb), "-o", str(out)]) == 1
    # one line from memeval (other tests in the session may have configured logging to stderr)
    (err,) = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("memeval report:")]
    assert "cell 2" in err and 'raise ValueError("no such tier: huge")' in err
    assert "ValueError: no such tier: huge" in err
    assert not out.exists() and list(tmp_path.iterdir()) == [nb]


def test_missing_notebook_is_an_input_error(tmp_path, capsys):
    assert main(["report", str(tmp_path / "nope.ipynb"), "-o", str(tmp_path / "x.html")]) == 2
    assert "nope.ipynb: no such notebook" in capsys.readouterr().err


def test_parse_parameter():
    assert parse_parameter("3") == 3
    assert parse_parameter("true") is True
    assert parse_parameter("[no_memory, bm25:k=10]") == ["no_memory", "bm25:k=10"]
    assert parse_parameter("data/demo") == "data/demo"
    assert parse_parameter("a: [") == "a: ["


def test_widget_outputs_become_a_static_note():
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    cell = nbformat.v4.new_code_cell("w")
    cell.outputs = [
        nbformat.v4.new_output(
            "display_data",
            data={
                "application/vnd.jupyter.widget-view+json": {
                    "model_id": "widget-model-7f3e9c",
                    "version_major": 2,
                    "version_minor": 0,
                },
                "text/plain": "Button()",
            },
        )
    ]
    nb.cells = [cell]
    html = to_offline_html(nb)
    # the view's model id (a short id such as "abc" could occur elsewhere in the page)
    assert "interactive widget" in html and "widget-model-7f3e9c" not in html
    assert "widgets" in nb.metadata  # the caller's notebook is left as it was


def test_figure_without_offline_renderer_is_an_error(tmp_path, capsys):
    nb = tmp_path / "nosetup.py"
    nb.write_text(
        '# %%\nimport plotly.io as pio\npio.renderers.default = "plotly_mimetype"\n'
        "import plotly.graph_objects as go\ngo.Figure(go.Bar(y=[1]))\n"
    )
    out = tmp_path / "nosetup.html"
    assert main(["report", str(nb), "-o", str(out)]) == 1
    (err,) = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("memeval report:")]
    assert "cell 0" in err and "setup_notebook()" in err
    assert not out.exists()


def test_report_tables_sort_and_filter_after_export(report_page):
    page = report_page  # the clicks of _TABLE_CLICKS, in order, on the exported page
    assert page.page_errors == () and page.console_errors == ()
    assert page.values == {"initial": "b,a,c", "by_score": "b,c,a", "by_score_desc": "a,c,b", "filtered": 1}


LIST_NOTEBOOK = """# %% tags=["parameters"]
run_dirs: list[str] | None = None
systems = ["bm25"]
label = "x"

# %%
print("GOT", repr(run_dirs), repr(systems), repr(label))
"""


def test_unknown_parameter_is_refused_before_anything_runs(tmp_path, capsys):
    nb = tmp_path / "lists.py"
    nb.write_text(LIST_NOTEBOOK.replace('print("GOT"', 'open("RAN", "w"); print("GOT"'))
    out = tmp_path / "lists.html"
    assert main(["report", str(nb), "-p", "run_dir", "runs/x", "-o", str(out), "--no-progress"]) == 1
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("memeval report:")]
    assert len(err) == 1 and "unknown parameter run_dir" in err[0]
    assert "this notebook takes: run_dirs, systems, label" in err[0]
    assert not out.exists() and not (tmp_path / "RAN").exists() and not (__import__("pathlib").Path("RAN").exists())


def test_one_value_where_a_list_is_expected_becomes_a_list(rendered):
    code, out = rendered  # rendered with -p run_dirs runs/x -p systems oracle: one value each
    assert code == 0
    text = out.read_text()
    assert "GOT [&#x27;runs/x&#x27;] [&#x27;oracle&#x27;]" in text or "GOT ['runs/x'] ['oracle']" in text


def test_a_notebook_kernel_does_not_import_nbformat():
    """What the shipped notebooks import in their kernel stays clear of nbformat (and through it
    jsonschema's format checkers, which cost a kernel seconds at start)."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    imports = sorted(
        {
            line
            for nb in (root / "notebooks").glob("*.py")
            for line in nb.read_text().splitlines()
            if line.startswith(("from memeval", "import memeval"))
        }
    )
    assert any("import setup_notebook" in line for line in imports)
    code = "\n".join(imports) + "\nimport sys\nprint(sorted(m for m in ('nbformat', 'jsonschema') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root, check=True)
    assert out.stdout.strip() == "[]"


def test_report_kernel_hands_back_the_process_streams_when_it_shuts_down(monkeypatch):
    """ipykernel 7.4's control thread flushes the captured ``sys.stdout`` after answering a shutdown request,
    through the IOPub thread the main thread may have stopped meanwhile: that flush then hangs until
    jupyter_client's SIGTERM 2.5 s later (every other render). ReportKernel flushes what the notebook printed
    and hands back the process's own streams while answering, so that late flush has nothing to wait for; a
    restart keeps them (the kernel lives on)."""
    import io
    import sys

    from memeval.analysis.report_kernel import ReportKernel

    flushed: list[str] = []

    class Captured(io.StringIO):
        def __init__(self, name: str) -> None:
            super().__init__()
            self.name = name

        def flush(self) -> None:
            flushed.append(self.name)

    kernel = ReportKernel.__new__(ReportKernel)  # no kernel app: do_shutdown reads only its (absent) shell
    out, err = Captured("stdout"), Captured("stderr")
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    assert kernel.do_shutdown(True) == {"status": "ok", "restart": True}
    assert sys.stdout is out and sys.stderr is err and flushed == []
    assert kernel.do_shutdown(False) == {"status": "ok", "restart": False}
    assert flushed == ["stdout", "stderr"]
    assert sys.stdout is sys.__stdout__ and sys.stderr is sys.__stderr__
