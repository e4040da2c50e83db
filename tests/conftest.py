import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

# Bytecode caches are written even where PYTHONDONTWRITEBYTECODE is set (as in some containers): without them
# every collecting process (each xdist worker, every run) re-parses, assert-rewrites and compiles all test
# modules again, ~10 of a worker's ~20 CPU-s of collection. The caches sit in git-ignored __pycache__ folders.
sys.dont_write_bytecode = False

from shared_data import GLASSHOUSE, glasshouse_found, in_ci, require_glasshouse  # noqa: E402

# The commands' model-call cache is off in tests (a stub on a reused port must not be answered from another
# test's replies); tests of the cache pass --cache DIR or a ModelCache of their own.
os.environ.setdefault("MEMEVAL_CACHE", "off")


def pytest_runtest_setup(item) -> None:
    """Under ``--dist loadgroup`` an xdist worker suffixes each grouped test's node id with ``@<group>``, and
    the controller keeps a group on one worker by that suffix. pytest 9.2 changed node ids and the suffix
    silently stopped being written (pytest-xdist#1386): every module fixture was then built on each worker
    and the real-model run three times. A grouped test without its suffix fails instead, saying why."""
    if getattr(item.config.option, "loadgroup", False) and item.get_closest_marker("xdist_group"):
        if "@" not in item.nodeid:
            pytest.fail(
                "--dist loadgroup is not grouping (no @group suffix on this test's node id): this pytest and "
                "pytest-xdist do not work together; see the pytest pin in pyproject.toml",
                pytrace=False,
            )


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
