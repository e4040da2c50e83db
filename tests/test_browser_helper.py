"""tests/browser.py: one Chromium per test process, driven from its own thread; each page in the process's one
tab, starting with nothing carried over from the page before."""

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


_LEAVES = """<html><body><p>leaves</p><script>
window.__mark = 1;
window.found = {local: localStorage.getItem('k'), session: sessionStorage.getItem('k')};
localStorage.setItem('k', 'v'); sessionStorage.setItem('k', 'v');
window.db = new Promise(done => {
  const open = indexedDB.open('leaves');
  open.onupgradeneeded = () => { window.created = true; open.result.createObjectStore('s') };
  open.onsuccess = () => done(window.created ? 'created' : 'found');
  open.onerror = () => done('error');
});
</script></body></html>"""


def test_nothing_carries_over_from_one_page_to_the_next(page_file, tmp_path):
    """Pages share the process's one tab (one renderer), yet each starts as in a fresh browser context: no
    local or session storage, IndexedDB database or window global left by the page before."""
    require_chromium()
    page = tmp_path / "leaves.html"
    page.write_text(_LEAVES)
    evaluate = {"found": "window.found", "db": "window.db", "mark": "typeof window.__mark"}
    first = load_html(page, tmp_path / "a.png", evaluate=evaluate)
    assert first.values == {"found": {"local": None, "session": None}, "db": "created", "mark": "number"}
    second, third = load_pages([(page, tmp_path / "b.png"), (page_file, tmp_path / "c.png")], evaluate)
    assert second.values == first.values  # as if the first page had never been open
    assert third.values == {"found": None, "db": None, "mark": "undefined"} and not third.page_errors
    walked = load_pages([(page, tmp_path / "d.png"), (page, tmp_path / "e.png")], evaluate, one_tab=True)
    assert walked[0].values == first.values  # one_tab: emptied before its first page only
    assert walked[1].values == {"found": {"local": "v", "session": "v"}, "db": "found", "mark": "number"}


def test_pages_share_one_tab_and_a_page_that_failed_gives_the_next_a_new_one(page_file, tmp_path):
    require_chromium()
    from playwright.sync_api import Error as PlaywrightError

    load_html(page_file, tmp_path / "a.png")
    tab = browser.run_in_chromium(lambda _: browser._READER["tab"])
    load_pages([(page_file, tmp_path / "b.png"), (page_file, tmp_path / "c.png")])
    assert browser.run_in_chromium(lambda _: browser._READER["tab"]) is tab
    with pytest.raises(PlaywrightError, match="ERR_FILE_NOT_FOUND"):
        load_html(tmp_path / "missing.html", tmp_path / "m.png")
    assert "hello" in load_html(page_file, tmp_path / "d.png").text
    assert browser.run_in_chromium(lambda _: browser._READER["tab"]) is not tab


def test_one_tab_gives_each_page_its_own_errors_and_window(page_file, tmp_path):
    """``load_pages(one_tab=True)``: one tab walks the pages; an error, a blocked request or a window
    global of one page is reported with that page only. (That storage carries over is checked above, on
    pages that only read and write it: here page 2's read of page 1's write raced Chromium's emptying of
    the storage before page 1 once under the whole suite (not in 120 runs alone); no report uses storage.)"""
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
    assert "hello" in second.text and second.values["mark"] == "undefined"
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
