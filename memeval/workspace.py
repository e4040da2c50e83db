"""The project root: where ``data/`` and ``runs/`` live, whatever the current folder (CLI, papermill,
or a JupyterLab kernel started in ``notebooks/``). Light on purpose (no polars): ``memeval run`` reads
it before a run starts."""

from __future__ import annotations

from pathlib import Path

__all__ = ["ROOT_MARKERS", "project_root", "anchored"]

ROOT_MARKERS = ("pyproject.toml", "memeval.toml")


def project_root(start: str | Path | None = None) -> Path:
    """The nearest folder at or above ``start`` (default: the current folder) holding ``pyproject.toml``
    or ``memeval.toml``; else ``start`` itself. ``data/`` and ``runs/`` live there, so a notebook run
    from ``notebooks/`` (JupyterLab) writes to the same places as one run from the CLI."""
    here = Path(start or Path.cwd()).resolve()
    for d in (here, *here.parents):
        if any((d / m).is_file() for m in ROOT_MARKERS):
            return d
    return here


def anchored(path: str | Path, root: Path | None = None) -> Path:
    """``path`` as given when absolute or already there (relative to the current folder), else under
    the project root (:func:`project_root`)."""
    p = Path(path)
    if p.is_absolute() or p.exists():
        return p
    return (root or project_root()) / p
