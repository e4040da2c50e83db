"""Third-party data used in place from the workplace's shared folder (``../shared/external`` beside the
checkout; never copied into the project). Tests that need it say so with ``needs_glasshouse``: where a
checkout stands without that folder, they are skipped with the reason, not failed."""

import os
from pathlib import Path

import pytest

# MEMEVAL_GLASSHOUSE points elsewhere (a worktree whose parent has no shared folder), as the audit reads it
GLASSHOUSE = Path(
    os.environ.get("MEMEVAL_GLASSHOUSE")
    or Path(__file__).resolve().parents[2] / "shared" / "external" / "glasshouse-v0.1"
)
needs_glasshouse = pytest.mark.skipif(
    not (GLASSHOUSE / "questions_core.jsonl").is_file(), reason=f"glasshouse v0.1 core files not at {GLASSHOUSE}"
)
