"""tests/browser.py: one Chromium per test process, driven from its own thread, a fresh context per page."""

import asyncio

import pytest

import browser
from browser import load_html, load_pages, require_chromium


@pytest.fixture
def page_file(tmp_path):
    path = tmp_path / "p.html"
    path.write_text("<html><body><p>hello</p></body></html>")
    return path


def test_both_import_names_are_one_module():
    import tests.browser

    assert tests.browser is browser and tests.browser.load_html is load_html


def test_the_calling_thread_can_still_run_asyncio_between_pages(page_file, tmp_path):
    require_chromium()
    assert "hello" in load_html(page_file, tmp_path / "a.png").text

    async def answer():
        await asyncio.sleep(0)
        return 42

    assert asyncio.run(answer()) == 42  # the browser's loop lives on its own thread, not this one
    assert "hello" in load_html(page_file, tmp_path / "b.png").text


def test_each_page_gets_a_fresh_context(page_file, tmp_path):
    require_chromium()
    first = load_html(
        page_file, tmp_path / "a.png", evaluate={"k": "localStorage.setItem('k', 'v') || localStorage.getItem('k')"}
    )
    assert first.values["k"] == "v"
    second = load_html(page_file, tmp_path / "b.png", evaluate={"k": "localStorage.getItem('k')"})
    assert second.values["k"] is None  # nothing carried over from the page before


def test_one_tab_gives_each_page_its_own_errors_and_window(page_file, tmp_path):
    """``load_pages(one_tab=True)``: one tab walks the pages; an error, a blocked request or a window
    global of one page is reported with that page only (storage carries over, as in one site)."""
    require_chromium()
    bad = tmp_path / "bad.html"
    bad.write_text(
        "<html><body><p>bad</p><img src='http://192.0.2.1/x.png'>"
        "<script>window.__mark = 1; localStorage.setItem('k', 'v'); console.error('boom')</script>"
        "<script>throw new Error('early')</script></body></html>"
    )
    pages = [(bad, tmp_path / "1.png"), (page_file, tmp_path / "2.png")]
    evaluate = {"mark": "typeof window.__mark", "k": "localStorage.getItem('k')"}
    first, second = load_pages(pages, evaluate, one_tab=True)
    assert "bad" in first.text and first.values == {"mark": "number", "k": "v"}
    assert "boom" in first.console_errors and first.blocked_requests == ("http://192.0.2.1/x.png",)
    assert any("early" in e for e in first.page_errors)
    assert "hello" in second.text and second.values == {"mark": "undefined", "k": "v"}
    assert second.console_errors == () and second.page_errors == () and second.blocked_requests == ()
    fresh = load_pages(pages, evaluate)[1]  # the default: a fresh context per page
    assert fresh.values == {"mark": "undefined", "k": None}


def test_an_error_reaches_the_caller_and_a_closed_browser_is_relaunched(page_file, tmp_path):
    require_chromium()
    from playwright.sync_api import Error as PlaywrightError

    with pytest.raises(PlaywrightError, match="ERR_FILE_NOT_FOUND"):
        load_html(tmp_path / "missing.html", tmp_path / "m.png")
    browser._chromium().call(lambda b: b.close())  # as if Chromium had gone away
    assert "hello" in load_html(page_file, tmp_path / "c.png").text
