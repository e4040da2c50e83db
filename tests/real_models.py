"""The local models served for the real-model tests (issue 26): ``memeval models serve --port 0 --threads 1``
in a child process, started once per test session (``served`` in ``tests/conftest.py``) for
``test_real_models.py`` and ``test_thirdparty_real_models.py``, which share one xdist group and so one worker.

Without the local extra the tests that need it skip with the reason; under CI (``CI=1``) they fail, so CI
cannot pass without meeting a real model.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest

ROOT = Path(__file__).resolve().parents[1]

__all__ = ["require_local", "serve_local"]


def require_local() -> None:
    """Skip without the local extra, with the reason; under CI (``CI=1``) fail instead."""
    from memeval.models.catalog import CHAT, EMBEDDER, INSTALL, missing

    gone = missing(EMBEDDER) + missing(CHAT)
    if gone:
        msg = f"local models not installed (missing {', '.join(gone)}): {INSTALL}"
        if os.environ.get("CI") == "1":
            pytest.fail(f"CI=1: {msg}")
        pytest.skip(msg)


def serve_local() -> Iterator[tuple[str, str]]:
    """``memeval models serve --port 0 --threads 1`` until the generator is closed: (base URL, chat model id)."""
    import httpx

    from memeval.models.catalog import CHAT

    require_local()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    cmd = [sys.executable, "-m", "memeval", "models", "serve", "--port", "0", "--threads", "1"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True)
    try:
        ready, _, _ = select.select([proc.stdout], [], [], 120)
        url = proc.stdout.readline().strip() if ready else ""  # type: ignore[union-attr]
        assert url.startswith("http://127.0.0.1:"), f"models serve printed no URL (exit {proc.poll()})"
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/models", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline and proc.poll() is None, "models serve did not come up"
            time.sleep(0.2)
        yield url, CHAT.id
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    assert proc.returncode in (0, -15), f"models serve did not stop cleanly (exit {proc.returncode})"
