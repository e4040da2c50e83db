"""Load a local HTML file in headless Chromium with the network cut off, and report what happened.

Uses Debian's ``/usr/bin/chromium`` through Python playwright (never a downloaded browser). Every
request that is not ``file://`` is aborted and recorded, so a report that needs the network shows
up as ``blocked_requests`` (and usually as broken figures). Tests call :func:`require_chromium`
first: when the browser binary is absent it skips, with the reason, on a developer's machine, and fails
in CI (``CI`` set), which installs it.

One Chromium serves every page a test process loads (a launch costs ~2 s of CPU and several seconds of
waiting on a busy machine): it is started on first use and driven from a thread of its own, so the
calling thread's asyncio state is never touched (a ``sync_playwright`` kept open in the test thread
marks that thread's event loop as running between calls, and every later ``asyncio.run`` there would
fail). The browser is relaunched if it went away, and closed when the process exits.
:func:`run_in_chromium` hands any job to that browser.

Pages are opened in one tab that the process keeps (the reader's tab): a renderer process and a browser
context cost ~1.5-2 CPU-s a page on the 2-core machine, more than most checks made on the page. Nothing
carries over from one page to the next: each page is a new document with its own window, and before it
the tab's storage is emptied (local and session storage, IndexedDB, cache storage, cookies) and the
errors, blocked requests and values start again. ``load_pages(..., one_tab=True)`` walks its pages as a
reader clicking through one site instead: storage is emptied once, before the first. After a page that
raised, the tab is closed and the next page gets a new one.
"""

from __future__ import annotations

import atexit
import sys
import queue
import threading
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from shared_data import missing_in_env

__all__ = ["CHROMIUM", "CHROMIUM_ARGS", "PageReport", "require_chromium", "load_html", "load_pages", "run_in_chromium"]

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@dataclass(frozen=True)
class PageReport:
    console_errors: tuple[str, ...]
    page_errors: tuple[str, ...]
    blocked_requests: tuple[str, ...]
    plotly_divs: int  # figures the page declares (.plotly-graph-div)
    plotly_svgs: int  # plotly SVG layers actually drawn (.main-svg)
    text: str  # document.body.innerText: what a reader sees
    screenshot: Path
    values: dict = field(default_factory=dict)  # results of the ``evaluate`` expressions


def require_chromium() -> None:
    if not CHROMIUM.exists():
        missing_in_env(f"{CHROMIUM} not installed on this machine (CI installs it with apt: see .ci/run)")


_ALL_FIGURES_DRAWN = """() => {
  const divs = document.querySelectorAll('.plotly-graph-div');
  return Array.from(divs).every(d => d.querySelector('.main-svg'));
}"""


def load_html(
    path: str | Path,
    screenshot: str | Path,
    evaluate: dict[str, str] | None = None,
    viewport: tuple[int, int] = (1280, 900),
    full_page: bool = False,
    timeout_ms: int = 30_000,
) -> PageReport:
    """Open ``path`` (a local file), wait for plotly figures to draw, screenshot it into ``screenshot``.

    The screenshot is of the first screen (``viewport``); ``full_page=True`` takes the whole page, which
    costs ~0.7 CPU-s more on an 8,000-px report (a check that reads the picture may want it; the
    checks that read one today only ask that something was drawn).

    ``evaluate`` maps a name to a JavaScript expression evaluated in the page after load, e.g.
    ``{"pwned": "typeof window.__pwned"}``; results come back in ``PageReport.values``.
    """
    (report,) = load_pages([(path, screenshot)], evaluate, viewport, full_page, timeout_ms)
    return report


Page = tuple[str | Path, str | Path] | tuple[str | Path, str | Path, dict[str, str]]


def load_pages(
    pages: list[Page],
    evaluate: dict[str, str] | None = None,
    viewport: tuple[int, int] = (1280, 900),
    full_page: bool = False,
    timeout_ms: int = 30_000,
    one_tab: bool = False,
) -> list[PageReport]:
    """:func:`load_html` for each (path, screenshot) in turn, in the process's one tab, each page starting
    with nothing carried over from the page before (no storage, cookies, window, errors or values).

    A page given as ``(path, screenshot, evaluate)`` gets its own ``evaluate`` instead of the shared one.

    ``one_tab=True`` opens the pages as a reader clicking through one site would instead: storage is
    emptied before the first page only and carries over between them; every page still gets a new window
    and its own errors, blocked requests and values, and a script the pages share (a site's
    ``plotly.min.js``, ~3 CPU-s to compile on the 2-core machine) is compiled once.
    """
    size = {"width": viewport[0], "height": viewport[1]}

    visits = [(page[0], page[1], page[2] if len(page) == 3 else evaluate) for page in pages]

    def job(browser) -> list[PageReport]:
        tab = _reader_tab(browser)
        try:
            tab.page.set_viewport_size(size)
            reports = []
            for i, (path, shot, ev) in enumerate(visits):
                if i == 0 or not one_tab:
                    tab.empty_storage()
                reports.append(_visit(tab, path, shot, ev, full_page, timeout_ms))
            return reports
        except BaseException:
            _close_reader_tab()  # a page that failed may have left the tab anywhere: the next page gets a new one
            raise

    return _chromium().call(job)


def run_in_chromium(job: Callable[[Any], Any]) -> Any:
    """``job(browser)`` on the thread of the process's one Chromium (launched on first use); its result, or
    its exception raised here. The job drives the browser with playwright's sync API (open a fresh context
    and close it when done)."""
    return _chromium().call(job)


class _Chromium:
    """The process's one headless Chromium, owned by a daemon thread that runs each job handed to it."""

    def __init__(self) -> None:
        self._jobs: queue.Queue[tuple[Callable[[Any], Any], Future] | None] = queue.Queue()
        self._thread = threading.Thread(target=self._serve, name="chromium", daemon=True)
        self._thread.start()
        atexit.register(self.close)

    def call(self, job: Callable[[Any], Any]) -> Any:
        """``job(browser)`` run on the browser's thread; its result, or its exception raised here."""
        if not self._thread.is_alive():
            raise RuntimeError("the Chromium thread has stopped")
        done: Future = Future()
        self._jobs.put((job, done))
        return done.result()

    def close(self) -> None:
        if self._thread.is_alive():
            self._jobs.put(None)
            self._thread.join(timeout=30)

    def _serve(self) -> None:
        from playwright.sync_api import sync_playwright

        playwright = browser = None
        try:
            while (item := self._jobs.get()) is not None:
                job, done = item
                try:
                    if playwright is None:
                        playwright = sync_playwright().start()
                    if browser is None or not browser.is_connected():  # first use, or it went away
                        browser = playwright.chromium.launch(
                            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
                        )
                    done.set_result(job(browser))
                except BaseException as e:  # handed to the caller, whatever it is
                    done.set_exception(e)
        finally:
            if browser is not None:
                browser.close()
            if playwright is not None:
                playwright.stop()


_CHROMIUM: _Chromium | None = None
_CHROMIUM_LOCK = threading.Lock()


def _chromium() -> _Chromium:
    global _CHROMIUM
    with _CHROMIUM_LOCK:
        if _CHROMIUM is None:
            _CHROMIUM = _Chromium()
        return _CHROMIUM


class _Tab:
    """A page with the network cut off; what it reports since the last :meth:`reset`."""

    def __init__(self, page) -> None:
        self.page = page
        self.reset()
        page.route("**/*", self._route)
        page.on("console", lambda m: self.console_errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.page_errors.append(str(e)))
        self._cdp = None

    def reset(self) -> None:
        self.console_errors: list[str] = []
        self.page_errors: list[str] = []
        self.blocked: list[str] = []

    def empty_storage(self) -> None:
        """Empty what a page could leave for the next: the storage the browser keeps for ``file://`` pages
        (local and session storage, IndexedDB, cache storage; ``test_browser_helper.py`` checks the first
        three) and the context's cookies."""
        if self._cdp is None:
            self._cdp = self.page.context.new_cdp_session(self.page)
        self._cdp.send("Storage.clearDataForOrigin", {"origin": "file://", "storageTypes": "all"})
        self.page.context.clear_cookies()

    def _route(self, r) -> None:
        url = r.request.url
        if url.startswith("file://"):
            r.continue_()
        else:
            self.blocked.append(url)
            r.abort()


# The process's one reader tab: its browser, context and tab (touched on the Chromium thread only).
_READER: dict[str, Any] = {}


def _reader_tab(browser) -> _Tab:
    """The process's one reader tab in ``browser``, opened if there is none (or it belonged to a browser
    that went away)."""
    if _READER.get("browser") is not browser or not browser.is_connected():
        _close_reader_tab()
        context = browser.new_context()
        _READER.update(browser=browser, context=context, tab=_Tab(context.new_page()))
    return _READER["tab"]


def _close_reader_tab() -> None:
    context = _READER.get("context")
    _READER.clear()
    if context is not None:
        try:
            context.close()
        except Exception:  # the browser went away with it
            pass


def _visit(tab: _Tab, path, screenshot, evaluate, full_page, timeout_ms) -> PageReport:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    path, screenshot = Path(path).resolve(), Path(screenshot)
    page = tab.page
    tab.reset()
    page.goto(path.as_uri(), wait_until="load", timeout=timeout_ms)
    try:
        page.wait_for_function(_ALL_FIGURES_DRAWN, timeout=timeout_ms)
    except PlaywrightTimeout:
        pass  # reported through the counts below
    divs = page.locator(".plotly-graph-div").count()
    svgs = page.locator(".main-svg").count()
    text = page.inner_text("body")
    values = {k: page.evaluate(expr) for k, expr in (evaluate or {}).items()}
    screenshot.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(screenshot), full_page=full_page)
    return PageReport(
        tuple(tab.console_errors), tuple(tab.page_errors), tuple(tab.blocked), divs, svgs, text, screenshot, values
    )


if __name__ == "tests.browser":  # imported under both names: one module, so one Chromium per process
    import browser as _same  # tests/ is on sys.path (the root conftest puts it there)

    sys.modules[__name__] = _same
