import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from shared_data import GLASSHOUSE, glasshouse_found, in_ci, require_glasshouse  # noqa: E402

# The commands' model-call cache is off in tests (a stub on a reused port must not be answered from another
# test's replies); tests of the cache pass --cache DIR or a ModelCache of their own.
os.environ.setdefault("MEMEVAL_CACHE", "off")


def pytest_report_header(config) -> list[str]:
    found = "found" if glasshouse_found() else "NOT FOUND: the tests that need it skip (fail in CI)"
    return [f"shared data: {GLASSHOUSE} {found}; CI={'yes' if in_ci() else 'no'}"]


@pytest.fixture(scope="session")  # session: set up before any module fixture that reads the folder
def _glasshouse() -> Path:
    """``needs_glasshouse``: the shared glasshouse v0.1 core folder, or a skip (a failure in CI) naming it."""
    return require_glasshouse()


@pytest.fixture(scope="session")
def served():
    """``memeval models serve`` (the local chat model and embedder) on a loopback port with one thread:
    (base URL, chat model id). Session scope: one server for ``test_real_models.py`` and
    ``test_thirdparty_real_models.py`` (one xdist group, so one worker), not one per module
    (``tests/real_models.py``)."""
    from real_models import serve_local

    yield from serve_local()


@pytest.fixture(scope="session")
def demo1_bench(tmp_path_factory) -> Path:
    """The ``demo`` preset, seed 1, generated once per session for every xdist worker (``built_once``);
    read-only: a test that runs a system over it copies it first (a run writes its validity cache into
    the bench folder)."""
    from built_once import built_once

    from memeval.bench.lifelog import generate

    folder, _ = built_once(tmp_path_factory, "lifelog-demo-s1", lambda root: generate("demo", 1, root / "bench"))
    return folder / "bench"
