"""Execute a parameterized notebook (papermill) and export it as one offline HTML report.

The report hides code cells (``exclude_input``), embeds plotly.js once (plotly's ``notebook``
renderer minus its MathJax CDN script, activated by :func:`setup_notebook` inside the kernel), loads
nothing from the network (no require.js, MathJax, mermaid or widget-manager scripts) and replaces
live widgets, which cannot run in a static page, with a short note: notebooks show static tables and
figures beside them. A plotly figure that would be silently dropped (no HTML form, because the
notebook never called :func:`setup_notebook`) is an error naming its cell.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import tempfile
import threading
from pathlib import Path
from typing import Any, Iterator, Mapping

from .lazy_iri import defer_iri_grammar

defer_iri_grammar()  # before nbformat: jsonschema's IRI grammar otherwise costs ~3 s of start-up

import nbformat

from ..atomic import write_text
from ..errors import InputError, MemevalError
from .._version import __version__
from .figures import export_notebook, require_browser
from .notebook_setup import PLOTLY_RENDERER, setup_notebook  # re-exported: the kernel side

__all__ = [
    "PLOTLY_RENDERER",
    "ReportError",
    "setup_notebook",
    "execute_notebook",
    "to_offline_html",
    "render_report",
    "parse_parameter",
    "provenance_cell",
    "check_figures",
    "notebook_parameters",
    "check_parameters",
]

#: JupyterLab shows the mimetype bundle; nbconvert keeps the ``text/html`` one, which relies on the
#: plotly.js copy the renderer embeds once per notebook when it activates.
WIDGET_MIMETYPE = "application/vnd.jupyter.widget-view+json"
WIDGET_NOTE = (
    "<p><em>[interactive widget: it runs in a live Jupyter session only; "
    "this report shows static tables instead]</em></p>"
)

# The lab template minus everything it would fetch from a CDN.
_OFFLINE_TEMPLATE = """{%- extends 'lab/index.html.j2' -%}
{%- block html_head_js_requirejs -%}{%- endblock html_head_js_requirejs -%}
{%- block jupyter_widgets -%}{%- endblock jupyter_widgets -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
"""


#: Inline (offline) script that keeps report tables interactive after export: click a header to sort
#: (numbers numerically), type in the box above a table to filter its rows. Plain DOM, no library.
TABLE_SCRIPT = """<script>
(function () {
  function key(td) { var t = td ? td.textContent.trim() : ""; var n = parseFloat(t);
    return (t !== "" && !isNaN(n) && /^[-+0-9.eE%]+$/.test(t)) ? [0, n] : [1, t.toLowerCase()]; }
  document.querySelectorAll("table.memeval-table").forEach(function (table) {
    var body = table.tBodies[0]; if (!body) return;
    var box = document.createElement("input");
    box.type = "search"; box.placeholder = "filter rows"; box.className = "memeval-filter";
    table.parentNode.insertBefore(box, table);
    box.addEventListener("input", function () { var q = box.value.toLowerCase();
      Array.prototype.forEach.call(body.rows, function (r) {
        r.style.display = r.textContent.toLowerCase().indexOf(q) >= 0 ? "" : "none"; }); });
    Array.prototype.forEach.call(table.tHead ? table.tHead.rows[0].cells : [], function (th, i) {
      th.style.cursor = "pointer"; th.title = "sort";
      th.addEventListener("click", function () {
        var dir = th.dataset.dir === "asc" ? -1 : 1; th.dataset.dir = dir === 1 ? "asc" : "desc";
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) { var x = key(a.cells[i]), y = key(b.cells[i]);
          return dir * (x[0] - y[0] || (x[1] < y[1] ? -1 : x[1] > y[1] ? 1 : 0)); });
        rows.forEach(function (r) { body.appendChild(r); }); }); });
  });
})();
</script>"""


class ReportError(MemevalError):
    """A notebook could not be executed or exported; the message names the failing cell."""


def parse_parameter(value: str) -> Any:
    """A ``-p key value`` value: YAML scalars and lists (``3``, ``true``, ``[a, b]``), else the string."""
    import yaml

    try:
        return yaml.safe_load(value)
    except yaml.YAMLError:
        return value


def _read_notebook(path: Path) -> nbformat.NotebookNode:
    if not path.is_file():
        raise InputError(path, message="no such notebook")
    try:
        if path.suffix == ".py":
            import jupytext

            return jupytext.read(path)
        return nbformat.read(path, as_version=4)
    except Exception as e:  # a broken file is the user's input error, not a traceback
        raise InputError(path, message=f"not a readable notebook: {e}") from e


def notebook_parameters(nb: nbformat.NotebookNode) -> dict[str, bool]:
    """The names the ``parameters`` cell assigns, each mapped to whether it takes a list (its default
    is a list literal, or its annotation names ``list``).

    >>> src = "a = 1\\nruns: list[str] | None = None\\nsystems = ['bm25']"
    >>> cell = nbformat.v4.new_code_cell(src, metadata={"tags": ["parameters"]})
    >>> notebook_parameters(nbformat.v4.new_notebook(cells=[cell]))
    {'a': False, 'runs': True, 'systems': True}
    """
    import ast

    for cell in nb.cells:
        if cell.cell_type == "code" and "parameters" in cell.get("metadata", {}).get("tags", []):
            out: dict[str, bool] = {}
            for node in ast.parse(cell.source).body:
                if isinstance(node, ast.Assign):
                    for t in node.targets:
                        if isinstance(t, ast.Name):
                            out[t.id] = isinstance(node.value, ast.List)
                elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                    out[node.target.id] = "list" in ast.unparse(node.annotation) or isinstance(node.value, ast.List)
            return out
    return {}


def check_parameters(nb: nbformat.NotebookNode, parameters: Mapping[str, Any], path="notebook") -> dict[str, Any]:
    """Refuse names the notebook does not take (naming those it does); a single value given where a list
    is expected becomes a one-item list (``-p run_dirs runs/x``)."""
    known = notebook_parameters(nb)
    unknown = sorted(set(parameters) - set(known))
    if unknown:
        raise ReportError(
            f"{path}: unknown parameter{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; "
            f"this notebook takes: {', '.join(known) or 'no parameters'}"
        )
    return {
        k: [v] if known[k] and v is not None and not isinstance(v, (list, tuple)) else v for k, v in parameters.items()
    }


def _cell_label(source: str) -> str:
    first = next((ln.strip() for ln in source.splitlines() if ln.strip()), "")
    return first if len(first) <= 70 else first[:69] + "…"


def execute_notebook(
    path: str | os.PathLike,
    parameters: Mapping[str, Any] | None = None,
    kernel_name: str = "python3",
    cwd: str | os.PathLike | None = None,
    timeout: float | None = None,
    progress: bool = False,
) -> nbformat.NotebookNode:
    """Run the notebook with papermill (parameters injected after the ``parameters`` cell); unknown
    parameter names are refused before anything runs (:func:`check_parameters`)."""
    import papermill as pm
    from papermill.exceptions import PapermillExecutionError

    _papermill_skips_writing_to_nowhere()
    path = Path(path)
    # papermill's parameter-cell inspection warns on lines it cannot type; the values are still used
    logging.getLogger("papermill.translators").setLevel(logging.ERROR)
    _quiet_papermill_unknown_parameter()
    nb = _read_notebook(path)
    parameters = check_parameters(nb, parameters or {}, path)
    nb.metadata.setdefault("kernelspec", {"name": kernel_name, "display_name": "Python 3", "language": "python"})
    nb.metadata.setdefault("language_info", {"name": "python"})
    with tempfile.TemporaryDirectory(prefix="memeval-report-") as tmp:
        src = Path(tmp) / "input.ipynb"
        nbformat.write(nb, src)
        try:
            # the executed notebook is returned, never saved: no output path, and no save after every
            # cell (each one a JSON encoding and schema validation of the whole notebook, plotly.js
            # included: seconds of CPU per report)
            with _silent_after_interrupt():
                return pm.execute_notebook(
                    str(src),
                    None,
                    request_save_on_cell_execute=False,
                    parameters=dict(parameters or {}),
                    kernel_name=kernel_name,
                    language="python",
                    cwd=str(cwd or os.getcwd()),
                    progress_bar=progress,
                    log_output=False,
                    execution_timeout=timeout,
                    extra_arguments=_kernel_arguments(kernel_name),
                )
        except PapermillExecutionError as e:
            # papermill counts its injected-parameters cell; report the cell as the author sees it
            cell = _source_index(nb, e.source, e.cell_index)
            raise ReportError(
                f"{path}: cell {cell} ({_cell_label(e.source)!r}) failed: {e.ename}: {_one_line(e.evalue)}"
            ) from None
        except Exception as e:
            if type(e).__name__ == "NoSuchKernel":
                raise ReportError(f"{path}: kernel {kernel_name!r} is not installed (run `make venv`)") from None
            raise ReportError(f"{path}: execution failed: {type(e).__name__}: {_one_line(str(e))}") from None


@functools.cache
def _papermill_skips_writing_to_nowhere() -> None:
    """papermill ends ``execute_notebook`` by saving the executed notebook to its output path even when
    that is None: it encodes the whole notebook (``nbformat.writes``: schema validation and JSON of every
    output, plotly.js included, ~0.2 CPU-s a report) and hands the text to a handler that drops it. Its
    ``write_ipynb`` becomes one that returns at once for no path and saves as before for any other."""
    import papermill.execute as pm_execute

    save = pm_execute.write_ipynb
    if getattr(save, "_memeval_skips_none", False):
        return

    def write_ipynb(nb: Any, path: Any) -> None:
        if path is not None:
            save(nb, path)

    write_ipynb._memeval_skips_none = True  # type: ignore[attr-defined]
    pm_execute.write_ipynb = write_ipynb


#: The kernel class a render starts where it can (:func:`_kernel_arguments`); named, not imported: importing
#: it would import ipykernel into the process that drives the render.
REPORT_KERNEL_CLASS = "memeval.analysis.report_kernel.ReportKernel"


def _kernel_arguments(kernel_name: str) -> list[str]:
    """The kernel's command-line options: start-up warnings kept out of the command's output (the kernel
    listens on loopback), no input history (IPython would write every cell of every render to
    ``~/.ipython``'s SQLite file, from a thread) and, where the kernel runs this very interpreter (so
    memeval is importable there), :class:`~memeval.analysis.report_kernel.ReportKernel`: a kernel
    without the debugger ipykernel otherwise builds (~0.2 CPU-s, a quarter of a kernel's start)."""
    import sys

    args = ["--IPKernelApp.log_level=CRITICAL", "--HistoryManager.enabled=False"]
    try:
        from jupyter_client.kernelspec import KernelSpecManager

        argv = KernelSpecManager().get_kernel_spec(kernel_name).argv
    except Exception:  # no such kernel: papermill says so in its own words
        return args
    # jupyter_client runs sys.executable for a spec that names plain "python"
    exe = argv[0] if argv else ""
    ours = exe in ("python", "python3", f"python3.{sys.version_info[1]}") or exe == os.path.abspath(sys.executable)
    if ours and "ipykernel_launcher" in argv:
        args.append(f"--IPKernelApp.kernel_class={REPORT_KERNEL_CLASS}")
    return args


class _AfterInterrupt(logging.Filter):
    """Drops the two lines a Ctrl-C during a render can leave behind it: nbclient's "Kernel died while
    waiting for execute reply" (papermill's logger) and asyncio's "Task exception was never retrieved"
    for that cell's task (with its traceback). Both are only consequences of the interrupt (the kernel is
    shut down while the command unwinds) and whether they appeared depended on timing; the command's own
    line (``memeval report: interrupted``) says what happened. Active once SIGINT arrived in a render."""

    interrupted = False

    def filter(self, record: logging.LogRecord) -> bool:
        if not _AfterInterrupt.interrupted:
            return True
        msg = str(record.msg)
        return not (msg.startswith("Kernel died") or msg.startswith("Task exception was never retrieved"))


@contextlib.contextmanager
def _silent_after_interrupt() -> Iterator[None]:
    """Ctrl-C during a render is one line: SIGINT marks the render interrupted (:class:`_AfterInterrupt`)
    and raises ``KeyboardInterrupt`` as Python's own handler does. Installed only where that handler is
    (the main thread of a plain process)."""
    import signal
    import threading

    for name in ("papermill", "asyncio"):
        log = logging.getLogger(name)
        if not any(isinstance(f, _AfterInterrupt) for f in log.filters):
            log.addFilter(_AfterInterrupt())
    if threading.current_thread() is not threading.main_thread() or (
        signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield
        return

    def on_sigint(signum: int, frame: object) -> None:
        _AfterInterrupt.interrupted = True
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_sigint)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


class _KnownParameters(logging.Filter):
    """Drops papermill's "Passed unknown parameter" warning. papermill cannot read annotated parameters
    such as ``run_dirs: list[str] | None = None`` and calls them unknown although the notebook takes them;
    :func:`check_parameters` has already refused every name the notebook does not take (one line, exit 2),
    so the warning could only ever be false."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Passed unknown parameter")


def _quiet_papermill_unknown_parameter() -> None:
    log = logging.getLogger("papermill")
    if not any(isinstance(f, _KnownParameters) for f in log.filters):
        log.addFilter(_KnownParameters())


def _one_line(text: str) -> str:
    return " ".join(str(text).split())[:300]


def _source_index(nb: nbformat.NotebookNode, source: str, fallback: int) -> int:
    for i, c in enumerate(nb.cells):
        if c.source == source:
            return i
    return fallback


PLOTLY_MIMETYPE = "application/vnd.plotly.v1+json"


def check_figures(nb: nbformat.NotebookNode, path="notebook") -> None:
    """Raise if a plotly figure has only its JSON form: nbconvert would drop it from the HTML."""
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            data = out.get("data") or {}
            if PLOTLY_MIMETYPE in data and "text/html" not in data:
                raise ReportError(
                    f"{path}: cell {i} ({_cell_label(cell.source)!r}) shows a plotly figure the HTML "
                    "report would drop: call memeval.analysis.report.setup_notebook() first"
                )


def _strip_widgets(nb: nbformat.NotebookNode) -> None:
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            data = out.get("data")
            if data and WIDGET_MIMETYPE in data:
                out["data"] = {"text/html": WIDGET_NOTE}


@functools.cache
def _exporter() -> Any:
    """One HTML exporter per process: building one compiles the lab template's dozen Jinja files
    (~0.2 CPU-s), which every further export in the process (a test session, a sweep of reports) reuses."""
    from jinja2 import DictLoader
    from nbconvert import HTMLExporter

    return HTMLExporter(
        template_name="lab",
        template_file="memeval_offline.html.j2",
        extra_loaders=[DictLoader({"memeval_offline.html.j2": _OFFLINE_TEMPLATE})],
        exclude_input=True,
        exclude_input_prompt=True,
        exclude_output_prompt=True,
    )


#: An exporter keeps per-export state (the filters it registers for each notebook): one export at a time.
_EXPORT_LOCK = threading.Lock()


def to_offline_html(nb: nbformat.NotebookNode, title: str = "memeval report") -> str:
    """HTML without code cells or prompts, with no script, style or font fetched from the network."""
    nb = nbformat.from_dict(nb)  # a copy: exporting must not change the caller's notebook
    _strip_widgets(nb)
    nb.metadata["title"] = title
    with _EXPORT_LOCK:
        body, _ = _exporter().from_notebook_node(nb, resources={"metadata": {"name": title}})
    head, sep, tail = body.rpartition("</body>")
    return head + TABLE_SCRIPT + sep + tail if sep else body + TABLE_SCRIPT


def provenance_cell(notebook, parameters: Mapping[str, Any] | None) -> nbformat.NotebookNode:
    """A footer naming what produced the report: memeval version, notebook, parameters, time (escaped)."""
    import datetime as dt
    import html

    params = ", ".join(f"{k}={v!r}" for k, v in (parameters or {}).items()) or "notebook defaults"
    when = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    text = (
        f"Rendered by memeval {__version__} from {Path(notebook).name} at {when}; parameters: {params}. "
        "Every figure here is recomputable from the run records."
    )
    cell = nbformat.v4.new_code_cell("")
    cell.outputs = [
        nbformat.v4.new_output(
            "display_data",
            data={"text/html": f'<hr><p class="memeval-provenance"><small>{html.escape(text)}</small></p>'},
        )
    ]
    return cell


def render_report(
    notebook: str | os.PathLike,
    out: str | os.PathLike,
    parameters: Mapping[str, Any] | None = None,
    kernel_name: str = "python3",
    cwd: str | os.PathLike | None = None,
    timeout: float | None = None,
    progress: bool = False,
    figures: str | os.PathLike | None = None,
) -> Path:
    """Execute ``notebook`` with ``parameters`` and write the offline HTML report to ``out`` atomically
    (``progress``: a bar over the notebook's cells on stderr; ``figures``: a folder that also gets
    every figure as PNG and SVG, see :func:`memeval.analysis.figures.export_notebook`).

    >>> import nbformat
    >>> nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("n = 1", metadata={"tags": ["parameters"]}),
    ...                                      nbformat.v4.new_code_cell("print(f'n is {n}')")])
    >>> nbformat.write(nb, tmp / "hello.ipynb")
    >>> html = render_report(tmp / "hello.ipynb", tmp / "hello.html", {"n": 3})
    >>> "n is 3" in html.read_text()
    True
    """
    out = Path(out)
    if figures is not None:
        require_browser()  # no browser: say so before the notebook runs
    nb = execute_notebook(notebook, parameters, kernel_name=kernel_name, cwd=cwd, timeout=timeout, progress=progress)
    check_figures(nb, notebook)
    if figures is not None:
        export_notebook(nb, figures, prefix=out.stem)
    nb.cells.append(provenance_cell(notebook, parameters))
    write_text(out, to_offline_html(nb, title=out.stem))
    return out
