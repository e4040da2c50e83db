"""Static PNG/SVG export of figures (kaleido with the machine's Chromium), alone and from ``memeval report``."""

import xml.etree.ElementTree as ET

import pytest
from PIL import Image

from analysis_fixtures import synthetic_records
from browser import require_chromium
from memeval.analysis import figures, plots
from memeval.analysis.figures import ExportError, _page_not_ready, browser_session, export, export_all
from memeval.cli import main

# One worker, one kaleido browser for the module's exports (starting one with its page costs ~3.7 CPU-s).
pytestmark = pytest.mark.xdist_group("figure_export")

SVG = "{http://www.w3.org/2000/svg}"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

NOTEBOOK = """# %% tags=["parameters"]
n = 3

# %%
from memeval.analysis.report import setup_notebook
setup_notebook()
import plotly.graph_objects as go
go.Figure(go.Bar(x=[1, 2, 3], y=[n, 2, 1], name="bars"), layout={"title": {"text": "First: bars / ../x"}})

# %%
print("no figure here")

# %%
go.Figure(go.Scatter(x=[1, 2], y=[2, 1], name="line"), layout={"width": 640, "height": 360})
"""


def _svg_texts(path) -> list[str]:
    root = ET.parse(path).getroot()
    assert root.tag == f"{SVG}svg"
    return ["".join(t.itertext()) for t in root.iter(f"{SVG}text")]


def _check_png(path, size: tuple[int, int]) -> None:
    assert path.read_bytes()[:8] == PNG_MAGIC
    with Image.open(path) as im:
        assert im.format == "PNG" and im.size == size
        colours = im.convert("RGB").getcolors(maxcolors=1 << 20)
        assert colours is not None and len(colours) > 10  # drawn, not a blank page


@pytest.fixture(autouse=True)
def _chromium():
    require_chromium()


@pytest.fixture(scope="module")
def _one_browser():
    """Every export of the module's tests draws in one browser (:func:`browser_session`, which
    ``memeval report --figures`` run in-process also uses); each test still checks its own files."""
    require_chromium()
    with browser_session():
        yield


@pytest.fixture
def one_browser(_one_browser):
    assert figures._SESSION is not None  # the exports below go through the session's browser


def test_browser_session_is_one_browser_and_nested_blocks_share_it(one_browser, tmp_path, monkeypatch):
    def no_second_browser(*args):
        raise AssertionError("an export inside a session started a browser of its own")

    monkeypatch.setattr(figures, "_render", no_second_browser)
    outer = figures._SESSION
    with browser_session():
        assert figures._SESSION is outer  # a block inside another opens no second browser
        export(plots.degradation_curve(synthetic_records()), tmp_path / "inner", formats=("svg",))
    assert figures._SESSION is outer  # ... nor closes the outer one
    assert "bm25" in _svg_texts(tmp_path / "inner.svg")


def test_export_writes_a_real_png_and_svg_of_a_memeval_figure(one_browser, tmp_path):
    fig = plots.degradation_curve(synthetic_records())
    assert fig.layout.width is None and fig.layout.height is None
    width, height = 1100, 525  # a figure without a size is drawn about as wide as the HTML report
    written = export(fig, tmp_path / "figs" / "degradation")
    assert written == [tmp_path / "figs" / "degradation.png", tmp_path / "figs" / "degradation.svg"]
    _check_png(written[0], (2 * width, 2 * height))  # scale 2 by default: sharp in a paper
    root = ET.parse(written[1]).getroot()
    assert (root.get("width"), root.get("height")) == (str(width), str(height))
    texts = _svg_texts(written[1])
    assert {"bm25"} <= set(texts)  # the legend is text in the SVG, not pixels
    assert sorted(p.name for p in (tmp_path / "figs").iterdir()) == ["degradation.png", "degradation.svg"]


def test_export_all_uses_the_given_formats(one_browser, tmp_path):
    fig = plots.degradation_curve(synthetic_records())
    written = export_all([(tmp_path / "a", fig), (tmp_path / "b", fig)], formats=("svg",))
    assert written == [tmp_path / "a.svg", tmp_path / "b.svg"]
    assert all("bm25" in _svg_texts(p) for p in written)
    with pytest.raises(ExportError, match="unknown image format 'gif'"):
        export_all([(tmp_path / "c", fig)], formats=("gif",))
    assert not (tmp_path / "c.gif").exists()


def test_report_figures_option_writes_every_figure(one_browser, tmp_path, capsys):
    (tmp_path / "demo.py").write_text(NOTEBOOK)
    out, figs = tmp_path / "out" / "demo.html", tmp_path / "figures"
    assert main(["report", str(tmp_path / "demo.py"), "-p", "n", "7", "-o", str(out), "--figures", str(figs)]) == 0
    assert out.is_file()
    names = sorted(p.name for p in figs.iterdir())
    assert names == ["demo-01-first-bars-x.png", "demo-01-first-bars-x.svg", "demo-02.png", "demo-02.svg"]
    _check_png(figs / "demo-01-first-bars-x.png", (2200, 1050))
    _check_png(figs / "demo-02.png", (1280, 720))  # the figure's own size, times 2
    assert "First: bars / ../x" in _svg_texts(figs / "demo-01-first-bars-x.svg")
    root = ET.parse(figs / "demo-02.svg").getroot()
    assert (root.get("width"), root.get("height")) == ("640", "360")
    assert "figures:" in capsys.readouterr().err


def test_no_browser_is_one_line_and_nothing_is_written(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("BROWSER_PATH", str(tmp_path / "no-such-chrome"))
    monkeypatch.setattr(figures, "_SESSION", None)  # not the module's open browser: no browser at all
    fig = plots.degradation_curve(synthetic_records())
    with pytest.raises(ExportError, match="needs Chrome or Chromium"):
        export(fig, tmp_path / "figs" / "x")
    assert not (tmp_path / "figs").exists()
    with pytest.raises(ExportError, match="needs Chrome or Chromium"):
        with browser_session():  # says so when it starts, not at the first export
            pass
    assert figures._SESSION is None
    (tmp_path / "demo.py").write_text(NOTEBOOK + '\n# %%\nopen("RAN", "w").close()\n')
    out = tmp_path / "demo.html"
    monkeypatch.chdir(tmp_path)
    assert main(["report", str(tmp_path / "demo.py"), "-o", str(out), "--figures", str(tmp_path / "f")]) == 1
    (err,) = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("memeval report:")]
    assert "needs Chrome or Chromium" in err
    assert not out.exists() and not (tmp_path / "f").exists()
    assert not (tmp_path / "RAN").exists()  # refused before the notebook ran


# plotly's own ``write_image``, in a process of its own: it has no bound of its own to give it
_PLOTLY_WRITE = (
    "import sys, plotly.io as pio; pio.read_json(sys.argv[1]).write_image(sys.argv[2], width=800, height=400)"
)


def test_plotly_write_image_has_an_engine(tmp_path):
    """The issue's failure: ``fig.write_image`` had no engine. kaleido (a dependency) is it now.

    plotly's own path starts kaleido's page in a fresh browser each call, and kaleido 1.5 has start-up
    races (see ``figures._page_not_ready`` and ``figures.STALL_SECONDS``): now and then the page has no
    ``kaleido_scopes`` yet, or kaleido waits for ever on a page event it missed (once 600 s in a test run).
    That is upstream's, not the subject here (memeval's own export bounds every wait and replaces the
    browser): the call runs in a process of its own, killed with its browser after 120 s, and is made once
    more after exactly those two failures, never after any other, nor a third time."""
    import os
    import signal
    import subprocess
    import sys

    spec, png = tmp_path / "curve.json", tmp_path / "curve.png"
    spec.write_text(plots.degradation_curve(synthetic_records()).to_json())
    for attempt in (1, 2):
        proc = subprocess.Popen(
            [sys.executable, "-c", _PLOTLY_WRITE, str(spec), str(png)],
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # its own process group: the browser kaleido started goes with it
        )
        try:
            err = proc.communicate(timeout=120)[1]
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            err = "stalled: " + proc.communicate()[1]
        if proc.returncode == 0:
            break
        assert attempt == 1 and (err.startswith("stalled") or _page_not_ready(RuntimeError(err))), err
    _check_png(png, (800, 400))


def _long_title_figures():
    from memeval.bench.axes import AXES

    from analysis_fixtures import record, records_frame

    df = synthetic_records()
    rows = [record(system="bm25", tier=t, qid=f"Q{a}", axis=a, score=1.0) for a in AXES for t in ("core", "small")]
    served = [
        record(
            system=f"served-{i}", qid="Q1", latency_minus_rtt_ms=5.0, speed_status="unmeasurable", speed_reason="x" * 40
        )
        for i in range(4)
    ]
    return {
        "degradation": plots.degradation_curve(df),
        "by-axis": plots.degradation_curve(records_frame(rows), by="axis", floor=False, ceiling=False),
        "retrieval": plots.retrieval_curve(df),
        "heatmap": plots.axis_tier_heatmap(df, n_resamples=50),
        "latency": plots.latency_histogram(records_frame(served + [record(system="bm25", qid="Q1")])),
        "frontier": plots.frontier_plot(df),
    }


def test_no_exported_title_is_cut(one_browser, tmp_path):
    """Each figure exported at its default size: every title line lies inside the canvas (measured in
    Chromium on the exported SVG, not estimated)."""
    from browser import load_html

    figs = _long_title_figures()
    written = export_all([(tmp_path / name, fig) for name, fig in figs.items()], formats=("svg",))
    page = tmp_path / "titles.html"
    page.write_text("<html><body>" + "".join(p.read_text() for p in written) + "</body></html>")
    measure = """Array.from(document.querySelectorAll('svg.main-svg')).filter(s => s.parentElement.tagName !== 'svg'
      && s.querySelector('.gtitle')).map(s => { const b = s.querySelector('.gtitle').getBBox();
      return [b.x, b.x + b.width, Number(s.getAttribute('width')), s.querySelector('.gtitle').textContent]; })"""
    report = load_html(page, tmp_path / "titles.png", evaluate={"titles": measure})
    titles = report.values["titles"]
    assert len(titles) == len(figs)
    for left, right, width, text in titles:
        assert 0 <= left and right <= width, (text, left, right, width)
    assert any(len(t[3]) > 150 for t in titles)  # long titles were measured, wrapped onto lines


def _fake_kaleido(monkeypatch, broken: int, fault: str = "ReferenceError: kaleido_scopes is not defined"):
    """kaleido.Kaleido as figures.py uses it, without a browser, whose first ``broken`` browsers fail:

    - ``fault`` a script error (default: kaleido 1.5's start-up race, seen at load 8-17, where the page
      kept the blank page's JavaScript context): each figure drawn there fails as kaleido reports it;
    - ``fault`` "stall:open", "stall:calc_fig" or "stall:close": that step waits for ever, as kaleido 1.5
      does on a page event it missed (the bound is 0.2 s here).

    Returns the browsers opened, in order, each saying whether it was closed or its process killed."""
    import asyncio

    import kaleido
    from kaleido._kaleido_tab._errors import JavascriptError

    opened: list = []

    class Process:  # choreographer's Popen of the browser
        def __init__(self):
            self.killed = False

        def poll(self):
            return 0 if self.killed else None

        def kill(self):
            self.killed = True

    class Kaleido:
        def __init__(self, **kwargs):
            self.broken, self.closed, self.subprocess = len(opened) < broken, False, Process()
            opened.append(self)

        async def _step(self, name):
            if self.broken and fault == f"stall:{name}":
                await asyncio.Event().wait()

        async def open(self):
            await self._step("open")

        async def close(self):
            await self._step("close")
            self.closed = True

        async def calc_fig(self, fig, opts):
            await self._step("calc_fig")
            if self.broken and not fault.startswith("stall:"):
                raise JavascriptError(str({"className": fault.split(":")[0], "description": fault}))
            return b"<svg>drawn</svg>"

    monkeypatch.setattr(figures, "_SESSION", None)  # not the module's real session
    monkeypatch.setattr(figures, "STALL_SECONDS", 0.2)
    monkeypatch.setattr(kaleido, "Kaleido", Kaleido)
    return opened


def test_a_browser_whose_page_never_got_its_context_is_replaced_once(monkeypatch, tmp_path):
    fig = {"data": [], "layout": {}}
    opened = _fake_kaleido(monkeypatch, broken=1)
    assert export_all([(tmp_path / "a", fig)], formats=("svg",)) == [tmp_path / "a.svg"]
    assert len(opened) == 2 and (tmp_path / "a.svg").read_bytes() == b"<svg>drawn</svg>"

    opened = _fake_kaleido(monkeypatch, broken=1)
    with browser_session():  # the session's browser is replaced, and kept for the next export
        export_all([(tmp_path / "b", fig)], formats=("svg",))
        export_all([(tmp_path / "c", fig)], formats=("svg",))
    assert len(opened) == 2 and (tmp_path / "c.svg").exists()


def test_the_race_twice_or_another_script_error_is_the_exports_error(monkeypatch, tmp_path):
    fig = {"data": [], "layout": {}}
    opened = _fake_kaleido(monkeypatch, broken=2)
    with pytest.raises(ExportError, match="kaleido_scopes is not defined"):
        export_all([(tmp_path / "a", fig)], formats=("svg",))
    assert len(opened) == 2 and not list(tmp_path.iterdir())  # one more browser, not a third; no file

    opened = _fake_kaleido(monkeypatch, broken=1, fault="TypeError: spec.data is undefined")
    with pytest.raises(ExportError, match="spec.data is undefined"):
        export_all([(tmp_path / "a", fig)], formats=("svg",))
    assert len(opened) == 1

    opened = _fake_kaleido(monkeypatch, broken=3)
    with pytest.raises(ExportError, match="kaleido_scopes"), browser_session():
        export_all([(tmp_path / "b", fig)], formats=("svg",))
    assert len(opened) == 2


@pytest.mark.parametrize("where", ["open", "calc_fig"])
def test_a_stalled_browser_is_closed_and_replaced_once_and_twice_is_the_exports_error(monkeypatch, tmp_path, where):
    fig = {"data": [], "layout": {}}
    opened = _fake_kaleido(monkeypatch, 1, f"stall:{where}")
    assert export_all([(tmp_path / "a", fig)], formats=("svg",), timeout=0.1) == [tmp_path / "a.svg"]
    assert len(opened) == 2 and all(k.closed for k in opened)

    opened = _fake_kaleido(monkeypatch, 2, f"stall:{where}")
    with pytest.raises(ExportError, match=r"gave no answer (while starting in 0\.2|for a figure in 0\.3) s"):
        export_all([(tmp_path / "b", fig)], formats=("svg",), timeout=0.1)
    assert len(opened) == 2 and all(k.closed for k in opened) and not (tmp_path / "b.svg").exists()

    opened = _fake_kaleido(monkeypatch, 1, f"stall:{where}")
    with browser_session(timeout=0.1):  # the session's browser is replaced, and kept for the next export
        export_all([(tmp_path / "c", fig)], formats=("svg",))
        export_all([(tmp_path / "d", fig)], formats=("svg",))
    assert len(opened) == 2 and all(k.closed for k in opened) and (tmp_path / "d.svg").exists()


def test_a_browser_that_does_not_close_is_killed_and_the_figures_are_kept(monkeypatch, tmp_path):
    opened = _fake_kaleido(monkeypatch, 1, "stall:close")
    assert export_all([(tmp_path / "a", {"data": [], "layout": {}})], formats=("svg",)) == [tmp_path / "a.svg"]
    assert len(opened) == 1 and opened[0].subprocess.killed and not opened[0].closed


def test_a_real_browser_whose_page_never_loads_is_closed_and_replaced(monkeypatch, tmp_path):
    """The stall on the real kaleido: the first browser's page never reports its load (kaleido waits for
    ever); past the bound that browser is closed and the figure drawn in a second one."""
    import asyncio

    import kaleido
    from kaleido._kaleido_tab._tab import _KaleidoTab

    browsers: list = []
    real_navigate, real_kaleido = _KaleidoTab.navigate, kaleido.Kaleido

    async def navigate(self, url=""):
        if len(browsers) == 1:
            await asyncio.Event().wait()
        return await real_navigate(self, url)

    def recorded(**kwargs):
        browsers.append(real_kaleido(**kwargs))
        # the stalled first browser is given 1 s (not 60); the second the usual bound, to start on a busy machine
        monkeypatch.setattr(figures, "STALL_SECONDS", 1.0 if len(browsers) == 1 else 60.0)
        return browsers[-1]

    monkeypatch.setattr(figures, "_SESSION", None)  # not the module's shared session
    monkeypatch.setattr(_KaleidoTab, "navigate", navigate)
    monkeypatch.setattr(kaleido, "Kaleido", recorded)
    (png,) = export(plots.degradation_curve(synthetic_records()), tmp_path / "curve", formats=("png",), scale=1)
    _check_png(png, (1100, 525))
    assert len(browsers) == 2 and all(b.subprocess.poll() is not None for b in browsers)  # both gone
