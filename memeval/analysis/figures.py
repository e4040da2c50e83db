"""Static PNG and SVG copies of plotly figures, for pasting a report's figures into a paper.

The engine is kaleido (v1), which drives the Chrome or Chromium already on the machine (Debian's
``chromium`` is found on ``PATH``; ``BROWSER_PATH`` names another) with the plotly.js that ships with
plotly: nothing is fetched from the network (MathJax is off). One browser serves every figure of a
call, and :func:`browser_session` keeps one for every call made inside it (starting a browser with kaleido's
page costs ~3.7 CPU-s, drawing a figure ~0.4). Every wait on the browser is bounded (:data:`STALL_SECONDS`).
Files are written atomically: a failed export leaves no half-written image.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import threading
from pathlib import Path
from typing import Any, Iterable, Iterator

from ..atomic import atomic_open
from ..errors import MemevalError

__all__ = [
    "FORMATS",
    "DEFAULT_SIZE",
    "ExportError",
    "export",
    "export_all",
    "browser_session",
    "figure_name",
    "notebook_figures",
    "export_notebook",
    "require_browser",
]

FORMATS = ("png", "svg")
PLOTLY_MIMETYPE = "application/vnd.plotly.v1+json"
#: (width, height) in CSS pixels of a figure that sets no size: about what the HTML report draws, so long
#: titles and band labels fit (kaleido's own 700 x 500 cuts them).
DEFAULT_SIZE = (1100, 525)
_RASTER = ("png", "jpeg", "webp")  # ``scale`` multiplies their pixels; vector formats keep the figure's size
_NO_BROWSER = (
    "static image export needs Chrome or Chromium (Debian: apt-get install chromium), or BROWSER_PATH set to one"
)


#: Seconds kaleido's browser is given to start and load its page, to close, and, beyond kaleido's own
#: per-figure ``timeout`` (which bounds the drawing only), to hand a figure back and ready its page again.
#: kaleido 1.5 can wait for ever on a page event it missed on a busy machine (plotly's own ``write_image``
#: once hung 600 s in a test run); past this bound the browser is closed and, once, another started.
STALL_SECONDS = 60.0


class ExportError(MemevalError):
    """A figure could not be exported as an image; the message says which and why, on one line."""


class _Stalled(ExportError):
    """kaleido's browser gave no answer within its bound: a fresh browser is tried once."""


def require_browser() -> None:
    """Raise :class:`ExportError` unless a Chrome or Chromium is there to draw figures (the lookup kaleido
    makes: ``BROWSER_PATH``, then ``PATH`` and the usual places): ``memeval report --figures`` asks before
    it runs the notebook, not after."""
    from choreographer.browsers.chromium import Chromium

    path = Chromium.find_browser(skip_local=False)
    if not path or not Path(path).is_file():
        raise ExportError(_NO_BROWSER)


def _title(fig: Any) -> str:
    layout = (fig.to_dict() if hasattr(fig, "to_dict") else fig).get("layout") or {}
    title = layout.get("title")
    return str((title.get("text") if isinstance(title, dict) else title) or "")


def figure_name(index: int, fig: Any, prefix: str = "figure") -> str:
    """A file stem for the ``index``-th figure: prefix, number, then its title as a slug (letters,
    digits and hyphens only, so a title can never name a path outside the folder).

    >>> figure_name(3, {"layout": {"title": {"text": "Score by tier: <b>bm25</b> / oracle"}}}, "degradation")
    'degradation-03-score-by-tier-b-bm25-b-oracle'
    >>> figure_name(0, {"layout": {}})
    'figure-00'
    """
    slug = re.sub(r"[^a-z0-9]+", "-", _title(fig).casefold()).strip("-")[:48].rstrip("-")
    prefix = re.sub(r"[^A-Za-z0-9_.-]+", "-", prefix).strip(".-") or "figure"
    return f"{prefix}-{index:02d}" + (f"-{slug}" if slug else "")


def _run(coro) -> Any:
    """Run ``coro`` on a fresh event loop in a thread: works from a script and from a Jupyter kernel
    (whose own loop is already running)."""
    out: dict[str, Any] = {}

    def target() -> None:
        try:
            out["value"] = asyncio.run(coro)
        except BaseException as e:  # handed to the caller's thread
            out["error"] = e

    t = threading.Thread(target=target, name="memeval-figure-export")
    t.start()
    t.join()
    if "error" in out:
        raise out["error"]
    return out.get("value")


def _opts(fig: dict, fmt: str, scale: float) -> dict:
    """The figure's own size where it sets one, else :data:`DEFAULT_SIZE`; ``scale`` for raster formats.

    >>> _opts({"layout": {"height": 616}}, "png", 2)
    {'format': 'png', 'width': 1100, 'height': 616, 'scale': 2}
    >>> _opts({"layout": {}}, "svg", 2)
    {'format': 'svg', 'width': 1100, 'height': 525, 'scale': 1}
    """
    layout = fig.get("layout") or {}
    width, height = layout.get("width") or DEFAULT_SIZE[0], layout.get("height") or DEFAULT_SIZE[1]
    return {"format": fmt, "width": width, "height": height, "scale": scale if fmt in _RASTER else 1}


async def _within(seconds: float, what: str, coro) -> Any:
    """``await coro``, or :class:`_Stalled` once ``seconds`` have passed. The deadline decides, not the
    error seen: a kaleido call cancelled mid-way may raise its own error instead of the cancellation."""
    deadline = asyncio.timeout(seconds)
    try:
        async with deadline:
            return await coro
    except Exception as e:
        if deadline.expired():
            raise _Stalled(f"static image export: kaleido's browser gave no answer {what} in {seconds:g} s") from e
        raise


@contextlib.asynccontextmanager
async def _browser(timeout: float):
    """kaleido's browser with its page loaded (one tab), closed on the way out, also when it never
    finished starting. ``timeout`` is kaleido's bound on drawing one figure."""
    import kaleido  # on use: starts a browser; only image export needs it
    from choreographer.errors import ChromeNotFoundError

    try:
        k = kaleido.Kaleido(n=1, timeout=timeout, mathjax=False)
    except ChromeNotFoundError:
        raise ExportError(_NO_BROWSER) from None
    try:
        await _within(STALL_SECONDS, "while starting", k.open())
        yield k
    finally:
        try:
            await _within(STALL_SECONDS, "while closing", k.close())
        except _Stalled:
            proc = getattr(k, "subprocess", None)  # choreographer's Popen of the browser
            if proc is not None and proc.poll() is None:
                proc.kill()


async def _draw(k: Any, jobs: list[tuple[Any, str]], scale: float, timeout: float) -> list[bytes]:
    return [
        await _within(timeout + STALL_SECONDS, "for a figure", k.calc_fig(fig, opts=_opts(fig, fmt, scale)))
        for fig, fmt in jobs
    ]


def _page_not_ready(e: BaseException) -> bool:
    """kaleido 1.5's start-up race: it enables the DevTools Runtime domain after ``Page.navigate``, so on a
    busy machine the JavaScript context it keeps can be the blank page's, not its own page's, and every
    figure drawn in that browser fails this way. A fresh browser is drawn in once more (``_render``,
    :class:`_Session`), as after a stall; any other error, or either of these twice, is the export's error.

    >>> _page_not_ready(RuntimeError("ReferenceError: kaleido_scopes is not defined"))
    True
    """
    return "kaleido_scopes is not defined" in str(e)


def _fresh_browser_helps(e: BaseException) -> bool:
    return isinstance(e, _Stalled) or _page_not_ready(e)


async def _render(jobs: list[tuple[Any, str]], scale: float, timeout: float) -> list[bytes]:
    async def in_a_fresh_browser() -> list[bytes]:
        async with _browser(timeout) as k:
            return await _draw(k, jobs, scale, timeout)

    try:
        return await in_a_fresh_browser()
    except Exception as e:
        if not _fresh_browser_helps(e):
            raise
    return await in_a_fresh_browser()


class _Session:
    """One kaleido browser, its page loaded, on an event loop of its own thread (so it serves a script and
    a Jupyter kernel alike); every export made while it is the open session draws there."""

    def __init__(self, timeout: float) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="memeval-figure-session", daemon=True)
        self._thread.start()
        self._timeout = timeout
        self._stack = contextlib.AsyncExitStack()
        try:
            self._kaleido = self._call(self._open(timeout))
        except BaseException:
            self.close()
            raise

    def _call(self, coro) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    async def _open(self, timeout: float) -> Any:
        try:
            return await self._stack.enter_async_context(_browser(timeout))
        except _Stalled:  # it never finished starting (and was closed): another, once
            return await self._stack.enter_async_context(_browser(timeout))

    def render(self, jobs: list[tuple[Any, str]], scale: float) -> list[bytes]:
        try:
            return self._call(_draw(self._kaleido, jobs, scale, self._timeout))
        except Exception as e:
            if not _fresh_browser_helps(e):
                raise
        self._call(self._stack.aclose())  # this browser stalled, or its page never got its context: another
        self._stack = contextlib.AsyncExitStack()
        self._kaleido = self._call(self._stack.enter_async_context(_browser(self._timeout)))  # not a third
        return self._call(_draw(self._kaleido, jobs, scale, self._timeout))

    def close(self) -> None:
        try:
            self._call(self._stack.aclose())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join()
            self._loop.close()


_SESSION: _Session | None = None
_SESSION_LOCK = threading.Lock()


@contextlib.contextmanager
def browser_session(timeout: float = 120.0) -> Iterator[None]:
    """One browser for every export made inside the block, by any thread of the process (:func:`export`,
    :func:`export_all`, :func:`export_notebook`, ``memeval report --figures`` run in-process) instead of
    one per call::

        with browser_session():
            export(fig_a, "figures/a")
            export(fig_b, "figures/b")

    ``timeout`` bounds each figure drawn in it (a call's own ``timeout`` is not used inside a session).
    A block inside another shares the outer one's browser; the browser closes when the outermost ends.
    Raises :class:`ExportError` at once when there is no browser to start."""
    global _SESSION
    with _SESSION_LOCK:
        if _SESSION is not None:
            opened = None
        else:
            opened = _SESSION = _Session(timeout)
    try:
        yield
    finally:
        if opened is not None:
            with _SESSION_LOCK:
                _SESSION = None
            opened.close()


def export_all(
    figures: Iterable[tuple[str | Path, Any]],
    formats: Iterable[str] = FORMATS,
    scale: float = 2.0,
    timeout: float = 120.0,
) -> list[Path]:
    """Write each ``(stem, figure)`` as ``stem.png`` and ``stem.svg`` (or ``formats``) with one
    browser; returns the files written. A figure without its own size is drawn at :data:`DEFAULT_SIZE`;
    ``scale`` multiplies the pixels of raster formats (PNG), SVG keeps the size. Inside
    :func:`browser_session` the session's browser draws them."""
    formats = tuple(formats)
    bad = [f for f in formats if f not in ("png", "svg", "pdf", "jpeg", "webp")]
    if bad:
        raise ExportError(f"unknown image format {bad[0]!r}; use png, svg, pdf, jpeg or webp")
    items = [(Path(stem), fig) for stem, fig in figures]
    jobs = [(fig.to_dict() if hasattr(fig, "to_dict") else fig, fmt) for _, fig in items for fmt in formats]
    if not jobs:
        return []
    session = _SESSION
    try:
        images = session.render(jobs, scale) if session is not None else _run(_render(jobs, scale, timeout))
    except ExportError:
        raise
    except Exception as e:
        raise ExportError(f"static image export failed: {type(e).__name__}: {' '.join(str(e).split())[:300]}") from e
    paths = [stem.with_name(f"{stem.name}.{fmt}") for stem, _ in items for fmt in formats]
    for path, data in zip(paths, images):
        with atomic_open(path, "wb") as fh:
            fh.write(data)
    return paths


def export(fig: Any, stem: str | Path, formats: Iterable[str] = FORMATS, scale: float = 2.0) -> list[Path]:
    """Write one figure as ``stem.png`` and ``stem.svg``: ``export(fig, "figures/degradation")``."""
    return export_all([(stem, fig)], formats, scale)


def notebook_figures(nb) -> list[dict]:
    """The plotly figures an executed notebook shows, in order (their JSON form in the outputs)."""
    found = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            data = (out.get("data") or {}).get(PLOTLY_MIMETYPE)
            if data:
                found.append(data)
    return found


def export_notebook(
    nb, folder: str | os.PathLike[str], prefix: str = "figure", formats: Iterable[str] = FORMATS, scale: float = 2.0
) -> list[Path]:
    """Every plotly figure of an executed notebook into ``folder`` as PNG and SVG, named by
    :func:`figure_name`."""
    folder = Path(folder)
    figures = notebook_figures(nb)
    return export_all(
        [(folder / figure_name(i + 1, fig, prefix), fig) for i, fig in enumerate(figures)], formats, scale
    )
