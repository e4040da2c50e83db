"""Folders built once per test session and shared by every pytest-xdist worker (read-only to tests).

A session-scoped fixture runs once *per worker* under xdist; what it generates (a bench, a run, a
rendered report) is then built by each worker. :func:`built_once` builds it once for the whole session,
under a file lock in the session's temporary folder (the folder every worker's own ``basetemp`` sits
in), and hands the others the finished folder. Tests must not write into it: copy it first
(``shutil.copytree``) when a test changes files.

How to use it (a module whose tests all read one generated bench and one run of it)::

    @pytest.fixture(scope="session")
    def tiny_run(tmp_path_factory):
        def build(folder):  # runs once per session, whatever the number of workers
            bench = generate("tiny", 1, folder / "bench")
            return run_system(bench, "bm25", runs_root=folder / "runs", progress=False)

        folder, run = built_once(tmp_path_factory, "tiny-bm25-run", build)  # the name: unique per build
        return folder / "bench", Path(run)

The root ``conftest.py`` builds the doctests' ``tiny`` bench and its dry ``bm25`` run this way
(``_tiny``: any test may request it). A costly *module* fixture that cannot be shared as a folder (a
server, a browser, an open client) is kept on one worker instead: mark the module
``pytestmark = pytest.mark.xdist_group("NAME")`` (``--dist loadgroup`` is in the pytest options).
Other cost cuts that keep a test's meaning (see docs/DECISIONS.md, issue 23 suite speed): a timeout
the test waits out is a module constant the test shortens with ``monkeypatch``, never a weaker
production default; a CLI call whose subject is not the process boundary goes through
``memeval.cli.main([...])`` with ``capsys`` rather than a subprocess (each ``python -m memeval`` costs
~1.5 s of CPU in imports).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Callable

from filelock import FileLock

__all__ = ["built_once", "session_root"]


def session_root(tmp_path_factory) -> Path:
    """This session's temporary folder, the same for every xdist worker (never one of an earlier session)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def built_once(tmp_path_factory, name: str, build: Callable[[Path], object]) -> tuple[Path, str]:
    """``build(folder)`` run once per session for ``name``; returns the folder and what ``build`` returned
    (as a string: e.g. a run folder it made inside). A build that raised is retried by the next caller."""
    root = session_root(tmp_path_factory) / "built-once"
    root.mkdir(exist_ok=True)
    folder, done = root / name, root / f"{name}.done"
    with FileLock(str(root / f"{name}.lock")):
        if not done.is_file():
            if folder.exists():
                shutil.rmtree(folder)  # a half-built folder left by a build that raised
            folder.mkdir()
            result = build(folder)
            done.write_text("" if result is None else str(result), encoding="utf-8")
    return folder, done.read_text(encoding="utf-8")
