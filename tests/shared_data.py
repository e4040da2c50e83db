"""Third-party data used in place from the workplace's shared folder (``../shared/external`` beside the
checkout, or where ``MEMEVAL_SHARED`` points; never copied into the project).

Tests that need it say so with ``needs_glasshouse`` (or call :func:`require_glasshouse`). CI always has
that folder, so there (``CI`` set, as ``.ci/run`` does) a missing folder *fails* the test with the path it
looked at; on a checkout without it the test is skipped with that reason (``-ra`` lists it, and the run's
header says whether the folder was found).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

SHARED = Path(os.environ.get("MEMEVAL_SHARED") or Path(__file__).resolve().parents[2] / "shared")
# MEMEVAL_GLASSHOUSE points at the glasshouse folder itself (as the audit reads it)
GLASSHOUSE = Path(os.environ.get("MEMEVAL_GLASSHOUSE") or SHARED / "external" / "glasshouse-v0.1")


def in_ci() -> bool:
    """True where the ``CI`` variable is set to anything but empty, ``0``, ``false`` or ``no``."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def missing_in_env(what: str) -> None:
    """A piece of the environment a test needs is absent: fail in CI (which always has it), else skip."""
    if in_ci():
        pytest.fail(f"{what} (CI always has it: a broken CI set-up, not a test to skip)", pytrace=False)
    pytest.skip(what)


def glasshouse_found() -> bool:
    return (GLASSHOUSE / "questions_core.jsonl").is_file()


def require_glasshouse() -> Path:
    """The glasshouse v0.1 core folder, or a failure (in CI) / skip (elsewhere) naming where it was looked for."""
    if not glasshouse_found():
        missing_in_env(
            f"glasshouse v0.1 core files not at {GLASSHOUSE} (../shared beside the checkout, or $MEMEVAL_SHARED)"
        )
    return GLASSHOUSE


needs_glasshouse = pytest.mark.usefixtures("_glasshouse")  # the fixture (tests/conftest.py) calls require_glasshouse
