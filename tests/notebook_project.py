"""A throwaway project to run the shipped notebooks in as JupyterLab does: the kernel's folder is
``notebooks/``, the project root (``memeval.toml``) one above it, under git with the repository's
``.gitignore``. After a notebook ran, :func:`assert_clean` checks it wrote only where the project
keeps data (``data/``, ``runs/``, ``reports/``: ignored), nothing beside the notebooks, and ``git
status`` stays clean."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = REPO / "notebooks"

__all__ = ["notebook_project", "assert_clean"]


def _git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def notebook_project(root: Path) -> Path:
    """``root`` as a fresh project holding the shipped notebooks, committed; returns its ``notebooks/``."""
    (root / "notebooks").mkdir(parents=True)
    for nb in NOTEBOOKS.glob("*.ipynb"):
        shutil.copy(nb, root / "notebooks" / nb.name)
    shutil.copy(REPO / ".gitignore", root / ".gitignore")
    (root / "memeval.toml").write_text("")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "notebooks")
    return root / "notebooks"


def assert_clean(root: Path) -> None:
    """``git status`` is clean and nothing, not even an ignored file, was written beside the notebooks."""
    assert _git(root, "status", "--porcelain", "--untracked-files=all") == ""
    ignored = _git(root, "status", "--porcelain", "--ignored", "--untracked-files=all").splitlines()
    stray = [ln for ln in ignored if ln[3:].startswith("notebooks/")]
    assert stray == [], stray
