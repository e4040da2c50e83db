"""``notebooks/traces.ipynb`` in a real JupyterLab, driven by Chromium as a researcher would.

The test starts ``jupyter lab`` (this venv's, loopback only, token and password off) on a temporary
project root -- a ``memeval.toml`` and a copy of the notebook under ``notebooks/`` -- opens the
notebook, runs every cell from the Run menu, then works the trace browser widget (filter by axis,
next, search, go to id) and checks the trace shown against the run records on disk. It also checks
that the kernel's ``data/`` and ``runs/`` landed at the project root and that nothing was written
under ``notebooks/``, neither the copy's folder nor the repository's own.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import nbformat
import pytest
import yaml

from browser import require_chromium, run_in_chromium

REPO_NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
WAIT_MS = 240_000  # generous: a loaded 2-core machine starts a kernel and a tiny run slowly
RUN_ALL_MS = 480_000


def _snapshot(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` (hidden ones too) with a hash of its bytes."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _settings(folder: Path) -> None:
    """JupyterLab user settings: no autosave (nothing written back), every cell in the DOM, no news
    or update checks (offline)."""
    for plugin, values in {
        "docmanager-extension/plugin": {"autosave": False},
        "notebook-extension/tracker": {"windowingMode": "none"},
        "apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
    }.items():
        path = folder / "@jupyterlab" / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))


@pytest.fixture
def lab(tmp_path):
    """A temporary project root with the notebook (on the ``tiny`` preset), served by JupyterLab."""
    require_chromium()
    root = tmp_path / "project"
    (root / "notebooks").mkdir(parents=True)
    (root / "memeval.toml").write_text("# a project root for the test\n")
    nb = nbformat.read(REPO_NOTEBOOKS / "traces.ipynb", as_version=4)
    params = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    assert 'preset = "demo"' in params.source
    params.source = params.source.replace('preset = "demo"', 'preset = "tiny"')  # quick on 2 cores
    nbformat.write(nb, root / "notebooks" / "traces.ipynb")
    jupyter = tmp_path / "jupyter"
    _settings(jupyter / "settings")
    # no build check and no extension manager: at page load both ask the server about the installed
    # extensions, which runs node and yarn (~1.5 CPU-s on 2 cores) for a rebuild prompt and a panel an
    # offline test never uses (as `jupyter labextension disable` would write it)
    page_config = {"buildCheck": False, "disabledExtensions": {"@jupyterlab/extensionmanager-extension": True}}
    (jupyter / "config" / "labconfig").mkdir(parents=True)
    (jupyter / "config" / "labconfig" / "page_config.json").write_text(json.dumps(page_config))
    port = _free_port()
    env = {
        **os.environ,
        # the user's own Jupyter folders stay out of it (no stray kernelspec, nothing written to ~)
        "JUPYTER_CONFIG_DIR": str(jupyter / "config"),
        "JUPYTER_DATA_DIR": str(jupyter / "data"),
        "JUPYTER_RUNTIME_DIR": str(jupyter / "runtime"),
        "IPYTHONDIR": str(jupyter / "ipython"),
    }
    cmd = [
        sys.executable,  # this venv's jupyter, so its kernelspec (the venv's python) is the one found
        "-m",
        "jupyter",
        "lab",
        "--no-browser",
        "--allow-root",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--port-retries=0",
        "--IdentityProvider.token=",
        "--ServerApp.password=",
        f"--ServerApp.root_dir={root}",
        f"--FileCheckpoints.checkpoint_dir={jupyter / 'checkpoints'}",  # not beside the notebook
        "--LabApp.extension_manager=readonly",
        f"--LabApp.user_settings_dir={jupyter / 'settings'}",
        f"--LabApp.workspaces_dir={jupyter / 'workspaces'}",
    ]
    log = open(tmp_path / "jupyter.log", "w")
    server = subprocess.Popen(cmd, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + WAIT_MS / 1000
        while True:
            assert server.poll() is None, f"jupyter lab exited: {(tmp_path / 'jupyter.log').read_text()[-2000:]}"
            try:
                if httpx.get(f"{url}/api/status", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "jupyter lab did not answer in time"
            time.sleep(0.1)
        yield url, root
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)  # the server and the kernels it started
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
                server.wait(timeout=30)
        log.close()


def _records(root: Path) -> tuple[list[dict], list[str]]:
    """The run's records as written to disk, and the bench's tier order (from bench.yaml)."""
    (records_file,) = (root / "runs").glob("*/records.jsonl")
    records = [json.loads(line) for line in records_file.read_text().splitlines() if line.strip()]
    (bench_yaml,) = (root / "data").glob("*/bench.yaml")
    tiers = [t["name"] for t in yaml.safe_load(bench_yaml.read_text())["tiers"]]
    return records, tiers


_CELLS_DONE = """() => {
  const p = Array.from(document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputPrompt')).map(e => e.textContent);
  return p.length > 0 && p.every(t => !t.includes('*')) && p.some(t => /\\[\\d+\\]/.test(t));
}"""
_KERNEL_IDLE = """() => document.querySelectorAll('.jp-Notebook .jp-CodeCell').length > 0
  && /\\| Idle/.test(document.getElementById('jp-main-statusbar').innerText)"""


def test_traces_notebook_in_jupyterlab_drives_the_trace_browser(lab):
    from playwright.sync_api import expect

    url, root = lab
    repo_before = _snapshot(REPO_NOTEBOOKS)
    copy_before = _snapshot(root / "notebooks")
    spec = httpx.get(f"{url}/api/kernelspecs", timeout=30).json()
    assert spec["default"] == "python3"
    kernel_python = spec["kernelspecs"]["python3"]["spec"]["argv"][0]
    assert kernel_python in ("python", sys.executable), kernel_python  # this venv's python runs the cells

    def drive(chromium) -> None:  # on the browser's thread: the process's one Chromium, a fresh context
        context = chromium.new_context(viewport={"width": 1400, "height": 1000})
        try:
            page = context.new_page()
            page.set_default_timeout(WAIT_MS)
            # the network is cut off: only the loopback server answers
            page.route("**/*", lambda r: r.continue_() if r.request.url.startswith(url) else r.abort())
            page.goto(f"{url}/lab/tree/notebooks/traces.ipynb", wait_until="domcontentloaded")
            page.wait_for_function(_KERNEL_IDLE, timeout=WAIT_MS)
            page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
            page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
            page.wait_for_function(_CELLS_DONE, timeout=RUN_ALL_MS)
            prompts = page.locator(".jp-Notebook .jp-CodeCell .jp-InputPrompt").all_inner_texts()
            notebook_text = page.locator(".jp-Notebook").inner_text()
            assert all(t.strip()[1:-2].isdigit() for t in prompts), (prompts, notebook_text[-3000:])
            assert "Traceback" not in notebook_text

            records, tier_order = _records(root)
            assert {r["system"] for r in records} == {"bm25"}
            order = sorted(records, key=lambda r: (tier_order.index(r["tier"]), r["qid"], r["epoch"]))

            widget = page.locator(".jp-OutputArea-output .widget-vbox").first
            position = widget.locator(".widget-hbox > .widget-label")
            heading = widget.locator(".widget-html-content .trace h4")
            next_button = widget.locator("button.widget-button", has_text="next")

            def shows(record: dict, k: int, n: int) -> None:
                expect(position).to_have_text(f"{k} / {n}")
                expect(heading).to_contain_text(f"{record['qid']} · bm25 · tier {record['tier']} · {record['axis']}")

            shows(order[0], 1, len(records))

            # filter: one axis
            abstain = [r for r in order if r["axis"] == "ABSTAIN"]
            assert len(abstain) >= 2
            widget.locator(".widget-dropdown", has=page.locator("label", has_text="axis")).locator(
                "select"
            ).select_option("ABSTAIN")
            shows(abstain[0], 1, len(abstain))
            expect(widget.locator(".widget-html-content")).to_contain_text("an abstention")

            # next
            next_button.click()
            shows(abstain[1], 2, len(abstain))

            # back to every axis, then search for one question's words (tiers hold it once each)
            widget.locator(".widget-dropdown", has=page.locator("label", has_text="axis")).locator(
                "select"
            ).select_option("(all)")
            shows(order[0], 1, len(records))
            target = next(r for r in reversed(order) if r["axis"] == "BASIC")
            words = target["question_asked"].strip()

            def mentions(r: dict) -> bool:
                texts = [r.get(k) or "" for k in ("qid", "question_asked", "gold_answer", "answer")]
                texts += [m if isinstance(m, str) else m.get("text", "") for m in r.get("memories_returned") or []]
                return words.casefold() in " ".join(texts).casefold()

            found = [r for r in order if mentions(r)]
            assert len(found) >= 2 and all(r["qid"] == target["qid"] for r in found[:2])
            search = widget.locator(".widget-text", has=page.locator("label", has_text="search")).locator("input")
            search.fill(words)
            search.press("Enter")
            shows(found[0], 1, len(found))
            next_button.click()
            shows(found[1], 2, len(found))

            # jump to an id, among everything again
            search.fill("")
            search.press("Enter")
            shows(order[0], 1, len(records))
            last = order[-1]
            first_of_last_qid = next(i for i, r in enumerate(order) if r["qid"] == last["qid"])
            jump = widget.locator(".widget-text", has=page.locator("label", has_text="go to id")).locator("input")
            jump.fill(last["qid"].lower())
            jump.press("Enter")
            shows(order[first_of_last_qid], first_of_last_qid + 1, len(records))
        finally:
            context.close()

    run_in_chromium(drive)

    # data/ and runs/ are anchored at the project root, not beside the notebook
    assert (root / "runs").is_dir() and any((root / "data").glob("lifelog-tiny-s1/bench.yaml"))
    assert _snapshot(root / "notebooks") == copy_before  # nothing written under the copy's notebooks/
    assert _snapshot(REPO_NOTEBOOKS) == repo_before  # nor under the repository's
